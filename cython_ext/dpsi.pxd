# dPsi = Psi(x, y) - Psi(x, yhat) of a wrongly decoded sequence on the linear
# first-order model, gathered by the parameter rows it touches: the vector the
# passive-aggressive (rpa.pyx) and AROW (arow.pyx) steps move the weights along.
# CRFsuite builds the same difference vector as a sparse list of feature ids
# (delta_t in train_passive_aggressive.c and train_arow.c); here it is kept by rows
# of W0 (S values), blocks of W1 (S x (S + 1)), and the whole of trans and end.
import numpy as np
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from chain cimport Corpus, PathDiff, b_begin, path_diff, next_diff


cdef struct Dphi:
    # dPsi by touched parameter: 0-order rows t0[:k0] (S values each, in d0), 1st-order
    # blocks t1[:k1] (S x (S + 1) each, in d1), trans (S x (S + 1)) and end (S); mark0[a]
    # and mark1[a] index the rows while a step runs, else -1. rpa's Phi-step gradient G
    # likewise: rows tp[:kp] (k values each, in g), markp[r].
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
    # The %emb part a learner adapts (rpa): Phi (R x k) and its averaging sums UPhi, the
    # rows read at each position (P x E, -1: none) and the first W0 row of each
    # template's k weights. E = 0: none (every other learner).
    double* Phi
    double* UPhi
    const int32_t* rows
    const int32_t* first
    int E
    int k


cdef inline tuple dphi_new(Dphi* f, int maxu, int maxb, int maxp, int k, int S):
    """Point f at fresh buffers for up to maxu 0-order rows, maxb 1st-order blocks and
    maxp Phi rows of width k (the marks are the caller's: they outlive a chunk);
    returns the arrays that own them, for the caller to keep."""
    cdef int T = S + 1
    buffers = (np.zeros(max(maxu, 1), np.int32), np.zeros(max(maxb, 1), np.int32),
               np.zeros(max(maxp, 1), np.int32), np.zeros((max(maxu, 1), S)),
               np.zeros((max(maxb, 1), S * T)), np.zeros((max(maxp, 1), max(k, 1))), np.zeros(S),
               np.zeros(S * T))
    cdef int32_t[::1] t0 = buffers[0], t1 = buffers[1], tp = buffers[2]
    cdef double[:, ::1] d0 = buffers[3], d1 = buffers[4], g = buffers[5]
    cdef double[::1] dend = buffers[6], dtrans = buffers[7]
    f.t0, f.t1, f.tp, f.d0, f.d1, f.g = &t0[0], &t1[0], &tp[0], &d0[0, 0], &d1[0, 0], &g[0, 0]
    f.dend, f.dtrans = &dend[0], &dtrans[0]
    f.k0 = f.k1 = f.kp = 0
    return buffers


cdef inline double* row_of(int32_t a, int32_t* mark, int32_t* touched, double* rows, int width,
                           int* count) noexcept nogil:
    """The dPsi (or G) row of parameter a, zeroed and marked on its first touch."""
    if mark[a] < 0:
        mark[a] = count[0]
        touched[count[0]] = a
        memset(rows + <Py_ssize_t> count[0] * width, 0, width * sizeof(double))
        count[0] += 1
    return rows + <Py_ssize_t> mark[a] * width


cdef inline void collect(const Corpus* c, const Emb* e, const int32_t* pred, int64_t p0, int n, int S,
                         bint transitions, Dphi* f) noexcept nogil:
    """dPsi of a mistaken sequence (at the current Phi when e.E > 0). Leaves the rows
    marked: the learner's step clears the marks (clear_marks)."""
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


cdef inline void clear_marks(Dphi* f) noexcept nogil:
    """Unmark the rows collect touched."""
    cdef int j
    for j in range(f.k0):
        f.mark0[f.t0[j]] = -1
    for j in range(f.k1):
        f.mark1[f.t1[j]] = -1


cdef inline void dot_norm(const Dphi* f, int S, const double* W0, const double* W1, const double* trans,
                          const double* end, double* dot, double* sq) noexcept nogil:
    """dot = w . dPsi (the margin score(y) - score(yhat)) and sq = |dPsi|^2, for w given
    as its four arrays (W0 A0 x S, W1 A1 x S x (S + 1), trans S x (S + 1), end S)."""
    cdef int T = S + 1, j, y
    cdef double a = 0.0, b = 0.0, x
    cdef const double* row
    cdef const double* w
    for y in range(S):
        x = f.dend[y]
        a += x * end[y]
        b += x * x
        for j in range(T):
            x = f.dtrans[y * T + j]
            a += x * trans[y * T + j]
            b += x * x
    for j in range(f.k0):
        row, w = f.d0 + <Py_ssize_t> j * S, W0 + <Py_ssize_t> f.t0[j] * S
        for y in range(S):
            a += row[y] * w[y]
            b += row[y] * row[y]
    for j in range(f.k1):
        row, w = f.d1 + <Py_ssize_t> j * S * T, W1 + <Py_ssize_t> f.t1[j] * S * T
        for y in range(S * T):
            a += row[y] * w[y]
            b += row[y] * row[y]
    dot[0], sq[0] = a, b
