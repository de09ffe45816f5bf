"""CRF++ model files, read into seqbil models that tag as `crf_test` does.

CRF++ (0.5x, `feature_index.cpp`) keeps a model as its labels, its template lines, a
dictionary from each feature string (a template expanded at a token, "U05:He/PRP")
to the offset of its weights, and the weights: for a U feature one per label,
alpha[id + y]; for a B feature one per label pair, alpha[id + y' * L + y] with y'
the previous label. A node's score is the sum of its U features' weights, an edge's
the sum of its B features' (positions 1 and after; there is no start or end score),
each times crf_test's cost factor (`-c`, 1 by default).

- The binary model that `crf_learn` writes: version (100), type, cost factor, maxid,
  xsize, then the labels and templates as NUL-terminated strings, the dictionary as a
  Darts double array (`darts.h`: units of int32 base and uint32 check; a child of a
  node whose children start at `base` is at base + byte + 1 with check = base, the
  end of a key at base itself, its value -base - 1), and maxid float32 weights.
- The text model of `crf_learn -t` (model.txt): the same, a line each, "ID KEY" for
  the dictionary and the weights in decimal (float64).

A seqbil model keys a template's attributes by the ids of the cells its macros read,
not by strings, so each feature string is taken apart again into the cells of the
template that made it. Where a string could come from several tuples of cells (the
separator of two macros also inside a cell: "U05:1/2/3" from "1/2" and "3" or from
"1" and "2/3"), every tuple gets the weight: CRF++ gives each of those tuples that
string, hence that weight. Strings that two templates can make (the same "U01:"
prefix on two lines) count for both, and a template written twice counts twice, as
in CRF++.
"""
import hashlib
import re
import struct

import numpy as np

from ..errors import ModelFileError
from ..evaluation import choose_metric
from ..features.index import LAYOUT, FeatureIndex, Vocabulary
from ..features.templates import TemplateSet, parse_template
from ..formats.conll import MAX_FIELDS
from ..model import Model
from ..modelfile import crfpp_form
from .keyed import feature_cells, model_labels, text_of, weight_tables

_HEAD = struct.Struct("<IidIII")  # version, type, cost factor, maxid, xsize, size of the double array
_MACRO = re.compile(r"%x\[(-?\d+),(\d+)\]")
MAX_CONTEXT = 8  # CRF++'s kMaxContextSize: the boundary symbols _B-1.._B-8, _B+1.._B+8


class CrfppModel:
    """What a CRF++ model file holds: labels, template lines, feature strings with the
    offsets of their weights, and the weights (all strings as bytes)."""

    def __init__(self, version, cost_factor, xsize, labels, templates, keys, offsets, alpha, form):
        self.version, self.cost_factor, self.xsize = version, cost_factor, xsize
        self.labels, self.templates = labels, templates
        self.keys, self.offsets, self.alpha, self.form = keys, offsets, alpha, form


def read(path):
    """The CrfppModel of a binary or text CRF++ model file."""
    with open(path, "rb") as f:
        data = f.read()
    form = crfpp_form(data[:64])
    if form == "text":
        return _read_text(path, data)
    if form == "binary":
        return _read_binary(path, data)
    raise ModelFileError(f"{path}: not a CRF++ model file (neither crf_learn's binary model nor its -t text model)")


def _strings(blob):
    return [s for s in blob.split(b"\0") if s]


def _read_binary(path, data):
    def broken(what):
        return ModelFileError(f"{path}: a damaged or truncated CRF++ model ({what})")

    try:
        version, _, cost, maxid, xsize, dsize = _HEAD.unpack_from(data)
        at = _HEAD.size
        (ysize,) = struct.unpack_from("<I", data, at)
        labels = _strings(data[at + 4:at + 4 + ysize])
        at += 4 + ysize
        (tsize,) = struct.unpack_from("<I", data, at)
        templates = _strings(data[at + 4:at + 4 + tsize])
        at += 4 + tsize
    except struct.error:
        raise broken("header") from None
    if at + dsize + 4 * maxid != len(data) or dsize % 8:
        raise broken(f"{len(data)} bytes where its header says {at + dsize + 4 * maxid}")
    units = np.frombuffer(data, dtype=np.dtype([("base", "<i4"), ("check", "<u4")]), count=dsize // 8, offset=at)
    alpha = np.frombuffer(data, dtype="<f4", count=maxid, offset=at + dsize)
    keys, offsets = double_array_keys(units["base"].astype(np.int64), units["check"].astype(np.int64), broken)
    return CrfppModel(version, cost, xsize, labels, templates, keys, offsets, alpha, "binary")


def double_array_keys(base, check, broken=ValueError):
    """(keys, values) of a Darts double array: every key as bytes, sorted, and its
    value. Walks up from the ends of the keys to the root, one step for all keys at
    once: a unit p other than the root with check[p] = c != 0 is a child of the node
    whose children start at c (c is that node's base; Darts gives no two nodes the
    same base), on byte p - c - 1, or the end of a key when p = c."""
    n = len(base)
    if n < 2 or base[0] != 1:
        raise broken("double array")
    pos = np.arange(n)
    child = np.flatnonzero(check != 0)
    child = child[child > 0]
    ends = child[check[child] == child]
    inner = child[check[child] != child]
    if np.any(base[inner] <= 0) or np.any(base[inner] >= n) or np.any(base[ends] >= 0) or \
            np.any(check[child] >= n):
        raise broken("double array")
    node_at = np.full(n, -1, dtype=np.int64)  # the node whose children start at c
    node_at[base[inner]] = inner
    node_at[1] = 0  # the root's children start at 1
    # every inner node reaches the root, found by doubling each node's step up: a cycle
    # would keep every key below it walking (and a row per step) until the walk's cap
    up = np.zeros(n, dtype=np.int64)
    up[inner] = node_at[check[inner]]
    if np.any(up[inner] < 0):
        raise broken("double array")
    for _ in range(int(n).bit_length() + 1):
        up = up[up]
    if np.any(up[inner] != 0):
        raise broken("a cycle in the double array")
    values = -base[ends] - 1
    chars, lengths = [], np.zeros(len(ends), dtype=np.int64)
    at = node_at[check[ends]]
    live = np.arange(len(ends))
    while len(live):
        q = at[live]
        if np.any(q < 0):
            raise broken("double array")
        going = q != 0
        live, q = live[going], q[going]
        if not len(live):
            break
        if len(chars) > 1 << 16:
            raise broken("a cycle in the double array")
        step = np.zeros(len(ends), dtype=np.uint8)
        step[live] = pos[q] - check[q] - 1
        chars.append(step)
        lengths[live] += 1
        at[live] = node_at[check[q]]
    if not chars:
        return [b""] * len(ends), values
    table = np.stack(chars[::-1], axis=1) if chars else np.zeros((len(ends), 0), np.uint8)
    width = table.shape[1]
    keys = [row[width - k:].tobytes() for row, k in zip(table, lengths.tolist())]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return [keys[i] for i in order], values[order]


def _read_text(path, data):
    lines = data.split(b"\n")
    number = 0

    def broken(what):
        return ModelFileError(f"{path}:{number}: a damaged CRF++ text model ({what})")

    def section():
        nonlocal number
        out = []
        while True:
            if number >= len(lines):
                raise broken("ends too early")
            line = lines[number].rstrip(b"\r")
            number += 1
            if not line:
                return out
            out.append(line)

    header = {}
    for line in section():
        name, _, value = line.partition(b" ")
        header[name.rstrip(b":").decode("ascii", "replace")] = value.strip()
    try:
        version, cost = int(header["version"]), float(header["cost-factor"])
        maxid, xsize = int(header["maxid"]), int(header["xsize"])
    except (KeyError, ValueError):
        raise broken("the header needs version, cost-factor, maxid and xsize") from None
    if version // 100 != 1 or maxid <= 0 or xsize <= 0:
        raise broken(f"version {version}, maxid {maxid}, xsize {xsize}")
    labels, templates = section(), section()
    keys, offsets = [], []
    for line in section():
        fid, _, key = line.partition(b" ")
        if not fid.isdigit() or not key:
            raise broken("a feature line is ID KEY")
        keys.append(key)
        offsets.append(min(int(fid), maxid))  # (past the weights either way: refused with the others)
    rest = [line for line in lines[number:] if line.strip()]
    if len(rest) != maxid:
        number = len(lines)
        raise broken(f"{len(rest)} weights where maxid says {maxid}")
    try:
        alpha = np.array([float(w) for w in rest], dtype=np.float64)
    except ValueError:
        raise broken("a weight that is not a number") from None
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return CrfppModel(version, cost, xsize, labels, templates, [keys[i] for i in order],
                      np.array(offsets, dtype=np.int64)[order], alpha, "text")


# --- to a seqbil model ------------------------------------------------------------------------------------------------

def _pieces(template):
    """(literal pieces, ((row, column), ...)) of a CRF++ template line."""
    pieces, macros, last = [], [], 0
    for m in _MACRO.finditer(template):
        pieces.append(template[last:m.start()])
        macros.append((int(m.group(1)), int(m.group(2))))
        last = m.end()
    pieces.append(template[last:])
    return pieces, macros


def _read_templates(crf, path, text):
    """(templates, parts, texts) of a CRF++ model's template lines: each distinct
    line as a seqbil Template, its (literal pieces, macros, how often it is
    given), and its text."""
    counts = {}  # template line -> how often it is given (CRF++ counts a repeated line twice)
    for raw in crf.templates:
        line = text(raw, "the template")
        counts[line] = counts.get(line, 0) + 1
    templates, parts = [], []
    for line, mult in counts.items():
        if line[:1] not in ("U", "B"):
            raise ModelFileError(f"{path}: template {line!r} is neither U nor B")
        pieces, macros = _pieces(line)
        for r, c in macros:
            if abs(r) > MAX_CONTEXT or c >= crf.xsize:
                raise ModelFileError(f"{path}: template {line!r} reads %x[{r},{c}], outside CRF++'s {crf.xsize} "
                                     f"columns and {MAX_CONTEXT} rows")
        t = parse_template(line, str(path))
        if any(f.chain or f.kind or f.source for _, f in t.refs) or len(t.refs) != len(macros):
            raise ModelFileError(f"{path}: template {line!r} reads as something other than CRF++'s %x macros in "
                                 f"seqbil (a function chain after a macro?)")
        templates.append(t)
        parts.append((pieces, macros, mult))
    texts = [t.text for t in templates]
    if len(set(texts)) != len(texts):
        raise ModelFileError(f"{path}: two templates differ only in blanks at their ends")
    return templates, parts, texts


def _feature_cells(crf, parts, text):
    """(keys, offsets, found): the feature strings sorted, the offsets of their
    weights, and found[t], the (offset, (cell, ...)) of every tuple of cells that
    template t expands to one of them."""
    # the feature strings as text (cells are cut at characters, not bytes)
    return feature_cells([text(k, "the feature") for k in crf.keys], crf.offsets, parts)


def _vocabularies(tset, parts, found):
    """({Field: Vocabulary}, {column: {cell: id}}) of the columns the templates
    read, their values in order of first appearance."""
    # the vocabulary of each column: every cell that is not only a boundary symbol
    columns = {f.column: f for f in tset.fields}
    values = {c: {} for c in columns}
    for t, (pieces, macros, _) in enumerate(parts):
        for _, cells in found[t]:
            for (_, c), cell in zip(macros, cells):
                values[c].setdefault(cell, None)
    vocab = {columns[c]: Vocabulary(values[c]) for c in columns}
    ids = {c: {v: i for i, v in enumerate(values[c])} for c in columns}
    return vocab, ids


def _options(index, parts, ids):
    """The ids a cell of a template's macro stands for in the index: its value's, and a
    boundary symbol's when the cell is one (_B-2 is also a value: both tuples fire)."""
    K = index.K
    boundary = {f"_B-{k}": k - 1 for k in range(1, K + 1)}
    boundary.update({f"_B+{k}": K + k - 1 for k in range(1, K + 1)})
    value0 = 2 * K + 1

    def options(t, m, cell):
        c = parts[t][1][m][1]
        return [value0 + ids[c][cell]] + ([boundary[cell]] if cell in boundary else [])
    return options


def to_model(crf, path, encoding="utf-8", precision=None):
    """A seqbil Model (linear, float64 or float32 weights) that scores every labelling
    as crf_test scores it at cost factor 1 (the default of its -c). precision: of the
    stored weights; default the file's (float32 for a binary model, float64 for a
    text one)."""

    text = text_of(path, encoding)
    labels = model_labels(path, crf.labels, text, "CRF++")
    S = len(labels)
    if not 0 < crf.xsize < MAX_FIELDS:  # (the columns of a line but the label)
        raise ModelFileError(f"{path}: a CRF++ model of {crf.xsize} columns: seqbil reads 1 to {MAX_FIELDS - 1:,}")
    templates, parts, texts = _read_templates(crf, path, text)
    tset = TemplateSet(templates)
    keys, offsets, found = _feature_cells(crf, parts, text)
    vocab, ids = _vocabularies(tset, parts, found)
    index = FeatureIndex(tset, vocab, [None, None], "none", LAYOUT)
    alpha = np.asarray(crf.alpha, dtype=np.float64)
    if len(offsets) and (offsets.min() < 0 or offsets.max() >= len(alpha)):
        raise ModelFileError(f"{path}: a feature's weights lie outside the model's {len(alpha)}")
    tables, blocks = weight_tables(path, index, texts, parts, found, _options(index, parts, ids), alpha, S)
    trans = np.zeros((S, S + 1))
    for t, tmpl in enumerate(templates):  # B lines without macros: the label transitions
        if tmpl.order == 1 and not tmpl.refs:
            pieces, _, mult = parts[t]
            for off, _ in found[t]:
                if off + S * S > len(alpha):
                    raise ModelFileError(f"{path}: a feature's weights lie outside the model's {len(alpha)}")
                trans[:, :S] += alpha[off:off + S * S].reshape(S, S).T * mult  # [y, y'] from alpha[y' * S + y]
    index.tables = tables
    W1 = np.zeros((len(blocks[1]), S, S + 1))
    W1[:, :, :S] = blocks[1].reshape(-1, S, S).transpose(0, 2, 1)  # no 1st-order score at the start (y' = S)
    metric, _ = choose_metric(labels)
    corpus = {"format": "conll", "n_fields": crf.xsize + 1, "label_column": -1, "encoding": encoding,
              "normalize": "none", "metric": metric, "scheme": "auto"}
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    training = {"learner": None, "converted_from": {
        "format": "crfpp", "form": crf.form, "version": crf.version, "file": str(path), "sha256": digest,
        "cost_factor": crf.cost_factor, "encoding": encoding, "features": len(keys), "weights": int(len(alpha))}}
    model = Model("linear", labels, index, corpus, {"W0": blocks[0], "W1": W1, "trans": trans, "end": np.zeros(S)},
                  training, precision=precision or ("float32" if crf.form == "binary" else "float64"))
    # crf_test sums a binary model's float32 weights in float32: so does the converted model
    # (a text model is read in float64 and summed so; crf_test reads only binary models)
    model.sums32 = crf.form == "binary" and model.precision == "float32"
    model.compact()
    return model
