"""Corpus formats: CoNLL columns and SIGHAN segmented text, readers and writers.

A Sentence holds its attribute columns (what feature templates read), its labels
when known, and what the writer needs to echo the input back with predictions.
"""
from dataclasses import dataclass, field

from .errors import InputError
from .textio import read_lines


@dataclass
class Sentence:
    columns: list          # columns[c][i]: field c of token i (None for the label column)
    labels: list | None    # gold labels, or None when the input has none
    line: int              # line number of the first token, for messages
    rows: list = field(default_factory=list)  # CoNLL: the fields of each input line

    def __len__(self):
        return len(self.columns[0]) if self.columns else 0


# --- BIES encoding of segmented text ------------------------------------------

def bies_tags(words):
    """Character tags of a word sequence: S for one-character words, else B I* E."""
    tags = []
    for w in words:
        tags.extend(("S",) if len(w) == 1 else ("B",) + ("I",) * (len(w) - 2) + ("E",))
    return tags


def words_from_tags(chars, tags):
    """Group characters into words. A word ends after E or S, or before B or S, so
    that any tag sequence (even an ill-formed prediction) gives a segmentation."""
    words, start = [], 0
    for i in range(len(chars)):
        if i + 1 == len(chars) or tags[i] in ("E", "S") or tags[i + 1] in ("B", "S"):
            words.append("".join(chars[start:i + 1]))
            start = i + 1
    return words


class SighanFormat:
    """One sentence per line, words separated by whitespace (ASCII or U+3000)."""

    name = "sighan"
    labels = ("B", "I", "E", "S")
    n_fields = 1
    label_column = None

    def read(self, source, labeled=True, encoding="utf-8", keep_empty=False):
        """Segmented sentences (labeled) or raw text whose whitespace is ignored."""
        for number, text in read_lines(source, encoding):
            words = text.split()  # str.split() also splits on U+3000
            if not words:
                if keep_empty:
                    yield Sentence([[]], [] if labeled else None, number)
                continue
            chars = list("".join(words))
            yield Sentence([chars], bies_tags(words) if labeled else None, number)

    def write(self, sentence, tags):
        return "  ".join(words_from_tags(sentence.columns[0], tags)) + "\n"

    def words(self, sentence, tags):
        return words_from_tags(sentence.columns[0], tags)


class ConllFormat:
    """One token per line, fields separated by spaces or tabs, a blank line between
    sentences. label_column says which field is the label; n_fields counts them all."""

    name = "conll"

    def __init__(self, n_fields=None, label_column=-1):
        self.n_fields = n_fields
        self.label_column = label_column

    def _label_index(self, n_fields):
        index = self.label_column if self.label_column >= 0 else n_fields + self.label_column
        if not 0 <= index < n_fields:
            raise ValueError(f"label column {self.label_column} does not exist in {n_fields} fields")
        return index

    def read(self, source, labeled=True, encoding="utf-8", keep_empty=False):
        """Sentences with labels (labeled=True: every line must carry the label field),
        or for tagging with or without it (labeled=False: gold labels kept when present)."""
        n_fields, name = self.n_fields, getattr(source, "name", str(source) if source not in (None, "-") else "<stdin>")
        rows, first, width = [], 0, None
        lines = read_lines(source, encoding)
        for number, text in _with_sentinel(lines):
            fields = text.split() if text is not None else []
            if not fields:
                if rows:
                    yield self._sentence(rows, first, width, name)
                    rows, width = [], None
                continue
            if n_fields is None:
                if not labeled:
                    raise InputError(name, number, "the number of fields is unknown")
                if len(fields) < 2:
                    raise InputError(name, number, "expected at least 2 fields (attributes and a label), found 1")
                n_fields = self.n_fields = len(fields)
                try:
                    self._label_index(n_fields)
                except ValueError as exc:
                    raise InputError(name, number, str(exc)) from None
            expected = (n_fields,) if labeled else (n_fields - 1, n_fields)
            if len(fields) not in expected or (width is not None and len(fields) != width):
                want = width if width is not None else " or ".join(map(str, expected))
                raise InputError(name, number, f"expected {want} fields, found {len(fields)}")
            if not rows:
                first, width = number, len(fields)
            rows.append(fields)

    def _sentence(self, rows, first, width, name):
        n_fields = self.n_fields
        label_at = self._label_index(n_fields)
        columns = list(zip(*rows))
        if width == n_fields:
            labels = list(columns[label_at])
            columns[label_at] = None
        else:  # no label field: the label column is missing from the input
            labels = None
            columns.insert(label_at, None)
        return Sentence(columns, labels, first, rows)

    def write(self, sentence, tags):
        return "".join(" ".join(row) + " " + tag + "\n" for row, tag in zip(sentence.rows, tags)) + "\n"


def _with_sentinel(lines):
    """The lines, then one (None, None) so the last sentence is flushed."""
    yield from lines
    yield None, None


def make_format(name, n_fields=None, label_column=-1):
    if name == "sighan":
        return SighanFormat()
    if name == "conll":
        return ConllFormat(n_fields, label_column)
    raise ValueError(f"unknown corpus format {name!r} (choose conll or sighan)")
