"""Models trained by other tools, read into seqbil models that label and score every
sequence as those tools do: CRF++ (crfpp.py), CRFsuite (crfsuite.py) and Wapiti
(wapiti.py, which also reads Wapiti's pattern files)."""
from ..errors import ModelFileError
from ..modelfile import other_tool
from . import crfpp, crfsuite, wapiti

SOURCES = ("crfpp", "crfsuite", "wapiti")
NAMES = {"crfpp": "CRF++", "crfsuite": "CRFsuite", "wapiti": "Wapiti"}


def sniff(path):
    """Which tool's model file `path` is ("crfpp", "crfsuite", "wapiti"), or None."""
    try:
        with open(path, "rb") as f:
            return other_tool(f.read(64))
    except OSError:
        return None


def load(path, source, *, encoding=None, precision=None, fields=None):
    """The seqbil Model of a model file of `source` (crfpp, crfsuite or wapiti).
    encoding: of a CRF++ or Wapiti model's strings, which its file does not record
    (default utf-8); precision: of the weights kept (default: the file's); fields: of
    the data lines a Wapiti model reads, its label included (default: the highest
    column its patterns read + 2)."""
    if source not in SOURCES:
        raise ValueError(f"unknown model source {source!r} (choose {', '.join(SOURCES)})")
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read the model ({exc.strerror})") from None
    if fields is not None and source != "wapiti":
        raise ValueError("fields applies to a Wapiti model, whose file does not record its data's columns")
    if source == "crfpp":
        model = crfpp.to_model(crfpp.read(path), path, encoding or "utf-8", precision)
    elif source == "wapiti":
        model = wapiti.to_model(wapiti.read(path), path, encoding or "utf-8", precision, fields)
    else:
        if encoding not in (None, "utf-8", "utf8"):
            raise ValueError("a CRFsuite model's strings are UTF-8: give no encoding")
        model = crfsuite.to_model(crfsuite.read(path), path, precision)
    if not model.store.finite():
        raise ModelFileError(f"{path}: a {NAMES[source]} model with a weight that is "
                             f"not finite, or beyond the range of {model.precision}")
    return model
