"""Wapiti (1.5.0) model files (its patterns: features/patterns.py).

A Wapiti model file (model.c: mdl_save) is text: `#mdl#TYPE#N` (2 for a CRF), the
reader `#rdr#PATTERNS/COLUMNS/AUTOUNI`, each pattern as a netstring `LEN:TEXT,`, the
labels `#qrk#Y` and the observations `#qrk#O` likewise, then N lines `F=WEIGHT` (a
hexadecimal float) of the non-zero weights. Observation o made by a `u` pattern has Y
weights from its offset, one per label; a `b` one Y x Y, [y' * Y + y] for the previous
label y'; a `*` one both, in that order; offsets follow the observations' order
(mdl_sync). A position's score is the sum of its observations' unigram weights, and
from the second position on the bigram weights of its `b` observations: there is no
start or end score. Outside the sentence a cell reads `_x-1` .. `_x-4` and `_x-#`
before it, `_x+1` .. `_x+#` after it. Read into a seqbil model whose templates are the
patterns', its attributes the observations taken apart into the cells of their
patterns (as a CRF++ model's feature strings, keyed.py), and whose boundary symbols
read as Wapiti's do (a `%t` at a row outside the sentence reads as `false` when
Wapiti's test on `_x-1` gives that), it labels every sequence as `wapiti label` does.
"""
import hashlib
import re

import numpy as np

from ..errors import ConfigError, ModelFileError
from ..evaluation import choose_metric
from ..features.functions import apply_chain
from ..features.index import LAYOUT, FeatureIndex, Vocabulary
from ..features.patterns import KINDS, translate
from ..features.templates import TemplateSet
from ..formats.conll import MAX_FIELDS
from ..model import Model
from .keyed import feature_cells, model_labels, text_of, weight_tables

TYPES = ("maxent", "memm", "crf")  # (mdl_t's type)

# --- model files -------------------------------------------------------------------------------------------------------

class WapitiModel:
    """What a Wapiti model file holds: its type, patterns, labels and observations
    (bytes) and the non-zero weights by feature number."""

    def __init__(self, kind, columns, patterns, labels, observations, weights):
        self.kind, self.columns, self.patterns = kind, columns, patterns
        self.labels, self.observations, self.weights = labels, observations, weights


class _Reader:
    def __init__(self, path, data):
        self.path, self.data, self.at = path, data, 0

    def broken(self, what):
        return ModelFileError(f"{self.path}: not a Wapiti model file, or a damaged one ({what})")

    def line(self, pattern, what):
        end = self.data.find(b"\n", self.at)
        if end < 0:
            raise self.broken(f"the file ends inside a line, at byte {self.at} (truncated?)")
        m = re.fullmatch(pattern, self.data[self.at:end])
        if m is None:
            raise self.broken(f"no {what} at byte {self.at}")
        self.at = end + 1
        return m.groups()

    def netstring(self, what):
        colon = self.data.find(b":", self.at, self.at + 12)
        if colon < 0 or not self.data[self.at:colon].isdigit():
            raise self.broken(f"no {what} at byte {self.at}")
        n = int(self.data[self.at:colon])
        end = colon + 1 + n
        if self.data[end:end + 1] != b",":
            raise self.broken(f"{what} at byte {self.at} does not end where its length says")
        value = self.data[colon + 1:end]
        self.at = end + 2  # (",\n")
        return value

    def strings(self, count, what):
        if count > len(self.data):
            raise self.broken(f"{count:,} {what} in a file of {len(self.data):,} bytes")
        return [self.netstring(what) for _ in range(count)]


def read(path):
    """The WapitiModel of a Wapiti model file."""
    with open(path, "rb") as f:
        data = f.read()
    r = _Reader(path, data)
    head = re.match(rb"#mdl#(?:(\d+)#)?(\d+)\n", data)
    if head is None:
        raise r.broken("it does not start with #mdl#")
    r.at = head.end()
    kind, n = int(head.group(1) or 0), int(head.group(2))
    n_patterns, columns, _ = r.line(rb"#rdr#(\d+)/(\d+)(?:/(-?\d+))?", "reader line (#rdr#)")
    patterns = r.strings(int(n_patterns), "pattern")
    labels = r.strings(int(r.line(rb"#qrk#(\d+)", "label count (#qrk#)")[0]), "label")
    observations = r.strings(int(r.line(rb"#qrk#(\d+)", "observation count (#qrk#)")[0]), "observation")
    if n > len(data):
        raise r.broken(f"{n:,} weights in a file of {len(data):,} bytes")
    weights = {}
    for _ in range(n):
        f, value = r.line(rb"(\d+)=([-+0-9a-fA-FxXpP.]+|[-+]?(?:inf|nan))", "weight line (F=WEIGHT)")
        try:
            weights[int(f)] = float.fromhex(value.decode())
        except ValueError:
            raise r.broken(f"a weight that is not a number, {value[:30]!r}") from None
    return WapitiModel(kind, int(columns), patterns, labels, observations, weights)


def _offsets(path, observations, S):
    """(kinds, unigram offsets, bigram offsets, number of features) of the observations,
    as mdl_sync lays them out."""
    kinds, uoff, boff, F = [], [], [], 0
    for obs in observations:
        kind = obs[:1].decode("latin-1")
        if kind not in KINDS:
            raise ModelFileError(f"{path}: observation {obs[:40]!r} is of no kind Wapiti has (u, b or *)")
        kinds.append(kind)
        uoff.append(F if kind in "u*" else -1)
        F += S if kind in "u*" else 0
        boff.append(F if kind in "b*" else -1)
        F += S * S if kind in "b*" else 0
    return kinds, np.array(uoff), np.array(boff), F


def _boundary(k, K):
    """Wapiti's cell at a row k positions before (k < 0) or after (k > 0) the sentence,
    and seqbil's boundary id for it (index layout boundaries-first)."""
    if k < 0:
        return (f"_x{k}" if k >= -4 else "_x-#"), -k - 1
    return (f"_x+{k}" if k <= 4 else "_x+#"), K + k - 1


def to_model(wm, path, encoding="utf-8", precision=None, fields=None):
    """A seqbil Model (linear, float64 weights unless precision says) that labels every
    sequence as `wapiti label` does with the model. fields: of the data lines, the
    label included (a Wapiti model does not record them; default: the highest column
    its patterns read, plus the label)."""
    if wm.kind != 2:
        what = TYPES[wm.kind] if 0 <= wm.kind < len(TYPES) else f"type {wm.kind}"
        raise ModelFileError(f"{path}: a Wapiti {what} model: seqbil converts Wapiti's CRF models (wapiti train "
                             "-T crf, the default)")
    if not wm.patterns:
        raise ModelFileError(f"{path}: a Wapiti model trained without patterns (its data gave the features): "
                             "seqbil converts models of pattern files")

    text = text_of(path, encoding)
    labels = model_labels(path, wm.labels, text, "Wapiti")
    S = len(labels)
    templates, parts, counts = [], [], {}
    for raw in wm.patterns:
        pattern = text(raw, "the pattern")
        try:
            made, pieces, macros = translate(pattern[:1].lower() + pattern[1:], str(path))
        except ConfigError as exc:
            raise ModelFileError(exc.message) from None
        for t in made:
            counts[t.text] = counts.get(t.text, 0) + 1
            if counts[t.text] == 1:
                templates.append(t)
                parts.append([pieces, macros, 1])
            else:  # (a pattern given twice adds its observation twice at a position)
                parts[[x.text for x in templates].index(t.text)][2] += 1
    tset = TemplateSet(templates)
    # (the columns the patterns read, not the file's word for them: the data has those and a label)
    columns = max([f.column for f in tset.fields] or [0])
    kinds, uoff, boff, F = _offsets(path, wm.observations, S)
    theta = np.zeros(F)
    for f, w in wm.weights.items():
        if not 0 <= f < F:
            raise ModelFileError(f"{path}: weight {f} is past the model's {F:,} features")
        theta[f] = w
    # the observations as text (a %m match may cut a character: its bytes are kept escaped, as wmatch keeps them)
    escaped = text_of(path, encoding, "backslashreplace")
    observations = [escaped(o, "the observation") for o in wm.observations]
    found = {}
    for order, offsets in ((0, uoff), (1, boff)):
        keep = [i for i, k in enumerate(kinds) if k in ("u*" if order == 0 else "b*")]
        ts = [i for i, t in enumerate(templates) if t.order == order]
        _, _, got = feature_cells([observations[i] for i in keep], offsets[keep], [parts[i] for i in ts])
        for j, i in enumerate(ts):
            found[i] = got[j]
    index = FeatureIndex(tset, _vocabularies(tset, templates, found), [None, None], "none", LAYOUT)
    tables, blocks = weight_tables(path, index, [t.text for t in templates], parts, found,
                                   _options(index, templates), theta, S)
    trans = np.zeros((S, S + 1))
    for i, t in enumerate(templates):  # b patterns without commands: the label transitions
        if t.order == 1 and not t.refs:
            for off, _ in found[i]:
                trans[:, :S] += theta[off:off + S * S].reshape(S, S).T * parts[i][2]
    index.tables = tables
    W1 = np.zeros((len(blocks[1]), S, S + 1))
    W1[:, :, :S] = blocks[1].reshape(-1, S, S).transpose(0, 2, 1)  # no bigram score at the first position
    metric, _ = choose_metric(labels)
    if fields is not None and not columns + 2 <= fields <= MAX_FIELDS:
        raise ModelFileError(f"{path}: its patterns read column {columns}: the data lines have "
                             f"{columns + 2} to {MAX_FIELDS:,} fields with the label, not {fields}")
    corpus = {"format": "conll", "n_fields": fields or columns + 2, "label_column": -1, "encoding": encoding,
              "normalize": "none", "metric": metric, "scheme": "auto"}
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    training = {"learner": None, "converted_from": {
        "format": "wapiti", "type": TYPES[wm.kind], "file": str(path), "sha256": digest, "encoding": encoding,
        "observations": len(observations), "weights": len(wm.weights)}}
    model = Model("linear", labels, index, corpus, {"W0": blocks[0], "W1": W1, "trans": trans, "end": np.zeros(S)},
                  training, precision=precision or "float64")
    model.compact()
    return model


def _vocabularies(tset, templates, found):
    """{Field: Vocabulary} of what the macros read, each field's values in order of
    first appearance."""
    values = {f: {} for f in tset.fields}
    for i, t in enumerate(templates):
        for _, made in found[i]:
            for (_, field), cell in zip(t.refs, made):
                values[field].setdefault(cell, None)
    return {f: Vocabulary(v) for f, v in values.items()}


def _options(index, templates):
    """The ids a cell of a macro stands for: its value's, and those of the boundary
    symbols whose Wapiti cell reads as it through the macro's functions."""
    K, value0 = index.K, 2 * index.K + 1
    ids = {f: v.index for f, v in index.fields.items()}
    reads = {}  # field -> {cell: [boundary ids]}
    for f in ids:
        reads[f] = {}
        for k in [*range(-K, 0), *range(1, K + 1)]:
            cell, b = _boundary(k, K)
            reads[f].setdefault(apply_chain(f.chain, cell), []).append(b)

    def options(t, m, cell):
        field = templates[t].refs[m][1]
        return [value0 + ids[field][cell], *reads[field].get(cell, ())]
    return options
