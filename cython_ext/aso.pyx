# cython: boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False, language_level=3
"""The auxiliary problems of alternating structure optimization (Ando & Zhang 2005,
JMLR 6; K. Stratos' notes, section 2.2, step 1 of the SVD-based algorithm).

A block of B binary problems that share their inputs (the sparse binary features
phi_i of a feature split at every position i of the unlabeled text) and differ in
their target (problem b: "is the target at this position t0 + b?") is trained by
SGD on

    lambda ||w_b||^2 + (1/n) sum_i L(w_b . phi_i + v_b . Theta phi_i, y_ib)

with the modified Huber loss L(p, y) = max(0, 1 - py)^2 if py >= -1, else -4py
(or the hinge, max(0, 1 - py)), step eta_t = eta0 / (1 + 2 lambda eta0 t) and the
regulariser applied as one scale factor of the whole block (w = scale * W), so a
step touches only the rows of the active features. Theta (d x h, the structure of
the previous round, none in the first) enters with its unregularised weights v_b,
as in eq. (6); u_b = w_b + Theta^T v_b is what the SVD then stacks.

The kernel holds no Python object and runs without the GIL, so blocks train in
parallel threads.
"""
import numpy as np
from libc.math cimport sqrt


cdef inline double loss_slope(double p, double y, int hinge) noexcept nogil:
    """dL/dp of the modified Huber loss (hinge = 0) or the hinge (hinge = 1)."""
    cdef double z = p * y
    if z >= 1.0:
        return 0.0
    if hinge:
        return -y
    if z >= -1.0:
        return -2.0 * y * (1.0 - z)
    return -4.0 * y


def sgd_block(const long[::1] ptr, const int[::1] ids, const int[::1] target, int t0,
              float[:, ::1] W, float[:, ::1] V, const float[:, ::1] theta,
              const long[::1] order, double lam, double eta0, long t, int hinge):
    """One pass over the positions in `order`; W (d x B) and V (h x B; h = 0 without
    Theta) are updated in place. Returns the step count t after the pass (the
    schedule goes on from it in the next pass).

    ptr, ids: the CSR features of every position; target[i]: the target id at
    position i (-1: none), problem b of the block is target t0 + b."""
    cdef Py_ssize_t B = W.shape[1], h = V.shape[0], d = W.shape[0]
    cdef Py_ssize_t k, j, b, q, i, f
    cdef double eta, scale = 1.0, y, g
    cdef int any_step
    cdef float inv
    # scores and steps in float32, so that the loops over the block vectorise
    cdef float[::1] s_buf = np.zeros(B, dtype=np.float32), step_buf = np.zeros(B, dtype=np.float32)
    cdef float[::1] z_buf = np.zeros(max(h, 1), dtype=np.float32)
    cdef float *s = &s_buf[0]
    cdef float *step = &step_buf[0]
    cdef float *z = &z_buf[0]
    cdef float *row
    cdef const float *trow
    if h > 0 and (theta.shape[0] != d or theta.shape[1] != h):
        raise ValueError("Theta must be d x h, with V h x B")
    with nogil:
        for k in range(order.shape[0]):
            i = order[k]
            eta = eta0 / (1.0 + 2.0 * lam * eta0 * t)
            for b in range(B):
                s[b] = 0.0
            for j in range(ptr[i], ptr[i + 1]):
                row = &W[ids[j], 0]
                for b in range(B):
                    s[b] += row[b]
            for b in range(B):
                s[b] *= <float>scale
            if h > 0:
                for q in range(h):
                    z[q] = 0.0
                for j in range(ptr[i], ptr[i + 1]):
                    trow = &theta[ids[j], 0]
                    for q in range(h):
                        z[q] += trow[q]
                for q in range(h):
                    row = &V[q, 0]
                    for b in range(B):
                        s[b] += z[q] * row[b]
            # w <- (1 - 2 eta lambda) w - eta g phi: the decay goes into the scale
            scale *= 1.0 - 2.0 * eta * lam
            any_step = 0
            for b in range(B):
                y = 1.0 if target[i] == t0 + b else -1.0
                g = loss_slope(s[b], y, hinge)
                step[b] = <float>(-eta * g)
                if g != 0.0:
                    any_step = 1
            if any_step:
                inv = <float>(1.0 / scale)
                for b in range(B):
                    s[b] = step[b] * inv  # s now holds the step of the stored (unscaled) W
                for j in range(ptr[i], ptr[i + 1]):
                    row = &W[ids[j], 0]
                    for b in range(B):
                        row[b] += s[b]
                for q in range(h):
                    row = &V[q, 0]
                    for b in range(B):
                        row[b] += step[b] * z[q]
            t += 1
            if scale < 1e-4:  # fold the scale in before float32 loses the small steps
                for f in range(d):
                    for b in range(B):
                        W[f, b] *= <float>scale
                scale = 1.0
        for f in range(d):
            for b in range(B):
                W[f, b] *= <float>scale
    return t
