# Shared inline kernels of the first-order chain: scoring and Viterbi.
#
# Conventions used by every kernel:
#   S labels 0..S-1; the previous-label index S stands for the start symbol.
#   unary[i, y]     score of label y at position i (0-order features)
#   pair[i, y, v]   score of labels (y_i = y, y_{i-1} = v) at position i (1st-order
#                   features); only pair[0, :, S] is used at i = 0 and only
#                   pair[i, :, :S] at i > 0, so kernels fill just those cells.
#   trans[y, v]     score of the label transition (y_i = y, y_{i-1} = v) at every
#                   position: the bare `B` template, always linear (S x (S+1)).
#   end[y]          score of ending the sequence in label y (stop transition).
# Positions of a corpus are stored as CSR arrays: the attribute ids active at
# position p are ids[ptr[p]:ptr[p + 1]].
cimport cython
import numpy as np
from libc.stdint cimport int32_t, int64_t
from libc.math cimport INFINITY

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SEQBIL_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #else
    #define SEQBIL_PREFETCH(p) ((void)(p))
    #endif
    """
    void SEQBIL_PREFETCH(const void* p) noexcept nogil

# Scoring reads one weight row per attribute, at random places in arrays of hundreds
# of megabytes: it waits on memory, not arithmetic. The rows of the position
# PREFETCH_AHEAD steps ahead are requested while the current one is summed.
DEF PREFETCH_AHEAD = 2


cdef inline void prefetch_rows(const int32_t[::1] ids, const int64_t[::1] ptr, int64_t p, const char* base,
                               Py_ssize_t stride, Py_ssize_t nbytes) noexcept nogil:
    """Ask the cache for the rows (nbytes at base + id * stride) of the attributes at p."""
    cdef int64_t k
    cdef Py_ssize_t off
    for k in range(ptr[p], ptr[p + 1]):
        off = 0
        while off < nbytes:
            SEQBIL_PREFETCH(base + ids[k] * stride + off)
            off += 64
        SEQBIL_PREFETCH(base + ids[k] * stride + nbytes - 1)


cdef inline bint differs(const int32_t[::1] labels, int64_t p0, const int32_t[::1] pred, int n) noexcept nogil:
    """Whether a decoded sequence differs from the gold one (a mistake)."""
    cdef int i
    for i in range(n):
        if pred[i] != labels[p0 + i]:
            return True
    return False


cdef inline void chunk_limits(const int64_t[::1] order, const int64_t[::1] seq_ptr, const int64_t[::1] ptr,
                              int* maxlen, int* maxattr) noexcept nogil:
    """Longest sequence of the chunk, and most attributes of one sequence (CSR ptr)."""
    cdef Py_ssize_t j
    cdef int64_t a, b
    maxlen[0] = 1
    maxattr[0] = 1
    for j in range(order.shape[0]):
        a = seq_ptr[order[j]]
        b = seq_ptr[order[j] + 1]
        maxlen[0] = max(maxlen[0], <int>(b - a))
        maxattr[0] = max(maxattr[0], <int>(ptr[b] - ptr[a]))


cdef inline tuple decode_buffers(int maxlen, int S):
    """Work arrays of the decoder for sequences of up to maxlen positions:
    unary, pair, delta, back, pred."""
    return (np.zeros((maxlen, S)), np.zeros((maxlen, S, S + 1)), np.zeros((maxlen, S)),
            np.zeros((maxlen, S), dtype=np.int32), np.zeros(maxlen, dtype=np.int32))


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void linear_update(const int32_t[::1] labels, const int32_t[::1] pred, int64_t p0, int n, int S,
                        const int64_t[::1] u_ptr, const int32_t[::1] u_ids, double C, double cc,
                        double[:, ::1] W0, double[:, ::1] trans, double[::1] end, double[:, ::1] U0,
                        double[:, ::1] Utrans, double[::1] Uend, bint averaged, bint transitions) noexcept nogil:
    """Perceptron step on the linear part: 0-order weights (section 4.3), label
    transitions and end scores."""
    cdef int i, g, p, gp, pp
    cdef int64_t q
    cdef int32_t a
    for i in range(n):
        g = labels[p0 + i]
        p = pred[i]
        gp = labels[p0 + i - 1] if i > 0 else S
        pp = pred[i - 1] if i > 0 else S
        if transitions and (g != p or gp != pp):
            trans[g, gp] += C
            trans[p, pp] -= C
            if averaged:
                Utrans[g, gp] += cc
                Utrans[p, pp] -= cc
        if g != p:
            for q in range(u_ptr[p0 + i], u_ptr[p0 + i + 1]):
                a = u_ids[q]
                W0[a, g] += C
                W0[a, p] -= C
                if averaged:
                    U0[a, g] += cc
                    U0[a, p] -= cc
    g = labels[p0 + n - 1]
    p = pred[n - 1]
    if g != p:
        end[g] += C
        end[p] -= C
        if averaged:
            Uend[g] += cc
            Uend[p] -= cc


cdef inline int check_rows(const double[:, :] m, str name) except -1:
    """Kernels walk rows by pointer: their elements must be adjacent."""
    if m.shape[0] > 0 and m.shape[1] > 1 and m.strides[1] != sizeof(double):
        raise ValueError(f"{name}: rows must be contiguous")
    return 0


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void score_unary(const int32_t[::1] ids, const int64_t[::1] ptr, int64_t p0, int n,
                             const double[:, ::1] W0, double[:, ::1] unary) noexcept nogil:
    """unary[i, y] = sum of W0[a, y] over the 0-order attributes a at position p0 + i."""
    cdef int i, y, S = unary.shape[1]
    cdef int64_t k
    cdef double* out
    cdef const double* w
    for i in range(n):
        out = &unary[i, 0]
        for y in range(S):
            out[y] = 0.0
        for k in range(ptr[p0 + i], ptr[p0 + i + 1]):
            w = &W0[ids[k], 0]
            for y in range(S):
                out[y] += w[y]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void score_pair_linear(const int32_t[::1] ids, const int64_t[::1] ptr, int64_t p0, int n,
                                   const double[:, :, ::1] W1, double[:, :, ::1] pair) noexcept nogil:
    """pair[i, y, v] = sum of W1[a, y, v] over the 1st-order attributes a at p0 + i (eq. 2).
    Rows are S + 1 wide; at i > 0 the start column S is filled too and never read."""
    cdef int i, y, j, S = pair.shape[1], T = S + 1
    cdef int64_t k
    cdef double* out
    cdef const double* w
    for y in range(S):
        pair[0, y, S] = 0.0
    cdef const char* base = <const char*> &W1[0, 0, 0] if W1.shape[0] > 0 else NULL
    cdef Py_ssize_t stride = W1.strides[0], nbytes = S * T * sizeof(double)
    for i in range(1, min(n, 1 + PREFETCH_AHEAD)):
        prefetch_rows(ids, ptr, p0 + i, base, stride, nbytes)
    for k in range(ptr[p0], ptr[p0 + 1]):
        for y in range(S):
            pair[0, y, S] += W1[ids[k], y, S]
    for i in range(1, n):
        if i + PREFETCH_AHEAD < n:
            prefetch_rows(ids, ptr, p0 + i + PREFETCH_AHEAD, base, stride, nbytes)
        out = &pair[i, 0, 0]
        for j in range(S * T):
            out[j] = 0.0
        for k in range(ptr[p0 + i], ptr[p0 + i + 1]):
            w = &W1[ids[k], 0, 0]
            for j in range(S * T):
                out[j] += w[j]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void sum_outer4(const int32_t[::1] ids, int64_t k0, int64_t k1, const double[:, :] alpha,
                            const double[:, :] beta, double* out) noexcept nogil:
    """out = sum of alpha[a] beta[a]^T over ids[k0:k1] for four labels (B/I/E/S):
    fixed bounds let the compiler keep the 4 x 5 sum in registers."""
    cdef double acc[20]
    cdef int y, v
    cdef int64_t k
    cdef const double* al
    cdef const double* be
    for v in range(20):
        acc[v] = 0.0
    for k in range(k0, k1):
        al = &alpha[ids[k], 0]
        be = &beta[ids[k], 0]
        for y in range(4):
            for v in range(5):
                acc[y * 5 + v] += al[y] * be[v]
    for v in range(20):
        out[v] = acc[v]


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline void score_pair_bilinear(const int32_t[::1] ids, const int64_t[::1] ptr, int64_t p0, int n,
                                     const double[:, :] alpha, const double[:, :] beta,
                                     double[:, :, ::1] pair, double scale=1.0) noexcept nogil:
    """pair[i, y, v] = scale * sum of alpha[a, y] * beta[a, v] over the 1st-order attributes
    at p0 + i (eq. 1). Rows are S + 1 wide, as in score_pair_linear. alpha and beta
    may be column slices of one array (alpha[a] next to beta[a] in memory: one cache
    miss per attribute instead of two); their rows must be contiguous."""
    cdef int i, y, v, S = pair.shape[1], T = S + 1
    cdef int64_t k
    cdef double ay
    cdef double* out
    cdef const double* al
    cdef const double* be
    # alpha[a] and beta[a] side by side (the usual layout): one prefetch covers both
    cdef const char* base = <const char*> &alpha[0, 0] if alpha.shape[0] > 0 else NULL
    cdef Py_ssize_t stride = alpha.strides[0], nbytes = (2 * S + 1) * sizeof(double)
    for y in range(S):
        pair[0, y, S] = 0.0
    for i in range(1, min(n, 1 + PREFETCH_AHEAD)):
        prefetch_rows(ids, ptr, p0 + i, base, stride, nbytes)
    for k in range(ptr[p0], ptr[p0 + 1]):
        for y in range(S):
            pair[0, y, S] += alpha[ids[k], y] * beta[ids[k], S]
    for i in range(1, n):
        if i + PREFETCH_AHEAD < n:
            prefetch_rows(ids, ptr, p0 + i + PREFETCH_AHEAD, base, stride, nbytes)
        out = &pair[i, 0, 0]
        if S == 4:
            sum_outer4(ids, ptr[p0 + i], ptr[p0 + i + 1], alpha, beta, out)
            continue
        for v in range(S * T):
            out[v] = 0.0
        for k in range(ptr[p0 + i], ptr[p0 + i + 1]):
            al = &alpha[ids[k], 0]
            be = &beta[ids[k], 0]
            for y in range(S):
                ay = al[y]
                for v in range(T):
                    out[y * T + v] += ay * be[v]
    if scale != 1.0:
        for y in range(S):
            pair[0, y, S] *= scale
        for i in range(1, n):
            out = &pair[i, 0, 0]
            for v in range(S * T):
                out[v] *= scale


@cython.boundscheck(False)
@cython.wraparound(False)
cdef inline double viterbi(const double[:, ::1] unary, const double[:, :, ::1] pair,
                           const double[:, ::1] trans, const double[::1] end, int n,
                           double[:, ::1] delta, int32_t[:, ::1] back, int32_t[::1] out) noexcept nogil:
    """First-order Viterbi (Viterbi 1967; Rabiner 1989, eq. 32-35) with start and stop scores.

    Writes the best label sequence to out[:n] and returns its score. Ties go to the
    lowest label index, so decoding is deterministic.
    """
    cdef int i, y, v, S = unary.shape[1]
    cdef double best, s
    cdef int32_t arg
    if n == 0:
        return 0.0
    for y in range(S):
        delta[0, y] = unary[0, y] + pair[0, y, S] + trans[y, S]
    for i in range(1, n):
        for y in range(S):
            best = -INFINITY
            arg = 0
            for v in range(S):
                s = delta[i - 1, v] + pair[i, y, v] + trans[y, v]
                if s > best:
                    best = s
                    arg = v
            delta[i, y] = best + unary[i, y]
            back[i, y] = arg
    best = -INFINITY
    arg = 0
    for y in range(S):
        s = delta[n - 1, y] + end[y]
        if s > best:
            best = s
            arg = y
    out[n - 1] = arg
    for i in range(n - 1, 0, -1):
        out[i - 1] = back[i, out[i]]
    return best
