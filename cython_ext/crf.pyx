"""Linear-chain CRF (Lafferty, McCallum & Pereira 2001): the negative log-likelihood's
terms and their gradient over an encoded corpus, for a batch optimizer.

The weights are one flat vector x, as CRFsuite lays out its features (crf1d_encode.c):
a weight per (0-order attribute, label) pair of the feature set, then per (1st-order
attribute, label pair) pair, then the label transitions trans (S x (S + 1), the start
symbol last) and the end scores end (S). The feature set is given as CSR lists: the
labels of attribute a are lab0[ptr0[a]:ptr0[a + 1]] (ascending) and its weights
x[ptr0[a]:ptr0[a + 1]]; likewise the cells y * (S + 1) + v of the 1st-order attributes,
after them. CRFsuite keeps only the pairs seen in training (its default); every pair
is the dense case.

For a sequence, log p(y | x) = score(y) - log Z(x), and d(-log p)/dx = E[phi] - phi(y):
the expected counts come from the marginals of fb.pxd, the observed ones are fixed
and computed once (observed()). expected() adds up log Z and E[phi] over the
sequences of one block, with no Python object in the loop; blocks in threads.

For stochastic gradient descent (CRFsuite's train_l2sgd.c), sgd() runs the steps of
a given order of sequences, one sentence's forward-backward and sparse update at a
time, with the weights kept as x * scale (the L2 decay of every step folded into one
factor, so a step touches only the features of its sentence); loss() is the sum of
-log p(y | x) over a given list of sequences.
"""
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.math cimport INFINITY
from chain cimport Corpus, Lattice, corpus_view, lattice_new, b_begin, SEQBIL_PREFETCH
from fb cimport FB, fb_new, forward_backward, path_score
from known cimport Known, known_view, force


cdef struct Features:
    int S
    const int64_t* ptr0
    const int32_t* lab0
    const int64_t* ptr1
    const int32_t* cell1
    int64_t A0
    int64_t A1
    int64_t off1              # where the 1st-order weights start in x
    int64_t offt              # trans
    int64_t offe              # end
    # S (S + 2) flags over the transitions and end scores, or NULL: forbidden ones score
    # -inf (the rules of training/rules.py), frozen ones (those and the transitions not
    # seen, all_possible_transitions = false) keep their weight
    const uint8_t* forbidden
    const uint8_t* frozen


# Scoring and the expected counts read one weight per (attribute, label) pair at random
# places of arrays of megabytes: they wait on memory. So each block works on its own
# copy of the keyed weights interleaved with their gradient (xg[2q] = x[q], xg[2q + 1]
# = dF/dx[q]): the gradient's cache line is the one scoring has just read. The lists of
# the position DEPTH steps ahead are asked for while the current one is summed.
DEF DEPTH = 3


cdef inline void prefetch(const Corpus* c, const Features* f, const double* xg, int64_t p, bint heads,
                          bint first_order) noexcept nogil:
    """Ask the cache for what position p reads: the list heads (ptr0[a]), or the weights."""
    cdef int64_t k
    for k in range(c.u_ptr[p], c.u_ptr[p + 1]):
        if heads:
            SEQBIL_PREFETCH(f.ptr0 + c.u_ids[k])
        else:
            SEQBIL_PREFETCH(xg + 2 * f.ptr0[c.u_ids[k]])
    if first_order:
        for k in range(b_begin(c, p), b_begin(c, p + 1)):
            if heads:
                SEQBIL_PREFETCH(f.ptr1 + c.b_ids[k])
            else:
                SEQBIL_PREFETCH(xg + 2 * (f.off1 + f.ptr1[c.b_ids[k]]))


cdef inline void score(const Corpus* c, const Features* f, const double* xg, const Lattice* L, int64_t p0, int n,
                       bint first_order) noexcept nogil:
    """unary and (with first_order) pair tables of the sequence at p0:p0 + n."""
    cdef int i, S = f.S, T = S + 1, y
    cdef int64_t k, q, lo, hi
    cdef int32_t a
    cdef double v
    cdef double* out
    for i in range(min(n, DEPTH)):
        prefetch(c, f, xg, p0 + i, True, first_order)
    for i in range(min(n, DEPTH - 1)):
        prefetch(c, f, xg, p0 + i, False, first_order)
    for i in range(n):
        if i + DEPTH < n:
            prefetch(c, f, xg, p0 + i + DEPTH, True, first_order)
        if i + DEPTH - 1 < n:
            prefetch(c, f, xg, p0 + i + DEPTH - 1, False, first_order)
        out = L.unary + i * S
        for y in range(S):
            out[y] = 0.0
        for k in range(c.u_ptr[p0 + i], c.u_ptr[p0 + i + 1]):
            a = c.u_ids[k]
            v = c.u_vals[k] if c.u_vals != NULL else 1.0
            for q in range(f.ptr0[a], f.ptr0[a + 1]):
                out[f.lab0[q]] += v * xg[2 * q]
        if first_order:
            out = L.pair + i * S * T
            for y in range(S * T):
                out[y] = 0.0
            for k in range(b_begin(c, p0 + i), b_begin(c, p0 + i + 1)):
                a = c.b_ids[k]
                for q in range(f.ptr1[a], f.ptr1[a + 1]):
                    out[f.cell1[q]] += xg[2 * (f.off1 + q)]


cdef inline void accumulate(const Corpus* c, const Features* f, const FB* F, double* xg, double* gte, int64_t p0,
                            int n, bint first_order, bint transitions, double sign) noexcept nogil:
    """The expected feature counts of one sequence (F holds its marginals), times sign:
    the keyed features' into xg[2q + 1], the transitions' and end scores' into gte
    (S x (S + 1), then S; the transitions at i > 0 are added by forward_backward,
    in its backward pass)."""
    cdef int i, S = f.S, T = S + 1, y, v, cell
    cdef int64_t k, q
    cdef int32_t a
    cdef double x
    cdef const double* P
    cdef const double* PP
    for i in range(n):
        P = F.P + i * S
        PP = F.PP + <Py_ssize_t> i * S * S
        for k in range(c.u_ptr[p0 + i], c.u_ptr[p0 + i + 1]):
            a = c.u_ids[k]
            x = c.u_vals[k] if c.u_vals != NULL else 1.0
            for q in range(f.ptr0[a], f.ptr0[a + 1]):
                xg[2 * q + 1] += sign * x * P[f.lab0[q]]
        if first_order:
            for k in range(b_begin(c, p0 + i), b_begin(c, p0 + i + 1)):
                a = c.b_ids[k]
                for q in range(f.ptr1[a], f.ptr1[a + 1]):
                    cell = f.cell1[q]
                    y, v = cell // T, cell % T
                    if i == 0:
                        if v == S:
                            xg[2 * (f.off1 + q) + 1] += sign * P[y]
                    elif v < S:
                        xg[2 * (f.off1 + q) + 1] += sign * PP[y * S + v]
        if transitions and i == 0:
            for y in range(S):
                gte[y * T + S] += sign * P[y]
    P = F.P + (n - 1) * S
    for y in range(S):
        gte[S * T + y] += sign * P[y]


cdef inline void score_scaled(const Corpus* c, const Features* f, const double* x, double scale, const Lattice* L,
                              int64_t p0, int n, bint first_order) noexcept nogil:
    """score() over plain weights x (not interleaved) times scale: the tables of
    the weights scale * x (crf1d_encode.c: crf1de_state_score_scaled)."""
    cdef int i, S = f.S, T = S + 1, y
    cdef int64_t k, q
    cdef int32_t a
    cdef double v
    cdef double* out
    for i in range(n):
        out = L.unary + i * S
        for y in range(S):
            out[y] = 0.0
        for k in range(c.u_ptr[p0 + i], c.u_ptr[p0 + i + 1]):
            a = c.u_ids[k]
            v = (c.u_vals[k] if c.u_vals != NULL else 1.0) * scale
            for q in range(f.ptr0[a], f.ptr0[a + 1]):
                out[f.lab0[q]] += v * x[q]
        if first_order:
            out = L.pair + i * S * T
            for y in range(S * T):
                out[y] = 0.0
            for k in range(b_begin(c, p0 + i), b_begin(c, p0 + i + 1)):
                a = c.b_ids[k]
                for q in range(f.ptr1[a], f.ptr1[a + 1]):
                    out[f.cell1[q]] += scale * x[f.off1 + q]


cdef inline double sentence_loss(const Corpus* c, const Features* f, FB* F, const Lattice* L, const double* x,
                                 double scale, double* te, double* gte, int64_t p0, int n, bint first_order,
                                 bint transitions) noexcept nogil:
    """-log p(y | x) of the sequence at p0:p0 + n under the weights scale * x, leaving
    its marginals in F (and the transitions' expected counts at positions i > 0 in gte,
    zeroed first). te: room for the scaled transitions and end scores."""
    cdef int k, S = f.S, T = S + 1
    cdef double logz
    cdef const double* pair = L.pair if first_order else NULL
    for k in range(S * (S + 2)):
        te[k] = -INFINITY if f.forbidden != NULL and f.forbidden[k] else scale * x[f.offt + k]
        gte[k] = 0.0
    score_scaled(c, f, x, scale, L, p0, n, first_order)
    logz = forward_backward(F, L.unary, pair, te, te + S * T, n, 1.0, first_order, gte if transitions else NULL, T)
    return logz - path_score(L.unary, pair, te, te + S * T, n, S, c.labels + p0)


cdef inline void sgd_update(const Corpus* c, const Features* f, const FB* F, double* x, double* gte, int64_t p0,
                            int n, bint first_order, bint transitions, double gain) noexcept nogil:
    """x += gain * (phi(y) - E[phi]) over the features of one sequence, F holding its
    marginals (gte: the transitions' expected counts so far, S x (S + 1) then S):
    CRFsuite's observation and model expectations with +gain and -gain
    (crf1d_encode.c: encoder_objective_and_gradients)."""
    cdef int i, S = f.S, T = S + 1, y, v, gy, gv, cell
    cdef int64_t k, q
    cdef int32_t a
    cdef double val, prob
    cdef const double* P
    cdef const double* PP
    for i in range(n):
        P = F.P + i * S
        PP = F.PP + <Py_ssize_t> i * S * S
        gy = c.labels[p0 + i]
        gv = c.labels[p0 + i - 1] if i > 0 else S
        for k in range(c.u_ptr[p0 + i], c.u_ptr[p0 + i + 1]):
            a = c.u_ids[k]
            val = gain * (c.u_vals[k] if c.u_vals != NULL else 1.0)
            for q in range(f.ptr0[a], f.ptr0[a + 1]):
                x[q] += val * ((1.0 if f.lab0[q] == gy else 0.0) - P[f.lab0[q]])
        if first_order:
            for k in range(b_begin(c, p0 + i), b_begin(c, p0 + i + 1)):
                a = c.b_ids[k]
                for q in range(f.ptr1[a], f.ptr1[a + 1]):
                    cell = f.cell1[q]
                    y, v = cell // T, cell % T
                    if i == 0:
                        prob = P[y] if v == S else 0.0
                    else:
                        prob = PP[y * S + v] if v < S else 0.0
                    x[f.off1 + q] += gain * ((1.0 if cell == gy * T + gv else 0.0) - prob)
        if transitions:
            gte[gy * T + gv] -= 1.0
            if i == 0:  # (forward_backward summed those at i > 0 into gte)
                for y in range(S):
                    gte[y * T + S] += P[y]
    P = F.P + (n - 1) * S
    gte[S * T + c.labels[p0 + n - 1]] -= 1.0
    for y in range(S):
        gte[S * T + y] += P[y]
    for k in range(S * (S + 2)):
        if f.frozen == NULL or not f.frozen[k]:
            x[f.offt + k] -= gain * gte[k]


cdef struct Work:
    # what sgd and loss work in: a sentence's score tables and its forward-backward
    # tables, and S (S + 2) transition and end scores with as many gradient entries
    Lattice L
    FB F
    double* te
    double* gte


cdef object work_new(Work* w, int maxlen, int S):
    """Fills w for sequences of up to maxlen positions; returns the arrays it points
    into, to be kept while w is used."""
    lattice = lattice_new(&w.L, maxlen, S)
    tables = fb_new(&w.F, maxlen, S)
    scratch = np.zeros(2 * S * (S + 2))
    cdef double[::1] sv = scratch
    w.te = &sv[0]
    w.gte = w.te + S * (S + 2)
    return lattice, tables, scratch


cdef inline int64_t find(const int32_t* values, int64_t lo, int64_t hi, int32_t key) noexcept nogil:
    """Index of key in the ascending values[lo:hi], or -1."""
    cdef int64_t mid, end = hi
    while lo < hi:
        mid = (lo + hi) // 2
        if values[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < end and values[lo] == key else -1


cdef class CRFKernel:
    """The feature set of a CRF over an encoded training corpus (see the module
    docstring), and the sums its objective needs."""
    cdef Features f
    cdef readonly int64_t size        # len(x)
    cdef bint transitions
    cdef object arrays
    cdef object rules
    cdef bint forbids

    def __init__(self, int S, const int64_t[::1] ptr0, const int32_t[::1] lab0, const int64_t[::1] ptr1,
                 const int32_t[::1] cell1, bint transitions):
        cdef Py_ssize_t k
        self.f.S = S
        self.f.A0, self.f.A1 = ptr0.shape[0] - 1, ptr1.shape[0] - 1
        if self.f.A0 < 0 or self.f.A1 < 0 or ptr0[self.f.A0] != lab0.shape[0] or ptr1[self.f.A1] != cell1.shape[0]:
            raise ValueError("the feature lists are inconsistent")
        for k in range(lab0.shape[0]):
            if not 0 <= lab0[k] < S:
                raise ValueError("a state feature's label is out of range")
        for k in range(cell1.shape[0]):
            if not 0 <= cell1[k] < S * (S + 1):
                raise ValueError("a 1st-order feature's cell is out of range")
        self.f.ptr0, self.f.lab0 = &ptr0[0], &lab0[0] if lab0.shape[0] else NULL
        self.f.ptr1, self.f.cell1 = &ptr1[0], &cell1[0] if cell1.shape[0] else NULL
        self.f.off1 = lab0.shape[0]
        self.f.offt = self.f.off1 + cell1.shape[0]
        self.f.offe = self.f.offt + S * (S + 1)
        self.size = self.f.offe + S
        self.transitions = transitions
        self.arrays = (ptr0, lab0, ptr1, cell1)
        self.f.forbidden = self.f.frozen = NULL
        self.rules, self.forbids = None, False

    def set_rules(self, const uint8_t[::1] forbidden, const uint8_t[::1] frozen):
        """The transitions and end scores (S (S + 2) flags each, the layout of x past the
        keyed weights) that score -inf and those that keep their weight (Features); set
        again after the flags change."""
        cdef int S = self.f.S
        if forbidden.shape[0] != S * (S + 2) or frozen.shape[0] != S * (S + 2):
            raise ValueError("the rules: one flag per transition and end score")
        self.rules = (forbidden, frozen)
        self.f.forbidden, self.f.frozen = &forbidden[0], &frozen[0]
        self.forbids = any(forbidden[k] for k in range(forbidden.shape[0]))

    cdef int check(self, Corpus* c, data, int64_t lo, int64_t hi) except -1:
        cdef int64_t k
        if not 0 <= lo <= hi <= len(data.seq_ptr) - 1:
            raise ValueError("sequence range out of bounds")
        for k in range(c.u_ptr[c.seq_ptr[lo]], c.u_ptr[c.seq_ptr[hi]]):
            if not 0 <= c.u_ids[k] < self.f.A0:
                raise ValueError("a 0-order attribute id is out of range")
        for k in range(b_begin(c, c.seq_ptr[lo]), b_begin(c, c.seq_ptr[hi])):
            if not 0 <= c.b_ids[k] < self.f.A1:
                raise ValueError("a 1st-order attribute id is out of range")
        return 0

    def expected(self, data, double[::1] xg, const double[::1] xte, double[::1] gte, int64_t lo, int64_t hi,
                 const int32_t[::1] known=None, const uint8_t[:, ::1] sets=None):
        """Sum of log Z(x_j) over the sequences lo <= j < hi, and their expected feature
        counts. xg: the keyed weights interleaved with their gradient (xg[2q] = x[q],
        the counts are added to xg[2q + 1], for q < len(x) - S * (S + 2)); xte: the
        transitions and end scores (the rest of x), whose counts are added to gte.

        known, sets: partial labels (known.pxd). A sequence with a position not known to
        one label has, in place of its observed counts (which observed() leaves out),
        the expected counts over the labellings that keep what is known: their log Zc
        is subtracted and their counts taken away, so that its term of the objective is
        -log p(known | x) = log Z - log Zc and its gradient E[phi] - E_c[phi]. Releases
        the GIL."""
        cdef Corpus c = corpus_view(data)
        cdef int S = self.f.S
        if xg.shape[0] != 2 * self.f.offt or xte.shape[0] != S * (S + 2) or gte.shape[0] != S * (S + 2):
            raise ValueError("xg, xte and gte do not fit the features")
        self.check(&c, data, lo, hi)
        cdef Known K = known_view(data, known, sets, S)
        cdef double[::1] kept = np.zeros(S * (S + 1))  # a constrained pass's transition counts
        cdef double* gk = &kept[0]
        cdef bint partial
        cdef int i
        cdef int maxlen = 1, n
        cdef int64_t j, p0
        for j in range(lo, hi):
            maxlen = max(maxlen, <int>(c.seq_ptr[j + 1] - c.seq_ptr[j]))
        cdef Lattice L
        work = lattice_new(&L, maxlen, S)
        cdef FB F
        tables = fb_new(&F, maxlen, S)
        F.fixed_trans = True  # (trans below is fixed for the call)
        cdef bint first_order = self.f.A1 > 0
        cdef const double* pair
        cdef double logz = 0.0
        cdef double* w = &xg[0] if xg.shape[0] else NULL
        cdef double[::1] masked
        cdef const double* trans = &xte[0]
        if self.forbids:  # (a copy only when the rules forbid something)
            masked = np.array(xte)
            for i in range(S * (S + 2)):
                if self.f.forbidden[i]:
                    masked[i] = -INFINITY
            trans = &masked[0]
        cdef double* g = &gte[0]
        with nogil:
            for j in range(lo, hi):
                p0 = c.seq_ptr[j]
                n = <int>(c.seq_ptr[j + 1] - p0)
                if n == 0:
                    continue
                score(&c, &self.f, w, &L, p0, n, first_order)
                pair = L.pair if first_order else NULL
                # the transitions' expected counts: the pair marginals summed in place
                logz += forward_backward(&F, L.unary, pair, trans, trans + S * (S + 1), n, 1.0, first_order,
                                         g if self.transitions else NULL, S + 1)
                accumulate(&c, &self.f, &F, w, g, p0, n, first_order, self.transitions, 1.0)
                partial = False
                if K.ids != NULL:
                    for i in range(n):
                        partial = partial or K.ids[p0 + i] < 0
                if partial:  # (forward_backward leaves L.unary as it was)
                    force(&L, &K, p0, n)
                    logz -= forward_backward(&F, L.unary, pair, trans, trans + S * (S + 1), n, 1.0, first_order,
                                             gk if self.transitions else NULL, S + 1)
                    accumulate(&c, &self.f, &F, w, g, p0, n, first_order, self.transitions, -1.0)
                    if self.transitions:
                        for i in range(S * (S + 1)):
                            g[i] -= gk[i]
                            gk[i] = 0.0
        return logz

    cdef int check_order(self, Corpus* c, data, const int64_t[::1] order, int* maxlen) except -1:
        """Every id of the corpus in range, and order's sequences; their longest length."""
        cdef int64_t N = len(data.seq_ptr) - 1, j
        cdef Py_ssize_t i
        self.check(c, data, 0, N)
        maxlen[0] = 1
        for i in range(order.shape[0]):
            j = order[i]
            if not 0 <= j < N:
                raise ValueError("a sequence index of the order is out of range")
            maxlen[0] = max(maxlen[0], <int>(c.seq_ptr[j + 1] - c.seq_ptr[j]))
        for i in range(c.seq_ptr[N]):
            if not 0 <= c.labels[i] < self.f.S:
                raise ValueError(f"position {i} has no gold label")
        return 0

    def sgd(self, data, double[::1] x, const int64_t[::1] order, double t0, double lam, double t):
        """Stochastic gradient descent over the sequences order[0], order[1], ...: for
        each, as CRFsuite's l2sgd() (train_l2sgd.c),

            eta = 1 / (lam (t0 + t)),  decay *= 1 - eta lam,  gain = eta / decay,
            the loss -log p(y | x) and marginals at the weights decay * x,
            x += gain (phi(y) - E[phi]),  t += 1,

        that is, w <- (1 - eta lam) w, then w <- w - eta grad(-log p)(w), with w = decay
        * x: only the features of the sentence are touched. decay starts at 1; the
        caller multiplies x by the decay returned. Returns (sum of the losses, t,
        decay, eta of the last step). Releases the GIL."""
        cdef Corpus c = corpus_view(data)
        cdef int S = self.f.S, maxlen, n
        if x.shape[0] != self.size:
            raise ValueError("x must have one entry per feature")
        self.check_order(&c, data, order, &maxlen)
        cdef Work ws
        owner = work_new(&ws, maxlen, S)
        cdef bint first_order = self.f.A1 > 0
        cdef double decay = 1.0, eta = 0.0, gain, total = 0.0
        cdef double* w = &x[0]
        cdef Py_ssize_t i
        cdef int64_t j, p0
        with nogil:
            for i in range(order.shape[0]):
                j = order[i]
                p0 = c.seq_ptr[j]
                n = <int>(c.seq_ptr[j + 1] - p0)
                eta = 1.0 / (lam * (t0 + t))
                decay *= 1.0 - eta * lam
                gain = eta / decay
                if n > 0:  # (an empty sequence has the one labelling: loss 0, no feature)
                    total += sentence_loss(&c, &self.f, &ws.F, &ws.L, w, decay, ws.te, ws.gte, p0, n, first_order,
                                           self.transitions)
                    sgd_update(&c, &self.f, &ws.F, w, ws.gte, p0, n, first_order, self.transitions, gain)
                t += 1.0
        return total, t, decay, eta

    def loss(self, data, const double[::1] x, const int64_t[::1] order):
        """Sum of -log p(y_j | x_j) over the sequences j of order, at the weights x.
        Releases the GIL."""
        cdef Corpus c = corpus_view(data)
        cdef int S = self.f.S, maxlen, n
        if x.shape[0] != self.size:
            raise ValueError("x must have one entry per feature")
        self.check_order(&c, data, order, &maxlen)
        cdef Work ws
        owner = work_new(&ws, maxlen, S)
        cdef bint first_order = self.f.A1 > 0
        cdef double total = 0.0
        cdef Py_ssize_t i
        cdef int64_t j, p0
        with nogil:
            for i in range(order.shape[0]):
                j = order[i]
                p0 = c.seq_ptr[j]
                n = <int>(c.seq_ptr[j + 1] - p0)
                if n > 0:
                    total += sentence_loss(&c, &self.f, &ws.F, &ws.L, &x[0], 1.0, ws.te, ws.gte, p0, n, first_order,
                                           False)
        return total

    def observed(self, data, double[::1] out, const int32_t[::1] known=None):
        """The feature counts of the gold labels of every sequence, into out (len(x));
        with known (partial labels, known.pxd), of the sequences whose every label is
        known (expected() counts the others). Returns the number of counts that have no
        feature."""
        cdef Corpus c = corpus_view(data)
        cdef int64_t N = len(data.seq_ptr) - 1
        if out.shape[0] != self.size:
            raise ValueError("out must have one entry per feature")
        self.check(&c, data, 0, N)
        cdef int S = self.f.S, T = S + 1, y, v
        cdef int64_t j, p, k, q, missing = 0
        for p in range(c.seq_ptr[N]):
            if not 0 <= c.labels[p] < S:
                raise ValueError(f"position {p} has no gold label")
        if known is not None and known.shape[0] != c.seq_ptr[N]:
            raise ValueError("known labels: one per position")
        cdef const int32_t* K = &known[0] if known is not None and known.shape[0] else NULL
        cdef bint partial
        with nogil:
            for j in range(N):
                partial = False
                if K != NULL:
                    for p in range(c.seq_ptr[j], c.seq_ptr[j + 1]):
                        partial = partial or K[p] < 0
                if partial:
                    continue
                for p in range(c.seq_ptr[j], c.seq_ptr[j + 1]):
                    y = c.labels[p]
                    v = c.labels[p - 1] if p > c.seq_ptr[j] else S
                    for k in range(c.u_ptr[p], c.u_ptr[p + 1]):
                        q = find(self.f.lab0, self.f.ptr0[c.u_ids[k]], self.f.ptr0[c.u_ids[k] + 1], y)
                        if q < 0:
                            missing += 1
                        else:
                            out[q] += c.u_vals[k] if c.u_vals != NULL else 1.0
                    for k in range(b_begin(&c, p), b_begin(&c, p + 1)):
                        q = find(self.f.cell1, self.f.ptr1[c.b_ids[k]], self.f.ptr1[c.b_ids[k] + 1], y * T + v)
                        if q < 0:
                            missing += 1
                        else:
                            out[self.f.off1 + q] += 1.0
                    if self.transitions:
                        out[self.f.offt + y * T + v] += 1.0
                if c.seq_ptr[j + 1] > c.seq_ptr[j]:
                    out[self.f.offe + c.labels[c.seq_ptr[j + 1] - 1]] += 1.0
        return missing

