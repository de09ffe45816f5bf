"""Blockwise coordinate descent for the bilinear model (Wu & Sun, Algorithm 1).

With beta fixed the bilinear model is linear in alpha (the feature of alpha[a, y]
at a position with labels (y, v) is beta[a, v]), and vice versa; each half-step
runs passes of an online dual solver for that linear structured SVM: the
passive-aggressive update PA-I (Crammer et al. 2006; Shalev-Shwartz & Singer 2006)
with margin 1 and step tau = min(C, loss / |dphi|^2). The linear part (0-order
weights and end scores) is updated in both half-steps.
"""
cimport cython
import numpy as np
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from chain cimport decode_buffers, differs, chunk_limits, check_rows, score_unary, score_pair_bilinear, viterbi


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def bcd_chunk(const int64_t[::1] order, const int64_t[::1] seq_ptr, const int32_t[::1] labels,
              const int64_t[::1] u_ptr, const int32_t[::1] u_ids,
              const int64_t[::1] b_ptr, const int32_t[::1] b_ids,
              double[:, ::1] W0, double[:, ::1] trans, double[::1] end, double[:, :] alpha,
              double[:, :] beta, int32_t[::1] mark0, int32_t[::1] mark1, int side, double C,
              bint transitions):
    """One PA-I pass over the sequences in order, learning alpha (side 0) or beta
    (side 1) with the other fixed. Returns the number of mistakes."""
    check_rows(alpha, "alpha")
    check_rows(beta, "beta")
    cdef int S = end.shape[0], T = S + 1, width = S if side == 0 else T
    cdef Py_ssize_t jj, N = order.shape[0]
    cdef int maxlen, maxb, maxu
    cdef int64_t p0
    chunk_limits(order, seq_ptr, b_ptr, &maxlen, &maxb)
    chunk_limits(order, seq_ptr, u_ptr, &maxlen, &maxu)
    cdef double[:, ::1] unary, delta
    cdef double[:, :, ::1] pair
    cdef int32_t[:, ::1] back
    cdef int32_t[::1] pred
    unary, pair, delta, back, pred = decode_buffers(maxlen, S)
    cdef int32_t[::1] t0 = np.zeros(maxu, dtype=np.int32)
    cdef int32_t[::1] t1 = np.zeros(maxb, dtype=np.int32)
    cdef double[:, ::1] d0 = np.zeros((maxu, S))
    cdef double[:, ::1] d1 = np.zeros((maxb, T))
    cdef double[::1] dend = np.zeros(S)
    cdef double[:, ::1] dtrans = np.zeros((S, T))
    cdef int64_t mistakes = 0, q
    cdef int n, i, g, p, gp, pp, k0, k1, j, y
    cdef int32_t a
    cdef double gold, guess, sq, tau
    with nogil:
        for jj in range(N):
            p0 = seq_ptr[order[jj]]
            n = <int>(seq_ptr[order[jj] + 1] - p0)
            if n == 0:
                continue
            score_unary(u_ids, u_ptr, p0, n, W0, unary)
            score_pair_bilinear(b_ids, b_ptr, p0, n, alpha, beta, pair)
            guess = viterbi(unary, pair, trans, end, n, delta, back, pred)
            if not differs(labels, p0, pred, n):
                continue
            mistakes += 1
            gold = end[labels[p0 + n - 1]]
            for i in range(n):
                gp = labels[p0 + i - 1] if i > 0 else S
                gold += unary[i, labels[p0 + i]] + pair[i, labels[p0 + i], gp] + trans[labels[p0 + i], gp]
            # dphi = Phi(gold) - Phi(predicted) for the free parameters
            k0 = 0
            k1 = 0
            for y in range(S):
                dend[y] = 0.0
            dend[labels[p0 + n - 1]] += 1.0
            dend[pred[n - 1]] -= 1.0
            memset(&dtrans[0, 0], 0, S * T * sizeof(double))
            for i in range(n):
                g = labels[p0 + i]
                p = pred[i]
                gp = labels[p0 + i - 1] if i > 0 else S
                pp = pred[i - 1] if i > 0 else S
                if g != p:
                    for q in range(u_ptr[p0 + i], u_ptr[p0 + i + 1]):
                        a = u_ids[q]
                        if mark0[a] < 0:
                            mark0[a] = k0
                            t0[k0] = a
                            memset(&d0[k0, 0], 0, S * sizeof(double))
                            k0 += 1
                        d0[mark0[a], g] += 1.0
                        d0[mark0[a], p] -= 1.0
                if transitions and (g != p or gp != pp):
                    dtrans[g, gp] += 1.0
                    dtrans[p, pp] -= 1.0
                if g != p or gp != pp:
                    for q in range(b_ptr[p0 + i], b_ptr[p0 + i + 1]):
                        a = b_ids[q]
                        if mark1[a] < 0:
                            mark1[a] = k1
                            t1[k1] = a
                            memset(&d1[k1, 0], 0, T * sizeof(double))
                            k1 += 1
                        if side == 0:
                            d1[mark1[a], g] += beta[a, gp]
                            d1[mark1[a], p] -= beta[a, pp]
                        else:
                            d1[mark1[a], gp] += alpha[a, g]
                            d1[mark1[a], pp] -= alpha[a, p]
            sq = 0.0
            for y in range(S):
                sq += dend[y] * dend[y]
                for j in range(T):
                    sq += dtrans[y, j] * dtrans[y, j]
            for j in range(k0):
                for y in range(S):
                    sq += d0[j, y] * d0[j, y]
            for j in range(k1):
                for y in range(width):
                    sq += d1[j, y] * d1[j, y]
            tau = 0.0 if sq == 0.0 else min(C, (guess - gold + 1.0) / sq)
            for y in range(S):
                end[y] += tau * dend[y]
                for j in range(T):
                    trans[y, j] += tau * dtrans[y, j]
            for j in range(k0):
                a = t0[j]
                mark0[a] = -1
                for y in range(S):
                    W0[a, y] += tau * d0[j, y]
            for j in range(k1):
                a = t1[j]
                mark1[a] = -1
                for y in range(width):
                    if side == 0:
                        alpha[a, y] += tau * d1[j, y]
                    else:
                        beta[a, y] += tau * d1[j, y]
    return mistakes
