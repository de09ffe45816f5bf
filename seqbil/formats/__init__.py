"""Corpus formats: CoNLL columns (conll.py), SIGHAN segmented text (sighan.py) and
CRFsuite's attribute files (crfsuite.py).
"""
from ..errors import InputError
from .conll import ConllFormat
from .crfsuite import CrfsuiteFormat
from .sentence import Sentence
from .sighan import SighanFormat, bies_tags, words_from_tags

__all__ = ["ConllFormat", "CrfsuiteFormat", "SighanFormat", "Sentence", "bies_tags", "make_format", "read_corpus", "words_from_tags"]


def make_format(name, n_fields=None, label_column=-1):
    if name == "sighan":
        return SighanFormat()
    if name == "conll":
        return ConllFormat(n_fields, label_column)
    if name == "crfsuite":
        return CrfsuiteFormat()
    raise ValueError(f"unknown corpus format {name!r} (choose conll, sighan or crfsuite)")


def read_corpus(fmt, path, encoding="utf-8", labeled=True):
    """All sentences of a corpus file; an empty file is an error."""
    sentences = list(fmt.read(path, labeled=labeled, encoding=encoding))
    if not sentences:
        raise InputError(path, 0, "no sentences in file")
    return sentences

