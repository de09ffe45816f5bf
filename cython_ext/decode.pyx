"""Corpus decoding with the linear (eq. 2) and bilinear (eq. 1) first-order models."""
cimport cython
import numpy as np
from libc.stdint cimport int32_t, int64_t
from chain cimport check_rows, score_unary, score_pair_linear, score_pair_bilinear, viterbi


def viterbi_best(const double[:, ::1] unary, const double[:, :, ::1] pair, const double[:, ::1] trans,
                 const double[::1] end):
    """Best path and score for one sequence of score tables (see chain.pxd for the layout)."""
    cdef int n = unary.shape[0], S = unary.shape[1]
    if pair.shape[0] != n or pair.shape[1] != S or pair.shape[2] != S + 1 or end.shape[0] != S \
            or trans.shape[0] != S or trans.shape[1] != S + 1:
        raise ValueError("score tables have inconsistent shapes")
    out = np.zeros(n, dtype=np.int32)
    delta = np.empty((max(n, 1), S))
    back = np.zeros((max(n, 1), S), dtype=np.int32)
    cdef double best = viterbi(unary, pair, trans, end, n, delta, back, out)
    return out, best


@cython.boundscheck(False)
@cython.wraparound(False)
def decode_corpus(const int64_t[::1] seq_ptr,
                  const int64_t[::1] u_ptr, const int32_t[::1] u_ids,
                  const int64_t[::1] b_ptr, const int32_t[::1] b_ids,
                  const double[:, ::1] W0, const double[:, ::1] trans, const double[::1] end,
                  int32_t[::1] out,
                  const double[:, :, ::1] W1=None,
                  const double[:, :] alpha=None, const double[:, :] beta=None):
    """Viterbi-decode every sequence into out (one label id per position).

    Give W1 for the linear model or alpha and beta for the bilinear one.
    """
    cdef int S = end.shape[0]
    cdef Py_ssize_t N = seq_ptr.shape[0] - 1
    cdef bint bilinear = W1 is None
    if bilinear and (alpha is None or beta is None):
        raise ValueError("decode_corpus needs W1, or alpha and beta")
    if bilinear:
        check_rows(alpha, "alpha")
        check_rows(beta, "beta")
    cdef int maxlen = 1
    cdef Py_ssize_t j
    for j in range(N):
        maxlen = max(maxlen, <int>(seq_ptr[j + 1] - seq_ptr[j]))
    cdef double[:, ::1] unary = np.zeros((maxlen, S))
    cdef double[:, :, ::1] pair = np.zeros((maxlen, S, S + 1))
    cdef double[:, ::1] delta = np.zeros((maxlen, S))
    cdef int32_t[:, ::1] back = np.zeros((maxlen, S), dtype=np.int32)
    cdef int64_t p0
    cdef int n
    with nogil:
        for j in range(N):
            p0 = seq_ptr[j]
            n = <int>(seq_ptr[j + 1] - p0)
            score_unary(u_ids, u_ptr, p0, n, W0, unary)
            if bilinear:
                score_pair_bilinear(b_ids, b_ptr, p0, n, alpha, beta, pair)
            else:
                score_pair_linear(b_ids, b_ptr, p0, n, W1, pair)
            viterbi(unary, pair, trans, end, n, delta, back, out[p0:p0 + n])
