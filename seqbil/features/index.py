"""The attribute dictionary: field vocabularies and a sorted key table per template.

An attribute is a template instantiated at a token. Instead of building its CRF++
string, seqbil maps each field value to an integer once (one dictionary lookup per
token and column) and identifies the attribute by the ids its macros read
(cython_ext/features.pyx). Two attributes are equal exactly when their CRF++
strings are equal, boundary symbols included. Attribute ids are positions in the
concatenated key tables, template by template.
"""
import mmap
import unicodedata
from functools import partial
from itertools import count, repeat

import numpy as np

from .._kernels.features import KeyHash, attribute_keys, encode_csr, renumber_csr, template_ids
from .._kernels.items import merge
from ..formats.sentence import Corpus
from . import dictionaries
from .fields import field_matrix, lexicon_codes
from .functions import apply_chain
from .templates import attr_selects

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


def _zero_pointers(n):
    """int64 zeros [n] on private anonymous pages: the CSR pointers of an order
    without templates, which are only read, so the pages are never allocated
    (np.zeros may reuse and clear freed heap memory)."""
    if not hasattr(mmap, "MAP_ANONYMOUS"):  # Windows
        return np.zeros(n, dtype=np.int64)
    return np.frombuffer(mmap.mmap(-1, 8 * n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS), dtype=np.int64)


class Vocabulary:
    """Strings and their integer ids, in order of first appearance."""

    def __init__(self, strings=()):
        self.strings = list(strings)
        self._index = None

    @property
    def index(self):
        """{string: id}, made on first use: loading a model reads every vocabulary, and
        the compiled tagging path looks the values up in tables of its own."""
        if self._index is None:
            self._index = dict(zip(self.strings, range(len(self.strings))))
        return self._index

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


def vocabulary_arrays(index, prefix=""):
    """{PREFIXfieldF: UTF-8 bytes}: the vocabulary of every field an index reads, a
    value per line ("field0", "field0|suffix:3", ...), as model files keep them."""
    return {f"{prefix}field{f}": np.frombuffer("\n".join(index.fields[f].strings).encode("utf-8"), dtype=np.uint8)
            for f in index.field_list}


def attribute_arrays(index):
    """{attributes, attributes_ptr}: the attribute names of an index of %attr
    templates, UTF-8 end to end with int64 offsets (a name may hold any character)."""
    if index.attributes is None:
        return {}
    data = [s.encode("utf-8", "surrogateescape") for s in index.attributes.strings]
    ptr = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in data], out=ptr[1:])
    return {"attributes": np.frombuffer(b"".join(data), dtype=np.uint8), "attributes_ptr": ptr}


def read_attributes(arrays):
    """The Vocabulary of attribute_arrays."""
    data, ptr = arrays["attributes"].tobytes(), arrays["attributes_ptr"]
    if ptr.ndim != 1 or not len(ptr) or ptr[0] != 0 or ptr[-1] != len(data) or np.any(np.diff(ptr) < 0):
        raise ValueError("attribute names")
    bounds = ptr.tolist()
    return Vocabulary(data[a:b].decode("utf-8", "surrogateescape") for a, b in zip(bounds[:-1], bounds[1:]))


def read_vocabularies(templates, arrays, prefix=""):
    """{Field: Vocabulary} of the fields the templates read, from vocabulary_arrays."""
    out = {}
    for f in templates.fields:
        text = arrays[f"{prefix}field{f}"].tobytes().decode("utf-8")
        out[f] = Vocabulary(text.split("\n") if text else [])
    return out


def field_vocabularies(corpus, fields, fold=None, length_cap=6):
    """[Vocabulary] of each field of `fields` as FeatureIndex.build numbers them on a
    corpus: a column's values through fold and the field's chain, in order of first
    appearance; a %dict or %gaz field's code strings (the same for every corpus).
    The vocabularies of the parts of a corpus, merged in order (merge_vocabularies),
    are those of the whole."""
    out, distinct = [], {}
    for f in fields:
        if f.source:
            values = dictionaries.value_strings(f.kind, length_cap)
        else:
            if f.column not in distinct:
                distinct[f.column] = corpus.column(f.column, fold)[0]
            values = distinct[f.column]
        if f.chain:
            values = [apply_chain(f.chain, v) for v in values]
        out.append(Vocabulary.build(values)[0])
    return out


def merge_vocabularies(parts):
    """One vocabulary of the vocabularies (or string lists) of the parts of a corpus,
    in the parts' order: each string keeps its first appearance."""
    out = Vocabulary(parts[0].strings if isinstance(parts[0], Vocabulary) else parts[0])
    for part in parts[1:]:
        strings = part.strings if isinstance(part, Vocabulary) else part
        out = out.extended(strings)[0]
    return out


def merge_counts(parts):
    """(sorted distinct keys, summed counts) of (sorted keys, counts) pairs."""
    keys = np.concatenate([k for k, _ in parts]) if parts else np.zeros(0, np.int64)
    counts = np.concatenate([c for _, c in parts]) if parts else np.zeros(0, np.int64)
    if len(parts) > 1:
        by = np.argsort(keys, kind="stable")
        keys, counts = keys[by], counts[by]
    new = np.ones(len(keys), bool)
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    return keys[starts], np.add.reduceat(counts, starts) if len(keys) else counts


LAYOUTS = ("boundaries-first", "values-first")
LAYOUT = "boundaries-first"  # of new indexes


class FeatureIndex:
    def __init__(self, templates, fields, tables, normalize="none", layout=None, lexicons=None, length_cap=6,
                 attributes=None):
        """templates: TemplateSet; fields: {Field: Vocabulary}; tables: per order
        (sorted keys, int64 pointers per template); normalize: see normalizer();
        layout: how field values are numbered (see field_matrix); lexicons: {name:
        Lexicon} read by the %dict and %gaz macros, entries folded as the fields
        are; length_cap: entry lengths above it read as it; attributes: the
        Vocabulary of the attribute names the %attr templates read, whose ids are
        their keys (a name keeps its id as the vocabulary grows)."""
        self.templates, self.fields, self.tables = templates, fields, tables
        self.attributes = attributes
        self.lexicons, self.length_cap = dict(lexicons or {}), length_cap
        self.vectors = None  # VectorFeatures of the %vec templates (features/vectors.py), if any
        self.structure = None  # StructureFeatures of a structure from unlabeled text (features/structure.py), if any
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
            if t in self.templates.item_templates:  # keyed by the attribute names' ids, no macros
                t_ptr.append(len(rows))
                continue
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
        the components of the %vec templates, then those of the structure."""
        if order:
            return self.n_keyed(order)
        return self.n_keyed(0) + sum(f.n_attributes for f in (self.vectors, self.structure) if f is not None)

    def n_keyed(self, order):
        return len(self.tables[order][0])

    def check_keys(self):
        """Raise ValueError unless every template's keys ascend strictly and lie in the
        range its macros give: ids of the attribute names for %attr, 0 for a template
        without macros, below the product of its fields' radixes where it is not hashed.
        A model file's keys decide what each attribute means (convert, --task and the
        pruning take them apart), so a file's are checked before anything reads them."""
        for order in (0, 1):
            table, ptr = self.tables[order]
            t_ptr, _, cols, mults = self.specs[order]
            templates = self.templates.by_order[order]
            if not len(table):
                continue
            starts = np.asarray(ptr[:-1])  # (each key above the one before, but a template's first)
            rises = table[1:] > table[:-1]
            rises[starts[(starts > 0) & (starts < len(table))] - 1] = True
            tops = np.full(len(templates), -1, dtype=np.int64)  # (-1: hashed, no bound but 0)
            for t, template in enumerate(templates):
                first = t_ptr[t]
                if template in self.templates.item_templates:
                    tops[t] = len(self.attributes) if self.attributes is not None else 0
                elif first == t_ptr[t + 1]:
                    tops[t] = 1
                elif mults[first] == 0:
                    continue  # hashed: any key a shift right of 64 bits gives
                else:  # (below 2**62: the radix product of a template that is not hashed)
                    column = self.field_list[cols[first]]
                    tops[t] = int(mults[first]) * (len(self.fields[column]) + 2 * self.K + 1)
            held = np.flatnonzero(np.diff(ptr) > 0)
            lowest, highest = table[ptr[held]], table[ptr[held + 1] - 1]
            top = tops[held]
            bad = not rises.all() or np.any(lowest < 0) or np.any((top >= 0) & (highest >= top))
            if bad:
                for t in held:  # name the template
                    keys = table[ptr[t]:ptr[t + 1]]
                    if len(keys) > 1 and not np.all(keys[1:] > keys[:-1]):
                        raise ValueError(f"the keys of template {templates[t].text!r} do not ascend")
                    if keys[0] < 0 or 0 <= tops[t] <= keys[-1]:
                        raise ValueError(f"template {templates[t].text!r} has keys outside the range of its fields")
                raise ValueError(f"the key table of order {order}")

    def rekeyed(self, order, new):
        """(keys, ptr) of this index's attributes of one order, keyed as the index
        `new` (same templates, vocabularies extending these) keys them: each key is
        taken apart into the ids its macros read, which are renumbered and put
        together again. Attributes keep their order within a template only up to
        sorting, hence FeatureIndex.build(base=...).renumber."""
        table, ptr = self.tables[order]
        spec = self.specs[order]
        t_ptr, _, cols, mults = spec
        out = np.empty_like(table)
        for t in range(len(t_ptr) - 1):
            lo, hi = int(ptr[t]), int(ptr[t + 1])
            macros = range(t_ptr[t], t_ptr[t + 1])
            if lo == hi:
                continue
            if not len(macros):  # a template without macros has the one key 0
                out[lo:hi] = table[lo:hi]
                continue
            if mults[t_ptr[t]] == 0:
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
        """keys[p, t]: the key of template t of an order at token p (P x T int64; a
        reference for the compiled passes, which never hold it)."""
        spec = self.specs[order]
        out = np.empty((len(index), len(spec[0]) - 1), dtype=np.int64)
        attribute_keys(fields, index, *spec, out)
        return out

    def encode(self, sentences):
        """(u_ptr, u_ids, b_ptr, b_ids) of sentences (a list of Sentence or a Corpus);
        unknown attributes are left out."""
        def token_ids(c, tokens):
            return self.fields[c].lookup(tokens, -1), len(self.fields[c])

        corpus = Corpus.of(sentences)
        self._check_items(corpus)
        fields, index = field_matrix(corpus, self.field_list, self.K, token_ids, self.fold,
                                     self.layout, self.lexicon_codes)
        parts = self.encode_fields(fields, index)
        if self.templates.items:
            entry = self.attributes.lookup(corpus.items.names, -1)[corpus.items.ids]
            return self._with_items(parts, corpus.items, entry)
        return parts

    def encode_fields(self, fields, index, hashed=False):
        """[u_ptr, u_ids, b_ptr, b_ids] of the templates that read columns, from a
        field matrix (see field_matrix). hashed: look the keys up in hash tables
        (KeyHash, made once per index: worth it for the many blocks of tagging)."""
        hashes = [None, None]
        if hashed:
            made = getattr(self, "_hashes", None)
            if made is None or made[0] is not self.tables[0][0] or made[1] is not self.tables[1][0]:
                made = self._hashes = (self.tables[0][0], self.tables[1][0],
                                       [KeyHash(*self._column_tables(order)) for order in (0, 1)])
            hashes = made[2]
        parts = []
        for order in (0, 1):
            if self.templates.n_column_templates[order] == 0:  # no templates of this order that read columns
                parts.extend((_zero_pointers(len(index) + 1), np.zeros(0, np.int32)))
            else:
                parts.extend(encode_csr(fields, index, *self.column_spec(order), *self._column_tables(order),
                                        hashes[order]))
        return parts

    def _column_tables(self, order):
        """(keys, ptr) of the templates of an order that read columns."""
        table, ptr = self.tables[order]
        n = self.templates.n_column_templates[order]
        return table[:ptr[n]], ptr[:n + 1]

    def column_spec(self, order):
        """The spec of the templates of an order that read columns (those before the
        %attr templates)."""
        t_ptr, rows, cols, mults = self.specs[order]
        return t_ptr[:self.templates.n_column_templates[order] + 1], rows, cols, mults

    def _check_items(self, corpus):
        if self.templates.items and corpus.items is None:
            raise ValueError("the templates read %attr, the attributes of the tokens, but the corpus gives columns")
        if corpus.items is not None and not self.templates.items:
            raise ValueError("the corpus gives the attributes of its tokens (CRFsuite's format, feature dicts): "
                             "read them with %attr templates (U:%attr and B)")

    def _with_items(self, parts, items, entry):
        """parts (u_ptr, u_ids, b_ptr, b_ids) with the attributes of the %attr templates
        appended at every position: entry[e] is the name id in self.attributes of
        items entry e (-1: unknown). Adds u_vals when the items have weights other than 1."""
        out, u_vals = [], None
        for order in (0, 1):
            table, ptr = self.tables[order]
            ts = range(self.templates.n_column_templates[order], len(ptr) - 1)
            attr = np.full((len(ts), len(entry)), -1, dtype=np.int32)
            for k, t in enumerate(ts):  # each entry's name among the template's sorted keys, if there
                lo, hi = int(ptr[t]), int(ptr[t + 1])
                if hi == lo:
                    continue
                at = np.minimum(np.searchsorted(table[lo:hi], entry), hi - lo - 1)
                attr[k] = np.where(table[lo:hi][at] == entry, lo + at, -1)
            if order == 1 and items.vals is not None:  # 1st-order attributes are present or not: weight 0 is not
                attr[:, items.vals == 0] = -1
            vals = items.vals if order == 0 and items.vals is not None else np.zeros(0, np.float32)
            p, i, v = merge(parts[2 * order], parts[2 * order + 1], np.zeros(0, np.float32), items.ptr, attr, vals)
            out.extend((p, i))
            if order == 0:
                u_vals = v
        return out + ([u_vals] if u_vals is not None else [])

    @classmethod
    def build(cls, sentences, templates, min_count=1, normalize="none", base=None, lexicons=None, length_cap=6,
              jackknife=None):
        """(index, (u_ptr, u_ids, b_ptr, b_ids)) from training sentences (a list of
        Sentence or a Corpus); attributes seen fewer than min_count times are dropped.

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

        corpus = Corpus.of(sentences)
        fields, index = field_matrix(corpus, templates.fields, templates.reach, token_ids,
                                     normalizer(normalize), LAYOUT, partial(lexicon_codes, lexicons, length_cap,
                                                                             jackknife))
        self = cls(templates, vocabularies, [None, None], normalize, LAYOUT, lexicons, length_cap)
        self._check_items(corpus)
        entry, name_counts = None, None
        if templates.items:  # the attribute names, numbered as the base numbers them
            names = corpus.items.names
            self.attributes, local = Vocabulary.build(names) if base is None else base.attributes.extended(names)
            entry = local[corpus.items.ids]
            name_counts = np.bincount(entry, minlength=len(self.attributes))
        parts, tables, self.renumber = [], [], []
        for order in (0, 1):
            spec = self.column_spec(order)
            T = len(spec[0]) - 1
            old = base.rekeyed(order, self) if base is not None else None
            # ids[p * T + t]: first the number of the key of template t at token p among the
            # template's distinct keys, then (renumber_csr) the attribute id, packed as CSR
            ids = np.empty(len(index) * T, dtype=np.int32)
            table, ptr, luts = [], [0], []
            renumber = np.empty(len(old[0]) if old is not None else 0, dtype=np.int64)
            for t in range(T):
                keys, counts = template_ids(fields, index, *spec, t, ids, T)
                by_key = np.argsort(keys)
                uniq, keep = keys[by_key], counts[by_key] >= min_count
                del keys, counts
                if old is not None:  # every attribute of the base stays, seen here or not
                    old_keys = old[0][old[1][t]:old[1][t + 1]]
                    keep |= np.isin(uniq, old_keys)
                    merged = np.union1d(uniq[keep], old_keys)
                    renumber[old[1][t]:old[1][t + 1]] = ptr[-1] + np.searchsorted(merged, old_keys)
                    keep_keys = merged
                    new_id = np.where(keep, ptr[-1] + np.searchsorted(merged, uniq), -1)
                else:
                    keep_keys = uniq[keep]
                    new_id = np.where(keep, ptr[-1] + np.cumsum(keep) - 1, -1)
                lut = np.empty(len(uniq), dtype=np.int32)
                lut[by_key] = new_id
                luts.append(lut)
                table.append(keep_keys)
                ptr.append(ptr[-1] + len(keep_keys))
            for t in range(T, len(templates.by_order[order])):  # %attr: the name ids it reads, seen often enough
                field = templates.by_order[order][t].refs[0][1]
                keep = (name_counts >= min_count) & self._selected(field)
                if old is not None:
                    old_keys = old[0][old[1][t]:old[1][t + 1]]
                    keep[old_keys] = True
                keep_keys = np.flatnonzero(keep).astype(np.int64)
                if old is not None:
                    renumber[old[1][t]:old[1][t + 1]] = ptr[-1] + np.searchsorted(keep_keys, old_keys)
                table.append(keep_keys)
                ptr.append(ptr[-1] + len(keep_keys))
            self.renumber.append(renumber)
            tables.append((np.concatenate(table) if table else np.zeros(0, np.int64), np.array(ptr, np.int64)))
            lut_ptr = np.zeros(T + 1, dtype=np.int64)
            np.cumsum([len(lut) for lut in luts], out=lut_ptr[1:])
            lut = np.concatenate(luts) if luts else np.zeros(0, np.int32)
            csr_ptr, n = renumber_csr(ids, len(index), T, lut, lut_ptr) if T else (_zero_pointers(len(index) + 1), 0)
            if n < len(ids):
                ids.resize(n, refcheck=False)  # shrinks in place: no second buffer
            parts.extend((csr_ptr, ids))
        self.tables = tables
        if templates.items:
            parts = self._with_items(parts, corpus.items, entry)
        return self, parts

    def key_counts(self, sentences):
        """What a part of a training corpus gives to make the index of the whole
        (from_counts): per order, (sorted distinct keys, counts) of every template that
        reads columns; and the count of every attribute name (None without %attr
        templates). The index's vocabularies must hold every value of the part
        (field_vocabularies of the whole, or of the parts merged)."""
        def token_ids(c, tokens):
            return self.fields[c].lookup(tokens, -1), len(self.fields[c])

        corpus = Corpus.of(sentences)
        self._check_items(corpus)
        fields, index = field_matrix(corpus, self.field_list, self.K, token_ids, self.fold, self.layout,
                                     self.lexicon_codes)
        out = []
        for order in (0, 1):
            spec = self.column_spec(order)
            T = len(spec[0]) - 1
            ids = np.empty(len(index) * T, dtype=np.int32)  # (template_ids writes each key's number here)
            counted = []
            for t in range(T):
                keys, counts = template_ids(fields, index, *spec, t, ids, T)
                by = np.argsort(keys)
                counted.append((keys[by], counts[by]))
            out.append(counted)
            del ids
        names = None
        if self.templates.items:
            entry = self.attributes.lookup(corpus.items.names, -1)[corpus.items.ids]
            names = np.bincount(entry, minlength=len(self.attributes))
        return out, names

    @classmethod
    def from_counts(cls, templates, fields, counts, min_count=1, normalize="none", lexicons=None, length_cap=6,
                    attributes=None, name_counts=None):
        """The index FeatureIndex.build makes of a corpus, from its parts' key_counts:
        fields, the merged vocabularies ({Field: Vocabulary}); counts[order][t], the
        (keys, counts) of template t from every part; attributes and name_counts (the
        sum over the parts), for %attr templates. Only keys and counts are merged, so
        no process needs the whole corpus."""
        self = cls(templates, fields, [None, None], normalize, LAYOUT, lexicons, length_cap, attributes)
        tables = []
        for order in (0, 1):
            table, ptr = [], [0]
            for parts in counts[order]:
                keys, total = merge_counts(parts)
                table.append(keys[total >= min_count])
                ptr.append(ptr[-1] + len(table[-1]))
            for t in range(len(counts[order]), len(templates.by_order[order])):  # %attr: name ids seen enough
                field = templates.by_order[order][t].refs[0][1]
                table.append(np.flatnonzero((name_counts >= min_count) & self._selected(field)).astype(np.int64))
                ptr.append(ptr[-1] + len(table[-1]))
            tables.append((np.concatenate(table) if table else np.zeros(0, np.int64), np.array(ptr, np.int64)))
        self.tables = tables
        self.renumber = [np.zeros(0, np.int64), np.zeros(0, np.int64)]
        return self

    def prune_attributes(self):
        """Keep only the attribute names the %attr key tables hold (after compaction
        took out the attributes without weights), renumbered in their order, so that
        the keys stay sorted and a model file holds no name it never reads."""
        if self.attributes is None:
            return
        spans = [(order, int(ptr[t]), int(ptr[t + 1])) for order, (_, ptr) in enumerate(self.tables)
                 for t in range(self.templates.n_column_templates[order], len(ptr) - 1)]
        used = np.unique(np.concatenate([self.tables[o][0][lo:hi] for o, lo, hi in spans] or [np.zeros(0, np.int64)]))
        strings = self.attributes.strings
        self.attributes = Vocabulary([strings[i] for i in used])
        for order in (0, 1):
            table, ptr = self.tables[order]
            table = np.array(table)  # (a loaded model's tables are read-only maps of its file)
            for o, lo, hi in spans:
                if o == order:
                    table[lo:hi] = np.searchsorted(used, table[lo:hi])
            self.tables[order] = (table, ptr)

    def _selected(self, field):
        """bool [names]: the attribute names a %attr field reads."""
        if not field.source:
            return np.ones(len(self.attributes), dtype=bool)
        return np.fromiter((attr_selects(field, n) for n in self.attributes.strings), dtype=bool,
                           count=len(self.attributes))
