"""The re-embedding passive-aggressive learner (Denis & Ralaivola 2017, Algorithm 1)
for sequence labelling: structured PA-II (Crammer et al. 2006) on the linear first-order
model, whose %emb templates read word vectors Phi that are learned too.

An %emb template e at position i reads the row r = emb_rows[i, e] of Phi (R x k, a row
per word) and scores label y with sum_j Phi[r, j] W0[first[e] + j, y]: the template's
weights are k rows of W0, so a model saved with Phi frozen is an ordinary linear model
with real-valued 0-order features. For a sequence decoded wrongly (yhat), with loss
Delta(y, yhat) (Hamming distance or 0/1) and margin(w, Phi) = score(y) - score(yhat),
up to `inner` times (yhat fixed), the closed forms of the paper's eqs. (6) and (7):
    w-step:   w   += tau dPsi,   tau = l / (|dPsi|^2 + 1/(2C)),     l = Delta - margin
    Phi-step: Phi += eta G,      eta = l / (|G|_F^2 + lam/(2C)),   G = d margin / d Phi
dPsi = Psi(y) - Psi(yhat) at the current Phi; G moves only the rows of the sentence's
words: G[r] = sum over (i, e) reading r of W0[first[e] + (0..k-1), y_i] - (..., yhat_i).
The margin is linear in each block, so after a step it is margin + tau |dPsi|^2 (or
+ eta |G|^2) and needs no rescoring. Averaging (Daume 2006): U += counter * step for
every array, Phi included; the averages are X - U / counter.
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from chain cimport (Corpus, Linear, Lattice, PathDiff, b_begin, corpus_view, linear_view, lattice_new,
                    chunk_limits, differs, path_diff, next_diff, score_unary, score_pair_linear, viterbi)


cdef struct Dphi:
    # dPsi by touched parameter: 0-order rows t0[:k0] (S values each, in d0), 1st-order
    # blocks t1[:k1] (S x (S + 1) each, in d1), trans (S x (S + 1)) and end (S); mark0[a]
    # and mark1[a] index the rows while a step runs, else -1. The Phi-step's G likewise:
    # rows tp[:kp] (k values each, in g), markp[r].
    int32_t* t0
    int32_t* t1
    int32_t* tp
    double* d0
    double* d1
    double* g
    double* dend
    double* dtrans
    int32_t* mark0
    int32_t* mark1
    int32_t* markp
    int k0
    int k1
    int kp


cdef struct Emb:
    # The %emb part: Phi (R x k) and its averaging sums UPhi, the rows read at each
    # position (P x E, -1: none) and the first W0 row of each template's k weights.
    double* Phi
    double* UPhi
    const int32_t* rows
    const int32_t* first
    int E
    int k


cdef inline double* row_of(int32_t a, int32_t* mark, int32_t* touched, double* rows, int width,
                           int* count) noexcept nogil:
    """The dPsi (or G) row of parameter a, zeroed and marked on its first touch."""
    if mark[a] < 0:
        mark[a] = count[0]
        touched[count[0]] = a
        memset(rows + <Py_ssize_t> count[0] * width, 0, width * sizeof(double))
        count[0] += 1
    return rows + <Py_ssize_t> mark[a] * width


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


cdef inline void collect(const Corpus* c, const Emb* e, const int32_t* pred, int64_t p0, int n, int S,
                         bint transitions, Dphi* f) noexcept nogil:
    """dPsi of a mistaken sequence at the current Phi."""
    cdef int T = S + 1, t, j
    cdef int64_t q
    cdef int32_t r
    cdef double x
    cdef double* row
    cdef const double* phi
    memset(f.dend, 0, S * sizeof(double))
    memset(f.dtrans, 0, S * T * sizeof(double))
    f.dend[c.labels[p0 + n - 1]] += 1.0
    f.dend[pred[n - 1]] -= 1.0
    cdef int k0 = 0, k1 = 0
    cdef PathDiff d = path_diff(c.labels + p0, pred, n, S)
    while next_diff(&d):
        if d.g != d.p:
            for q in range(c.u_ptr[p0 + d.i], c.u_ptr[p0 + d.i + 1]):
                x = 1.0 if c.u_vals == NULL else c.u_vals[q]
                row = row_of(c.u_ids[q], f.mark0, f.t0, f.d0, S, &k0)
                row[d.g] += x
                row[d.p] -= x
            for t in range(e.E):
                r = e.rows[(p0 + d.i) * e.E + t]
                if r < 0:
                    continue
                phi = e.Phi + <Py_ssize_t> r * e.k
                for j in range(e.k):
                    row = row_of(e.first[t] + j, f.mark0, f.t0, f.d0, S, &k0)
                    row[d.g] += phi[j]
                    row[d.p] -= phi[j]
        if transitions:
            f.dtrans[d.g * T + d.gp] += 1.0
            f.dtrans[d.p * T + d.pp] -= 1.0
        for q in range(b_begin(c, p0 + d.i), b_begin(c, p0 + d.i + 1)):
            row = row_of(c.b_ids[q], f.mark1, f.t1, f.d1, S * T, &k1)
            row[d.g * T + d.gp] += 1.0
            row[d.p * T + d.pp] -= 1.0
    f.k0, f.k1 = k0, k1


cdef inline void dot_norm(const Dphi* f, const Linear* m, const double* W1, double* dot, double* sq) noexcept nogil:
    """dot = w . dPsi (the margin) and sq = |dPsi|^2."""
    cdef int S = m.S, T = S + 1, j, y
    cdef double a = 0.0, b = 0.0, x
    cdef const double* row
    cdef const double* w
    for y in range(S):
        x = f.dend[y]
        a += x * m.end[y]
        b += x * x
        for j in range(T):
            x = f.dtrans[y * T + j]
            a += x * m.trans[y * T + j]
            b += x * x
    for j in range(f.k0):
        row, w = f.d0 + <Py_ssize_t> j * S, m.W0 + <Py_ssize_t> f.t0[j] * S
        for y in range(S):
            a += row[y] * w[y]
            b += row[y] * row[y]
    for j in range(f.k1):
        row, w = f.d1 + <Py_ssize_t> j * S * T, W1 + <Py_ssize_t> f.t1[j] * S * T
        for y in range(S * T):
            a += row[y] * w[y]
            b += row[y] * row[y]
    dot[0], sq[0] = a, b


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
    cdef int inner
    cdef bint hamming, learn_phi
    cdef int64_t R
    cdef object arrays  # owns the memory the pointers above point into

    def __init__(self, double[:, ::1] W0, double[:, :, ::1] W1, double[:, ::1] trans, double[::1] end,
                 double[:, ::1] U0, double[:, :, ::1] U1, double[:, ::1] Utrans, double[::1] Uend,
                 double[:, ::1] Phi, double[:, ::1] UPhi, const int32_t[::1] emb_first, double C, double lam,
                 int inner, bint hamming, bint learn_phi, bint averaged, bint transitions):
        S, k, E = W0.shape[1], Phi.shape[1], emb_first.shape[0]
        if W1.shape[1] != S or W1.shape[2] != S + 1:
            raise ValueError("W1 must be A1 x S x (S + 1)")
        if E and (np.min(emb_first) < 0 or np.max(emb_first) + k > W0.shape[0]):
            raise ValueError("emb_first: each template's k weight rows must lie within W0")
        if averaged and (U1.shape[0] != W1.shape[0] or UPhi.shape[0] != Phi.shape[0] or UPhi.shape[1] != k):
            raise ValueError("the averaging sums must have the shapes of their arrays")
        if C <= 0 or lam <= 0 or inner < 1:
            raise ValueError("C and lam must be positive and inner at least 1")
        self.lin = linear_view(W0, trans, end, U0, Utrans, Uend, averaged, transitions)
        self.W1 = &W1[0, 0, 0]
        self.U1 = &U1[0, 0, 0]
        marks = [np.full(max(n, 1), -1, np.int32) for n in (W0.shape[0], W1.shape[0], Phi.shape[0])]
        cdef int32_t[::1] m0 = marks[0], m1 = marks[1], mp = marks[2]
        self.mark0, self.mark1, self.markp = &m0[0], &m1[0], &mp[0]
        self.emb.Phi = &Phi[0, 0]
        self.emb.UPhi = &UPhi[0, 0]
        self.emb.first = &emb_first[0]
        self.emb.E, self.emb.k = E, k
        self.R = Phi.shape[0]
        self.C, self.lam, self.inner = C, lam, inner
        self.hamming, self.learn_phi = hamming, learn_phi
        self.arrays = (W0, W1, trans, end, U0, U1, Utrans, Uend, Phi, UPhi, emb_first, marks)

    def train_chunk(self, data, const int64_t[::1] order, int64_t counter):
        """One pass over the sequences data[order] (data.emb_rows: P x E int32 rows of
        Phi, -1 for none). Returns (mistakes, counter)."""
        cdef Corpus c = corpus_view(data)
        cdef Linear m = self.lin
        cdef Emb e = self.emb
        cdef int S = m.S, T = S + 1
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
        buffers = (np.zeros(max(maxu, 1), np.int32), np.zeros(max(maxb, 1), np.int32),
                   np.zeros(max(maxlen * e.E, 1), np.int32), np.zeros((max(maxu, 1), S)),
                   np.zeros((max(maxb, 1), S * T)), np.zeros((max(maxlen * e.E, 1), max(e.k, 1))), np.zeros(S),
                   np.zeros(S * T))
        cdef int32_t[::1] t0 = buffers[0], t1 = buffers[1], tp = buffers[2]
        cdef double[:, ::1] d0 = buffers[3], d1 = buffers[4], g = buffers[5]
        cdef double[::1] dend = buffers[6], dtrans = buffers[7]
        cdef Dphi f
        f.t0, f.t1, f.tp, f.d0, f.d1, f.g = &t0[0], &t1[0], &tp[0], &d0[0, 0], &d1[0, 0], &g[0, 0]
        f.dend, f.dtrans, f.mark0, f.mark1, f.markp = &dend[0], &dtrans[0], self.mark0, self.mark1, self.markp
        cdef double* W1 = self.W1
        cdef double* U1 = self.U1
        cdef double C = self.C, lam = self.lam, loss, margin, sq, tau, eta
        cdef int inner = self.inner if self.learn_phi else 1, it, i, n
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
                    score_pair_linear(&c, W1, &L, p0, n)
                    viterbi(&L, &m, n, L.pred)
                    if differs(c.labels + p0, L.pred, n):
                        mistakes += 1
                        loss = 1.0
                        if self.hamming:
                            loss = 0.0
                            for i in range(n):
                                loss += c.labels[p0 + i] != L.pred[i]
                        for it in range(inner):
                            collect(&c, &e, L.pred, p0, n, S, m.transitions, &f)
                            dot_norm(&f, &m, W1, &margin, &sq)
                            if loss - margin <= 0.0:
                                step_w(&f, &m, W1, U1, 0.0, 0.0)  # only clears the marks
                                break
                            tau = (loss - margin) / (sq + 0.5 / C)
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
                counter += 1
        return mistakes, counter
