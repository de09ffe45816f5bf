"""CoNLL column files: one token per line, fields separated by spaces or tabs, a
blank line between sentences; one field (by default the last) is the label."""
from .sentence import Sentence
from ..errors import InputError
from .textio import read_lines


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
