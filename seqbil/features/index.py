"""The attribute dictionary: field vocabularies and a sorted key table per template.

An attribute is a template instantiated at a token. Instead of building its CRF++
string, seqbil maps each field value to an integer once (one dictionary lookup per
token and column) and identifies the attribute by the ids its macros read
(cython_ext/features.pyx). Two attributes are equal exactly when their CRF++
strings are equal, boundary symbols included. Attribute ids are positions in the
concatenated key tables, template by template.
"""
import unicodedata
from itertools import chain, count, repeat

import numpy as np

from .._kernels.features import attribute_keys, lookup_csr

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


class Vocabulary:
    """Strings and their integer ids, in order of first appearance."""

    def __init__(self, strings=()):
        self.strings = list(strings)
        self.index = dict(zip(self.strings, range(len(self.strings))))

    def __len__(self):
        return len(self.strings)

    def lookup(self, strings, unknown):
        return np.fromiter(map(self.index.get, strings, repeat(unknown)), dtype=np.int32)

    @classmethod
    def build(cls, strings):
        """(vocabulary, ids) of a sequence of strings."""
        seen, ticket = {}, count()
        # setdefault with a fresh ticket per call: new strings get increasing tickets
        raw = np.fromiter(map(seen.setdefault, strings, ticket), dtype=np.int64)
        tickets = np.fromiter(seen.values(), dtype=np.int64, count=len(seen))
        return cls(seen), np.searchsorted(tickets, raw).astype(np.int32)


def field_matrix(sentences, columns, K, token_ids, fold=None):
    """(fields, index): fields[i, q] is the id of column columns[i] at padded position
    q, where each sentence is padded with K boundary positions on both sides, and
    index[p] is the padded position of token p. token_ids(c, tokens) gives (ids, V)
    for the values of column c; the boundary symbols _B-k and _B+k get the ids
    V + k - 1 and V + K + k - 1, and V + 2K is left for unknown values."""
    lengths = np.fromiter(map(len, sentences), dtype=np.int64, count=len(sentences))
    starts = np.zeros(len(lengths), dtype=np.int64)
    np.cumsum(lengths[:-1] + 2 * K, out=starts[1:])
    token_starts = np.cumsum(lengths) - lengths
    index = np.repeat(starts + K - token_starts, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
    fields = np.empty((len(columns), int((lengths + 2 * K).sum())), dtype=np.int32)
    for i, c in enumerate(columns):
        tokens = chain.from_iterable(s.columns[c] for s in sentences)
        ids, V = token_ids(c, list(map(fold, tokens) if fold else tokens))
        row = fields[i]
        row[index] = ids
        for k in range(1, K + 1):
            row[starts + K - k] = V + k - 1
            row[starts + K + lengths + k - 1] = V + K + k - 1
    return fields, index


class FeatureIndex:
    def __init__(self, templates, fields, tables, normalize="none"):
        """templates: TemplateSet; fields: {column: Vocabulary}; tables: per order
        (sorted keys, int64 pointers per template); normalize: see normalizer()."""
        self.templates, self.fields, self.tables = templates, fields, tables
        self.normalize, self.fold = normalize, normalizer(normalize)
        self.columns = templates.columns
        self.K = templates.reach
        radix = {c: len(fields[c]) + 2 * self.K + 1 for c in self.columns}  # values, boundaries, unknown
        self.specs = [self._spec(templates.by_order[o], radix) for o in (0, 1)]

    def _spec(self, templates, radix):
        t_ptr, rows, cols, mults = [0], [], [], []
        position = {c: i for i, c in enumerate(self.columns)}
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
        return len(self.tables[order][0])

    # --- encoding ---------------------------------------------------------------
    def keys(self, fields, index, order):
        spec = self.specs[order]
        out = np.empty((len(index), len(spec[0]) - 1), dtype=np.int64)
        attribute_keys(fields, index, *spec, out)
        return out

    def encode(self, sentences):
        """(u_ptr, u_ids, b_ptr, b_ids) of sentences; unknown attributes are left out."""
        def token_ids(c, tokens):
            V = len(self.fields[c])
            return self.fields[c].lookup(tokens, V + 2 * self.K), V

        fields, index = field_matrix(sentences, self.columns, self.K, token_ids, self.fold)
        parts = []
        for order in (0, 1):
            table, ptr = self.tables[order]
            parts.extend(lookup_csr(self.keys(fields, index, order), table, ptr))
        return parts

    @classmethod
    def build(cls, sentences, templates, min_count=1, normalize="none"):
        """(index, (u_ptr, u_ids, b_ptr, b_ids)) from training sentences; attributes
        seen fewer than min_count times are dropped."""
        vocabularies = {}

        def token_ids(c, tokens):
            vocabularies[c], ids = Vocabulary.build(tokens)
            return ids, len(vocabularies[c])

        fields, index = field_matrix(sentences, templates.columns, templates.reach, token_ids, normalizer(normalize))
        self = cls(templates, vocabularies, [None, None], normalize)
        parts, tables = [], []
        for order in (0, 1):
            keys = self.keys(fields, index, order)
            table, ptr, ids = [], [0], np.empty_like(keys, dtype=np.int64)
            for t in range(keys.shape[1]):
                uniq, inverse, counts = np.unique(keys[:, t], return_inverse=True, return_counts=True)
                keep = counts >= min_count
                new_id = np.where(keep, ptr[-1] + np.cumsum(keep) - 1, -1)
                ids[:, t] = new_id[inverse.ravel()]
                table.append(uniq[keep])
                ptr.append(ptr[-1] + int(keep.sum()))
            tables.append((np.concatenate(table) if table else np.zeros(0, np.int64), np.array(ptr, np.int64)))
            present = ids >= 0
            csr_ptr = np.zeros(len(index) + 1, dtype=np.int64)
            np.cumsum(present.sum(axis=1), out=csr_ptr[1:])
            parts.extend((csr_ptr, ids[present].astype(np.int32)))
        self.tables = tables
        return self, parts
