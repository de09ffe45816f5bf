"""AROW, adaptive regularization of weight vectors (Crammer, Kulesza & Dredze 2009), for
sequences on the linear first-order model, as CRFsuite's train_arow.c runs it.

Every weight w_k has a mean (the weights W0, W1, trans, end, which decode) and a
variance v_k (V0, V1, Vtrans, Vend, the diagonal of the covariance Sigma, all
`variance` at the start). For a sequence decoded wrongly (yhat), with dPsi = Psi(y) -
Psi(yhat) (dpsi.pxd), d the number of wrong labels and margin = w . dPsi =
score(y) - score(yhat):
    cost  = d - margin                      (CRFsuite: sv - sc + d)
    alpha = cost / (gamma + sum_k v_k dPsi_k^2)
    w_k  += alpha v_k dPsi_k
    v_k   = 1 / (1 / v_k + dPsi_k^2 / gamma)
(the paper's Figure 1 with r = gamma, its update of Sigma^-1 kept diagonal; CRFsuite
asks no margin of a correct sequence and never averages). The step moves only the
entries where dPsi_k != 0: CRFsuite visits every feature of either path, but where
dPsi_k = 0 its update leaves w_k and v_k as they are (up to the rounding of
1 / (1 / v_k)).
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t
from chain cimport (Corpus, Linear, Lattice, corpus_view, linear_view, lattice_new, chunk_limits, differs,
                    score_unary, score_pair_linear, mark_wrong, mark_diff)
from bounded cimport Bounded, pass_search, pass_viterbi, trans_rows_refresh, SMALL
from dpsi cimport Dphi, Emb, dphi_new, collect, clear_marks, dot_norm


cdef struct Variances:
    # v of every weight, laid out as the weights: V0 (A0 x S), V1 (A1 x S x (S + 1)),
    # Vtrans (S x (S + 1)), Vend (S)
    double* V0
    double* V1
    double* Vtrans
    double* Vend


cdef inline double weighted_norm(const Dphi* f, int S, const Variances* v) noexcept nogil:
    """sum_k v_k dPsi_k^2 (dPsi^T Sigma dPsi with Sigma diagonal)."""
    cdef int T = S + 1, j, y
    cdef double s = 0.0, x
    cdef const double* row
    cdef const double* vv
    for y in range(S):
        x = f.dend[y]
        s += v.Vend[y] * x * x
        for j in range(T):
            x = f.dtrans[y * T + j]
            s += v.Vtrans[y * T + j] * x * x
    for j in range(f.k0):
        row, vv = f.d0 + <Py_ssize_t> j * S, v.V0 + <Py_ssize_t> f.t0[j] * S
        for y in range(S):
            s += vv[y] * row[y] * row[y]
    for j in range(f.k1):
        row, vv = f.d1 + <Py_ssize_t> j * S * T, v.V1 + <Py_ssize_t> f.t1[j] * S * T
        for y in range(S * T):
            s += vv[y] * row[y] * row[y]
    return s


cdef inline void step_entries(double* w, double* v, const double* d, Py_ssize_t count, double alpha,
                              double gamma) noexcept nogil:
    """w_k += alpha v_k d_k, then v_k = 1 / (1 / v_k + d_k^2 / gamma), where d_k != 0."""
    cdef Py_ssize_t k
    cdef double x
    for k in range(count):
        x = d[k]
        if x != 0.0:
            w[k] += alpha * v[k] * x
            v[k] = 1.0 / (1.0 / v[k] + x * x / gamma)


cdef inline void arow_step(const Dphi* f, const Linear* m, double* W1, const Variances* v, double alpha,
                           double gamma) noexcept nogil:
    """The update of the means and the variances along dPsi."""
    cdef int S = m.S, T = S + 1, j
    cdef Py_ssize_t at
    step_entries(m.end, v.Vend, f.dend, S, alpha, gamma)
    if m.transitions:
        step_entries(m.trans, v.Vtrans, f.dtrans, S * T, alpha, gamma)
    for j in range(f.k0):
        at = <Py_ssize_t> f.t0[j] * S
        step_entries(m.W0 + at, v.V0 + at, f.d0 + <Py_ssize_t> j * S, S, alpha, gamma)
    for j in range(f.k1):
        at = <Py_ssize_t> f.t1[j] * S * T
        step_entries(W1 + at, v.V1 + at, f.d1 + <Py_ssize_t> j * S * T, S * T, alpha, gamma)


cdef class AROWKernel:
    """The learner's arrays, updated in place: the means (W0, W1, trans, end), their
    variances (V0, V1, Vtrans, Vend, the same shapes) and the marks of the touched rows."""
    cdef Linear lin
    cdef Variances var
    cdef double* W1
    cdef int32_t* mark0
    cdef int32_t* mark1
    cdef double gamma
    cdef object arrays  # owns the memory the pointers above point into
    cdef public int bounded_from  # decode by bounded search (bounded.pxd) from this many labels

    def __init__(self, double[:, ::1] W0, double[:, :, ::1] W1, double[:, ::1] trans, double[::1] end,
                 double[:, ::1] V0, double[:, :, ::1] V1, double[:, ::1] Vtrans, double[::1] Vend, double gamma,
                 bint transitions):
        S = W0.shape[1]
        if W1.shape[1] != S or W1.shape[2] != S + 1:
            raise ValueError("W1 must be A1 x S x (S + 1)")
        if V0.shape[0] != W0.shape[0] or V0.shape[1] != S or V1.shape[0] != W1.shape[0] or \
                V1.shape[1] != S or V1.shape[2] != S + 1 or Vtrans.shape[0] != trans.shape[0] or \
                Vtrans.shape[1] != S + 1 or Vend.shape[0] != end.shape[0]:
            raise ValueError("the variances must have the shapes of the weights")
        if not gamma > 0:
            raise ValueError("gamma must be positive")
        none = np.zeros((0, S)), np.zeros((0, S + 1)), np.zeros(0)  # no averaging sums
        self.lin = linear_view(W0, trans, end, none[0], none[1], none[2], False, transitions)
        self.W1 = &W1[0, 0, 0]
        self.var.V0, self.var.V1, self.var.Vtrans, self.var.Vend = &V0[0, 0], &V1[0, 0, 0], &Vtrans[0, 0], &Vend[0]
        marks = [np.full(max(n, 1), -1, np.int32) for n in (W0.shape[0], W1.shape[0])]
        cdef int32_t[::1] m0 = marks[0], m1 = marks[1]
        self.mark0, self.mark1 = &m0[0], &m1[0]
        self.gamma = gamma
        self.bounded_from = SMALL
        self.arrays = (W0, W1, trans, end, V0, V1, Vtrans, Vend, none, marks)

    def train_chunk(self, data, const int64_t[::1] order):
        """One pass of AROW updates over the sequences data[order]; returns the number
        of wrongly decoded sequences."""
        cdef Corpus c = corpus_view(data)
        cdef Linear m = self.lin
        cdef Variances v = self.var
        cdef Emb e  # no %emb rows: AROW reads every feature as a fixed value
        e.E, e.k = 0, 0
        cdef int S = m.S
        cdef int maxlen, maxb, maxu
        chunk_limits(order, c.seq_ptr, c.b_ptr, c.b_width, &maxlen, &maxb)
        chunk_limits(order, c.seq_ptr, c.u_ptr, 0, &maxlen, &maxu)
        cdef Lattice L
        work = lattice_new(&L, maxlen, S)
        cdef Dphi f
        buffers = dphi_new(&f, maxu, maxb, 0, 0, S)
        f.mark0, f.mark1, f.markp = self.mark0, self.mark1, NULL
        cdef double* W1 = self.W1
        cdef double gamma = self.gamma, margin, sq, cost
        cdef int i, n, wrong
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
                if n == 0:
                    continue
                score_unary(&c, &m, &L, p0, n)
                filled = score_pair_linear(&c, W1, &L, p0, n, NULL, bp != NULL)
                pass_viterbi(&L, &m, bp, filled, n, L.pred)
                if not differs(c.labels + p0, L.pred, n):
                    continue
                mistakes += 1
                mark_wrong(&c, order[jj])
                mark_diff(&c, L.pred, p0, n, S)
                wrong = 0
                for i in range(n):
                    wrong += c.labels[p0 + i] != L.pred[i]
                collect(&c, &e, L.pred, p0, n, S, m.transitions, &f)
                dot_norm(&f, S, m.W0, W1, m.trans, m.end, &margin, &sq)
                cost = wrong - margin
                arow_step(&f, &m, W1, &v, cost / (gamma + weighted_norm(&f, S, &v)), gamma)
                clear_marks(&f)
                if bp != NULL:
                    trans_rows_refresh(m.trans, c.labels + p0, L.pred, n, bp)
        return mistakes
