# Sum-product forward-backward over the score tables of chain.pxd (unary, pair, trans,
# end; the same layout and start/stop conventions as viterbi()), for the CRF's
# likelihood and gradient and for the marginal probabilities of every model:
#
#   p(y | x) = exp(score(y) / T) / Z,   score(y) = sum_i unary[i, y_i]
#              + pair[i, y_i, y_{i-1}] + trans[y_i, y_{i-1}] + end[y_{n-1}]
#
# (y_{-1} = S, the start symbol; T the temperature, 1 for a CRF).
#
# As CRFsuite does (crf1d_context.c), the recursions run in probability space with
# the forward vector scaled to sum 1 at each position (Rabiner 1989, section V.A):
# one multiply-add per label pair, no logsumexp in the inner loop. Each exponent is
# shifted by its row's maximum first, so no exp overflows whatever the scale of the
# scores (the online learners' scores are not log-probabilities). A shifted factor
# that underflows drops its paths, which matters once the kept mass is itself near
# the underflow range, or a backward value overflows where a forward one underflowed
# (scores that differ by more than ~700 along the paths through a position). Both
# are caught: a forward sum too small to hold its dropped terms (kept), or a
# position where sum_y alpha * beta (exactly 1 under this scaling) is off by more
# than 1e-9; the sequence is then redone in log space (fb_log), which cannot fail.
import numpy as np
from libc.stdint cimport int32_t
from libc.math cimport exp, log, fabs, INFINITY, NAN, isfinite


cdef inline bint kept(double z) noexcept nogil:
    # A forward sum's dropped (underflowed) terms are each below ~2.2e-308: against a
    # sum above 1e-250 they change nothing a double holds.
    return z > 1e-250 and isfinite(z)


cdef struct FB:
    # Work space and results for sequences of up to maxlen positions and S labels.
    int S
    double* alpha             # maxlen x S: forward vectors, scaled to sum 1
    double* beta              # maxlen x S: backward vectors, scaled alike
    double* eu                # maxlen x S: exp(unary / T - shift), the start pair included at 0
    double* M                 # maxlen x S x S: exp((pair + trans)[i, y, v] / T - shift), v < S, i > 0,
                              # with 1st-order attributes
    double* Et                # S x S: exp(trans[y, v] / T - trans_shift), v < S, the transitions' factors
    double* MT                # S x S: Et transposed, MT[v, y]
    double* W                 # maxlen x S: w_i[y] = eu_i[y] beta_i[y] / scale_i, for the pair sums
    double* scale             # maxlen: the sum each forward vector was divided by
    double* w                 # S: scratch
    double* P                 # maxlen x S: node marginals p(y_i = y)
    double* PP                # maxlen x S x S: pair marginals p(y_i = y, y_{i-1} = v), i > 0 (want_pairs)
    double* la                # maxlen x S: log-space forward (fb_log)
    double* lb                # maxlen x S: log-space backward (fb_log)
    # The transitions' factors Et are made once per sequence and, where the caller holds
    # the transitions fixed (fixed_trans), once for every sequence: made for trans_of and
    # invT_of, not S^2 exps per sequence (or per position), which cost as much as a short
    # sentence's recursions. Without 1st-order attributes they are the pair factors at
    # every position; with them, a position's factors are Et times exp of its scores.
    bint fixed_trans
    const double* trans_of    # the transitions Et was made of, NULL: none yet
    double invT_of
    double trans_shift


cdef inline tuple fb_new(FB* F, int maxlen, int S):
    """Point F at fresh tables; returns the arrays that own them, for the caller to keep."""
    cdef Py_ssize_t n = max(maxlen, 1)
    arrays = [np.zeros(n * S), np.zeros(n * S), np.zeros(n * S), np.zeros(n * S * S), np.zeros(n),
              np.zeros(S), np.zeros(n * S), np.zeros(n * S * S), np.zeros(n * S), np.zeros(n * S), np.zeros(S * S),
              np.zeros(n * S), np.zeros(S * S)]
    cdef double[::1] a
    cdef double* p[13]
    cdef int k
    for k in range(13):
        a = arrays[k]
        p[k] = &a[0]
    F.S = S
    F.fixed_trans, F.trans_of, F.invT_of, F.trans_shift = False, NULL, 0.0, 0.0
    F.alpha, F.beta, F.eu, F.M, F.scale, F.w, F.P, F.PP, F.la, F.lb = p[0], p[1], p[2], p[3], p[4], p[5], p[6], \
        p[7], p[8], p[9]
    F.MT, F.W, F.Et = p[10], p[11], p[12]
    return tuple(arrays)


cdef inline double dot(const double* a, const double* b, int n) noexcept nogil:
    """sum of a[k] * b[k], in four independent sums (a single chain of adds waits on
    each add's latency: the forward recursion's hot spot)."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef int k = 0
    while k + 4 <= n:
        s0 += a[k] * b[k]
        s1 += a[k + 1] * b[k + 1]
        s2 += a[k + 2] * b[k + 2]
        s3 += a[k + 3] * b[k + 3]
        k += 4
    while k < n:
        s0 += a[k] * b[k]
        k += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double scaled_max(const double* x, double t, int n, double c) noexcept nogil:
    """The largest of c and x[k] * t, k < n, in four independent chains of compares (a
    single chain waits on each compare's latency: with 1st-order attributes, the
    forward recursion's hot spot). The value is that of one chain: a maximum does
    not depend on the order, and an x[k] * t that is NaN is passed over in both."""
    cdef double m0 = c, m1 = c, m2 = c, m3 = c, y
    cdef int k = 0
    while k + 4 <= n:
        y = x[k] * t
        if y > m0:
            m0 = y
        y = x[k + 1] * t
        if y > m1:
            m1 = y
        y = x[k + 2] * t
        if y > m2:
            m2 = y
        y = x[k + 3] * t
        if y > m3:
            m3 = y
        k += 4
    while k < n:
        y = x[k] * t
        if y > m0:
            m0 = y
        k += 1
    if m1 > m0:
        m0 = m1
    if m2 > m0:
        m0 = m2
    if m3 > m0:
        m0 = m3
    return m0


cdef inline void axpy(double* out, const double* x, double c, int n) noexcept nogil:
    """out[k] += x[k] * c."""
    cdef int k
    for k in range(n):
        out[k] += x[k] * c


cdef inline void rows_times(double* out, const double* X, Py_ssize_t stride, const double* c, Py_ssize_t cstride,
                            int m, int n) noexcept nogil:
    """out[k] += sum_j c[j * cstride] X[j * stride + k], j < m, k < n: four rows of X at a
    time, so that out is read and written once per four rows (the loop over k is
    vectorized; a row at a time, its loads and stores of out were the bound)."""
    cdef int j = 0, k
    cdef const double* x0
    cdef const double* x1
    cdef const double* x2
    cdef const double* x3
    cdef double c0, c1, c2, c3
    while j + 4 <= m:
        x0, x1, x2, x3 = X + j * stride, X + (j + 1) * stride, X + (j + 2) * stride, X + (j + 3) * stride
        c0, c1, c2, c3 = c[j * cstride], c[(j + 1) * cstride], c[(j + 2) * cstride], c[(j + 3) * cstride]
        for k in range(n):
            out[k] += (x0[k] * c0 + x1[k] * c1) + (x2[k] * c2 + x3[k] * c3)
        j += 4
    while j < m:
        axpy(out, X + j * stride, c[j * cstride], n)
        j += 1


cdef inline void pair_row(double* out, double* out2, const double* x, const double* a, double c,
                          int n) noexcept nogil:
    """out[k] = a[k] * x[k] * c, a row of pair marginals, and, out2 not NULL, out2[k] += out[k]."""
    cdef int k
    if out2 == NULL:
        for k in range(n):
            out[k] = a[k] * x[k] * c
    else:
        for k in range(n):
            out[k] = a[k] * x[k] * c
            out2[k] += out[k]


cdef inline void fb_pair_sums(FB* F, int start, int stop, double* pair_sum, int stride, double sign) noexcept nogil:
    """Adds sign times the pair marginals of positions start..stop-1, from the tables
    fb_scaled stores, to pair_sum: with 1st-order attributes, its backward pass adds
    each position's (sign 1), and takes them back (-1) when a later check fails."""
    cdef int S = F.S, i, y, v
    cdef double* ap
    cdef double* M
    cdef double* w = F.w
    for i in range(max(start, 1), stop):
        ap = F.alpha + (i - 1) * S
        M = F.M + <Py_ssize_t> i * S * S
        for y in range(S):
            w[y] = sign * F.eu[i * S + y] * F.beta[i * S + y] / F.scale[i]
        for y in range(S):
            for v in range(S):
                pair_sum[y * stride + v] += ap[v] * M[y * S + v] * w[y]


cdef inline void trans_factors(FB* F, const double* trans, double invT) noexcept nogil:
    """F.Et = exp(trans / T - shift) over the pairs v < S, shifted by their maximum, its
    transpose F.MT, and what they were made of (trans_of, invT_of, trans_shift)."""
    cdef int S = F.S, T = S + 1, y, v
    cdef double c = -INFINITY
    for y in range(S):
        c = scaled_max(trans + y * T, invT, S, c)
    for y in range(S):
        for v in range(S):
            F.Et[y * S + v] = exp(trans[y * T + v] * invT - c)
            F.MT[v * S + y] = F.Et[y * S + v]
    F.trans_of, F.invT_of, F.trans_shift = trans, invT, c


cdef inline double fb_scaled(FB* F, const double* unary, const double* pair, const double* trans,
                             const double* end, int n, double invT, bint want_pairs, double* pair_sum,
                             int stride) noexcept nogil:
    """log Z, and the node (and with want_pairs the pair) marginals in F.P (F.PP), of one
    sequence of n > 0 positions; NaN when a scaled vector underflowed (then nothing
    else is valid). pair may be NULL: no 1st-order attributes, the pair scores are the
    transitions alone. pair_sum (may be NULL): the pair marginals of the positions
    i > 0 are added to pair_sum[y * stride + v] (a CRF's expected transition counts)."""
    cdef int S = F.S, T = S + 1, i, y, v
    cdef double logz = 0.0, c, s, z
    cdef double* a
    cdef double* ap
    cdef double* eu
    cdef double* M
    cdef double* b
    cdef double* bn
    cdef double* w = F.w
    cdef double* pp
    cdef const double* pr
    # position 0: unary, start pair and start transition in one exponent
    c = -INFINITY
    for y in range(S):
        s = (unary[y] + (pair[y * T + S] if pair != NULL else 0.0) + trans[y * T + S]) * invT
        F.eu[y] = s
        c = max(c, s)
    z = 0.0
    for y in range(S):
        F.eu[y] = exp(F.eu[y] - c)
        F.alpha[y] = F.eu[y]
        z += F.eu[y]
    if not (z > 0.0 and isfinite(z)):
        return NAN
    for y in range(S):
        F.alpha[y] /= z
    F.scale[0] = z
    logz = c + log(z)
    if n > 1 and not (F.fixed_trans and F.trans_of == trans and F.invT_of == invT):
        trans_factors(F, trans, invT)
    for i in range(1, n):
        eu = F.eu + i * S
        M = F.M + <Py_ssize_t> i * S * S
        a = F.alpha + i * S
        ap = a - S
        c = -INFINITY
        for y in range(S):
            eu[y] = unary[i * S + y] * invT
            c = max(c, eu[y])
        for y in range(S):
            eu[y] = exp(eu[y] - c)
        logz += c
        # the pair factors: the transitions' (F.Et), times, with attributes, exp of the
        # position's 1st-order scores: an exp only where one is not zero
        if pair != NULL:
            c = 0.0
            for y in range(S):
                c = scaled_max(pair + (i * S + y) * T, invT, S, c)
            s = exp(-c)  # (the factor of a zero score)
            for y in range(S):
                pr = pair + (i * S + y) * T
                for v in range(S):
                    M[y * S + v] = F.Et[y * S + v] * (exp(pr[v] * invT - c) if pr[v] != 0.0 else s)
            logz += F.trans_shift + c
        else:
            M = F.Et
            logz += F.trans_shift
        if pair == NULL:
            # a[y] = sum_v ap[v] M[y, v], as rows of MT scaled and added: a loop over y
            # the compiler vectorizes (a sum over v is a chain of adds it may not reorder)
            for y in range(S):
                a[y] = 0.0
            rows_times(a, F.MT, S, ap, 1, S, S)
            for y in range(S):
                a[y] *= eu[y]
        else:
            for y in range(S):
                a[y] = dot(ap, M + y * S, S) * eu[y]
        z = 0.0
        for y in range(S):
            z += a[y]
        if not kept(z):
            return NAN
        for y in range(S):
            a[y] /= z
        F.scale[i] = z
        logz += log(z)
    # the stop scores
    a = F.alpha + (n - 1) * S
    b = F.beta + (n - 1) * S
    c = -INFINITY
    for y in range(S):
        c = max(c, end[y] * invT)
    z = 0.0
    for y in range(S):
        b[y] = exp(end[y] * invT - c)
        z += a[y] * b[y]
    if not kept(z):
        return NAN
    logz += c + log(z)
    for y in range(S):
        b[y] /= z
    # backward, with the marginals: p(y_i = y) = alpha[i, y] beta[i, y], and
    # p(y_i = y, y_{i-1} = v) = alpha[i-1, v] M_i[y, v] eu_i[y] beta[i, y] / scale[i]
    for i in range(n - 1, -1, -1):
        a = F.alpha + i * S
        b = F.beta + i * S
        s = 0.0
        for y in range(S):
            F.P[i * S + y] = a[y] * b[y]
            s += F.P[i * S + y]
        if not fabs(s - 1.0) < 1e-9:
            if pair_sum != NULL and pair != NULL:  # take back what the positions after i added
                fb_pair_sums(F, i + 1, n, pair_sum, stride, -1.0)
            return NAN
        if i == 0:
            break
        eu = F.eu + i * S
        M = F.M + <Py_ssize_t> i * S * S if pair != NULL else F.Et
        ap = a - S
        bn = b - S
        if pair == NULL:
            w = F.W + i * S  # kept for the pair sums after the loop
        for y in range(S):
            w[y] = eu[y] * b[y] / F.scale[i]
        for v in range(S):
            bn[v] = 0.0
        # Rows of M, bn, PP and pair_sum through pointers of their own, over a unit
        # stride: loops the compiler vectorizes (an index y * S + v recomputed in the
        # loop kept them scalar, and this was most of a CRF iteration's time).
        rows_times(bn, M, S, w, 1, S, S)
        # the pair marginals, wanted, or (with 1st-order attributes) for pair_sum: the
        # products of fb_pair_sums
        if want_pairs or (pair_sum != NULL and pair != NULL):
            pp = F.PP + <Py_ssize_t> i * S * S
            for y in range(S):
                pair_row(pp + y * S, pair_sum + <Py_ssize_t> y * stride if pair_sum != NULL and pair != NULL else NULL,
                         M + <Py_ssize_t> y * S, ap, w[y], S)
    if pair_sum != NULL and pair == NULL and n > 1:
        # The same M at every position: sum_i alpha_{i-1}[v] M[y, v] w_i[y] is M[y, v] times
        # sum_i w_i[y] alpha_{i-1}[v], a product of two n x S tables, made once the
        # sequence has passed its checks (nothing to take back), four positions at a time.
        M = F.Et
        w = F.w
        for y in range(S):
            for v in range(S):
                w[v] = 0.0
            rows_times(w, F.alpha, S, F.W + S + y, S, n - 1, S)
            pp = pair_sum + <Py_ssize_t> y * stride
            for v in range(S):
                pp[v] += M[y * S + v] * w[v]
    return logz


cdef inline double logsumexp(const double* x, int n, Py_ssize_t stride) noexcept nogil:
    cdef int k
    cdef double c = -INFINITY, s = 0.0
    for k in range(n):
        c = max(c, x[k * stride])
    if c == -INFINITY:
        return c
    for k in range(n):
        s += exp(x[k * stride] - c)
    return c + log(s)


cdef inline double fb_log(FB* F, const double* unary, const double* pair, const double* trans, const double* end,
                          int n, double invT, bint want_pairs) noexcept nogil:
    """fb_scaled in log space: slower (an exp per label pair), never underflows."""
    cdef int S = F.S, T = S + 1, i, y, v
    cdef double* la = F.la
    cdef double* lb = F.lb
    cdef double* w = F.w
    cdef double* t = F.M  # S x S scratch: a row of terms
    cdef double logz, s
    for y in range(S):
        la[y] = (unary[y] + (pair[y * T + S] if pair != NULL else 0.0) + trans[y * T + S]) * invT
    for i in range(1, n):
        for y in range(S):
            for v in range(S):
                t[v] = la[(i - 1) * S + v] + ((pair[(i * S + y) * T + v] if pair != NULL else 0.0)
                                              + trans[y * T + v]) * invT
            la[i * S + y] = logsumexp(t, S, 1) + unary[i * S + y] * invT
    for y in range(S):
        lb[(n - 1) * S + y] = end[y] * invT
        w[y] = la[(n - 1) * S + y] + lb[(n - 1) * S + y]
    logz = logsumexp(w, S, 1)
    for i in range(n - 1, 0, -1):
        for v in range(S):
            for y in range(S):
                t[y] = lb[i * S + y] + unary[i * S + y] * invT + \
                    ((pair[(i * S + y) * T + v] if pair != NULL else 0.0) + trans[y * T + v]) * invT
            lb[(i - 1) * S + v] = logsumexp(t, S, 1)
    for i in range(n):
        for y in range(S):
            F.P[i * S + y] = exp(la[i * S + y] + lb[i * S + y] - logz)
        if want_pairs and i > 0:
            for y in range(S):
                for v in range(S):
                    s = la[(i - 1) * S + v] + ((pair[(i * S + y) * T + v] if pair != NULL else 0.0)
                                               + trans[y * T + v]) * invT + unary[i * S + y] * invT + lb[i * S + y]
                    F.PP[<Py_ssize_t> i * S * S + y * S + v] = exp(s - logz)
    return logz


cdef inline double forward_backward(FB* F, const double* unary, const double* pair, const double* trans,
                                    const double* end, int n, double invT, bint want_pairs,
                                    double* pair_sum=NULL, int stride=0) noexcept nogil:
    """log Z of one sequence and its marginals in F.P (and F.PP; pair_sum as for
    fb_scaled): fb_scaled, or fb_log where that underflowed. n = 0: log Z = 0 (the
    empty labelling)."""
    cdef double logz
    cdef int i, y, v, S = F.S
    if n == 0:
        return 0.0
    logz = fb_scaled(F, unary, pair, trans, end, n, invT, want_pairs, pair_sum, stride)
    if logz != logz:  # (it failed before adding anything to pair_sum)
        logz = fb_log(F, unary, pair, trans, end, n, invT, want_pairs or pair_sum != NULL)
        if pair_sum != NULL:
            for i in range(1, n):
                for y in range(S):
                    for v in range(S):
                        pair_sum[y * stride + v] += F.PP[<Py_ssize_t> i * S * S + y * S + v]
    return logz


cdef inline double path_score(const double* unary, const double* pair, const double* trans, const double* end,
                              int n, int S, const int32_t* path) noexcept nogil:
    """score(y) of the labelling path[:n] (pair may be NULL)."""
    cdef int i, T = S + 1, y, v
    cdef double s = 0.0
    if n == 0:
        return 0.0
    for i in range(n):
        y = path[i]
        v = path[i - 1] if i > 0 else S
        s += unary[i * S + y] + trans[y * T + v]
        if pair != NULL:
            s += pair[(i * S + y) * T + v]
    return s + end[path[n - 1]]
