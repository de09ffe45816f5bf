"""The rows of a parameter mixed across the copies of a learner that train on threads
(training/threads.py): for each row, sum_i mu_i * copy i's row, written back into every
copy. A copy keeps its rows in a pool, at the row's slot (slot[a]; the rows of a dense
array are their own slots), and every copy has a slot for each row mixed (the caller
allocates them first). One pass over the rows, in the copies' own memory, no
temporaries: the mix reads each row N times and writes it N times."""
cimport cython
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdlib cimport malloc, free
from chain cimport prefetch_span, MIX_AHEAD


def mix_rows(pools, slots, const int64_t[::1] rows, const double[::1] mu):
    """pools: a C-contiguous float64 array per copy, (rows or slots, width...); slots:
    an int32 array per copy (slot of each row; every row mixed has one) or None for a
    dense array; rows: the rows mixed (each below every slot table's length, or the
    pool's rows when dense); mu: the copies' weights."""
    cdef Py_ssize_t n = len(pools), i, j, k, width
    cdef Py_ssize_t m = rows.shape[0]
    if n == 0 or m == 0:
        return
    if len(slots) != n or mu.shape[0] != n:
        raise ValueError("one pool, slot table and weight per copy")
    width = pools[0].size // max(pools[0].shape[0], 1) if pools[0].shape[0] else 0
    cdef double** base = <double**> malloc(n * sizeof(double*))
    cdef int32_t** slot = <int32_t**> malloc(n * sizeof(int32_t*))
    cdef double** at = <double**> malloc(n * sizeof(double*))
    cdef double[:, ::1] view
    cdef int32_t[::1] sview
    cdef int64_t r
    cdef double acc
    try:
        keep = []  # (the arrays the pointers point into)
        for i in range(n):
            if not pools[i].flags.c_contiguous or pools[i].dtype != np.float64:
                raise ValueError("the pools must be C-contiguous float64 arrays")
            pool = pools[i].reshape(pools[i].shape[0], -1)
            if pool.shape[1] != width:
                raise ValueError("the pools must have one row width")
            view = pool
            base[i] = &view[0, 0] if pool.shape[0] else NULL
            if slots[i] is None:
                slot[i] = NULL
            else:
                sview = slots[i]
                slot[i] = &sview[0] if sview.shape[0] else NULL
                if sview.shape[0] <= np.max(rows):
                    raise ValueError("a row past the slot table")
                held = np.asarray(slots[i])[np.asarray(rows)]
                if held.min() < 0 or held.max() >= pool.shape[0]:
                    raise ValueError("a row mixed without a slot in the pool")
            keep.append((pool, slots[i]))
            if slots[i] is None and (np.min(rows) < 0 or np.max(rows) >= pool.shape[0]):
                raise ValueError("a row past the dense array")
        with nogil:
            for k in range(m):
                if k + MIX_AHEAD < m:  # (the rows a few steps on, asked for now)
                    r = rows[k + MIX_AHEAD]
                    for i in range(n):
                        prefetch_span(<char*> (base[i] + (r if slot[i] == NULL else slot[i][r]) * width),
                                      width * sizeof(double))
                r = rows[k]
                for i in range(n):  # each copy's row, once per row
                    at[i] = base[i] + (r if slot[i] == NULL else slot[i][r]) * width
                for j in range(width):
                    acc = 0.0
                    for i in range(n):
                        acc = acc + mu[i] * at[i][j]
                    for i in range(n):
                        at[i][j] = acc
    finally:
        free(base)
        free(slot)
        free(at)


@cython.boundscheck(False)
@cython.wraparound(False)
def ids_flagged(const int64_t[::1] ptr, const int32_t[::1] ids, const uint8_t[::1] flags, int64_t n_ids):
    """The distinct ids, sorted, of the CSR rows p (ids[ptr[p]:ptr[p + 1]]) whose
    flag is set: the attributes at the positions a pass flagged. The pointers and
    ids are checked as they are read (a ValueError), the marking runs unchecked."""
    cdef Py_ssize_t P = flags.shape[0], p
    cdef int64_t q, k = 0, n = ids.shape[0]
    cdef bint bad = False
    if ptr.shape[0] < P + 1:
        raise ValueError("a pointer per flagged position and one past them")
    seen_ = np.zeros(n_ids, np.uint8)
    cdef uint8_t[::1] seen = seen_
    with nogil:
        for p in range(P):
            if flags[p]:
                if ptr[p] < 0 or ptr[p] > ptr[p + 1] or ptr[p + 1] > n:
                    bad = True
                    break
                for q in range(ptr[p], ptr[p + 1]):
                    if ids[q] < 0 or ids[q] >= n_ids:
                        bad = True
                        break
                    if not seen[ids[q]]:
                        seen[ids[q]] = 1
                        k += 1
                if bad:
                    break
    if bad:
        raise ValueError("the pointers or ids do not fit the table")
    out_ = np.empty(k, np.int64)
    cdef int64_t[::1] out = out_
    k = 0
    with nogil:
        for q in range(n_ids):
            if seen[q]:
                out[k] = q
                k += 1
    return out_


@cython.cdivision(True)
def mix_gaussian(means, variances, const int64_t[::1] rows, const double[::1] mu):
    """Each weight's mean and variance across the copies of an AROW learner
    (learners/arow.py), at the rows `rows` of a parameter with a row per attribute,
    in the copies' own memory: 1/v = sum_i mu_i / v_i, m = v sum_i mu_i m_i / v_i,
    written back into every copy. means, variances: a C-contiguous float64 array per
    copy, all of one shape (rows, width...); the variances positive."""
    cdef Py_ssize_t n = len(means), i, j, k, width, m = rows.shape[0]
    if n == 0 or m == 0:
        return
    if len(variances) != n or mu.shape[0] != n:
        raise ValueError("one mean, variance and weight per copy")
    shape = means[0].shape
    keep = []
    for a in list(means) + list(variances):
        if a.dtype != np.float64 or not a.flags.c_contiguous or a.shape != shape:
            raise ValueError("the means and variances must be C-contiguous float64 arrays of one shape")
        keep.append(a.reshape(shape[0], -1))
    if np.min(rows) < 0 or np.max(rows) >= shape[0]:
        raise ValueError("a row past the arrays")
    width = keep[0].shape[1]
    cdef double** w = <double**> malloc(n * sizeof(double*))
    cdef double** v = <double**> malloc(n * sizeof(double*))
    cdef double[:, ::1] view
    cdef double p, s, t
    cdef int64_t r, q
    try:
        for i in range(n):
            view = keep[i]
            w[i] = &view[0, 0] if width else NULL
            view = keep[n + i]
            v[i] = &view[0, 0] if width else NULL
        if width == 0:
            return
        with nogil:
            for k in range(m):
                if k + MIX_AHEAD < m:  # (the rows a few steps on, asked for now)
                    q = rows[k + MIX_AHEAD] * width
                    for i in range(n):
                        prefetch_span(<char*> (w[i] + q), width * sizeof(double))
                        prefetch_span(<char*> (v[i] + q), width * sizeof(double))
                r = rows[k] * width
                for j in range(width):
                    p = 0.0
                    s = 0.0
                    for i in range(n):
                        t = mu[i] / v[i][r + j]  # (copy i's precision, weighted)
                        p = p + t
                        s = s + t * w[i][r + j]
                    for i in range(n):
                        v[i][r + j] = 1.0 / p
                        w[i][r + j] = s / p
    finally:
        free(w)
        free(v)
