"""Online learning of the rank-1 bilinear model (Wu & Sun 2015, Algorithm 2), the
paper's literal global reading: one sigma_1 and one (alpha, beta) over the whole
block-diagonal Theta (see blocks.pxd), normalised globally.

alpha = s_a * alpha_raw and beta = s_b * beta_raw, so that the global
normalisation (Algorithm 2, line 12) is a change of two scalars and every step
touches only the blocks in dPhi. The learner's state is the array
state = [sigma, s_a, s_b, |alpha|^2, |beta|^2, G_a, G_b], G being the running sums
of the scales of sigma * alpha and beta used for averaging, which keeps
U += delta * (sum of past scales): Daume's (2006) lazy average generalised to
scaled vectors. First update: Theta_0 = 0 has sigma_0 = 0 and eq. (9) would divide
by it; the first update divides by C * |dPhi_1|_F instead (the scale of Theta_1).
Block mode (bol.pyx) is what the learner runs by default (see learners/bol.py).
"""
import numpy as np
from libc.math cimport sqrt
from libc.stdint cimport int32_t, int64_t
from chain cimport (Corpus, Linear, Rank1, Lattice, corpus_view, linear_view, linear_tasks, rank1_view, lattice_new,
                    chunk_limits, mark_wrong)
from blocks cimport Dual, dual_view, dual_buffers, absorb, bilinear_mistake, dot, matvec, rmatvec


cdef struct Global:
    double* state             # sigma, s_a, s_b, |alpha|^2, |beta|^2, G_a, G_b
    double* al                # k x S: alpha (= s_a alpha_raw) of the touched blocks
    double* be                # k x (S + 1): their beta (= s_b beta_raw)
    double* da                # k x S: Delta alpha (eq. 9)
    double* db                # k x (S + 1): Delta beta (eq. 11)
    double* tmp               # S + 1
    double* scratch           # S


cdef tuple global_buffers(Global* g, int k, int S):
    """Point g at fresh buffers for up to k touched blocks; returns their owners."""
    cdef double[:, ::1] al = np.zeros((k, S)), be = np.zeros((k, S + 1))
    cdef double[:, ::1] da = np.zeros((k, S)), db = np.zeros((k, S + 1))
    cdef double[::1] tmp = np.zeros(S + 1), scratch = np.zeros(S)
    g.al, g.be, g.da, g.db = &al[0, 0], &be[0, 0], &da[0, 0], &db[0, 0]
    g.tmp, g.scratch = &tmp[0], &scratch[0]
    return al, be, da, db, tmp, scratch


cdef int global_step(int k, const Dual* d, const Global* g, const Rank1* raw, const Rank1* avg, int R,
                     bint averaged) noexcept nogil:
    """Eqs. (9)-(12) and the supplement over the k touched blocks, whose Theta already
    holds C * dPhi (d.dblk) and whose alpha, beta are in g.al, g.be; returns k, or 0
    if the iterate vanished."""
    cdef int S = d.S, T = S + 1, j, r, c, tau
    cdef int32_t a
    cdef double sig, sig_use, na2, nb2, num, ga, gb, fro = 0.0
    cdef float* th
    cdef const double* D
    cdef double* state = g.state
    cdef double* tmp = g.tmp
    cdef double* scratch = g.scratch
    for j in range(k):
        D = d.dblk + j * S * T
        for r in range(S):
            for c in range(T):
                fro += D[r * T + c] * D[r * T + c]
    if fro == 0.0:
        return 0
    sig = state[0]
    sig_use = sig if sig > 0.0 else sqrt(fro)  # first update: see the module docstring
    for tau in range(R):
        for j in range(k):                       # eq. (9)
            th = d.pool + d.slot[d.touched[j]] * S * T
            matvec(d.dblk + j * S * T, g.be + j * T, g.da + j * S, S, T, 1.0 / sig_use, False)
            matvec(th, g.db + j * T, g.da + j * S, S, T, 1.0 / sig_use, True)
        for j in range(k):                       # eq. (11)
            th = d.pool + d.slot[d.touched[j]] * S * T
            rmatvec(d.dblk + j * S * T, g.al + j * S, g.db + j * T, S, T, 1.0 / sig_use, False)
            rmatvec(th, g.da + j * S, g.db + j * T, S, T, 1.0 / sig_use, True)
    # supplement: incremental norms and sigma from the touched blocks only
    na2 = state[3]
    nb2 = state[4]
    num = sig * sqrt(state[3] * state[4])
    cdef const double* al
    cdef const double* be
    cdef const double* da
    cdef const double* db
    for j in range(k):
        th = d.pool + d.slot[d.touched[j]] * S * T
        al, be, da, db = g.al + j * S, g.be + j * T, g.da + j * S, g.db + j * T
        na2 += 2.0 * dot(al, da, S) + dot(da, da, S)
        nb2 += 2.0 * dot(be, db, T) + dot(db, db, T)
        matvec(d.dblk + j * S * T, be, tmp, S, T, 1.0, False)
        num += dot(al, tmp, S)                   # alpha' C dPhi beta
        for c in range(T):
            tmp[c] = be[c] + db[c]
        matvec(th, tmp, scratch, S, T, 1.0, False)
        num += dot(da, scratch, S)               # Delta-alpha' Theta beta-bar
        matvec(th, db, scratch, S, T, 1.0, False)
        num += dot(al, scratch, S)               # alpha' Theta Delta-beta
    if na2 <= 0.0 or nb2 <= 0.0:
        return 0
    ga = 1.0 / state[1]
    gb = 1.0 / state[2]
    for j in range(k):
        a = d.touched[j]
        for r in range(S):
            raw.alpha[a * raw.sa + r] += g.da[j * S + r] * ga
            if averaged:
                avg.alpha[a * avg.sa + r] += g.da[j * S + r] * ga * state[5]
        for c in range(T):
            raw.beta[a * raw.sb + c] += g.db[j * T + c] * gb
            if averaged:
                avg.beta[a * avg.sb + c] += g.db[j * T + c] * gb * state[6]
    state[0] = num / sqrt(na2 * nb2)
    state[1] /= sqrt(na2)
    state[2] /= sqrt(nb2)
    state[3] = 1.0
    state[4] = 1.0
    return k


cdef class GlobalKernel:
    """Global mode of Algorithm 2 on a learner's arrays, updated in place: the linear
    part (W0, trans, end and, when averaged, U0, Utrans, Uend), alpha_raw and beta_raw
    with their sums Ua, Ub, state (see the module docstring), and the Theta pool
    (slot, pool, mark; see blocks.pxd)."""
    cdef Linear lin
    cdef Rank1 raw
    cdef Rank1 avg
    cdef Dual d
    cdef double* state
    cdef double C
    cdef int R
    cdef object arrays  # owns the memory the pointers above point into

    def __init__(self, double[:, ::1] W0, double[:, ::1] trans, double[::1] end, double[:, ::1] U0,
                 double[:, ::1] Utrans, double[::1] Uend, double[:, :] alpha_raw, double[:, :] beta_raw,
                 double[::1] state, double[:, :] Ua, double[:, :] Ub, int32_t[::1] slot,
                 float[:, :, ::1] pool, int32_t[::1] mark, double C, int R, bint averaged, bint transitions):
        self.lin = linear_view(W0, trans, end, U0, Utrans, Uend, averaged, transitions)
        linear_tasks(&self.lin, None, trans.shape[0], end.shape[0])  # one task: one copy of trans and end
        self.raw = rank1_view(alpha_raw, beta_raw)
        self.avg = rank1_view(Ua, Ub)
        self.d = dual_view(slot, pool, mark)
        if state.shape[0] != 7 or self.d.S != self.lin.S:
            raise ValueError("state or the pool do not fit")
        self.state = &state[0]
        self.C, self.R = C, R
        self.arrays = (W0, trans, end, U0, Utrans, Uend, alpha_raw, beta_raw, state, Ua, Ub, slot, pool, mark)

    def train_chunk(self, data, const int64_t[::1] order, int64_t counter, int64_t n_slots):
        """Algorithm 2 over the sequences data[order], n_slots of the pool in use.
        Returns (mistakes, counter, n_slots, blocks_updated)."""
        cdef Corpus c = corpus_view(data)
        cdef Linear m = self.lin
        cdef Rank1 raw = self.raw, avg = self.avg
        cdef Dual d = self.d
        d.n_slots = n_slots
        cdef double* state = self.state
        cdef double C = self.C
        cdef int R = self.R, S = m.S, T = S + 1
        cdef int maxlen, maxb
        chunk_limits(order, c.seq_ptr, c.b_ptr, c.b_width, &maxlen, &maxb)
        cdef Lattice L
        cdef Global g
        g.state = state
        work = lattice_new(&L, maxlen, S), dual_buffers(&d, maxb), global_buffers(&g, maxb, S)
        cdef Py_ssize_t jj, N = order.shape[0]
        cdef int64_t p0, mistakes = 0, updated = 0
        cdef int n, k, j, r, q
        cdef int32_t a
        with nogil:
            for jj in range(N):
                p0 = c.seq_ptr[order[jj]]
                n = <int>(c.seq_ptr[order[jj] + 1] - p0)
                if n > 0:
                    k = bilinear_mistake(&c, &m, &m, &raw, state[0] * state[1] * state[2], &L, &d, NULL, p0, n,
                                         C, C * counter)
                    if k >= 0:
                        mistakes += 1
                        mark_wrong(&c, order[jj])
                        for j in range(k):
                            a = d.touched[j]
                            absorb(&d, j)
                            for r in range(S):
                                g.al[j * S + r] = state[1] * raw.alpha[a * raw.sa + r]
                                g.da[j * S + r] = 0.0
                            for q in range(T):
                                g.be[j * T + q] = state[2] * raw.beta[a * raw.sb + q]
                                g.db[j * T + q] = 0.0
                        if k > 0:
                            updated += global_step(k, &d, &g, &raw, &avg, R, m.averaged)
                state[5] += state[0] * state[1]
                state[6] += state[2]
                counter += 1
        return mistakes, counter, d.n_slots, updated


def global_update(float[:, :, ::1] theta, const double[:, :, ::1] D, double[:, :] a_raw,
                  double[:, :] b_raw, double[::1] state, int R):
    """One global-mode update on small dense data, for tests: theta[a] and D[a] are the
    blocks of Theta_{t-1} and C dPhi_t of every attribute a (all counted as touched).
    Updates theta, a_raw, b_raw and state in place; returns the blocks updated."""
    cdef int A = theta.shape[0], S = theta.shape[1], T = S + 1, j, r, c
    touched_arr = np.arange(A, dtype=np.int32)
    slot_arr = np.arange(A, dtype=np.int32)
    dblk_arr = D.copy()
    cdef int32_t[::1] touched = touched_arr
    cdef int32_t[::1] slot = slot_arr
    cdef double[:, :, ::1] dblk = dblk_arr
    cdef Dual d
    d.S, d.slot, d.pool, d.n_slots, d.mark = S, &slot[0], &theta[0, 0, 0], A, NULL
    d.touched, d.dblk = &touched[0], &dblk[0, 0, 0]
    cdef Global g
    g.state = &state[0]
    work = global_buffers(&g, A, S)
    for j in range(A):
        for r in range(S):
            g.al[j * S + r] = state[1] * a_raw[j, r]
            for c in range(T):
                theta[j, r, c] += D[j, r, c]
        for c in range(T):
            g.be[j * T + c] = state[2] * b_raw[j, c]
    cdef Rank1 raw = rank1_view(a_raw, b_raw), avg = raw  # no averaging: avg is never read
    return global_step(A, &d, &g, &raw, &avg, R, False)
