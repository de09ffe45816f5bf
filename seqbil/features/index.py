"""The attribute dictionary: field vocabularies and a sorted key table per template.

An attribute is a template instantiated at a token. Instead of building its CRF++
string, seqbil maps each field value to an integer once (one dictionary lookup per
token and column) and identifies the attribute by the ids its macros read
(cython_ext/features.pyx). Two attributes are equal exactly when their CRF++
strings are equal, boundary symbols included. Attribute ids are positions in the
concatenated key tables, template by template.
"""
import unicodedata
from functools import partial
from itertools import chain, count, repeat

import numpy as np

from .._kernels.features import attribute_keys, lookup_csr
from . import dictionaries
from .functions import apply_chain

_MAX_RADIX = 1 << 62
NORMALIZERS = ("none", "nfkc")


def normalizer(name):
    """Field values as the templates see them: unchanged, or NFKC-folded (full-width
    digits and letters become ASCII, so 2000 and ２０００ are one attribute)."""
    if name == "none":
        return None
    if name == "nfkc":
        cache = {}

        def fold(value):
            out = cache.get(value)
            if out is None:
                out = cache[value] = unicodedata.normalize("NFKC", value)
            return out
        return fold
    raise ValueError(f"unknown normalization {name!r}")


def _mix(h, v):
    """splitmix64 over h xor v, as in cython_ext/features.pyx (uint64 arrays wrap)."""
    with np.errstate(over="ignore"):
        h = (h ^ (v + np.uint64(0x9E3779B97F4A7C15))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


class Vocabulary:
    """Strings and their integer ids, in order of first appearance."""

    def __init__(self, strings=()):
        self.strings = list(strings)
        self.index = dict(zip(self.strings, range(len(self.strings))))

    def __len__(self):
        return len(self.strings)

    def lookup(self, strings, unknown):
        return np.fromiter(map(self.index.get, strings, repeat(unknown)), dtype=np.int32)

    def extended(self, strings):
        """(vocabulary, ids): this vocabulary with the new strings appended in order
        of first appearance, and the ids of the strings."""
        out = Vocabulary(self.strings)
        get, add = out.index.get, out.strings.append
        ids = np.empty(len(strings), dtype=np.int32)
        for i, s in enumerate(strings):
            j = get(s)
            if j is None:
                j = out.index[s] = len(out.strings)
                add(s)
            ids[i] = j
        return out, ids

    @classmethod
    def build(cls, strings):
        """(vocabulary, ids) of a sequence of strings."""
        seen, ticket = {}, count()
        # setdefault with a fresh ticket per call: new strings get increasing tickets
        raw = np.fromiter(map(seen.setdefault, strings, ticket), dtype=np.int64)
        tickets = np.fromiter(seen.values(), dtype=np.int64, count=len(seen))
        return cls(seen), np.searchsorted(tickets, raw).astype(np.int32)


def field_matrix(sentences, fields, K, token_ids, fold=None, layout="boundaries-first", lexicon_codes=None):
    """(matrix, index): matrix[i, q] is the id of field fields[i] (a column, through
    its chain of functions) at padded position q, where each sentence is padded with
    K boundary positions on both sides, and index[p] is the padded position of token
    p. token_ids(field, values) gives (ids, V) for distinct values of a field:
    vocabulary ids, -1 for unknown values. lexicon_codes(field, values, inverse,
    lengths) gives what a %dict or %gaz field reads: (code per token, string per code).

    A column's distinct values are found once; functions and vocabulary lookups run
    on them, not on every token.

    Layouts of the ids (V values, boundary symbols _B-k and _B+k, one unknown):
      boundaries-first  _B-k: k-1, _B+k: K+k-1, unknown: 2K, value v: 2K+1+v.
                        A value keeps its id when the vocabulary grows, which is
                        what continuing a model on new data needs.
      values-first      value v: v, _B-k: V+k-1, _B+k: V+K+k-1, unknown: V+2K
                        (model files of seqbil 0.1).
    """
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1] + 2 * K, out=starts[1:])
    token_starts = np.cumsum(lengths) - lengths
    index = np.repeat(starts + K - token_starts, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
    matrix = np.empty((len(fields), int((lengths + 2 * K).sum())), dtype=np.int32)
    distinct = {}  # column -> (its distinct values, the position of each token's value among them)
    for i, f in enumerate(fields):
        if f.column not in distinct:
            tokens = chain.from_iterable(s.columns[f.column] for s in sentences)
            local, inverse = Vocabulary.build(map(fold, tokens) if fold else tokens)
            distinct[f.column] = local.strings, inverse
        values, inverse = distinct[f.column]
        if f.source:
            inverse, values = lexicon_codes(f, values, inverse, lengths)
        if f.chain:
            values = [apply_chain(f.chain, v) for v in values]
        local_ids, V = token_ids(f, values)
        ids = local_ids[inverse]
        value0, boundary0, unknown = (2 * K + 1, 0, 2 * K) if layout == "boundaries-first" else (0, V, V + 2 * K)
        row = matrix[i]
        row[index] = np.where(ids >= 0, ids + value0, unknown)
        for k in range(1, K + 1):
            row[starts + K - k] = boundary0 + k - 1
            row[starts + K + lengths + k - 1] = boundary0 + K + k - 1
    return matrix, index


def lexicon_codes(lexicons, cap, jackknife, field, values, inverse, lengths):
    """(code per token, string per code) of a %dict or %gaz field: where the entries
    of its lexicon cover each token. jackknife: {name: (folds, [Lexicon per fold])}
    for lexicons built from the sentences being encoded: sentence j, in fold j mod
    folds, is matched against the lexicon of the other folds."""
    P = int(lengths.sum())
    parts = (jackknife or {}).get(field.source)
    if parts is None:
        lex = lexicons[field.source]
        symbols = np.array([lex.symbols.get(v, 0) for v in values], dtype=np.int64)[inverse]
        codes = dictionaries.codes(lex.starts(symbols, lengths), P, field.kind, cap)
    else:
        folds, fold_lexicons = parts
        sentence_fold = np.arange(len(lengths)) % folds
        token_fold = np.repeat(sentence_fold, lengths)
        codes = np.zeros(P, dtype=np.int64)
        for k, lex in enumerate(fold_lexicons):
            mine = token_fold == k
            symbols = np.array([lex.symbols.get(v, 0) for v in values], dtype=np.int64)[inverse[mine]]
            codes[mine] = dictionaries.codes(lex.starts(symbols, lengths[sentence_fold == k]), len(symbols),
                                             field.kind, cap)
    return codes, dictionaries.value_strings(field.kind, cap)


LAYOUTS = ("boundaries-first", "values-first")
LAYOUT = "boundaries-first"  # of new indexes


class FeatureIndex:
    def __init__(self, templates, fields, tables, normalize="none", layout=None, lexicons=None, length_cap=6):
        """templates: TemplateSet; fields: {Field: Vocabulary}; tables: per order
        (sorted keys, int64 pointers per template); normalize: see normalizer();
        layout: how field values are numbered (see field_matrix); lexicons: {name:
        Lexicon} read by the %dict and %gaz macros, entries folded as the fields
        are; length_cap: entry lengths above it read as it."""
        self.templates, self.fields, self.tables = templates, fields, tables
        self.lexicons, self.length_cap = dict(lexicons or {}), length_cap
        self.vectors = None  # VectorFeatures of the %vec templates (features/vectors.py), if any
        self.normalize, self.fold = normalize, normalizer(normalize)
        self.layout = layout or LAYOUT
        self.field_list = templates.fields  # what the macros read, in the order of the field matrix
        self.K = templates.reach
        radix = {c: len(fields[c]) + 2 * self.K + 1 for c in self.field_list}  # values, boundaries, unknown
        self.specs = [self._spec(templates.by_order[o], radix) for o in (0, 1)]

    def _spec(self, templates, radix):
        t_ptr, rows, cols, mults = [0], [], [], []
        position = {c: i for i, c in enumerate(self.field_list)}
        for t in templates:
            m, ms = 1, []
            for _, c in reversed(t.refs):
                ms.append(m)
                m *= radix[c]
            ms = ms[::-1] if m < _MAX_RADIX else [0] * len(t.refs)  # 0: hash the ids
            rows += [r for r, _ in t.refs]
            cols += [position[c] for _, c in t.refs]
            mults += ms
            t_ptr.append(len(rows))
        return (np.array(t_ptr, np.int32), np.array(rows, np.int32), np.array(cols, np.int32),
                np.array(mults, np.int64))

    def n_attributes(self, order):
        """Attributes of an order: the keyed ones (ids 0..n_keyed-1), then, for order 0,
        the components of the %vec templates."""
        vectors = self.vectors.n_attributes if order == 0 and self.vectors is not None else 0
        return self.n_keyed(order) + vectors

    def n_keyed(self, order):
        return len(self.tables[order][0])

    def rekeyed(self, order, new):
        """(keys, ptr) of this index's attributes of one order, keyed as the index
        `new` (same templates, vocabularies extending these) keys them: each key is
        taken apart into the ids its macros read, which are renumbered and put
        together again. Attributes keep their order within a template only up to
        sorting, hence FeatureIndex.build(base=...).renumber."""
        table, ptr = self.tables[order]
        spec, new_spec = self.specs[order], new.specs[order]
        t_ptr, _, cols, mults = spec
        out = np.empty_like(table)
        for t in range(len(t_ptr) - 1):
            lo, hi = int(ptr[t]), int(ptr[t + 1])
            macros = range(t_ptr[t], t_ptr[t + 1])
            if lo == hi:
                continue
            if len(macros) and mults[t_ptr[t]] == 0:
                if self.layout != "boundaries-first":
                    raise ValueError(f"template {self.templates.by_order[order][t].text} is hashed in a model of "
                                     f"an older seqbil, whose attributes cannot be renumbered: retrain it")
                out[lo:hi] = table[lo:hi]  # hashed boundaries-first ids do not change as vocabularies grow
                continue
            rest, parts = table[lo:hi].copy(), []
            for m in macros:
                parts.append(rest // mults[m])
                rest %= mults[m]
            ids = [self._renumber_ids(self.field_list[cols[m]], part, new) for m, part in zip(macros, parts)]
            out[lo:hi] = new.combine(order, t, ids)
        return out, ptr

    def _renumber_ids(self, column, ids, new):
        """Field ids of one column in this index's layout -> ids in `new`'s layout."""
        V, K = len(self.fields[column]), self.K
        if self.layout == "boundaries-first":
            value, boundary = ids - (2 * K + 1), ids
        else:
            value, boundary = ids, ids - V
        is_value = value >= 0 if self.layout == "boundaries-first" else ids < V
        if new.layout == "boundaries-first":
            return np.where(is_value, value + 2 * K + 1, boundary)
        return np.where(is_value, value, boundary + len(new.fields[column]))

    def combine(self, order, t, ids):
        """Keys of template t of an order from the ids its macros read (one array per
        macro): the same keys attribute_keys computes from a field matrix."""
        t_ptr, _, _, mults = self.specs[order]
        macros = range(t_ptr[t], t_ptr[t + 1])
        if len(macros) and mults[t_ptr[t]] == 0:
            h = np.full(len(ids[0]), t, dtype=np.uint64)
            for part in ids:
                h = _mix(h, part.astype(np.uint64))
            return (h >> np.uint64(1)).astype(np.int64)
        key = np.zeros(len(ids[0]) if ids else 0, dtype=np.int64)
        for m, part in zip(macros, ids):
            key += part.astype(np.int64) * mults[m]
        return key

    def lexicon_codes(self, field, values, inverse, lengths):
        return lexicon_codes(self.lexicons, self.length_cap, None, field, values, inverse, lengths)

    # --- encoding ---------------------------------------------------------------
    def keys(self, fields, index, order):
        spec = self.specs[order]
        out = np.empty((len(index), len(spec[0]) - 1), dtype=np.int64)
        attribute_keys(fields, index, *spec, out)
        return out

    def encode(self, sentences):
        """(u_ptr, u_ids, b_ptr, b_ids) of sentences; unknown attributes are left out."""
        def token_ids(c, tokens):
            return self.fields[c].lookup(tokens, -1), len(self.fields[c])

        fields, index = field_matrix(sentences, self.field_list, self.K, token_ids, self.fold, self.layout,
                                     self.lexicon_codes)
        parts = []
        for order in (0, 1):
            table, ptr = self.tables[order]
            parts.extend(lookup_csr(self.keys(fields, index, order), table, ptr))
        return parts

    @classmethod
    def build(cls, sentences, templates, min_count=1, normalize="none", base=None, lexicons=None, length_cap=6,
              jackknife=None):
        """(index, (u_ptr, u_ids, b_ptr, b_ids)) from training sentences; attributes
        seen fewer than min_count times are dropped.

        base: an index to extend (continuing a model on new data): its values keep
        their ids, its attributes are all kept, and index.renumber[order][a] gives
        the new id of its attribute a (ids are positions in sorted key tables).
        lexicons, length_cap: see __init__; jackknife: {name: (folds, [Lexicon per
        fold])} for the lexicons built from these sentences."""
        vocabularies = {}

        def token_ids(c, tokens):
            if base is None:
                vocabularies[c], ids = Vocabulary.build(tokens)
            else:
                vocabularies[c], ids = base.fields[c].extended(tokens)
            return ids, len(vocabularies[c])

        fields, index = field_matrix(sentences, templates.fields, templates.reach, token_ids, normalizer(normalize),
                                     LAYOUT, partial(lexicon_codes, lexicons, length_cap, jackknife))
        self = cls(templates, vocabularies, [None, None], normalize, LAYOUT, lexicons, length_cap)
        parts, tables, self.renumber = [], [], []
        for order in (0, 1):
            keys = self.keys(fields, index, order)
            old = base.rekeyed(order, self) if base is not None else None
            table, ptr, ids = [], [0], np.empty_like(keys, dtype=np.int64)
            renumber = np.empty(len(old[0]) if old is not None else 0, dtype=np.int64)
            for t in range(keys.shape[1]):
                uniq, inverse, counts = np.unique(keys[:, t], return_inverse=True, return_counts=True)
                keep = counts >= min_count
                if old is not None:  # every attribute of the base stays, seen here or not
                    old_keys = old[0][old[1][t]:old[1][t + 1]]
                    keep |= np.isin(uniq, old_keys)
                    merged = np.union1d(uniq[keep], old_keys)
                    renumber[old[1][t]:old[1][t + 1]] = ptr[-1] + np.searchsorted(merged, old_keys)
                    keep_keys = merged
                    pos = np.searchsorted(merged, uniq)
                    new_id = np.where(keep, ptr[-1] + pos, -1)
                else:
                    keep_keys = uniq[keep]
                    new_id = np.where(keep, ptr[-1] + np.cumsum(keep) - 1, -1)
                ids[:, t] = new_id[inverse.ravel()]
                table.append(keep_keys)
                ptr.append(ptr[-1] + len(keep_keys))
            self.renumber.append(renumber)
            tables.append((np.concatenate(table) if table else np.zeros(0, np.int64), np.array(ptr, np.int64)))
            present = ids >= 0
            csr_ptr = np.zeros(len(index) + 1, dtype=np.int64)
            np.cumsum(present.sum(axis=1), out=csr_ptr[1:])
            parts.extend((csr_ptr, ids[present].astype(np.int32)))
        self.tables = tables
        return self, parts
