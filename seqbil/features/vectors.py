"""Real-valued features: a dense vector per token, read by the template macro
``%vec[r,c,NAME]``.

The cell (column c of the token r rows away) is looked up in a table of word vectors;
each of its D components becomes a real-valued 0-order feature, with a weight per
label, in every learner. A word not in the table is looked up in lower case; failing
that it is unknown: by default an indicator feature of its own then stands in (a
learned vector: in a linear model a learned unknown vector only adds a weight per
label), or nothing at all (the zero vector).

Vectors files: word2vec's text format (an optional "COUNT DIM" first line, then a
word and its components per line), or a ``.npy`` matrix with a vocabulary file beside
it (``NAME.vocab``, or ``NAME.txt``: one word per line, row order). A model keeps
only the rows of the words it was trained on, so its file stays self-contained.

``%emb[r,c]`` reads the vectors named EMB, made by `embedding_table` from the
`embeddings` setting: every word of the training data has a row (its vector from the
file, or a random one), up to `vocab` further words of the file keep theirs, and a last
row (the empty word) is the fallback that any other word reads. The rpa learner adapts
them to the task (learners/rpa.py); `live` then leaves their entries out of the encoded
training corpus, whose rows of them (`emb_rows`) the learner reads instead.
"""
from pathlib import Path

import numpy as np

from ..errors import ConfigError, InputError
from ..formats.sentence import Corpus
from ..formats.textio import read_lines
from .templates import EMB

FALLBACK = ""  # the fallback row of an EMB table: no token is the empty string

FLOAT32_MAX = float(np.finfo(np.float32).max)  # vectors are kept in float32
MAX_DIM = 10 ** 5  # of random:K embeddings (a row per training word)


class VectorTable:
    """Words and their vectors (float32, rows in word order)."""

    def __init__(self, words, matrix):
        self.words = list(words)
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if self.matrix.ndim != 2 or len(self.words) != self.matrix.shape[0]:
            raise ValueError(f"{len(self.words)} words for a matrix of shape {self.matrix.shape}")
        self.index = {w: i for i, w in enumerate(self.words)}

    @property
    def dim(self):
        return self.matrix.shape[1]

    def __len__(self):
        return len(self.words)

    def rows(self, values):
        """Row of each value: exact, else its lower case, else -1."""
        get, out = self.index.get, np.empty(len(values), dtype=np.int64)
        for i, v in enumerate(values):
            r = get(v)
            if r is None:
                r = get(v.lower(), -1)
            out[i] = r
        return out

    def subset(self, rows):
        """The table of the given rows only (sorted, each once)."""
        rows = np.unique(rows[rows >= 0])
        return VectorTable([self.words[r] for r in rows], self.matrix[rows])

    @classmethod
    def read(cls, path, encoding="utf-8"):
        path = Path(path)
        if path.suffix == ".npy":
            return cls._read_npy(path, encoding)
        words, rows, dim = [], [], None
        for number, line in read_lines(str(path), encoding):
            parts = line.rstrip().split(" ")
            if number == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue  # word2vec's "COUNT DIM" header
            if not line.strip():
                continue
            try:
                vec = [float(x) for x in parts[1:]]
            except ValueError:
                raise InputError(str(path), number, "not a word followed by numbers") from None
            bad = next((x for x, v in zip(parts[1:], vec) if not abs(v) <= FLOAT32_MAX), None)
            if bad is not None:
                raise InputError(str(path), number, f"the component {bad!r} is not a finite number within "
                                 f"float32's range (|x| <= 3.4e38)")
            if dim is None:
                dim = len(vec)
            if len(vec) != dim or dim == 0:
                raise InputError(str(path), number, f"{len(vec)} components, expected {dim}")
            words.append(parts[0])
            rows.append(vec)
        if not words:
            raise InputError(str(path), 0, "no vectors in the file")
        return cls(words, np.array(rows, dtype=np.float32))

    @classmethod
    def _read_npy(cls, path, encoding):
        for vocab in (path.with_suffix(".vocab"), path.with_suffix(".txt")):
            if vocab.exists():
                break
        else:
            raise InputError(str(path), 0, f"no vocabulary file beside it ({path.with_suffix('.vocab').name} or "
                             f"{path.with_suffix('.txt').name}, one word per line in row order)")
        try:
            matrix = np.load(path, allow_pickle=False)
        except (ValueError, OSError) as exc:
            raise InputError(str(path), 0, f"not a numpy matrix ({exc})") from None
        words = [line.strip() for _, line in read_lines(str(vocab), encoding)]
        if matrix.ndim != 2 or len(words) != matrix.shape[0]:
            raise InputError(str(vocab), 0, f"{len(words)} words for a matrix of shape {matrix.shape}")
        if matrix.dtype.kind not in "fiu":
            raise InputError(str(path), 0, f"a matrix of {matrix.dtype} numbers: give real numbers (float32 or "
                             f"float64)")
        out_of_range = ~(np.abs(matrix.astype(np.float64)) <= FLOAT32_MAX)
        if out_of_range.any():
            r, c = (int(i) for i in np.argwhere(out_of_range)[0])
            raise InputError(str(path), 0, f"row {r} ({words[r]!r}), component {c} is {matrix[r, c]}: not a finite "
                             f"number within float32's range")
        return cls(words, matrix)


def parse_specs(specs, origin="<settings>"):
    """{name: path} of "NAME=FILE" strings."""
    out = {}
    for spec in specs:
        name, eq, source = (x.strip() for x in spec.partition("="))
        if not eq or not name or not source:
            raise ConfigError(origin, 0, f"[features] vectors: {spec!r} is not NAME=FILE")
        if name in out:
            raise ConfigError(origin, 0, f"[features] vectors: {name!r} is given twice")
        out[name] = source
    return out


class VectorFeatures:
    """The %vec templates of a model and their tables: attribute ids after the keyed
    0-order attributes, D per template (one per component) plus one for unknown words
    when unknown = "learned"; values = the components times scale."""

    def __init__(self, templates, tables, unknown="learned", scale=1.0):
        self.templates, self.tables = list(templates), dict(tables)
        self.unknown, self.scale = unknown, scale
        self.sizes = [self.tables[t.refs[0][1].source].dim + (unknown == "learned" and t.refs[0][1].source != EMB)
                      for t in self.templates]
        self.live = False  # leave the EMB entries out of what add() makes (they are being learned)

    def firsts(self, base):
        """The first attribute id of each template's components, the first of all being base."""
        return (base + np.concatenate([[0], np.cumsum(self.sizes)[:-1]])).astype(np.int64).tolist() \
            if self.sizes else []

    def emb_rows(self, sentences, fold=None):
        """(P x E int32) the EMB row each %emb template reads at each position of the
        sentences: the fallback row for words without one, -1 outside the sentence."""
        corpus = Corpus.of(sentences)
        P, out = int(corpus.lengths.sum()), []
        for t in self.templates:
            if t.refs[0][1].source == EMB:
                out.append(np.maximum(self._rows(t, corpus, corpus.lengths, P, fold), -1))
        return np.ascontiguousarray(np.stack(out, axis=1) if out else np.zeros((P, 0)), dtype=np.int32)

    def _rows(self, t, corpus, lengths, P, fold):
        """The table row template t reads at each position: -1 unknown (the fallback row
        in an EMB table), -2 outside the sentence."""
        row_offset, field = t.refs[0]
        table = self.tables[field.source]
        values, inverse = corpus.column(field.column)  # look up each distinct value once
        rows = table.rows([fold(v) if fold else v for v in values])[inverse] if P else np.zeros(0, np.int64)
        if field.source == EMB:
            rows[rows < 0] = table.index[FALLBACK]
        starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
        ends = np.repeat(np.cumsum(lengths), lengths)
        src = np.arange(P) + row_offset
        inside = (src >= starts) & (src < ends)
        return np.where(inside, rows[np.clip(src, 0, max(P - 1, 0))] if P else rows, -2)

    @property
    def n_attributes(self):
        return sum(self.sizes)

    @classmethod
    def for_training(cls, templates, full, sentences, fold, unknown, scale, rows="seen"):
        """Keep the rows of the words the templates read in `sentences` (a list of
        Sentence or a Corpus, or what gives the distinct values of a column as
        Corpus.column does; rows="seen") or every row (rows="all")."""
        corpus, tables = (sentences if hasattr(sentences, "column") else Corpus.of(sentences)), {}
        for name in sorted({t.refs[0][1].source for t in templates}):
            table = full[name]
            if rows == "seen" and name != EMB:  # an EMB table has its rows already
                columns = {t.refs[0][1].column for t in templates if t.refs[0][1].source == name}
                values = sorted({fold(v) if fold else v for c in columns for v in corpus.column(c)[0]})
                table = table.subset(table.rows(values))
            tables[name] = table
        return cls(templates, tables, unknown, scale)

    def add(self, sentences, lengths, u_ptr, u_ids, base, fold=None):
        """(ptr, ids, vals): the CSR 0-order entries of sentences (a list of Sentence or
        a Corpus) with every template's vector entries appended at each position
        (keyed entries first, value 1)."""
        corpus = Corpus.of(sentences)
        P = int(lengths.sum())
        blocks = [(u_ptr, u_ids.astype(np.int64), None)]
        first = base
        for t, size in zip(self.templates, self.sizes):
            table = self.tables[t.refs[0][1].source]
            if self.live and t.refs[0][1].source == EMB:
                first += size
                continue
            row = self._rows(t, corpus, lengths, P, fold)
            D = table.dim
            known = row >= 0
            count = np.where(known, D, 0) + ((row == -1) & (self.unknown == "learned"))  # never in EMB
            ptr = np.zeros(P + 1, dtype=np.int64)
            np.cumsum(count, out=ptr[1:])
            ids = np.empty(int(ptr[-1]), dtype=np.int64)
            vals = np.empty(int(ptr[-1]), dtype=np.float32)
            kp = np.flatnonzero(known)
            if len(kp):
                at = (ptr[kp][:, None] + np.arange(D)).ravel()
                ids[at] = np.tile(np.arange(first, first + D), len(kp))
                vals[at] = (table.matrix[row[kp]] * self.scale).ravel()
            up = np.flatnonzero((row == -1) & (self.unknown == "learned"))
            ids[ptr[up]] = first + D
            vals[ptr[up]] = 1.0
            blocks.append((ptr, ids, vals))
            first += size
        return merge_csr(blocks, P)


def embedding_table(spec, words, vocab=0, seed=1, encoding="utf-8", origin="<settings>"):
    """The EMB table of the `embeddings` setting for the training words `words`:
    "random:K" draws each row from N(0, I / K) (rows of norm about 1) and a zero
    fallback; a vectors file gives each word its vector (tried in lower case too),
    scaled so that the file's mean row norm is 1, the file's mean vector as the
    fallback and as the start of the words it lacks, and up to `vocab` further words of
    the file (its first ones) their vectors. Returns (table, the number of training
    words the file had)."""
    words = sorted(set(words) - {FALLBACK})
    if spec.startswith("random:"):
        k = spec[len("random:"):]
        if not k.isdigit() or not 1 <= int(k) <= MAX_DIM:
            raise ConfigError(origin, 0, f"[features] embeddings = {spec!r}: write random:K with K a dimension from "
                              f"1 to {MAX_DIM:,}, or give a vectors file")
        k = int(k)
        rng = np.random.default_rng(seed)
        matrix = np.vstack([rng.normal(0.0, 1.0 / np.sqrt(k), (len(words), k)), np.zeros((1, k))])
        return VectorTable(words + [FALLBACK], matrix), 0
    if not Path(spec).is_file():
        raise ConfigError(origin, 0, f"[features] embeddings = {spec!r}: no such file (give a vectors file in "
                          f"word2vec text format, or random:K)")
    full = VectorTable.read(spec, encoding)
    matrix = full.matrix.astype(np.float64)
    matrix /= max(float(np.linalg.norm(matrix, axis=1).mean()), 1e-12)
    mean = matrix.mean(axis=0)
    rows = full.rows(words)
    known = rows >= 0
    own = np.where(known[:, None], matrix[np.maximum(rows, 0)], mean)
    seen = set(words)
    extra = [i for i, w in enumerate(full.words) if w not in seen and w != FALLBACK][:max(int(vocab), 0)]
    table = VectorTable(words + [full.words[i] for i in extra] + [FALLBACK],
                        np.vstack([own, matrix[extra], mean[None, :]]))
    return table, int(known.sum())


def merge_csr(blocks, P):
    """One CSR of several over the same P positions, entries of each position in block
    order; vals None in a block means 1."""
    counts = sum(np.diff(ptr) for ptr, _, _ in blocks)
    out_ptr = np.zeros(P + 1, dtype=np.int64)
    np.cumsum(counts, out=out_ptr[1:])
    ids = np.empty(int(out_ptr[-1]), dtype=np.int32)
    vals = np.empty(int(out_ptr[-1]), dtype=np.float32)
    filled = out_ptr[:-1].copy()
    for ptr, b_ids, b_vals in blocks:
        n = np.diff(ptr)
        # destination of each entry: its position's next free slot, then consecutive
        where = np.repeat(filled - ptr[:-1], n) + np.arange(int(ptr[-1]))
        ids[where] = b_ids
        vals[where] = 1.0 if b_vals is None else b_vals
        filled += n
    return out_ptr, ids, vals
