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
parallel threads. sgd_steps trains on the positions of one chunk of a pass, and the
block's state (step count and scale) goes on into the next chunk, so a pass cut into
chunks computes exactly what one call over the whole pass computes.
"""
import numpy as np
from libc.math cimport sqrt
from libc.stdlib cimport free, malloc


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


cdef long _sgd(const long* ptr, const int* ids, const int* target, int t0, float* W, Py_ssize_t d,
               Py_ssize_t B, float* V, Py_ssize_t h, const float* theta, const long* order, Py_ssize_t n,
               double lam, double eta0, long t, double* scale_io, int hinge, float* s, float* step,
               float* z) noexcept nogil:
    """n steps, at positions order[0:n] (order NULL: 0..n-1); W (d x B) and V (h x B)
    row-major; the scale of W in and out through scale_io. Returns the step count."""
    cdef Py_ssize_t k, j, b, q, i, f
    cdef double eta, scale = scale_io[0], y, g
    cdef int any_step
    cdef float inv
    cdef float *row
    cdef const float *trow
    for k in range(n):
        i = order[k] if order != NULL else k
        eta = eta0 / (1.0 + 2.0 * lam * eta0 * t)
        for b in range(B):
            s[b] = 0.0
        for j in range(ptr[i], ptr[i + 1]):
            row = &W[ids[j] * B]
            for b in range(B):
                s[b] += row[b]
        for b in range(B):
            s[b] *= <float>scale
        if h > 0:
            for q in range(h):
                z[q] = 0.0
            for j in range(ptr[i], ptr[i + 1]):
                trow = &theta[ids[j] * h]
                for q in range(h):
                    z[q] += trow[q]
            for q in range(h):
                row = &V[q * B]
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
                row = &W[ids[j] * B]
                for b in range(B):
                    row[b] += s[b]
            for q in range(h):
                row = &V[q * B]
                for b in range(B):
                    row[b] += step[b] * z[q]
        t += 1
        if scale < 1e-4:  # fold the scale in before float32 loses the small steps
            for f in range(d * B):
                W[f] *= <float>scale
            scale = 1.0
    scale_io[0] = scale
    return t


cdef _check(const long[::1] ptr, const int[::1] ids, const int[::1] target, float[:, ::1] W, float[:, ::1] V,
            const float[:, ::1] theta, Py_ssize_t n, const long[::1] order):
    """The shapes _sgd relies on, and every position, feature and step in range."""
    cdef Py_ssize_t d = W.shape[0], h = V.shape[0], k, P = ptr.shape[0] - 1
    if V.shape[1] != W.shape[1]:
        raise ValueError("V must be h x B, with W d x B")
    if h > 0 and (theta.shape[0] != d or theta.shape[1] != h):
        raise ValueError("Theta must be d x h, with V h x B")
    if target.shape[0] != P or P < 0 or ptr[0] != 0 or ptr[P] > ids.shape[0]:
        raise ValueError("ptr, ids and target must describe the same positions")
    if order is not None:
        for k in range(n):
            if order[k] < 0 or order[k] >= P:
                raise IndexError(f"position {order[k]} of {P}")
    for k in range(ptr[P]):
        if ids[k] < 0 or ids[k] >= d:
            raise IndexError(f"feature {ids[k]} of W's {d} rows")


def sgd_block(const long[::1] ptr, const int[::1] ids, const int[::1] target, int t0,
              float[:, ::1] W, float[:, ::1] V, const float[:, ::1] theta,
              const long[::1] order, double lam, double eta0, long t, int hinge):
    """One pass over the positions in `order`; W (d x B) and V (h x B; h = 0 without
    Theta) are updated in place. Returns the step count t after the pass (the
    schedule goes on from it in the next pass).

    ptr, ids: the CSR features of every position; target[i]: the target id at
    position i (-1: none), problem b of the block is target t0 + b."""
    cdef double scale = 1.0
    t, scale = sgd_steps(ptr, ids, target, t0, W, V, theta, lam, eta0, t, scale, hinge, order)
    fold_scale(W, scale)
    return t


def sgd_steps(const long[::1] ptr, const int[::1] ids, const int[::1] target, int t0,
              float[:, ::1] W, float[:, ::1] V, const float[:, ::1] theta, double lam, double eta0, long t,
              double scale, int hinge, const long[::1] order=None):
    """The steps of a pass at the positions of (ptr, ids, target), in their order (or
    in `order`): W is held as scale * W, and (t, scale) returned go on into the next
    call; fold_scale(W, scale) at the end of the pass. sgd_block is one call and the
    fold."""
    cdef Py_ssize_t B = W.shape[1], h = V.shape[0], d = W.shape[0]
    cdef Py_ssize_t n = order.shape[0] if order is not None else ptr.shape[0] - 1
    _check(ptr, ids, target, W, V, theta, n, order)
    # scores and steps in float32, so that the loops over the block vectorise
    cdef float[::1] s_buf = np.zeros(max(B, 1), dtype=np.float32), step_buf = np.zeros(max(B, 1), dtype=np.float32)
    cdef float[::1] z_buf = np.zeros(max(h, 1), dtype=np.float32)
    cdef float[::1] empty = np.zeros(1, dtype=np.float32)
    cdef float* Wp = &W[0, 0] if W.shape[0] and B else &empty[0]
    cdef float* Vp = &V[0, 0] if h and B else &empty[0]
    cdef const float* th = &theta[0, 0] if h else &empty[0]
    cdef const long* op = &order[0] if order is not None and n else NULL
    cdef const long* pp = &ptr[0]
    cdef const int* ip = &ids[0] if ids.shape[0] else NULL
    cdef const int* tp = &target[0] if target.shape[0] else NULL
    if n == 0:
        return t, scale
    with nogil:
        t = _sgd(pp, ip, tp, t0, Wp, d, B, Vp, h, th, op, n, lam, eta0, t, &scale, hinge, &s_buf[0],
                 &step_buf[0], &z_buf[0])
    return t, scale


def fold_scale(float[:, ::1] W, double scale):
    """W *= scale, in float32 (the end of a pass of sgd_steps)."""
    cdef Py_ssize_t f, b
    cdef float c = <float>scale
    with nogil:
        for f in range(W.shape[0]):
            for b in range(W.shape[1]):
                W[f, b] *= c


def sum_squares(const long[::1] ptr, const int[::1] ids, const float[:, ::1] theta):
    """Sum over the positions of (ptr, ids) of ||Theta^T phi||^2: each position's row
    sum of Theta in float32 (as scipy's CSR product sums it), its squares summed in
    double."""
    cdef Py_ssize_t P = ptr.shape[0] - 1, h = theta.shape[1], i, j, q
    cdef double total = 0.0
    cdef float[::1] z_buf = np.zeros(max(h, 1), dtype=np.float32)
    cdef float* z = &z_buf[0]
    for j in range(ptr[P] if P >= 0 else 0):
        if ids[j] < 0 or ids[j] >= theta.shape[0]:
            raise IndexError(f"feature {ids[j]} of Theta's {theta.shape[0]} rows")
    with nogil:
        for i in range(P):
            for q in range(h):
                z[q] = 0.0
            for j in range(ptr[i], ptr[i + 1]):
                for q in range(h):
                    z[q] += theta[ids[j], q]
            for q in range(h):
                total += <double>z[q] * z[q]
    return total


cdef class ColumnBlocks:
    """The products of U = [U_1 U_2 ...] (column blocks, d x B_k float32 each, kept as
    the problems were trained) with vectors, for the SVD: U x and U^T y, summed in
    double, over a range of rows (matvec) or of blocks (rmatvec), so that threads
    share the work without a reduction."""
    cdef float** data
    cdef Py_ssize_t* width
    cdef Py_ssize_t* first
    cdef readonly Py_ssize_t d, m, n_blocks
    cdef list keep

    def __cinit__(self, blocks):
        cdef float[:, ::1] b
        cdef Py_ssize_t k
        self.keep = list(blocks)
        self.n_blocks = len(self.keep)
        if not self.n_blocks:
            raise ValueError("no blocks")
        self.d = self.keep[0].shape[0]
        self.data = <float**>malloc(self.n_blocks * sizeof(float*))
        self.width = <Py_ssize_t*>malloc(self.n_blocks * sizeof(Py_ssize_t))
        self.first = <Py_ssize_t*>malloc((self.n_blocks + 1) * sizeof(Py_ssize_t))
        if self.data == NULL or self.width == NULL or self.first == NULL:
            raise MemoryError()
        self.first[0] = 0
        for k in range(self.n_blocks):
            b = self.keep[k]
            if b.shape[0] != self.d or b.shape[1] < 1 or b.shape[0] < 1:
                raise ValueError("blocks must be non-empty, with the same rows")
            self.data[k] = &b[0, 0]
            self.width[k] = b.shape[1]
            self.first[k + 1] = self.first[k] + b.shape[1]
        self.m = self.first[self.n_blocks]

    def __dealloc__(self):
        free(self.data)
        free(self.width)
        free(self.first)

    def matvec(self, const float[::1] x, double[::1] out, Py_ssize_t lo, Py_ssize_t hi):
        """out[f] = (U x)[f] for the rows lo <= f < hi."""
        cdef Py_ssize_t f, k, j, q, B
        cdef double acc[8]
        cdef const float* row
        cdef const float* xk
        if x.shape[0] != self.m or out.shape[0] != self.d or not 0 <= lo <= hi <= self.d:
            raise ValueError("shapes")
        with nogil:
            for f in range(lo, hi):
                for q in range(8):
                    acc[q] = 0.0
                for k in range(self.n_blocks):
                    B = self.width[k]
                    row = self.data[k] + f * B
                    xk = &x[self.first[k]]
                    j = 0
                    while j + 8 <= B:  # eight partial sums, so the loop vectorises
                        for q in range(8):
                            acc[q] += <double>row[j + q] * xk[j + q]
                        j += 8
                    while j < B:
                        acc[0] += <double>row[j] * xk[j]
                        j += 1
                out[f] = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))

    def rmatvec(self, const float[::1] y, double[::1] out, Py_ssize_t lo, Py_ssize_t hi):
        """out[first[k]:first[k + 1]] = U_k^T y for the blocks lo <= k < hi."""
        cdef Py_ssize_t f, k, j, B
        cdef double* acc
        cdef const float* row
        cdef double yf
        if y.shape[0] != self.d or out.shape[0] != self.m or not 0 <= lo <= hi <= self.n_blocks:
            raise ValueError("shapes")
        with nogil:
            for k in range(lo, hi):
                B = self.width[k]
                acc = &out[self.first[k]]
                for j in range(B):
                    acc[j] = 0.0
                for f in range(self.d):
                    row = self.data[k] + f * B
                    yf = y[f]
                    for j in range(B):
                        acc[j] += row[j] * yf
