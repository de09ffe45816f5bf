"""A drop-in for sklearn-crfsuite: `from seqbil.sklearn import CRF`, `metrics`,
`scorers` (needs scikit-learn: pip install "seqbil[sklearn]")."""
try:
    import sklearn  # noqa: F401  (only whether it is there)
except ImportError:  # pragma: no cover - the message is the point
    raise ImportError('seqbil.sklearn needs scikit-learn: pip install "seqbil[sklearn]"') from None

from . import metrics
from .estimator import CRF
from .tagger import Tagger

__all__ = ["CRF", "Tagger", "metrics"]
