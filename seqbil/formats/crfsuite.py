"""CRFsuite's attribute files (what `crfsuite learn` and `crfsuite tag` read): one
item per line, the label first, then its attributes, all separated by tabs; a blank
line between sequences. An attribute is NAME or NAME:WEIGHT (weight 1 when left out);
in both, ``\\:`` is a colon and ``\\\\`` a backslash (CRFsuite's frontend/iwa.c).

`seqbil tag` writes one label per line and a blank line after each sequence, as
`crfsuite tag` does; with --marginals, ``@probability\\tP`` before each sequence and
``LABEL:P`` (the label's marginal), as `crfsuite tag -p -i`; with --all-marginals
every label's ``\\tLABEL:P`` after it, as `-l`. Probabilities are printed with six
decimals, as CRFsuite prints them.

A sequence ends at an empty line, as in CRFsuite. Where CRFsuite reads past a
malformed line, seqbil stops with the file and line: a weight that is not a finite
number (CRFsuite reads it as 0), a second unescaped colon in a field, a colon in the
label (CRFsuite keeps what comes before it), a line of only blanks (CRFsuite drops a
line of tabs and takes one of spaces as an item labelled with them), a declaration
(``@weight``: CRFsuite's instance weights, which seqbil does not train with)."""
import math

from ..errors import ConfigError, InputError, SeqbilError
from .base import Format, prob_text, register, score_text
from .sentence import Sentence
from .textio import read_lines


def _marginal(field):
    """(label, True) of a LABEL:PROB field, else (field, False)."""
    head, colon, tail = field.rpartition(":")
    if colon and head:
        try:
            float(tail)
            return head, True
        except ValueError:
            pass
    return field, False


def predicted_label(text):
    """The predicted label of a line of `crfsuite tag` (or `seqbil tag`) output: the
    label, LABEL:P (-i), then every label's L:P (-l); with -r the reference label
    first: REF<TAB>LABEL[:P]. A line of 2 fields whose second is L:P and first is not
    is -r -i (a model of one label, -l, would give the same, and the same answer)."""
    fields = text.split("\t")
    first, first_p = _marginal(fields[0])
    if len(fields) == 1:
        return first
    second, second_p = _marginal(fields[1])
    if not second_p or (len(fields) == 2 and not first_p):  # -r, -r -i
        return second
    return first


def read_label_lines(source, encoding="utf-8"):
    """Sentences (labels only) of `crfsuite tag` output (see predicted_label); the
    ``@`` lines (-p) skipped."""
    name = getattr(source, "name", str(source) if source not in (None, "-") else "<stdin>")
    labels, first = [], 0
    for number, text in read_lines(source, encoding):
        if text.startswith("@"):
            continue
        if not text.strip(" \t"):
            if labels:
                yield Sentence([], labels, first, items=[[]] * len(labels))
                labels = []
            continue
        label = predicted_label(text)
        if not label:
            raise InputError(name, number, "a line without a label")
        if not labels:
            first = number
        labels.append(label)
    if labels:
        yield Sentence([], labels, first, items=[[]] * len(labels))


def _unescape(field):
    """(name, weight text or None) of an attribute field with escapes."""
    parts, cur, i, n = [], [], 0, len(field)
    while i < n:
        c = field[i]
        if c == "\\" and i + 1 < n and field[i + 1] in ":\\":
            cur.append(field[i + 1])
            i += 2
            continue
        if c == ":":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(c)
        i += 1
    parts.append("".join(cur))
    if len(parts) > 2:
        raise ValueError(f"attribute {field!r} has more than one unescaped ':' (write \\: for a colon in a name)")
    return parts[0], (parts[1] if len(parts) == 2 else None)


def parse_attribute(field):
    """(name, weight) of one attribute field: weight 1.0 without ':WEIGHT'."""
    if "\\" in field:
        name, weight = _unescape(field)
    else:
        name, colon, weight = field.partition(":")
        if ":" in weight:
            raise ValueError(f"attribute {field!r} has more than one unescaped ':' (write \\: for a colon in a name)")
        weight = weight if colon else None
    if not weight:  # CRFsuite: an empty weight is 1
        return name, 1.0
    try:
        value = float(weight)
    except ValueError:
        raise ValueError(f"attribute {field!r}: the weight {weight!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"attribute {field!r}: the weight {weight!r} is not a finite number")
    return name, value


def escape(name):
    """An attribute name as an attribute file writes it."""
    return name.replace("\\", "\\\\").replace(":", "\\:")


def _label(field):
    """The label of an item line (the first field), unescaped as CRFsuite reads it."""
    name, weight = _unescape(field) if "\\" in field or ":" in field else (field, None)
    if weight is not None:
        raise ValueError(f"the label {field!r} has an unescaped ':'")
    return name


@register
class CrfsuiteFormat(Format):
    """CRFsuite's attribute files (see the module's description)."""

    name = "crfsuite"
    n_fields = None  # no columns: the tokens are their attributes
    attributes = True
    spaced_labels = True  # a label is a whole field, spaces and all
    notes = "@"  # CRFsuite's output marks its notes so (@probability)
    default_config = "crfsuite"

    def read(self, source, labeled=True, encoding="utf-8", keep_empty=False):
        """Sentences whose items are [(name, weight), ...] lists; labels from the first
        field of each line (labeled=False: kept when every item of the sequence has a
        non-empty one, else None)."""
        name = getattr(source, "name", str(source) if source not in (None, "-") else "<stdin>")
        items, labels, first = [], [], 0
        for number, text in read_lines(source, encoding):
            if not text:
                if items:
                    yield self._sentence(items, labels, first, labeled, name)
                    items, labels = [], []
                continue
            fields = [f for f in text.split("\t") if f]
            try:
                if not fields or not fields[0].strip(" "):
                    raise ValueError("a line of only blanks: a sequence ends at an empty line, and an item starts "
                                     "with its label")
                if fields[0].startswith("@"):
                    raise ValueError(f"declaration {fields[0]!r}: CRFsuite's instance weights (@weight) are not "
                                     f"supported")
                label = _label(fields[0])
                attrs = [parse_attribute(f) for f in fields[1:]]
            except ValueError as exc:
                raise InputError(name, number, str(exc)) from None
            if labeled and not label:
                raise InputError(name, number, "an item without a label (the first field of the line)")
            if not items:
                first = number
            items.append([a if a[1] != 1.0 else a[0] for a in attrs])
            labels.append(label)
        if items:
            yield self._sentence(items, labels, first, labeled, name)

    @staticmethod
    def _sentence(items, labels, first, labeled, name):
        if not labeled and not all(labels):
            labels = None
        return Sentence([], labels, first, items=items)

    def write(self, sentence, tags):
        """A label per line (a tag may also be a tuple: the label, then the fields
        after it, as --marginals gives), then a blank line."""
        return "".join((t if isinstance(t, str) else t[0] + "".join(t[1:])) + "\n" for t in tags) + "\n"

    def layout(self):
        return 0, None  # no columns

    def check_templates(self, templates, corpus, origin, tokens=None):
        if any(t not in templates.item_templates and t.refs for t in templates.templates):
            bad = next(t.text for t in templates.templates if t not in templates.item_templates and t.refs)
            raise ConfigError(origin, 0, f"template {bad!r} reads columns, but CRFsuite's files give each token's "
                              f"attributes: use U:%attr (and B, B:%attr)")
        if not templates.items:
            raise ConfigError(origin, 0, "CRFsuite's files give each token's attributes: the templates need U:%attr")
        return templates

    def sentence(self, tokens, number):
        """The Sentence of a list of items, each a dict of attributes or a list of
        attribute names (_kernels/items.pyx reads them)."""
        if isinstance(tokens, (str, bytes, dict)):
            raise SeqbilError(f"sentence {number}: give a list of items (each a dict of attributes or a list of "
                              f"attribute names)")
        return Sentence([], None, number, items=list(tokens))

    def annotated(self, sentences, name):
        raise InputError(f"<{name}>", 0, "sentences of attributes are given in memory through seqbil.sklearn.CRF; "
                         "here, give a file")

    def with_margins(self, tags, margins):
        return [(tag, f"\t{score_text(m)}") for tag, m in zip(tags, margins)]

    def read_predictions(self, source, encoding="utf-8"):
        """`crfsuite tag`'s output: a label per line."""
        return list(read_label_lines(source, encoding))

    def write_marginals(self, sentence, paths, table, labels, every, nbest):
        """As crfsuite tag -p -i (and -l): @probability, then LABEL:P per item."""
        index = {y: k for k, y in enumerate(labels)}
        every_label = ["".join(f"\t{y}:{q:.6f}" for y, q in zip(labels, row)) for row in table] if every \
            else [""] * len(table)
        parts = []
        for rank, (tags, p) in enumerate(paths):
            parts.append(f"@{rank} {prob_text(p)}\n" if nbest else f"@probability\t{p:.6f}\n")
            parts.append(self.write(sentence, [f"{y}:{row[index[y]]:.6f}{more}"
                                               for y, row, more in zip(tags, table, every_label)]))
        return "".join(parts)
