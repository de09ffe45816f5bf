"""The re-embedding passive-aggressive learner (Denis & Ralaivola 2017, Algorithm 1)
for sequence labelling: structured PA-II (Crammer et al. 2006) on the linear first-order
model, whose %emb templates read word vectors Phi that are learned too. Without %emb
templates (E = 0) the weight step alone is structured passive-aggressive learning, of
any PA type and cost: the `pa` learner (CRFsuite's train_passive_aggressive.c) runs it.

An %emb template e at position i reads the row r = emb_rows[i, e] of Phi (R x k, a row
per word) and scores label y with sum_j Phi[r, j] W0[first[e] + j, y]: the template's
weights are k rows of W0, so a model saved with Phi frozen is an ordinary linear model
with real-valued 0-order features. For a sequence decoded wrongly (yhat), with loss
Delta(y, yhat) and margin(w, Phi) = score(y) - score(yhat), up to `inner` times (yhat
fixed), the closed forms of the paper's eqs. (6) and (7):
    w-step:   w   += tau dPsi,   tau = l / (|dPsi|^2 + 1/(2C)),     l = Delta - margin
    Phi-step: Phi += eta G,      eta = l / (|G|_F^2 + lam/(2C)),   G = d margin / d Phi
dPsi = Psi(y) - Psi(yhat) at the current Phi (dpsi.pxd); G moves only the rows of the
sentence's words: G[r] = sum over (i, e) reading r of W0[first[e] + (0..k-1), y_i] -
(..., yhat_i). The margin is linear in each block, so after a step it is margin +
tau |dPsi|^2 (or + eta |G|^2) and needs no rescoring. Averaging (Daume 2006): U +=
counter * step for every array, Phi included; the averages are X - U / counter.

The w-step generalised (Crammer et al. 2006, section 3 and eq. 9 for structures; the
cost and tau functions of CRFsuite's train_passive_aggressive.c), d being the number
of wrong labels:
    Delta = d (COST_HAMMING, rpa's hamming), 1 (COST_ZERO_ONE; CRFsuite's
            error_sensitive = 0) or sqrt(d) (COST_SQRT_HAMMING; error_sensitive = 1)
    tau   = l / |dPsi|^2 (PA, type 0), min(C, l / |dPsi|^2) (PA-I, type 1) or
            l / (|dPsi|^2 + 1/(2C)) (PA-II, type 2, rpa's)
CRFsuite's cost sv - sc + Delta is l here (sv - sc = -margin), and its averages
w - ws / u are these: ws += tau u dPsi with u counting the sequences from 1.
"""
import numpy as np
from libc.math cimport sqrt
from libc.stdint cimport int32_t, int64_t
from chain cimport (Corpus, Linear, Lattice, corpus_view, linear_view, lattice_new, chunk_limits, differs,
                    score_unary, score_pair_linear, mark_wrong, mark_diff)
from bounded cimport Bounded, pass_search, pass_viterbi, trans_rows_refresh, SMALL
from dpsi cimport Dphi, Emb, dphi_new, row_of, collect, dot_norm

# the loss Delta a weight step asks for (d: the number of wrong labels)
cdef enum:
    COST_ZERO_ONE = 0       # 1
    COST_HAMMING = 1        # d
    COST_SQRT_HAMMING = 2   # sqrt(d)


cdef inline double pa_tau(int pa_type, double l, double sq, double C) noexcept nogil:
    """The step along dPsi of PA (0), PA-I (1) or PA-II (2) for the loss l > 0 and
    sq = |dPsi|^2 (Crammer et al. 2006, eqs. 6-8; CRFsuite's tau0, tau1, tau2). A
    dPsi of zero takes no step (PA and PA-I would divide by zero)."""
    if pa_type == 2:
        return l / (sq + 0.5 / C)
    if sq == 0.0:
        return 0.0
    if pa_type == 1:
        return min(C, l / sq)
    return l / sq


cdef inline void score_emb(const Emb* e, const double* W0, const Lattice* L, int64_t p0, int n) noexcept nogil:
    """unary[i, y] += sum over the templates of Phi[r] . W0[first + (0..k-1), y]."""
    cdef int S = L.S, i, t, j, y
    cdef int32_t r
    cdef double x
    cdef const double* phi
    cdef const double* w
    cdef double* u
    for i in range(n):
        u = L.unary + i * S
        for t in range(e.E):
            r = e.rows[(p0 + i) * e.E + t]
            if r < 0:
                continue
            phi = e.Phi + <Py_ssize_t> r * e.k
            for j in range(e.k):
                x = phi[j]
                w = W0 + (<Py_ssize_t> e.first[t] + j) * S
                for y in range(S):
                    u[y] += x * w[y]


cdef inline void step_w(Dphi* f, const Linear* m, double* W1, double* U1, double tau, double ct) noexcept nogil:
    """w += tau dPsi (and U += ct dPsi); clears the marks."""
    cdef int S = m.S, T = S + 1, j, y
    cdef double* row
    cdef Py_ssize_t at
    for y in range(S):
        m.end[y] += tau * f.dend[y]
        if m.averaged:
            m.Uend[y] += ct * f.dend[y]
        if m.transitions:
            for j in range(T):
                m.trans[y * T + j] += tau * f.dtrans[y * T + j]
                if m.averaged:
                    m.Utrans[y * T + j] += ct * f.dtrans[y * T + j]
    for j in range(f.k0):
        row, at = f.d0 + <Py_ssize_t> j * S, <Py_ssize_t> f.t0[j] * S
        f.mark0[f.t0[j]] = -1
        for y in range(S):
            m.W0[at + y] += tau * row[y]
            if m.averaged:
                m.U0[at + y] += ct * row[y]
    for j in range(f.k1):
        row, at = f.d1 + <Py_ssize_t> j * S * T, <Py_ssize_t> f.t1[j] * S * T
        f.mark1[f.t1[j]] = -1
        for y in range(S * T):
            W1[at + y] += tau * row[y]
            if m.averaged:
                U1[at + y] += ct * row[y]


cdef inline double collect_g(const Corpus* c, const Emb* e, const double* W0, const int32_t* pred, int64_t p0,
                             int n, int S, Dphi* f) noexcept nogil:
    """G = d margin / d Phi at the current w, by touched row; returns |G|_F^2."""
    cdef int i, t, j, g, p, kp = 0
    cdef int32_t r
    cdef double* row
    cdef const double* w
    cdef double sq = 0.0
    for i in range(n):
        g, p = c.labels[p0 + i], pred[i]
        if g == p:
            continue
        for t in range(e.E):
            r = e.rows[(p0 + i) * e.E + t]
            if r < 0:
                continue
            row = row_of(r, f.markp, f.tp, f.g, e.k, &kp)
            for j in range(e.k):
                w = W0 + (<Py_ssize_t> e.first[t] + j) * S
                row[j] += w[g] - w[p]
    f.kp = kp
    for j in range(kp * e.k):
        sq += f.g[j] * f.g[j]
    return sq


cdef inline void step_phi(Dphi* f, const Emb* e, double eta, double ct, bint averaged) noexcept nogil:
    """Phi += eta G (and UPhi += ct G); clears the marks."""
    cdef int j, i
    cdef Py_ssize_t at
    cdef const double* row
    for i in range(f.kp):
        row, at = f.g + <Py_ssize_t> i * e.k, <Py_ssize_t> f.tp[i] * e.k
        f.markp[f.tp[i]] = -1
        for j in range(e.k):
            e.Phi[at + j] += eta * row[j]
            if averaged:
                e.UPhi[at + j] += ct * row[j]


cdef class RPAKernel:
    """The learner's arrays, updated in place: the linear part (W0, W1, trans, end and
    their averaging sums), Phi and UPhi, and the marks of the touched rows."""
    cdef Linear lin
    cdef Emb emb
    cdef double* W1
    cdef double* U1
    cdef int32_t* mark0
    cdef int32_t* mark1
    cdef int32_t* markp
    cdef double C, lam
    cdef int inner, cost, pa_type
    cdef bint learn_phi
    cdef int64_t R
    cdef object arrays  # owns the memory the pointers above point into
    cdef public int bounded_from  # decode by bounded search (bounded.pxd) from this many labels

    def __init__(self, double[:, ::1] W0, double[:, :, ::1] W1, double[:, ::1] trans, double[::1] end,
                 double[:, ::1] U0, double[:, :, ::1] U1, double[:, ::1] Utrans, double[::1] Uend,
                 Phi=None, UPhi=None, emb_first=None, *, double C, int cost, bint averaged, bint transitions,
                 double lam=1.0, int inner=1, bint learn_phi=False, int pa_type=2):
        """Phi, UPhi, emb_first: the word vectors, their averaging sums and the first
        0-order attribute of each %emb template (None: no %emb templates). cost: the
        loss Delta, 0 zero-one, 1 Hamming (a bool reads as these two, as rpa's rpa_loss
        gives it), 2 the square root of the Hamming distance; pa_type: the weight step,
        0 PA, 1 PA-I, 2 PA-II (the Phi-step is always PA-II, eq. 7); lam, inner and
        learn_phi: the Phi-step's."""
        # no vectors: empty arrays, whose pointers nothing reads
        cdef double[:, ::1] phi = np.zeros((0, 1)) if Phi is None else Phi
        cdef double[:, ::1] uphi = np.zeros((0, 1)) if UPhi is None else UPhi
        cdef const int32_t[::1] first = np.zeros(0, np.int32) if emb_first is None else emb_first
        S, k, E = W0.shape[1], phi.shape[1], first.shape[0]
        if W1.shape[1] != S or W1.shape[2] != S + 1:
            raise ValueError("W1 must be A1 x S x (S + 1)")
        if E and (np.min(first) < 0 or np.max(first) + k > W0.shape[0]):
            raise ValueError("emb_first: each template's k weight rows must lie within W0")
        if averaged and (U1.shape[0] != W1.shape[0] or uphi.shape[0] != phi.shape[0] or uphi.shape[1] != k):
            raise ValueError("the averaging sums must have the shapes of their arrays")
        if C <= 0 or lam <= 0 or inner < 1:
            raise ValueError("C and lam must be positive and inner at least 1")
        if cost not in (COST_ZERO_ONE, COST_HAMMING, COST_SQRT_HAMMING) or pa_type not in (0, 1, 2):
            raise ValueError("cost must be 0, 1 or 2 and pa_type 0, 1 or 2")
        self.lin = linear_view(W0, trans, end, U0, Utrans, Uend, averaged, transitions)
        self.W1 = &W1[0, 0, 0]
        self.U1 = &U1[0, 0, 0]
        marks = [np.full(max(n, 1), -1, np.int32) for n in (W0.shape[0], W1.shape[0], phi.shape[0])]
        cdef int32_t[::1] m0 = marks[0], m1 = marks[1], mp = marks[2]
        self.mark0, self.mark1, self.markp = &m0[0], &m1[0], &mp[0]
        self.emb.Phi = &phi[0, 0]
        self.emb.UPhi = &uphi[0, 0]
        self.emb.first = &first[0]
        self.emb.E, self.emb.k = E, k
        self.R = phi.shape[0]
        self.C, self.lam, self.inner = C, lam, inner
        self.cost, self.pa_type, self.learn_phi = cost, pa_type, learn_phi
        self.bounded_from = SMALL
        self.arrays = (W0, W1, trans, end, U0, U1, Utrans, Uend, phi, uphi, first, marks)

    def train_chunk(self, data, const int64_t[::1] order, int64_t counter):
        """One pass over the sequences data[order] (data.emb_rows: P x E int32 rows of
        Phi, -1 for none). Returns (mistakes, counter)."""
        cdef Corpus c = corpus_view(data)
        cdef Linear m = self.lin
        cdef Emb e = self.emb
        cdef int S = m.S
        cdef const int32_t[:, ::1] rows
        if e.E:
            rows = data.emb_rows
            if rows.shape[0] != c.seq_ptr[data.seq_ptr.shape[0] - 1] or rows.shape[1] != e.E:
                raise ValueError("emb_rows must hold one row per position and %emb template")
            if rows.shape[0] and (np.max(data.emb_rows) >= self.R or np.min(data.emb_rows) < -1):
                raise ValueError("emb_rows: a row outside Phi")
            e.rows = &rows[0, 0]
        cdef int maxlen, maxb, maxu
        chunk_limits(order, c.seq_ptr, c.b_ptr, c.b_width, &maxlen, &maxb)
        chunk_limits(order, c.seq_ptr, c.u_ptr, 0, &maxlen, &maxu)
        maxu += maxlen * e.E * e.k  # the %emb rows of W0
        cdef Lattice L
        work = lattice_new(&L, maxlen, S)
        cdef Dphi f
        buffers = dphi_new(&f, maxu, maxb, maxlen * e.E, e.k, S)
        f.mark0, f.mark1, f.markp = self.mark0, self.mark1, self.markp
        cdef double* W1 = self.W1
        cdef double* U1 = self.U1
        cdef double C = self.C, lam = self.lam, loss, margin, sq, tau, eta
        cdef int inner = self.inner if self.learn_phi else 1, it, i, n, wrong
        cdef int cost = self.cost, pa_type = self.pa_type
        # the path by bounded search (bounded.pxd), its bounds kept as the transitions move
        cdef Bounded B
        cdef Bounded* bp
        cdef bint filled
        search = pass_search(&B, &bp, S, m.trans, self.bounded_from, maxlen)
        cdef Py_ssize_t jj, N = order.shape[0]
        cdef int64_t p0, mistakes = 0
        with nogil:
            for jj in range(N):
                p0 = c.seq_ptr[order[jj]]
                n = <int>(c.seq_ptr[order[jj] + 1] - p0)
                if n > 0:
                    score_unary(&c, &m, &L, p0, n)
                    if e.E:
                        score_emb(&e, m.W0, &L, p0, n)
                    filled = score_pair_linear(&c, W1, &L, p0, n, NULL, bp != NULL)
                    pass_viterbi(&L, &m, bp, filled, n, L.pred)
                    if differs(c.labels + p0, L.pred, n):
                        mistakes += 1
                        mark_wrong(&c, order[jj])
                        mark_diff(&c, L.pred, p0, n, S)
                        wrong = 0
                        for i in range(n):
                            wrong += c.labels[p0 + i] != L.pred[i]
                        loss = 1.0 if cost == COST_ZERO_ONE else wrong if cost == COST_HAMMING else sqrt(wrong)
                        for it in range(inner):
                            collect(&c, &e, L.pred, p0, n, S, m.transitions, &f)
                            dot_norm(&f, S, m.W0, W1, m.trans, m.end, &margin, &sq)
                            if loss - margin <= 0.0:
                                step_w(&f, &m, W1, U1, 0.0, 0.0)  # only clears the marks
                                break
                            tau = pa_tau(pa_type, loss - margin, sq, C)
                            step_w(&f, &m, W1, U1, tau, tau * counter)
                            margin += tau * sq
                            if not self.learn_phi or e.E == 0 or loss - margin <= 0.0:
                                break
                            sq = collect_g(&c, &e, m.W0, L.pred, p0, n, S, &f)
                            if sq == 0.0:
                                step_phi(&f, &e, 0.0, 0.0, False)
                                break
                            eta = (loss - margin) / (sq + 0.5 * lam / C)
                            step_phi(&f, &e, eta, eta * counter, m.averaged)
                        if bp != NULL:
                            trans_rows_refresh(m.trans, c.labels + p0, L.pred, n, bp)
                counter += 1
        return mistakes, counter
