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


@cython.boundscheck(False)
@cython.wraparound(False)
def encode_csr(const int32_t[:, ::1] fields, const int64_t[::1] index,
               const int32_t[::1] t_ptr, const int32_t[::1] r_row, const int32_t[::1] r_col,
               const int64_t[::1] r_mult, const int64_t[::1] table, const int64_t[::1] table_ptr):
    """lookup_csr of the attribute_keys, without the P x T matrix of keys: CSR (ptr,
    ids) of the attributes found in the dictionary (table, table_ptr)."""
    cdef Py_ssize_t P = index.shape[0], T = t_ptr.shape[0] - 1, width = fields.shape[1], p, t
    cdef int64_t lo, hi, mid, k, n = 0
    cdef const int32_t* F = &fields[0, 0] if fields.shape[0] and width else NULL
    ptr_arr = np.zeros(P + 1, dtype=np.int64)
    ids_arr = np.empty(P * T, dtype=np.int32)
    if T == 0:
        return ptr_arr, ids_arr
    cdef int64_t[::1] ptr = ptr_arr
    cdef int32_t[::1] ids = ids_arr
    with nogil:
        for p in range(P):
            for t in range(T):
                k = _key(F, width, index[p], t, &t_ptr[0], &r_row[0], &r_col[0], &r_mult[0])
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
