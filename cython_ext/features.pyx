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
                lo = table_ptr[t]
                hi = table_ptr[t + 1]
                while lo < hi:
                    mid = (lo + hi) >> 1
                    if table[mid] < k:
                        lo = mid + 1
                    else:
                        hi = mid
                if lo < table_ptr[t + 1] and table[lo] == k:
                    ids[n] = <int32_t>lo
                    n += 1
            ptr[p + 1] = n
    return ptr_arr, ids_arr[:n].copy()
