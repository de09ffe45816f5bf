"""CoNLL column files: one token per line, fields separated by spaces or tabs, a
blank line between sentences; one field (by default the last) is the label.

Fields are split as CRF++ splits them (tagger.cpp: TaggerImpl::add, tokenize2 with the
delimiters "\t "): at ASCII spaces and tabs only, runs of them counting as one. Any
other character belongs to a token, so an ideographic space (U+3000) or a no-break
space (U+00A0) can be a token, as in CRF++'s JapaneseNE and seg example corpora."""
from ..errors import InputError, SeqbilError
from .base import Format, register, score_text
from .sentence import Sentence
from .textio import read_lines


def split_fields(text):
    """The fields of a CoNLL line (without its line end): the pieces between ASCII
    spaces and tabs; none for a line of only spaces and tabs (a sentence break)."""
    if "\t" in text:
        text = text.replace("\t", " ")
    fields = text.split(" ")
    return fields if "" not in fields else [f for f in fields if f]


def separator(line):
    """What `seqbil tag` puts between a line and the fields it appends: a tab after a
    line whose fields are separated by tabs (CRF++'s seg example), else a space."""
    return "\t" if "\t" in line else " "


MAX_FIELDS = 100_000  # of a corpus line: what a model file may claim, and what training reads


@register
class ConllFormat(Format):
    """One token per line, fields separated by spaces or tabs, a blank line between
    sentences. label_column says which field is the label; n_fields counts them all."""

    name = "conll"

    def __init__(self, n_fields=None, label_column=-1):
        self.n_fields = n_fields
        self.label_column = label_column

    def label_index(self, n_fields=None):
        """The index of the label field in a line of n_fields (default: the corpus's)."""
        n_fields = self.n_fields if n_fields is None else n_fields
        index = self.label_column if self.label_column >= 0 else n_fields + self.label_column
        if not 0 <= index < n_fields:
            raise ValueError(f"label column {self.label_column} does not exist in {n_fields} fields")
        return index

    def read(self, source, labeled=True, encoding="utf-8", keep_empty=False):
        """Sentences with labels (labeled=True: every line must carry the label field),
        or for tagging with or without it (labeled=False: gold labels kept when present)."""
        n_fields, name = self.n_fields, getattr(source, "name", str(source) if source not in (None, "-") else "<stdin>")
        rows, texts, first, width = [], [], 0, None
        lines = read_lines(source, encoding)
        for number, text in _with_sentinel(lines):
            fields = split_fields(text) if text is not None else []
            if not fields:
                if rows:
                    yield self._sentence(rows, first, width, name, texts)
                    rows, texts, width = [], [], None
                continue
            if n_fields is None:
                if not labeled:
                    raise InputError(name, number, "the number of fields is unknown")
                if len(fields) < 2:
                    raise InputError(name, number, "expected at least 2 fields (attributes and a label), found 1")
                if len(fields) > MAX_FIELDS:
                    raise InputError(name, number, f"{len(fields)} fields: seqbil reads at most {MAX_FIELDS:,}")
                n_fields = self.n_fields = len(fields)
                try:
                    self.label_index(n_fields)
                except ValueError as exc:
                    raise InputError(name, number, str(exc)) from None
            expected = (n_fields,) if labeled else (n_fields - 1, n_fields)
            if len(fields) not in expected or (width is not None and len(fields) != width):
                want = width if width is not None else " or ".join(map(str, expected))
                raise InputError(name, number, f"expected {want} fields, found {len(fields)}")
            if not rows:
                first, width = number, len(fields)
            rows.append(fields)
            texts.append(text.rstrip(" \t"))

    def _sentence(self, rows, first, width, name, lines=None):
        n_fields = self.n_fields
        label_at = self.label_index(n_fields)
        columns = list(zip(*rows))
        if width == n_fields:
            labels = list(columns[label_at])
            columns[label_at] = None
        else:  # no label field: the label column is missing from the input
            labels = None
            columns.insert(label_at, None)
        return Sentence(columns, labels, first, rows, lines)

    def layout(self):
        return self.n_fields, self.label_index()

    def layout_unknown(self):
        return self.n_fields is None

    def check_templates(self, templates, corpus, origin, tokens=None):
        if self.n_fields is None:  # sentences given in memory
            self.n_fields = tokens.n_fields
        return super().check_templates(templates, corpus, origin, tokens)

    @classmethod
    def check_corpus_record(cls, corpus):
        n, label = corpus.get("n_fields"), corpus.get("label_column", -1)
        if not (type(n) is int and 2 <= n <= MAX_FIELDS and type(label) is int and -n <= label < n):
            raise ValueError("corpus columns")

    def example(self):
        return [["x"] * (self.n_fields - 1)]

    def compiled_block(self, index):
        """The lines, fields and vocabulary lookups in the bytes, for plain columns as
        the model reads them (no functions, no normalization)."""
        if self.n_fields is not None and index.fold is None and not any(f.chain for f in index.field_list):
            return "columns"
        return None

    def sentence(self, tokens, number):
        """The Sentence of one token list given in Python: each token a string (a model
        of one input column) or a list of the model's input columns."""
        if isinstance(tokens, str):
            raise SeqbilError(f"sentence {number}: give a list of tokens, not a string")
        width = self.n_fields - 1
        rows = [[t] if isinstance(t, str) else list(t) for t in tokens]
        for i, row in enumerate(rows, 1):
            if len(row) != width or not all(isinstance(x, str) for x in row):
                raise SeqbilError(f"sentence {number}, token {i}: the model reads {width} column"
                                  f"{'s' if width > 1 else ''} of strings per token, got {row!r}")
        columns = [list(c) for c in zip(*rows)] if rows else [[] for _ in range(width)]
        columns.insert(self.label_index(), None)
        return Sentence(columns, None, number, rows)

    def annotated(self, sentences, name):
        """Sentences with their labels given in Python: each a list of tokens, each token
        a list of strings with the label among them (as a line of the corpus)."""
        out = []
        for n, s in enumerate(sentences, 1):
            where = f"<{name} sentence {n}>"
            rows = [list(r) for r in s]
            if not rows:
                continue
            width = len(rows[0])
            if width < 2 or any(len(r) != width or not all(isinstance(x, str) and x for x in r) for r in rows):
                raise InputError(where, 0, "every token is a list of the same number (>= 2) of non-empty strings, "
                                 "the label among them")
            if self.n_fields is None:
                if width > MAX_FIELDS:
                    raise InputError(where, 0, f"{width} columns: seqbil reads at most {MAX_FIELDS:,}")
                self.n_fields = width
            elif width != self.n_fields:
                raise InputError(where, 0, f"{width} columns, but the first sentence has {self.n_fields}")
            out.append(self._sentence(rows, n, width, where))
        return out

    def with_margins(self, tags, margins):
        return [(tag, score_text(m)) for tag, m in zip(tags, margins)]  # the margin: one more field after the label

    def read_predictions(self, source, encoding="utf-8"):
        return list(read_predictions(source, self.n_fields, encoding))

    def check_predictions(self, gold, pred, gold_path, pred_path):
        """Also: the same words, as conlleval assumes (the token of each line); and a gold
        file without its label column (the tagger's input given as the gold) has its last
        input column read as labels, no value of which is ever predicted: refused, rather
        than scored as an accuracy of 0."""
        super().check_predictions(gold, pred, gold_path, pred_path)
        word = 0 if self.label_index() != 0 else 1
        for g, p in zip(gold, pred):
            for i, (g_row, p_row) in enumerate(zip(g.rows, p.rows)):
                if g_row[word] != p_row[word]:
                    raise InputError(pred_path, p.line + i, f"the token {p_row[word]!r} is not the gold file's "
                                     f"{g_row[word]!r} ({gold_path}:{g.line + i}): the two files hold different "
                                     f"words")
        labels, predicted = {y for s in gold for y in s.labels}, {y for s in pred for y in s.labels}
        if labels and predicted and not labels & predicted:
            some = ", ".join(sorted(labels)[:5]) + (", ..." if len(labels) > 5 else "")
            them = ", ".join(sorted(predicted)[:5]) + (", ..." if len(predicted) > 5 else "")
            raise InputError(gold_path, gold[0].line, f"no gold label is ever predicted: the gold file's last "
                             f"column ({some}) shares no value with the predictions' labels in {pred_path} "
                             f"({them}); does the gold file have its label column?")

    def write(self, sentence, tags):
        """The sentence's lines, each with its tag appended (a tag may also be a tuple
        of fields, e.g. the label and its margin), then a blank line. A line read from
        a file is written as it was, less the line end and trailing blanks, followed by
        its separator (see separator); sentences made in memory by a space."""
        lines = sentence.lines if sentence.lines is not None else [" ".join(row) for row in sentence.rows]
        out = []
        for line, tag in zip(lines, tags):
            sep = separator(line)
            out.append(line + sep + (tag if isinstance(tag, str) else sep.join(tag)) + "\n")
        out.append("\n")
        return "".join(out)


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False


def note_line(fields):
    """Whether the fields are one of the lines `seqbil tag` and `crf_test` write before
    a sentence (# PROB, # RANK PROB, # confidence M, # boundary P1 ..., # LABEL P1 ...),
    not a token: a first field '#' and numbers after it (a word first in some)."""
    return len(fields) >= 2 and fields[0] == "#" and all(_is_number(f) for f in fields[2:]) and (
        _is_number(fields[1]) or len(fields) > 2)


def read_predictions(source, width, encoding="utf-8"):
    """Sentences of `seqbil tag` (or `crf_test`) output on a CoNLL file of `width`
    fields per line (the label among them), with the predicted labels as labels and
    each line's fields as rows. The predicted label is the field the tagger appended:
    the last, or with marginals (a '# PROB' line before the sentence, crf_test -v1 /
    -v2) the first field from the width-th on that reads LABEL/PROB, less its /PROB, or
    with margins (a '# confidence MARGIN' line, `seqbil tag --confidence`) the one
    before the label's margin."""
    name = getattr(source, "name", str(source) if source not in (None, "-") else "<stdin>")
    rows, labels, first, marginal, confidence = [], [], 0, False, False
    for number, text in _with_sentinel(read_lines(source, encoding)):
        fields = split_fields(text) if text is not None else []
        if fields and note_line(fields):
            if len(fields) > 1 and fields[1] == "confidence":  # --confidence: each label's margin after it
                confidence = True
            else:
                marginal = marginal or _is_number(fields[-1])
            continue
        if not fields:
            if rows:
                yield Sentence(list(zip(*rows)), labels, first, rows)
                rows, labels, marginal, confidence = [], [], False, False
            continue
        label = fields[-1]
        if confidence and len(fields) > 2 and _is_number(fields[-1]):
            label = fields[-2]
        elif marginal:
            for f in fields[width - 1:]:
                head, slash, tail = f.rpartition("/")
                if slash and head and _is_number(tail):
                    label = head
                    break
        if len(fields) < 2:
            raise InputError(name, number, "expected the input fields and the predicted label, found 1 field")
        if not rows:
            first = number
        rows.append(fields)
        labels.append(label)


def _with_sentinel(lines):
    """The lines, then one (None, None) so the last sentence is flushed."""
    yield from lines
    yield None, None
