"""seqbil: sequence labelling with rank-1 bilinear models learned online.

The Python API (see api.py): train, load, evaluate, evaluate_files, resume and
Model (tag, tag_many, segment, save). Errors a user can act on are SeqbilError.
"""

__version__ = "0.2.0"

from .api import Model, SeqbilError, evaluate, evaluate_files, load, resume, train  # noqa: E402

__all__ = ["Model", "SeqbilError", "evaluate", "evaluate_files", "load", "resume", "train", "__version__"]
