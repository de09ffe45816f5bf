"""Blockwise coordinate descent for the bilinear model (Wu & Sun, Algorithm 1).

With beta fixed the bilinear model is linear in alpha (the feature of alpha[a, y]
at a position with labels (y, v) is beta[a, v]), and vice versa; each half-step
runs passes of an online dual solver for that linear structured SVM: the
passive-aggressive update PA-I (Crammer et al. 2006; Shalev-Shwartz & Singer 2006)
with margin 1 and step tau = min(C, loss / |dphi|^2). The linear part (0-order
weights and end scores) is updated in both half-steps. A 0-order entry with value x
adds x to Phi, so the 0-order rows of dphi hold summed values and |dphi|^2 their
squares (collect_dphi sums before the norm is taken).

Several tasks (Cavallanti, Cesa-Bianchi & Gentile 2008, eq. 3) are learned as
augmented features (chain.pxd, Linear): a sequence of task k is scored with the
shared copies plus k's. A copy whose updates the perceptron scales by c (own_step;
b / (K (1 + b)) shared, 1 / (1 + b) own) is a feature scaled by sqrt(c) whose
stored weight is sqrt(c) times its weight in that space, so PA-I there takes
|dphi|^2 = sum over copies of c |dphi_copy|^2 and moves each copy by tau c dphi_copy.
A general interaction matrix is not learned (sp and bol take it).
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from chain cimport (Corpus, Linear, Rank1, Lattice, PathDiff, b_begin, corpus_view, linear_view, linear_tasks,
                    own_step, trans_targets, for_sequence, task_buffers, check_tasks, rank1_view, lattice_new,
                    chunk_limits, differs, path_diff, next_diff, score_unary, score_pair_bilinear, viterbi, mark_wrong,
                    mark_diff, MAX_TASKS)


cdef struct Dphi:
    # dphi = Phi(gold) - Phi(predicted) over the free parameters of a half-step, by
    # touched attribute: t0[:k0] with rows d0 (S) of the 0-order attributes, t1[:k1]
    # with rows d1 (width: S for alpha, S + 1 for beta) of the 1st-order ones;
    # mark0[a], mark1[a] index those rows while a step runs, else -1.
    int32_t* t0
    int32_t* t1
    double* d0
    double* d1
    double* dend              # S
    double* dtrans            # S x (S + 1)
    int32_t* mark0
    int32_t* mark1
    int k0
    int k1


cdef inline double* zero_order_row(Dphi* f, int32_t a, int S, int* k0) noexcept nogil:
    """The dphi row of 0-order attribute a, zeroed and marked on its first touch."""
    if f.mark0[a] < 0:
        f.mark0[a] = k0[0]
        f.t0[k0[0]] = a
        memset(f.d0 + k0[0] * S, 0, S * sizeof(double))
        k0[0] += 1
    return f.d0 + f.mark0[a] * S


cdef inline double path_score(const Lattice* L, const Linear* m, const int32_t* y, int n) noexcept nogil:
    """Score of the label sequence y[:n] from the lattice's tables."""
    cdef int i, S = L.S, T = S + 1, prev
    cdef double s = m.end[y[n - 1]]
    for i in range(n):
        prev = y[i - 1] if i > 0 else S
        s += L.unary[i * S + y[i]] + L.pair[(i * S + y[i]) * T + prev] + m.trans[y[i] * T + prev]
    return s


cdef inline void collect_dphi(const Corpus* c, const int32_t* pred, int64_t p0, int n, const Linear* m,
                              const Rank1* w, int side, Dphi* f) noexcept nogil:
    """dphi of a mistaken sequence for the half-step learning alpha (side 0) or beta
    (side 1): the 0-order weights (entry values x summed per attribute), label
    transitions and end scores, and the side's 1st-order vectors, whose features are
    the other side's entries."""
    cdef int S = m.S, T = S + 1, y, j
    cdef int64_t q
    cdef int32_t a
    cdef double x
    cdef double* row
    for y in range(S):
        f.dend[y] = 0.0
    f.dend[c.labels[p0 + n - 1]] += 1.0
    f.dend[pred[n - 1]] -= 1.0
    memset(f.dtrans, 0, S * T * sizeof(double))
    cdef int k0 = 0, k1 = 0  # counted in locals: stores to the marks could alias f.k0, f.k1
    cdef PathDiff d = path_diff(c.labels + p0, pred, n, S)
    while next_diff(&d):
        if d.g != d.p:
            if c.u_vals == NULL:
                for q in range(c.u_ptr[p0 + d.i], c.u_ptr[p0 + d.i + 1]):
                    row = zero_order_row(f, c.u_ids[q], S, &k0)
                    row[d.g] += 1.0
                    row[d.p] -= 1.0
            else:
                for q in range(c.u_ptr[p0 + d.i], c.u_ptr[p0 + d.i + 1]):
                    x = c.u_vals[q]
                    row = zero_order_row(f, c.u_ids[q], S, &k0)
                    row[d.g] += x
                    row[d.p] -= x
        if m.transitions:
            f.dtrans[d.g * T + d.gp] += 1.0
            f.dtrans[d.p * T + d.pp] -= 1.0
        for q in range(b_begin(c, p0 + d.i), b_begin(c, p0 + d.i + 1)):
            a = c.b_ids[q]
            if f.mark1[a] < 0:
                f.mark1[a] = k1
                f.t1[k1] = a
                memset(f.d1 + k1 * T, 0, T * sizeof(double))
                k1 += 1
            row = f.d1 + f.mark1[a] * T
            if side == 0:
                row[d.g] += w.beta[a * w.sb + d.gp]
                row[d.p] -= w.beta[a * w.sb + d.pp]
            else:
                row[d.gp] += w.alpha[a * w.sa + d.g]
                row[d.pp] -= w.alpha[a * w.sa + d.p]
    f.k0, f.k1 = k0, k1


cdef inline double dphi_norm(const Dphi* f, const Linear* m, int width, double ct) noexcept nogil:
    """|dphi|^2 with each copy's part weighted by its step multiplier: own_step for the
    attributes, ct (the sum over the copies trans_targets names) for trans and end;
    1 for one task, where the products below are exact and the sum is the plain one."""
    cdef int S = m.S, T = S + 1, j, y
    cdef double sq = 0.0, c
    cdef const double* row
    for y in range(S):
        sq += (ct * f.dend[y]) * f.dend[y]
        for j in range(T):
            sq += (ct * f.dtrans[y * T + j]) * f.dtrans[y * T + j]
    for j in range(f.k0):
        c = own_step(m, 0, f.t0[j])
        row = f.d0 + j * S
        for y in range(S):
            sq += (c * row[y]) * row[y]
    for j in range(f.k1):
        c = own_step(m, 1, f.t1[j])
        row = f.d1 + j * T
        for y in range(width):
            sq += (c * row[y]) * row[y]
    return sq


cdef inline void pa_step(Dphi* f, const Linear* m, const Rank1* w, int side, int width, double tau,
                         const int* copies, const double* steps, int n_copies) noexcept nogil:
    """Move every weight copy by tau times its step multiplier times its part of dphi
    (the copies of trans and end those trans_targets names), and clear the marks."""
    cdef int S = m.S, T = S + 1, i, j, y
    cdef int32_t a
    cdef double s
    cdef double* row
    cdef double* target
    cdef double* trans
    cdef double* end
    for i in range(n_copies):
        s = tau * steps[i]
        trans, end = m.trans + copies[i] * S * T, m.end + copies[i] * S
        for y in range(S):
            end[y] += s * f.dend[y]
            for j in range(T):
                trans[y * T + j] += s * f.dtrans[y * T + j]
    for j in range(f.k0):
        a = f.t0[j]
        f.mark0[a] = -1
        s = tau * own_step(m, 0, a)
        row = f.d0 + j * S
        target = m.W0 + <Py_ssize_t> a * S
        for y in range(S):
            target[y] += s * row[y]
    for j in range(f.k1):
        a = f.t1[j]
        f.mark1[a] = -1
        s = tau * own_step(m, 1, a)
        row = f.d1 + j * T
        target = w.alpha + a * w.sa if side == 0 else w.beta + a * w.sb
        for y in range(width):
            target[y] += s * row[y]


cdef class BCDKernel:
    """PA-I steps of Algorithm 1 on a learner's arrays, updated in place: the linear
    part (W0, trans, end), alpha and beta, and the marks (mark0, mark1; see Dphi)."""
    cdef Linear lin
    cdef Rank1 w
    cdef int32_t* mark0
    cdef int32_t* mark1
    cdef double C
    cdef object arrays  # owns the memory the pointers above point into

    def __init__(self, double[:, ::1] W0, double[:, ::1] trans, double[::1] end, double[:, :] alpha,
                 double[:, :] beta, int32_t[::1] mark0, int32_t[::1] mark1, double C, bint transitions,
                 tasks=None):
        """tasks: None, or (K, b, (lo0, hi0), (lo1, hi1)) as chain.pxd's linear_tasks
        takes it (eq. 3); trans and end then hold K + 1 copies."""
        if tasks is not None and len(tasks) != 4:
            raise ValueError("bcd learns several tasks with the coupling b (eq. 3) only; a general interaction "
                             "matrix needs sp or bol")
        self.lin = linear_view(W0, trans, end, None, None, None, False, transitions)
        linear_tasks(&self.lin, tasks, trans.shape[0], end.shape[0])
        self.w = rank1_view(alpha, beta)
        if mark0.shape[0] != W0.shape[0] or mark1.shape[0] != alpha.shape[0] or beta.shape[0] != alpha.shape[0]:
            raise ValueError("W0, alpha, beta and the marks do not fit")
        self.mark0, self.mark1 = &mark0[0], &mark1[0]
        self.C = C
        self.arrays = (W0, trans, end, alpha, beta, mark0, mark1)

    def train_chunk(self, data, const int64_t[::1] order, int side):
        """One PA-I pass over the sequences data[order], learning alpha (side 0) or beta
        (side 1) with the other fixed. Returns the number of mistakes."""
        cdef Corpus c = corpus_view(data)
        cdef Linear m = self.lin, eff
        cdef const Linear* mm
        check_tasks(&c, &m, order)
        buffers = task_buffers(&eff, m.S)
        cdef Rank1 w = self.w
        cdef double C = self.C
        cdef int S = m.S, T = S + 1, width = S if side == 0 else T
        cdef int maxlen, maxb, maxu
        chunk_limits(order, c.seq_ptr, c.b_ptr, c.b_width, &maxlen, &maxb)
        chunk_limits(order, c.seq_ptr, c.u_ptr, 0, &maxlen, &maxu)
        cdef Lattice L
        work = lattice_new(&L, maxlen, S)
        cdef int32_t[::1] t0 = np.zeros(maxu, dtype=np.int32), t1 = np.zeros(maxb, dtype=np.int32)
        cdef double[:, ::1] d0 = np.zeros((maxu, S)), d1 = np.zeros((maxb, T))
        cdef double[::1] dend = np.zeros(S)
        cdef double[:, ::1] dtrans = np.zeros((S, T))
        cdef Dphi f
        f.t0, f.t1, f.d0, f.d1 = &t0[0], &t1[0], &d0[0, 0], &d1[0, 0]
        f.dend, f.dtrans, f.mark0, f.mark1 = &dend[0], &dtrans[0, 0], self.mark0, self.mark1
        cdef Py_ssize_t jj, N = order.shape[0]
        cdef int64_t p0, mistakes = 0
        cdef int n, i, n_copies
        cdef double gold, guess, sq, tau, ct
        # the copies of trans and end a step moves (one for one task; with tasks, the
        # shared one and the sequence's task's) and their multipliers
        cdef int copies[MAX_TASKS]
        cdef double steps[MAX_TASKS]
        with nogil:
            for jj in range(N):
                p0 = c.seq_ptr[order[jj]]
                n = <int>(c.seq_ptr[order[jj] + 1] - p0)
                if n == 0:
                    continue
                mm = for_sequence(&m, &eff, &c, order[jj])
                score_unary(&c, mm, &L, p0, n)
                score_pair_bilinear(&c, &w, &L, p0, n)
                guess = viterbi(&L, mm, n, L.pred)
                if not differs(c.labels + p0, L.pred, n):
                    continue
                mistakes += 1
                mark_wrong(&c, order[jj])
                mark_diff(&c, L.pred, p0, n, S)
                gold = path_score(&L, mm, c.labels + p0, n)
                collect_dphi(&c, L.pred, p0, n, &m, &w, side, &f)
                n_copies = trans_targets(&m, copies, steps)
                ct = 0.0
                for i in range(n_copies):
                    ct += steps[i]
                sq = dphi_norm(&f, &m, width, ct)
                tau = 0.0 if sq == 0.0 else min(C, (guess - gold + 1.0) / sq)
                pa_step(&f, &m, &w, side, width, tau, copies, steps, n_copies)
        return mistakes
