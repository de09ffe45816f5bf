"""seqbil: sequence labelling with rank-1 bilinear models learned online.

The Python API (see api.py): train, load, evaluate, evaluate_files, resume and
Model (tag, tag_many, segment, save). Errors a user can act on are SeqbilError.
"""

from ._version import __version__
from .api import Model, SeqbilError, evaluate, evaluate_files, load, resume, train

__all__ = ["Model", "SeqbilError", "evaluate", "evaluate_files", "load", "resume", "train", "__version__"]
