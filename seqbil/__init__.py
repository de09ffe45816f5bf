"""seqbil: sequence labelling with rank-1 bilinear models learned online.

The Python API (see api.py): train, load, convert, evaluate, evaluate_files, resume,
learn_structure,
tag_file (tagging/) and Model (tag, tag_many, segment, save). Errors a user can act on
are SeqbilError.
"""

from ._version import __version__

__all__ = ["Model", "SeqbilError", "convert", "evaluate", "evaluate_files", "learn_structure", "load", "resume",
           "tag_file", "train", "__version__"]


def __getattr__(name):
    """The API's names, imported from api.py when first asked for (and the submodules):
    `seqbil tag` and the other commands then import only what they use."""
    import importlib
    if name in __all__:
        return getattr(importlib.import_module(".api", __name__), name)
    try:  # a submodule, as seqbil.tagging was there once seqbil was imported
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":  # a submodule that failed to import for another reason
            raise
        raise AttributeError(f"module 'seqbil' has no attribute {name!r}") from None


def __dir__():
    """The API's names too, before anything imported them (dir(), tab completion)."""
    return sorted(set(globals()) | set(__all__))
