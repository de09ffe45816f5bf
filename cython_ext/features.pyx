"""Template instantiation on integer field ids.

Every field value (word, POS tag, character, boundary symbol) has an integer id per
column, so an attribute -- a template applied at a position -- is identified by the
ids its macros read. The key of an attribute combines them in mixed radix (exact);
a template whose radix product would overflow 62 bits uses a 64-bit hash instead.
The attribute dictionary is then a sorted array of keys per template, searched in C.
"""
cimport cython
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc


cdef inline uint64_t _mix(uint64_t h, uint64_t v) noexcept nogil:
    # splitmix64 finaliser over h xor v (Steele, Lea & Flood 2014)
    h = (h ^ (v + 0x9E3779B97F4A7C15ULL)) * 0xBF58476D1CE4E5B9ULL
    h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL
    return h ^ (h >> 31)


@cython.boundscheck(False)
@cython.wraparound(False)
def attribute_keys(const int32_t[:, ::1] fields, const int64_t[::1] index,
                   const int32_t[::1] t_ptr, const int32_t[::1] r_row, const int32_t[::1] r_col,
                   const int64_t[::1] r_mult, int64_t[:, ::1] out):
    """out[p, t] = key of template t at token p.

    fields[c, q]: id of column c at padded position q; index[p]: padded position of
    token p; template t reads the macros t_ptr[t]:t_ptr[t+1], macro m at row offset
    r_row[m] of column r_col[m] with radix multiplier r_mult[m] (0: hash the ids).
    """
    cdef Py_ssize_t p, P = index.shape[0]
    cdef int t, m, T = t_ptr.shape[0] - 1
    cdef int64_t key, q
    cdef uint64_t h
    with nogil:
        for p in range(P):
            q = index[p]
            for t in range(T):
                if t_ptr[t] < t_ptr[t + 1] and r_mult[t_ptr[t]] == 0:
                    h = <uint64_t>t
                    for m in range(t_ptr[t], t_ptr[t + 1]):
                        h = _mix(h, <uint64_t>fields[r_col[m], q + r_row[m]])
                    out[p, t] = <int64_t>(h >> 1)
                else:
                    key = 0
                    for m in range(t_ptr[t], t_ptr[t + 1]):
                        key += fields[r_col[m], q + r_row[m]] * r_mult[m]
                    out[p, t] = key


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline int64_t find_key(const int64_t* table, int64_t lo, int64_t hi, int64_t k) noexcept nogil:
    """Position of key k in the sorted table[lo:hi], or -1 (binary search)."""
    cdef int64_t end = hi, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if table[mid] < k:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < end and table[lo] == k else -1


def lookup_csr(const int64_t[:, ::1] keys, const int64_t[::1] table, const int64_t[::1] table_ptr):
    """CSR (ptr, ids) of the attributes found in the dictionary.

    The keys of template t are table[table_ptr[t]:table_ptr[t+1]], sorted; the id of
    an attribute is its position in table. Keys not found are skipped.
    """
    cdef Py_ssize_t P = keys.shape[0], T = keys.shape[1], p, t
    cdef int64_t lo, hi, mid, k, n = 0
    ptr_arr = np.zeros(P + 1, dtype=np.int64)
    ids_arr = np.empty(P * T, dtype=np.int32)
    cdef int64_t[::1] ptr = ptr_arr
    cdef int32_t[::1] ids = ids_arr
    with nogil:
        for p in range(P):
            for t in range(T):
                k = keys[p, t]
                lo = find_key(&table[0], table_ptr[t], table_ptr[t + 1], k)
                if lo >= 0:
                    ids[n] = <int32_t>lo
                    n += 1
            ptr[p + 1] = n
    return ptr_arr, ids_arr[:n].copy()


# --- one pass per template, no key matrix ----------------------------------------
# Building the dictionary of a corpus of P tokens and T templates this way keeps the
# encoded corpus (P x T int32) and, per template, a hash table of its distinct keys:
# never the P x T int64 keys, nor a sort of them.

cdef inline int64_t _key(const int32_t* fields, Py_ssize_t width, int64_t q, int t, const int32_t* t_ptr,
                         const int32_t* r_row, const int32_t* r_col, const int64_t* r_mult) noexcept nogil:
    """The key of template t at padded position q, as attribute_keys computes it."""
    cdef int m
    cdef int64_t key = 0
    cdef uint64_t h
    if t_ptr[t] < t_ptr[t + 1] and r_mult[t_ptr[t]] == 0:
        h = <uint64_t>t
        for m in range(t_ptr[t], t_ptr[t + 1]):
            h = _mix(h, <uint64_t>fields[r_col[m] * width + q + r_row[m]])
        return <int64_t>(h >> 1)
    for m in range(t_ptr[t], t_ptr[t + 1]):
        key += fields[r_col[m] * width + q + r_row[m]] * r_mult[m]
    return key


cdef inline Py_ssize_t _slot(int64_t key, int shift) noexcept nogil:
    # Fibonacci hashing: the top bits of key * 2^64 / phi
    return <Py_ssize_t>((<uint64_t>key * 0x9E3779B97F4A7C15ULL) >> shift)


@cython.boundscheck(False)
@cython.wraparound(False)
def template_ids(const int32_t[:, ::1] fields, const int64_t[::1] index,
                 const int32_t[::1] t_ptr, const int32_t[::1] r_row, const int32_t[::1] r_col,
                 const int64_t[::1] r_mult, int t, int32_t[::1] out, Py_ssize_t stride):
    """(keys, counts): the distinct keys of template t over the tokens, in order of first
    appearance, and how often each occurs; out[p * stride + t] = the number of the key
    at token p among them. Keys are never negative (hashed keys drop their top bit),
    so -1 marks an empty slot."""
    cdef Py_ssize_t P = index.shape[0], width = fields.shape[1], p, i, j, cap = 1 << 10, n = 0, ucap = 1 << 10
    cdef int shift = 64 - 10, failed = 0
    cdef int64_t k
    cdef const int32_t* F = &fields[0, 0] if fields.shape[0] and width else NULL
    cdef int64_t* slot_key = <int64_t*>malloc(cap * sizeof(int64_t))
    cdef int32_t* slot_id = <int32_t*>malloc(cap * sizeof(int32_t))
    cdef int64_t* keys = <int64_t*>malloc(ucap * sizeof(int64_t))
    cdef int64_t* counts = <int64_t*>malloc(ucap * sizeof(int64_t))
    cdef int64_t* grown_key
    cdef int32_t* grown_id
    if slot_key == NULL or slot_id == NULL or keys == NULL or counts == NULL:
        free(slot_key)
        free(slot_id)
        free(keys)
        free(counts)
        raise MemoryError()
    with nogil:
        for i in range(cap):
            slot_key[i] = -1
        for p in range(P):
            k = _key(F, width, index[p], t, &t_ptr[0], &r_row[0], &r_col[0], &r_mult[0])
            i = _slot(k, shift)
            while slot_key[i] != k and slot_key[i] != -1:
                i = (i + 1) & (cap - 1)
            if slot_key[i] == k:
                j = slot_id[i]
                counts[j] += 1
                out[p * stride + t] = <int32_t>j
                continue
            if n == ucap:
                ucap *= 2
                grown_key = <int64_t*>realloc(keys, ucap * sizeof(int64_t))
                if grown_key == NULL:
                    failed = 1
                    break
                keys = grown_key
                grown_key = <int64_t*>realloc(counts, ucap * sizeof(int64_t))
                if grown_key == NULL:
                    failed = 1
                    break
                counts = grown_key
            keys[n], counts[n] = k, 1
            slot_key[i], slot_id[i] = k, <int32_t>n
            out[p * stride + t] = <int32_t>n
            n += 1
            if 2 * n > cap:  # keep the table at most half full: rebuild it twice as large
                free(slot_key)
                free(slot_id)
                cap *= 2
                shift -= 1
                slot_key = <int64_t*>malloc(cap * sizeof(int64_t))
                slot_id = <int32_t*>malloc(cap * sizeof(int32_t))
                if slot_key == NULL or slot_id == NULL:
                    failed = 1
                    break
                for i in range(cap):
                    slot_key[i] = -1
                for j in range(n):
                    i = _slot(keys[j], shift)
                    while slot_key[i] != -1:
                        i = (i + 1) & (cap - 1)
                    slot_key[i], slot_id[i] = keys[j], <int32_t>j
    free(slot_key)
    free(slot_id)
    if failed:
        free(keys)
        free(counts)
        raise MemoryError()
    keys_arr = np.empty(n, dtype=np.int64)
    counts_arr = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] kv = keys_arr, cv = counts_arr
    for j in range(n):
        kv[j], cv[j] = keys[j], counts[j]
    free(keys)
    free(counts)
    return keys_arr, counts_arr


@cython.boundscheck(False)
@cython.wraparound(False)
def renumber_csr(int32_t[::1] ids, Py_ssize_t P, Py_ssize_t T, const int32_t[::1] lut, const int64_t[::1] lut_ptr):
    """ids holds P x T numbers, ids[p * T + t] that of the key of template t at token p
    among the template's keys (template_ids). Replace each by lut[lut_ptr[t] + number],
    the attribute id, leave out those that are -1 (dropped attributes) and pack the
    rest to the front, in place. Returns (ptr int64 [P+1], how many are left)."""
    cdef Py_ssize_t p, t, n = 0
    cdef int32_t a
    if ids.shape[0] != P * T:
        raise ValueError(f"{ids.shape[0]} ids for {P} tokens and {T} templates")
    ptr_arr = np.zeros(P + 1, dtype=np.int64)
    if T == 0:  # left as calloc gave it: pages of zeros that take no memory until written
        return ptr_arr, 0
    cdef int64_t[::1] ptr = ptr_arr
    with nogil:
        for p in range(P):
            for t in range(T):
                a = lut[lut_ptr[t] + ids[p * T + t]]
                if a >= 0:
                    ids[n] = a
                    n += 1
            ptr[p + 1] = n
    return ptr_arr, n


cdef class KeyHash:
    """The sorted key tables of an index as one hash table: (template, key) -> the
    attribute id (its position in the tables), open addressing with linear probing
    at most half full. Looking a key up touches one or two cache lines, where the
    binary search of find_key touches a dozen."""
    cdef int64_t[::1] keys
    cdef int32_t[::1] ids, tmpl
    cdef uint64_t mask

    def __init__(self, const int64_t[::1] table, const int64_t[::1] table_ptr):
        cdef Py_ssize_t n = table.shape[0], T = table_ptr.shape[0] - 1, t, a
        cdef uint64_t size = 16, h
        while size < 2 * <uint64_t>n + 2:
            size *= 2
        self.mask = size - 1
        self.keys = np.zeros(size, dtype=np.int64)
        self.ids = np.full(size, -1, dtype=np.int32)
        self.tmpl = np.zeros(size, dtype=np.int32)
        with nogil:
            for t in range(T):
                for a in range(table_ptr[t], table_ptr[t + 1]):
                    h = _mix(<uint64_t>t, <uint64_t>table[a]) & self.mask
                    while self.ids[h] >= 0:
                        h = (h + 1) & self.mask
                    self.keys[h], self.tmpl[h], self.ids[h] = table[a], <int32_t>t, <int32_t>a

    cdef inline int64_t find(self, int t, int64_t key) noexcept nogil:
        cdef uint64_t h = _mix(<uint64_t>t, <uint64_t>key) & self.mask
        while self.ids[h] >= 0:
            if self.keys[h] == key and self.tmpl[h] == t:
                return self.ids[h]
            h = (h + 1) & self.mask
        return -1


@cython.boundscheck(False)
@cython.wraparound(False)
def encode_csr(const int32_t[:, ::1] fields, const int64_t[::1] index,
               const int32_t[::1] t_ptr, const int32_t[::1] r_row, const int32_t[::1] r_col,
               const int64_t[::1] r_mult, const int64_t[::1] table, const int64_t[::1] table_ptr,
               KeyHash hashed=None):
    """lookup_csr of the attribute_keys, without the P x T matrix of keys: CSR (ptr,
    ids) of the attributes found in the dictionary (table, table_ptr), or in hashed,
    the same dictionary as a KeyHash."""
    cdef Py_ssize_t P = index.shape[0], T = t_ptr.shape[0] - 1, width = fields.shape[1], p, t
    cdef int64_t lo, hi, mid, k, n = 0
    cdef const int32_t* F = &fields[0, 0] if fields.shape[0] and width else NULL
    ptr_arr = np.zeros(P + 1, dtype=np.int64)
    ids_arr = np.empty(P * T, dtype=np.int32)
    if T == 0:
        return ptr_arr, ids_arr
    cdef int64_t[::1] ptr = ptr_arr
    cdef int32_t[::1] ids = ids_arr
    cdef bint use_hash = hashed is not None
    with nogil:
        for p in range(P):
            for t in range(T):
                k = _key(F, width, index[p], t, &t_ptr[0], &r_row[0], &r_col[0], &r_mult[0])
                if use_hash:
                    lo = hashed.find(<int>t, k)
                else:
                    lo = find_key(&table[0], table_ptr[t], table_ptr[t + 1], k)
                if lo >= 0:
                    ids[n] = <int32_t>lo
                    n += 1
            ptr[p + 1] = n
    ids = None
    if n < P * T:
        ids_arr.resize(n, refcheck=False)  # shrinks in place: no second buffer
    return ptr_arr, ids_arr


@cython.boundscheck(False)
@cython.wraparound(False)
def append_dense(const int64_t[::1] ptr, const int32_t[::1] ids, vals, const float[:, ::1] vec,
                 const int64_t[::1] seq_ptr, const int32_t[::1] window, int32_t first):
    """(ptr, ids, vals): the CSR rows (ptr, ids, vals; vals None: every value 1) with, at
    each position p, for each offset window[k] that stays inside p's sequence, the H
    entries first + k*H + h (h < H) of values vec[p + window[k], h] appended: the dense
    features of a structure, written once into the final arrays (no temporaries the
    size of the result)."""
    cdef Py_ssize_t P = ptr.shape[0] - 1, H = vec.shape[1], K = window.shape[0]
    cdef Py_ssize_t j, p, k, h, q, src
    cdef int64_t lo, hi, n = 0
    cdef const float[::1] v_in
    cdef bint has_vals = vals is not None
    if vec.shape[0] != P or seq_ptr[seq_ptr.shape[0] - 1] != P:
        raise ValueError("vec and seq_ptr must cover the positions of ptr")
    if has_vals:
        v_in = vals
    out_ptr = np.zeros(P + 1, dtype=np.int64)
    cdef int64_t[::1] op = out_ptr
    with nogil:
        for j in range(seq_ptr.shape[0] - 1):
            lo, hi = seq_ptr[j], seq_ptr[j + 1]
            for p in range(lo, hi):
                n += ptr[p + 1] - ptr[p]
                for k in range(K):
                    if lo <= p + window[k] < hi:
                        n += H
                op[p + 1] = n
    out_ids = np.empty(n, dtype=np.int32)
    out_vals = np.empty(n, dtype=np.float32)
    cdef int32_t[::1] oi = out_ids
    cdef float[::1] ov = out_vals
    with nogil:
        for j in range(seq_ptr.shape[0] - 1):
            lo, hi = seq_ptr[j], seq_ptr[j + 1]
            for p in range(lo, hi):
                q = op[p]
                for src in range(ptr[p], ptr[p + 1]):
                    oi[q] = ids[src]
                    ov[q] = v_in[src] if has_vals else 1.0
                    q += 1
                for k in range(K):
                    if lo <= p + window[k] < hi:
                        for h in range(H):
                            oi[q] = <int32_t>(first + k * H + h)
                            ov[q] = vec[p + window[k], h]
                            q += 1
    return out_ptr, out_ids, out_vals


# --- the attributes at any positions of a text held as value ids -------------------
# Structure learning (seqbil/aso.py) visits the positions of a large raw text in a
# random order, several times over. The text stays as it was read: per column, the id
# of every token's value among the column's distinct values (4 bytes a token), and the
# sentence offsets. A field id is a lookup in a table per field over its column's
# distinct values, a boundary id follows from the bounds of the position's sentence,
# so the keys and attributes of any positions come out as attribute_keys and
# encode_csr give them from a field matrix, which is never built.

cdef struct Text:
    const int64_t* bounds    # sentence offsets, n_sent + 1
    Py_ssize_t n_sent
    const int32_t** cols     # per column, the value id of every token
    const int32_t* f_lut     # f_lut[f_ptr[i] + v]: the id (layout boundaries-first) of value v in field i
    const int64_t* f_ptr
    const int32_t* f_col     # the column field i reads
    int K                    # boundary symbols per side (the templates' reach)
    const int32_t* t_ptr     # the templates, as FeatureIndex.specs; r_col[m]: the field macro m reads
    const int32_t* r_row
    const int32_t* r_col
    const int64_t* r_mult


cdef inline Py_ssize_t _sentence(const int64_t* bounds, Py_ssize_t n, int64_t p) noexcept nogil:
    """The sentence j with bounds[j] <= p < bounds[j + 1] (binary search)."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        if bounds[mid] <= p:
            lo = mid
        else:
            hi = mid
    return lo


cdef inline int64_t _field_at(const Text* x, int64_t p, int64_t lo, int64_t hi, Py_ssize_t m) noexcept nogil:
    """The field id macro m reads at token p of the sentence lo:hi: _B-k is k-1 and _B+k
    K+k-1, as field_matrix numbers them."""
    cdef int64_t q = p + x.r_row[m]
    cdef int32_t i = x.r_col[m]
    if q < lo:
        return lo - q - 1
    if q >= hi:
        return x.K + q - hi
    return x.f_lut[x.f_ptr[i] + x.cols[x.f_col[i]][q]]


cdef inline int64_t _key_at(const Text* x, int64_t p, int64_t lo, int64_t hi, Py_ssize_t t) noexcept nogil:
    """The key of template t at token p (as _key computes it from a field matrix)."""
    cdef Py_ssize_t m
    cdef int64_t key = 0
    cdef uint64_t h
    if x.t_ptr[t] < x.t_ptr[t + 1] and x.r_mult[x.t_ptr[t]] == 0:
        h = <uint64_t>t
        for m in range(x.t_ptr[t], x.t_ptr[t + 1]):
            h = _mix(h, <uint64_t>_field_at(x, p, lo, hi, m))
        return <int64_t>(h >> 1)
    for m in range(x.t_ptr[t], x.t_ptr[t + 1]):
        key += _field_at(x, p, lo, hi, m) * x.r_mult[m]
    return key


cdef const void* _data(a) except? NULL:
    """The first element of a C-contiguous array (NULL when it is empty)."""
    cdef const unsigned char[::1] raw
    if a.size == 0:
        return NULL
    raw = a.reshape(-1).view(np.uint8)
    return &raw[0]


cdef class TextPositions:
    """The 0-order templates of a feature index over a text held as value ids: their
    keys (keys) and attributes (csr) at any positions of the text.

    bounds: int64 sentence offsets; columns: per column, int32 value ids of the tokens;
    field i reads column f_col[i] through f_lut[f_ptr[i]:f_ptr[i + 1]] (value id ->
    field id); K, t_ptr, r_row, r_col, r_mult: the index's reach and specs[0]."""
    cdef Text x
    cdef const int32_t** cols
    cdef list keep
    cdef Py_ssize_t T, P
    cdef readonly list n_values  # per column, 1 + its largest value id

    def __cinit__(self, bounds, columns, f_lut, f_ptr, f_col, int K, t_ptr, r_row, r_col, r_mult):
        self.keep = [np.ascontiguousarray(bounds, dtype=np.int64), np.ascontiguousarray(f_lut, dtype=np.int32),
                     np.ascontiguousarray(f_ptr, dtype=np.int64), np.ascontiguousarray(f_col, dtype=np.int32),
                     np.ascontiguousarray(t_ptr, dtype=np.int32), np.ascontiguousarray(r_row, dtype=np.int32),
                     np.ascontiguousarray(r_col, dtype=np.int32), np.ascontiguousarray(r_mult, dtype=np.int64)]
        cols = [np.ascontiguousarray(c, dtype=np.int32) for c in columns]
        self.keep.extend(cols)
        b, fl, fp, fc, tp, rr, rc, rm = self.keep[:8]
        if len(b) < 1 or b[0] != 0 or np.any(np.diff(b) < 0):
            raise ValueError("bounds must be increasing offsets from 0")
        self.P = int(b[len(b) - 1])
        if any(len(c) != self.P for c in cols):
            raise ValueError("every column must have a value per token")
        if len(fp) != len(fc) + 1 or (len(fc) and (fc.min() < 0 or fc.max() >= len(cols))):
            raise ValueError("fields and columns")
        self.n_values = [int(c.max()) + 1 if len(c) else 0 for c in cols]
        if any(len(c) and c.min() < 0 for c in cols):
            raise ValueError("value ids are not negative")
        for i in range(len(fc)):
            if fp[i] < 0 or fp[i + 1] > len(fl) or fp[i] > fp[i + 1]:
                raise ValueError("field tables")
            if self.n_values[fc[i]] > fp[i + 1] - fp[i]:
                raise ValueError(f"a value id of column {fc[i]} has no entry in the table of field {i}")
        if len(rc) and (rc.min() < 0 or rc.max() >= len(fc) or np.abs(rr).max() > K):
            raise ValueError("macros")
        self.T = len(tp) - 1
        self.cols = <const int32_t**>malloc(max(len(cols), 1) * sizeof(int32_t*))
        if self.cols == NULL:
            raise MemoryError()
        for i in range(len(cols)):
            self.cols[i] = <const int32_t*>_data(cols[i])
        self.x.bounds = <const int64_t*>_data(b)
        self.x.n_sent = len(b) - 1
        self.x.cols = self.cols
        self.x.f_lut = <const int32_t*>_data(fl)
        self.x.f_ptr = <const int64_t*>_data(fp)
        self.x.f_col = <const int32_t*>_data(fc)
        self.x.K = K
        self.x.t_ptr = <const int32_t*>_data(tp)
        self.x.r_row = <const int32_t*>_data(rr)
        self.x.r_col = <const int32_t*>_data(rc)
        self.x.r_mult = <const int64_t*>_data(rm)

    def __dealloc__(self):
        free(self.cols)

    def _check(self, const int64_t[::1] positions):
        cdef Py_ssize_t k
        for k in range(positions.shape[0]):
            if positions[k] < 0 or positions[k] >= self.P:
                raise IndexError(f"position {positions[k]} of a text of {self.P} tokens")

    def keys(self, const int64_t[::1] positions, int64_t[:, ::1] out):
        """out[k, t] = the key of template t at token positions[k]."""
        cdef Py_ssize_t k, t, j
        cdef int64_t p
        if out.shape[0] != positions.shape[0] or out.shape[1] != self.T:
            raise ValueError("out must be positions x templates")
        self._check(positions)
        with nogil:
            for k in range(positions.shape[0]):
                p = positions[k]
                j = _sentence(self.x.bounds, self.x.n_sent, p)
                for t in range(self.T):
                    out[k, t] = _key_at(&self.x, p, self.x.bounds[j], self.x.bounds[j + 1], t)

    def csr(self, const int64_t[::1] positions, const int32_t[::1] direct, const int64_t[::1] direct_ptr,
            const int64_t[::1] table, const int64_t[::1] table_ptr, ptr_out=None, ids_out=None):
        """(ptr int64, ids int32): the attributes of the tokens at positions, in the
        order of their templates, those missing from the dictionary (table,
        table_ptr) left out, as encode_csr gives them. A template t with a table
        direct[direct_ptr[t]:direct_ptr[t + 1]] (its key is one field id) reads its
        attribute id there (-1: none) instead of searching the dictionary. With
        ptr_out and ids_out (at least positions + 1 and positions x templates long)
        the result is written there and views of them returned."""
        cdef Py_ssize_t C = positions.shape[0], k, t, j
        cdef int64_t p, key, a, n = 0, lo, hi
        if table_ptr.shape[0] != self.T + 1 or direct_ptr.shape[0] != self.T + 1:
            raise ValueError("a table per template")
        self._check(positions)
        own = ptr_out is None or ids_out is None
        ptr_arr = np.zeros(C + 1, dtype=np.int64) if own else ptr_out[:C + 1]
        ids_arr = np.empty(C * self.T, dtype=np.int32) if own else ids_out
        if ptr_arr.shape[0] != C + 1 or ids_arr.shape[0] < C * self.T:
            raise ValueError("the output buffers are too short")
        if self.T == 0 or C == 0:
            ptr_arr[:] = 0
            return ptr_arr, ids_arr[:0]
        cdef int64_t[::1] ptr = ptr_arr
        cdef int32_t[::1] ids = ids_arr
        cdef const int64_t* tab = &table[0] if table.shape[0] else NULL
        with nogil:
            ptr[0] = 0
            for k in range(C):
                p = positions[k]
                j = _sentence(self.x.bounds, self.x.n_sent, p)
                lo, hi = self.x.bounds[j], self.x.bounds[j + 1]
                for t in range(self.T):
                    key = _key_at(&self.x, p, lo, hi, t)
                    if direct_ptr[t] < direct_ptr[t + 1]:
                        a = direct[direct_ptr[t] + key] if key < direct_ptr[t + 1] - direct_ptr[t] else -1
                    else:
                        a = find_key(tab, table_ptr[t], table_ptr[t + 1], key)
                    if a >= 0:
                        ids[n] = <int32_t>a
                        n += 1
                ptr[k + 1] = n
        if not own:
            return ptr_arr, ids_arr[:n]
        ids = None
        ids_arr.resize(n, refcheck=False)  # shrinks in place
        return ptr_arr, ids_arr

    def values(self, const int64_t[::1] positions, Py_ssize_t column, const int32_t[::1] lut, Py_ssize_t offset,
               int32_t[::1] out):
        """out[k] = lut[value of the column at token positions[k] + offset], -1 where that
        token is outside the sentence of positions[k]: e.g. the target of every
        position's auxiliary problems, the word `offset` away."""
        cdef Py_ssize_t C = positions.shape[0], k, j
        cdef int64_t q
        cdef const int32_t* col
        if out.shape[0] != C:
            raise ValueError("out must have a value per position")
        if column < 0 or column >= len(self.n_values) or lut.shape[0] < self.n_values[column]:
            raise ValueError("the table must cover the column's values")
        self._check(positions)
        col = self.cols[column]
        with nogil:
            for k in range(C):
                j = _sentence(self.x.bounds, self.x.n_sent, positions[k])
                q = positions[k] + offset
                out[k] = lut[col[q]] if self.x.bounds[j] <= q < self.x.bounds[j + 1] else -1
