"""Corpus formats: CoNLL columns (conll.py), SIGHAN segmented text (sighan.py) and
CRFsuite's attribute files (crfsuite.py), each a class registered in base.py with what
it answers for.
"""
from ..errors import InputError
from .base import FORMATS, Format, make_format
from .conll import ConllFormat
from .sighan import SighanFormat, bies_tags, words_from_tags  # (the registry's order: the choices' in --help)
from .crfsuite import CrfsuiteFormat  # noqa: I100
from .sentence import Sentence

__all__ = ["FORMATS", "ConllFormat", "CrfsuiteFormat", "Format", "SighanFormat", "Sentence", "bies_tags",
           "make_format", "read_corpus", "words_from_tags"]


def read_corpus(fmt, path, encoding="utf-8", labeled=True):
    """All sentences of a corpus file; an empty file is an error."""
    sentences = list(fmt.read(path, labeled=labeled, encoding=encoding))
    if not sentences:
        raise InputError(path, 0, "no sentences in file")
    return sentences
