"""Online learning of the rank-1 bilinear model (Wu & Sun 2015, Algorithm 2), block mode.

The dual Theta is block diagonal, one S x (S+1) block per 1st-order attribute (see
blocks.pxd). W_a = sigma_a u_a v_a^T is the top singular triple of Theta_a, i.e.
the gradient of F*(Theta) = sum_a sigma_1(Theta_a)^2 / 2.
After a mistake each touched block runs R power steps warm-started from its
previous (u_a, v_a), normalised by its own sigma_a as in eqs. (9)-(12) (see
warm_pair for how they are evaluated), then takes sigma_a as the Rayleigh
quotient of the new pair (supplement).
A block with no previous pair (sigma_a = 0) starts from the unit vector of the
column holding its largest entry, which Theta_a cannot annihilate, plus a small
fixed dense part (so the start is not orthogonal to the top right singular vector
of an integer-valued block), and runs plain normalised power steps.

Parameters for scoring: alpha[a] = sigma_a u_a and beta[a] = v_a. Like the Theta
blocks, alpha, beta, sigma and their averaging sums have a row only for the
attributes that took part in a mistake, at the attribute's slot (Rank1.slot).
Averaging keeps U += c * delta (Daume 2006).
The paper's literal global reading is in bol_global.pyx.
"""
cimport cython
import numpy as np
from libc.math cimport sqrt, fabs
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free
from chain cimport prefetch_span, MIX_AHEAD
from chain cimport (Corpus, Linear, Rank1, Lattice, corpus_view, linear_view, linear_tasks, for_sequence, task_buffers,
                    check_tasks, rank1_view, lattice_new, chunk_limits, mark_wrong, mark_diff)
from blocks cimport real, Dual, dual_view, dual_buffers, absorb, bilinear_mistake, dot, matvec, rmatvec


@cython.cdivision(True)
cdef inline double fresh_pair(const real* Th, int S, int R, double* u, double* v) noexcept nogil:
    """Top singular pair of a block by R normalised power steps from about e_c, c the
    column of the block's largest entry. Returns sigma (0 for a zero block)."""
    cdef int r, c, best_c = 0, tau, T = S + 1
    cdef double best = 0.0, nrm
    for r in range(S):
        for c in range(T):
            if fabs(Th[r * T + c]) > best:
                best = fabs(Th[r * T + c])
                best_c = c
    if best == 0.0:
        return 0.0
    for c in range(T):  # e_c plus a small fixed dense part, so that v is not orthogonal to v_1
        v[c] = 0.01 * (0.5 + ((c + 1) * 0.6180339887498949) % 1.0)
    v[best_c] = 1.0
    for tau in range(max(R, 1)):
        matvec(Th, v, u, S, T, 1.0, False)
        nrm = sqrt(dot(u, u, S))
        for r in range(S):
            u[r] /= nrm
        rmatvec(Th, u, v, S, T, 1.0, False)
        nrm = sqrt(dot(v, v, T))
        for c in range(T):
            v[c] /= nrm
    matvec(Th, v, u + S, S, T, 1.0, False)  # u + S: scratch row after u (caller gives 2S)
    return dot(u, u + S, S)


@cython.cdivision(True)
cdef inline double warm_pair(const real* Th, int S, int R, double sigma, double* u, double* v,
                      double* tmp) noexcept nogil:
    """R power steps on Theta_t (= Th) warm-started from v, each normalised by the
    block's previous sigma, as in eqs. (9)-(12): when (u, v, sigma) is the exact
    top triple of Theta_{t-1}, the iterates equal the paper's alpha-bar = u + Delta
    alpha and beta-bar = v + Delta beta. Computing alpha-bar = Theta_t beta-bar / sigma
    directly, rather than u plus the increments, keeps this exact power iteration
    when the previous pair was not converged (the Delta form would carry the old
    residual along) and avoids the cancellation in u + Delta alpha when sigma shrinks.
    Overwrites (u, v) with the normalised pair and returns the new sigma (Rayleigh
    quotient, as the supplement's formula), or -1 when the iterate vanished."""
    cdef int r, c, tau, T = S + 1
    cdef double na, nb
    for tau in range(R):
        matvec(Th, v, u, S, T, 1.0 / sigma, False)
        rmatvec(Th, u, v, S, T, 1.0 / sigma, False)
        nb = sqrt(dot(v, v, T))
        if nb > 1e50 or (0.0 < nb < 1e-50):  # the scale is immaterial; keep it finite
            for c in range(T):
                v[c] /= nb
    if R == 0:
        matvec(Th, v, u, S, T, 1.0, False)
    na = sqrt(dot(u, u, S))
    nb = sqrt(dot(v, v, T))
    if na == 0.0 or nb == 0.0:
        return -1.0
    for r in range(S):
        u[r] /= na
    for c in range(T):
        v[c] /= nb
    matvec(Th, v, tmp, S, T, 1.0, False)
    return dot(u, tmp, S)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def block_update(const double[:, ::1] Th, double[::1] alpha, double[::1] beta, double sigma, int R):
    """One rank-1 refresh of a single block Theta_t = Th, for tests. Updates alpha
    (= sigma u) and beta (= v) in place and returns the new sigma."""
    cdef int S = Th.shape[0]
    work = np.zeros(8 * (S + 1))
    cdef double[::1] w = work
    return _refresh(&Th[0, 0], S, R, &alpha[0], &beta[0], sigma, &w[0])


@cython.boundscheck(False)
@cython.wraparound(False)
def refresh_blocks(const float[:, :, ::1] Th, double[:, ::1] alpha, double[:, ::1] beta, double[::1] sigma, int R):
    """The rank-1 refresh of blocks i = 0..n-1 in place: (alpha[i], beta[i], sigma[i])
    from Th[i], R power steps from the pair they hold (iterative parameter mixing,
    after the blocks of several shards are mixed)."""
    cdef Py_ssize_t i, n = Th.shape[0]
    cdef int S = Th.shape[1]
    if alpha.shape[0] < n or beta.shape[0] < n or sigma.shape[0] < n or Th.shape[2] != S + 1 \
            or alpha.shape[1] != S or beta.shape[1] != S + 1:
        raise ValueError("the blocks and their factors do not fit")
    work = np.zeros(8 * (S + 1))
    cdef double[::1] w = work
    with nogil:
        for i in range(n):
            sigma[i] = _refresh(&Th[i, 0, 0], S, R, &alpha[i, 0], &beta[i, 0], sigma[i], &w[0])
            if sigma[i] < 0.0:
                sigma[i] = 0.0


@cython.cdivision(True)
cdef double _refresh(const real* Th, int S, int R, double* alpha, double* beta,
                     double sigma, double* work) noexcept nogil:
    """New (alpha, beta, sigma) of one block; work holds 8 (S + 1) doubles."""
    cdef int r, c, T = S + 1
    cdef double* u = work
    cdef double* v = work + 2 * T
    cdef double* tmp = work + 5 * T
    cdef double* old_u = work + 6 * T
    cdef double new_sigma = -1.0, flip
    if sigma > 0.0:
        for r in range(S):
            u[r] = alpha[r] / sigma
            old_u[r] = u[r]
        for c in range(T):
            v[c] = beta[c]
        if S == 4:  # BIES: a literal size lets the compiler unroll the 4 x 5 products
            new_sigma = warm_pair(Th, 4, R, sigma, u, v, tmp)
        else:
            new_sigma = warm_pair(Th, S, R, sigma, u, v, tmp)
    if new_sigma <= 0.0:  # no usable previous pair: start afresh
        for r in range(S):
            old_u[r] = alpha[r]
        new_sigma = fresh_pair(Th, 4, R, u, v) if S == 4 else fresh_pair(Th, S, R, u, v)
    # keep the orientation of the pair (u, v) and (-u, -v) are the same W_a;
    # a flip would cancel in the average
    flip = -1.0 if dot(u, old_u, S) < 0.0 else 1.0
    for r in range(S):
        alpha[r] = flip * new_sigma * u[r]
    for c in range(T):
        beta[c] = flip * v[c] if new_sigma > 0.0 else 0.0
    return new_sigma


cdef class BlockKernel:
    """Block mode of Algorithm 2 on a learner's arrays, updated in place: the linear
    part (W0, trans, end and, when averaged, U0, Utrans, Uend), the Theta pool (slot,
    pool, mark; see blocks.pxd), and at each attribute a's slot s = slot[a]:
    alpha[s] = sigma_a u_a and beta[s] = v_a with their sums Ua, Ub, and sigma[s]."""
    cdef Linear lin
    cdef Rank1 w
    cdef Rank1 avg
    cdef Dual d
    cdef double* sigma
    cdef double C
    cdef int R
    cdef object arrays  # owns the memory the pointers above point into

    def __init__(self, double[:, ::1] W0, double[:, ::1] trans, double[::1] end, double[:, ::1] U0,
                 double[:, ::1] Utrans, double[::1] Uend, double[:, :] alpha, double[:, :] beta,
                 double[::1] sigma, double[:, :] Ua, double[:, :] Ub, int32_t[::1] slot,
                 float[:, :, ::1] pool, int32_t[::1] mark, double C, int R, bint averaged, bint transitions,
                 tasks=None):
        """tasks: None, or multi-task learning as chain.pxd's linear_tasks takes it; the
        task copies of an attribute are blocks of their own."""
        self.lin = linear_view(W0, trans, end, U0, Utrans, Uend, averaged, transitions)
        coupling = linear_tasks(&self.lin, tasks, trans.shape[0], end.shape[0])
        self.w = rank1_view(alpha, beta)
        self.avg = rank1_view(Ua, Ub)
        self.d = dual_view(slot, pool, mark)
        self.w.slot = self.avg.slot = &slot[0]
        # a slot per attribute at most: alpha, beta and their sums need a row per attribute
        if alpha.shape[0] < slot.shape[0] or (averaged and Ua.shape[0] < slot.shape[0]):
            raise ValueError("alpha, beta and their sums need a row per pool slot")
        if sigma.shape[0] != alpha.shape[0] or self.d.S != self.lin.S:
            raise ValueError("sigma, alpha and the pool do not fit")
        self.sigma = &sigma[0]
        self.C, self.R = C, R
        self.arrays = (W0, trans, end, U0, Utrans, Uend, alpha, beta, sigma, Ua, Ub, slot, pool, mark, coupling)

    def train_chunk(self, data, const int64_t[::1] order, int64_t counter, int64_t n_slots):
        """Algorithm 2 over the sequences data[order], n_slots of the pool in use.
        Returns (mistakes, counter, n_slots, blocks_updated)."""
        cdef Corpus c = corpus_view(data)
        cdef Linear m = self.lin, eff
        cdef const Linear* mm
        check_tasks(&c, &m, order)
        buffers = task_buffers(&eff, m.S)
        cdef Rank1 w = self.w, avg = self.avg
        cdef Dual d = self.d
        d.n_slots = n_slots
        cdef double* sigma = self.sigma
        cdef double C = self.C
        cdef int R = self.R, S = m.S, T = S + 1
        cdef bint averaged = m.averaged
        cdef int maxlen, maxb
        chunk_limits(order, c.seq_ptr, c.b_ptr, c.b_width, &maxlen, &maxb)
        cdef Lattice L
        # with a general interaction, an update reaches every task's copy of an attribute
        work = lattice_new(&L, maxlen, S), dual_buffers(&d, maxb * (m.tasks if m.interaction != NULL else 1))
        cdef double[::1] scratch = np.zeros(8 * T)
        cdef double[::1] old = np.zeros(2 * T)
        cdef Py_ssize_t jj, N = order.shape[0]
        cdef int64_t p0, mistakes = 0, updated = 0
        cdef int n, k, j, r, q
        cdef int32_t a
        cdef int64_t s
        cdef double* al
        cdef double* be
        cdef float* th
        with nogil:
            for jj in range(N):
                p0 = c.seq_ptr[order[jj]]
                n = <int>(c.seq_ptr[order[jj] + 1] - p0)
                if n > 0:
                    mm = for_sequence(&m, &eff, &c, order[jj])
                    k = bilinear_mistake(&c, &m, mm, &w, 1.0, &L, &d, sigma, p0, n, C, C * counter)
                    if k >= 0:
                        mistakes += 1
                        mark_wrong(&c, order[jj])
                        mark_diff(&c, L.pred, p0, n, S)
                        for j in range(k):
                            a = d.touched[j]
                            th = absorb(&d, j)
                            s = d.slot[a]
                            al = w.alpha + s * w.sa
                            be = w.beta + s * w.sb
                            if averaged:
                                for r in range(S):
                                    old[r] = al[r]
                                for q in range(T):
                                    old[S + q] = be[q]
                            sigma[s] = _refresh(th, S, R, al, be, sigma[s], &scratch[0])
                            if sigma[s] < 0.0:
                                sigma[s] = 0.0
                            if averaged:
                                for r in range(S):
                                    avg.alpha[s * avg.sa + r] += counter * (al[r] - old[r])
                                for q in range(T):
                                    avg.beta[s * avg.sb + q] += counter * (be[q] - old[S + q])
                            updated += 1
                counter += 1
        return mistakes, counter, d.n_slots, updated


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def mix_blocks(pools, factors, sigmas, uabs, slots, const int64_t[::1] rows, const double[::1] mu, double counter,
               int R, bint averaged):
    """Iterative parameter mixing of the blocks of the attributes `rows` across the
    copies of a learner that train on threads (training/threads.py), in the copies'
    own memory: per copy i its Theta pool (float32, slot x S x (S + 1)), its factor
    rows ab (alpha = sigma u next to beta = v, by slot), sigma and, when averaged,
    the sums Uab, and its slot table (every row mixed has a slot in every copy).
    Each block, factors and sums become sum_i mu_i times copy i's; the mixed block is
    not rank-1 in its mixed factors, so they are refreshed by R power steps from
    them (as after an update), and the sums take the jump as a step at `counter`
    (Bilinear.mixed does the same for the shards of a cluster). Every copy gets the
    result. No Python objects in the loop: the caller may run parts of the rows on
    threads of their own."""
    cdef Py_ssize_t n = len(pools), i, k, m = rows.shape[0]
    if n == 0 or m == 0:
        return
    if not (len(factors) == len(sigmas) == len(uabs) == len(slots) == mu.shape[0] == n):
        raise ValueError("one pool, factor table, sigma, sums, slot table and weight per copy")
    cdef int S = pools[0].shape[1], T = S + 1, W = 2 * S + 1, j
    keep = []
    for i in range(n):
        pool, ab, sigma, uab, slot = pools[i], factors[i], sigmas[i], uabs[i], slots[i]
        if pool.dtype != np.float32 or pool.ndim != 3 or pool.shape[1:] != (S, T) or ab.dtype != np.float64 \
                or ab.ndim != 2 or ab.shape[1] != W or sigma.dtype != np.float64 or slot.dtype != np.int32 \
                or not (pool.flags.c_contiguous and ab.flags.c_contiguous and sigma.flags.c_contiguous):
            raise ValueError("the copies' blocks do not fit")
        if averaged and (uab.dtype != np.float64 or uab.shape != ab.shape or not uab.flags.c_contiguous):
            raise ValueError("the copies' sums do not fit their factors")
        held = slot[np.asarray(rows)]  # (an index error for a row past the table)
        if held.min() < 0 or held.max() >= min(len(pool), len(ab), len(sigma)):
            raise ValueError("a block mixed without a slot in a copy")
        keep.append((pool, ab, sigma, uab if averaged else ab, slot))
    cdef float** th = <float**> malloc(n * sizeof(float*))
    cdef double** ab_ = <double**> malloc(n * sizeof(double*))
    cdef double** sg = <double**> malloc(n * sizeof(double*))
    cdef double** ua = <double**> malloc(n * sizeof(double*))
    cdef int32_t** sl = <int32_t**> malloc(n * sizeof(int32_t*))
    cdef int64_t* at = <int64_t*> malloc(n * sizeof(int64_t))
    work = np.zeros(8 * T + W)
    cdef double[::1] w = work
    cdef double* old = &w[8 * T]
    cdef float[:, :, ::1] pv
    cdef double[:, ::1] av, uv
    cdef double[::1] sv
    cdef int32_t[::1] lv
    cdef double acc, s0
    cdef int64_t r
    try:
        for i in range(n):
            pv, av, sv, uv, lv = keep[i]
            th[i], ab_[i], sg[i], ua[i], sl[i] = &pv[0, 0, 0], &av[0, 0], &sv[0], &uv[0, 0], &lv[0]
        with nogil:
            for k in range(m):
                if k + MIX_AHEAD < m:  # (the blocks a few rows on, asked for now)
                    r = rows[k + MIX_AHEAD]
                    for i in range(n):
                        prefetch_span(<char*> (th[i] + sl[i][r] * S * T), S * T * sizeof(float))
                        prefetch_span(<char*> (ab_[i] + sl[i][r] * W), W * sizeof(double))
                        prefetch_span(<char*> (sg[i] + sl[i][r]), sizeof(double))
                        if averaged:
                            prefetch_span(<char*> (ua[i] + sl[i][r] * W), W * sizeof(double))
                r = rows[k]
                for i in range(n):
                    at[i] = sl[i][r]
                for j in range(S * T):
                    acc = 0.0
                    for i in range(n):
                        acc = acc + mu[i] * th[i][at[i] * S * T + j]
                    for i in range(n):
                        th[i][at[i] * S * T + j] = <float> acc
                for j in range(W):
                    acc = 0.0
                    for i in range(n):
                        acc = acc + mu[i] * ab_[i][at[i] * W + j]
                    old[j] = acc
                    ab_[0][at[0] * W + j] = acc
                    if averaged:
                        acc = 0.0
                        for i in range(n):
                            acc = acc + mu[i] * ua[i][at[i] * W + j]
                        ua[0][at[0] * W + j] = acc
                s0 = 0.0
                for i in range(n):
                    s0 = s0 + mu[i] * sg[i][at[i]]
                s0 = _refresh(th[0] + at[0] * S * T, S, R, ab_[0] + at[0] * W, ab_[0] + at[0] * W + S, s0, &w[0])
                sg[0][at[0]] = s0 if s0 > 0.0 else 0.0
                for j in range(W):
                    if averaged:
                        ua[0][at[0] * W + j] += counter * (ab_[0][at[0] * W + j] - old[j])
                    for i in range(1, n):
                        ab_[i][at[i] * W + j] = ab_[0][at[0] * W + j]
                        if averaged:
                            ua[i][at[i] * W + j] = ua[0][at[0] * W + j]
                for i in range(1, n):
                    sg[i][at[i]] = sg[0][at[0]]
    finally:
        free(th)
        free(ab_)
        free(sg)
        free(ua)
        free(sl)
        free(at)
