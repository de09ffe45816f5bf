"""Corpus decoding with the linear (eq. 2) and bilinear (eq. 1) first-order models."""
import numpy as np
from libc.stdint cimport int32_t, int64_t
from chain cimport (Corpus, Linear, Rank1, Lattice, corpus_view, linear_view, rank1_view, lattice_new,
                    score_unary, score_pair_linear, score_pair_bilinear, viterbi)


def viterbi_best(const double[:, ::1] unary, const double[:, :, ::1] pair, const double[:, ::1] trans,
                 const double[::1] end):
    """Best path and score for one sequence of score tables (see chain.pxd for the layout)."""
    cdef int n = unary.shape[0], S = unary.shape[1]
    if pair.shape[0] != n or pair.shape[1] != S or pair.shape[2] != S + 1 or end.shape[0] != S \
            or trans.shape[0] != S or trans.shape[1] != S + 1:
        raise ValueError("score tables have inconsistent shapes")
    out = np.zeros(n, dtype=np.int32)
    cdef int32_t[::1] path = out
    cdef Lattice L
    work = lattice_new(&L, max(n, 1), S)
    L.unary, L.pair = <double*> &unary[0, 0], <double*> &pair[0, 0, 0]  # read only
    cdef Linear m = linear_view(np.zeros((0, S)), trans, end, None, None, None, False, False)
    cdef double best = viterbi(&L, &m, n, &path[0])
    return out, best


def decode_corpus(data, weights, int32_t[::1] out):
    """Viterbi-decode every sequence of an encoded Dataset into out (one label id per
    position). weights maps W0, trans, end, and W1 for the linear model or alpha and
    beta for the bilinear one (ideally interleaved, see chain.pxd: Rank1)."""
    cdef Corpus c = corpus_view(data)
    cdef Linear m = linear_view(weights["W0"], weights["trans"], weights["end"], None, None, None, False, False)
    cdef bint bilinear = "W1" not in weights
    cdef Rank1 w
    w.alpha, w.beta, w.sa, w.sb = NULL, NULL, 0, 0
    cdef const double[:, :, ::1] W1
    cdef const double* w1 = NULL
    if bilinear:
        if "alpha" not in weights or "beta" not in weights:
            raise ValueError("decode_corpus needs W1, or alpha and beta")
        w = rank1_view(weights["alpha"], weights["beta"])
    else:
        W1 = weights["W1"]
        w1 = &W1[0, 0, 0]
    cdef Py_ssize_t j, N = len(data.seq_ptr) - 1
    cdef int maxlen = 1
    for j in range(N):
        maxlen = max(maxlen, <int>(c.seq_ptr[j + 1] - c.seq_ptr[j]))
    cdef Lattice L
    work = lattice_new(&L, maxlen, m.S)
    cdef int64_t p0
    cdef int n
    with nogil:
        for j in range(N):
            p0 = c.seq_ptr[j]
            n = <int>(c.seq_ptr[j + 1] - p0)
            score_unary(&c, &m, &L, p0, n)
            if bilinear:
                score_pair_bilinear(&c, &w, &L, p0, n)
            else:
                score_pair_linear(&c, w1, &L, p0, n)
            viterbi(&L, &m, n, &out[p0])
