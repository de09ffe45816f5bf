"""seqbil: sequence labelling with rank-1 bilinear models learned online.

The Python API (see api.py): train, load, convert, evaluate, evaluate_files, resume,
learn_structure,
tag_file (tagging.py) and Model (tag, tag_many, segment, save). Errors a user can act on
are SeqbilError.
"""

from ._version import __version__
from .api import (Model, SeqbilError, convert, evaluate, evaluate_files, learn_structure, load, resume, tag_file,
                  train)

__all__ = ["Model", "SeqbilError", "convert", "evaluate", "evaluate_files", "learn_structure", "load", "resume",
           "tag_file", "train", "__version__"]
