"""Structured perceptron (Collins 2002) on the linear first-order model, eq. (2).

Averaging uses the lazy trick of Daume (2006, p. 19): besides W keep U += c * dW,
where c counts the sequences seen; the averaged weights are W - U / c. An update
therefore touches only the weights of the features in dPhi.
"""
cimport cython
import numpy as np
from libc.stdint cimport int32_t, int64_t
from chain cimport decode_buffers, linear_update, differs, chunk_limits, score_unary, score_pair_linear, viterbi


@cython.boundscheck(False)
@cython.wraparound(False)
def train_chunk(const int64_t[::1] order, const int64_t[::1] seq_ptr, const int32_t[::1] labels,
                const int64_t[::1] u_ptr, const int32_t[::1] u_ids,
                const int64_t[::1] b_ptr, const int32_t[::1] b_ids,
                double[:, ::1] W0, double[:, :, ::1] W1, double[:, ::1] trans, double[::1] end,
                double[:, ::1] U0, double[:, :, ::1] U1, double[:, ::1] Utrans, double[::1] Uend,
                double C, int64_t counter, bint averaged, bint transitions):
    """One pass of perceptron updates over the sequences listed in order.

    Returns (mistakes, counter): the number of wrongly decoded sequences and the
    updated averaging counter.
    """
    cdef int S = end.shape[0]
    cdef Py_ssize_t j, N = order.shape[0]
    cdef int maxlen, maxb
    chunk_limits(order, seq_ptr, b_ptr, &maxlen, &maxb)
    cdef double[:, ::1] unary, delta
    cdef double[:, :, ::1] pair
    cdef int32_t[:, ::1] back
    cdef int32_t[::1] pred
    unary, pair, delta, back, pred = decode_buffers(maxlen, S)
    cdef int64_t p0, k, mistakes = 0
    cdef int n, i, g, p, gp, pp
    cdef int32_t a
    cdef double cc
    with nogil:
        for j in range(N):
            p0 = seq_ptr[order[j]]
            n = <int>(seq_ptr[order[j] + 1] - p0)
            if n > 0:
                score_unary(u_ids, u_ptr, p0, n, W0, unary)
                score_pair_linear(b_ids, b_ptr, p0, n, W1, pair)
                viterbi(unary, pair, trans, end, n, delta, back, pred)
                if differs(labels, p0, pred, n):
                    mistakes += 1
                    cc = C * counter
                    linear_update(labels, pred, p0, n, S, u_ptr, u_ids, C, cc, W0, trans, end, U0, Utrans, Uend,
                                  averaged, transitions)
                    for i in range(n):
                        g = labels[p0 + i]
                        p = pred[i]
                        gp = labels[p0 + i - 1] if i > 0 else S
                        pp = pred[i - 1] if i > 0 else S
                        if g != p or gp != pp:
                            for k in range(b_ptr[p0 + i], b_ptr[p0 + i + 1]):
                                a = b_ids[k]
                                W1[a, g, gp] += C
                                W1[a, p, pp] -= C
                                if averaged:
                                    U1[a, g, gp] += cc
                                    U1[a, p, pp] -= cc
            counter += 1
    return mistakes, counter
