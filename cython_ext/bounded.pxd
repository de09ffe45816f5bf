# Exact first-order Viterbi that examines, at each position and label, only the
# previous labels that can still win: bounded search over the previous column sorted
# by score (Esposito & Radicioni 2009, "CarpeDiem: Optimizing the Viterbi Algorithm
# and Applications to Supervised Sequential Learning", JMLR 10; the same bound drives
# Kaji, Fujiwara, Yoshinaga & Kitsuregawa 2010, "Efficient Staggered Decoding for
# Sequence Labeling", ACL).
#
# The recursion is chain.pxd's viterbi():
#     delta[i, y] = unary[i, y] + max over v of (delta[i-1, v] + pair[i, y, v] + trans[y, v])
# With tmax[y] >= max_v trans[y, v] and pmax[i, y] >= max_v pair[i, y, v], every
# candidate v scores at most (delta[i-1, v] + pmax[i, y]) + tmax[y], a bound that falls
# with delta[i-1, v]. So v is taken in decreasing delta[i-1, v] and the scan of label y
# stops at the first v whose bound is below the best score found: no later v can
# reach it, nor tie with it. Floating-point addition is monotone in each operand, so
# the bound, summed in the order viterbi() sums a candidate, holds exactly, and the
# candidates it keeps are summed exactly as viterbi() sums them (without a pair part,
# delta + trans, which equals viterbi()'s (delta + 0) + trans): the same path and the
# same score, bit for bit, with ties to the lowest previous label (a candidate whose
# bound equals the best is still examined, and equal scores go to the lower v).
#
# The previous column is ordered lazily (Carpe Diem sorts it whole): one pass keeps
# its B.top best labels in order and the best score of the others. The best label v0
# goes to every label y at once, in a loop without branches that reads trans[y, v0]
# down a column (transposed, B.transT, so that it reads it in order) and keeps open
# only the scans that the second best score's bound can still reach. Those go on in
# order, and when one gets past the top labels, the others go into a binary max-heap,
# built in O(S) once per position and popped only as deep as the deepest scan goes.
# When one or a few labels dominate each token, as in a trained tagger, a position
# costs a few passes over S labels instead of S^2; when the previous column is flat
# against the spread of the transitions (uniform random scores) the scans run deeper
# and the gain shrinks (see benchmarks/viterbi_labels.py). Where more than B.crowd %
# of the scans stay open the bounds are loose, and with few labels the full search of
# the open labels then costs less. Below B.small labels the full search is faster,
# and viterbi_bounded runs it.
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t, INT64_MAX
from libc.math cimport INFINITY
from chain cimport Lattice, Linear, PathDiff, path_diff, next_diff, viterbi, viterbi_start, viterbi_finish


cdef struct Bounded:
    # What viterbi_bounded reads besides the lattice and the model, and its work space.
    int S
    int top                   # labels kept in order by the pass over the previous column (1..MAX_TOP)
    int small                 # the fewest labels searched by bounds (fewer: the full search)
    int crowd                 # a position where more than crowd % of the labels' scans stay
                              # open after the best previous label searches those in full
    int budget                # and so does one whose scans have examined more than
                              # S^2 / budget candidates (0: never), the labels left
    const double* tmax        # S: tmax[y] >= max over v < S of trans[y, v] (an upper
                              # bound is enough: a learner may keep it loose)
    const double* transT      # S x S: transT[v, y] = trans[y, v] for v < S
    const double* pmax        # maxlen x S: pmax[i, y] >= max over v < S of pair[i, y, v]
                              # for i > 0; NULL: pair is zero at i > 0 and never read
    double* key               # S: the heap of the previous column's other labels (scores)
    int32_t* lab              # S: and its labels
    double* skey              # S: the previous column in decreasing order, as far as known
    int32_t* slab             # S
    int32_t* act              # S: the labels whose scans are open
    uint8_t* mark             # S, zero: the top labels while the heap is built
    double* pwork             # maxlen x S: pass_viterbi's pair bound (pass_search gives it)


# Bounded.top, .small and .crowd by default, and the most labels a pass keeps in
# order. On the score tables of trained taggers (benchmarks/viterbi_labels.py --real)
# two labels in order did best (1 about as well, 8 to 16 up to twice as slow at 47 to
# 59 labels). Searching the open labels in full when more than a quarter are open
# cost the full search's time where the bounds are loose (uniform scores) and saved
# a little on trained taggers' tables up to about 40 labels, but from 64 labels on the
# bounded scans of the open labels cost less even then: crowd is CROWD below
# CROWD_LABELS labels and 100 (never) from there. With it the bounded search beat the
# full one from about 20 labels (CoNLL-2000 chunking, 22 labels: 0.83 of its time)
# and lost below (about 1.2 to 1.4 times its time at 12 to 16 synthetic labels).
# Where most scores tie (an untrained model's, integer scores) every scan runs to the
# end: stopping after S^2 / 8 candidates kept that case at 1.1 to 1.5 times the full
# search's time at 100 labels (2 without), and cost the others at most a few %
# (S^2 / 16: up to 25 %).
cdef enum:
    TOP = 2
    SMALL = 20
    CROWD = 25
    CROWD_LABELS = 48
    BUDGET = 8
    MAX_TOP = 32


cdef inline void trans_row_bound(const double* trans, int S, int y, double* tmax, double* transT) noexcept nogil:
    """tmax[y] = max over v < S of trans[y, v] (the start column S left out), and
    transT[v, y] = trans[y, v] for every v < S."""
    cdef const double* tr = trans + y * (S + 1)
    cdef double best = -INFINITY
    cdef int v
    for v in range(S):
        if tr[v] > best:
            best = tr[v]
        transT[v * S + y] = tr[v]
    tmax[y] = best


cdef inline void trans_row_max(const double* trans, int S, double* tmax, double* transT) noexcept nogil:
    """trans_row_bound of every row."""
    cdef int y
    for y in range(S):
        trans_row_bound(trans, S, y, tmax, transT)


cdef inline void trans_rows_refresh(const double* trans, const int32_t* gold, const int32_t* pred, int n,
                                    const Bounded* B) noexcept nogil:
    """After an update along the places where gold and pred differ (chain.pxd's
    path_diff: the transitions into y_i from y_{i-1} on either path), make tmax and
    transT true again for the rows of trans such an update can have moved: the rows
    of both labels at every differing position, O(S) each instead of trans_row_max's
    O(S^2). (B's arrays are const to the search, and the caller's to refresh.)"""
    cdef PathDiff d = path_diff(gold, pred, n, B.S)
    while next_diff(&d):
        trans_row_bound(trans, B.S, d.g, <double*> B.tmax, <double*> B.transT)
        trans_row_bound(trans, B.S, d.p, <double*> B.tmax, <double*> B.transT)


cdef inline tuple bounded_new(Bounded* B, int S, const double* trans, int top=TOP, int small=SMALL, int crowd=-1,
                              int budget=BUDGET):
    """Point B at the row maxima of trans (S x (S + 1), the start column last), its
    transpose and fresh work space for S labels (no pair bound); returns the arrays
    that own them, for the caller to keep."""
    if not 1 <= top <= MAX_TOP:
        raise ValueError(f"top must be in 1..{MAX_TOP}")
    cdef double[::1] tmax = np.empty(S), key = np.empty(S), skey = np.empty(S), transT = np.empty(S * S)
    cdef int32_t[::1] lab = np.empty(S, dtype=np.int32), act = np.empty(S, dtype=np.int32)
    cdef int32_t[::1] slab = np.empty(S, dtype=np.int32)
    cdef uint8_t[::1] mark = np.zeros(S, dtype=np.uint8)
    trans_row_max(trans, S, &tmax[0], &transT[0])
    B.S, B.top, B.small = S, top, small
    B.crowd = crowd if crowd >= 0 else (CROWD if S < CROWD_LABELS else 100)
    B.budget = budget
    B.tmax, B.pmax, B.transT = &tmax[0], NULL, &transT[0]
    B.key, B.lab, B.skey, B.slab = &key[0], &lab[0], &skey[0], &slab[0]
    B.act, B.mark = &act[0], &mark[0]
    B.pwork = NULL
    return tmax, transT, key, lab, skey, slab, act, mark


cdef inline object pass_search(Bounded* B, Bounded** bp, int S, const double* trans, int bounded_from, int maxlen):
    """For a pass over sequences of up to maxlen positions (a learner's, or a corpus
    decoded): from bounded_from labels, B pointed at the bounds of trans and its work
    space, and *bp = B (else *bp = NULL: the full search). Returns what owns the
    memory, for the caller to keep."""
    bp[0] = NULL
    if S < bounded_from:
        return None
    arrays = bounded_new(B, S, trans, TOP, bounded_from)
    cdef double[:, ::1] pwork = np.zeros((max(maxlen, 1), S))
    B.pwork = &pwork[0, 0]
    bp[0] = B
    return arrays, pwork


cdef inline void pair_row_max(const double* pair, int n, int S, double* pmax) noexcept nogil:
    """pmax[i, y] = max over v < S of pair[i, y, v] for 0 < i < n (row 0 is not read):
    the bound from a dense pair table. It reads the whole table (S^2 per position);
    a caller that scores the pair part from attribute rows can bound it for less, by
    the sum over the position's attributes of their row maxima."""
    cdef int i, y, v, T = S + 1
    cdef double best
    cdef const double* pr
    for y in range(S):
        pmax[y] = 0.0
    for i in range(1, n):
        for y in range(S):
            pr = pair + (i * S + y) * T
            best = -INFINITY
            for v in range(S):
                if pr[v] > best:
                    best = pr[v]
            pmax[i * S + y] = best


cdef inline void sift_down(double* key, int32_t* lab, int j, int size) noexcept nogil:
    """Restore the max-heap order below node j of key[:size] (lab moves along)."""
    cdef double k = key[j]
    cdef int32_t l = lab[j]
    cdef int c
    while True:
        c = 2 * j + 1
        if c >= size:
            break
        if c + 1 < size and key[c + 1] > key[c]:
            c += 1
        if not key[c] > k:
            break
        key[j] = key[c]
        lab[j] = lab[c]
        j = c
    key[j] = k
    lab[j] = l


cdef inline double full_row(const double* prev, const double* pr, const double* tr, int S,
                            int32_t* arg) noexcept nogil:
    """max over v of (prev[v] + pr[v]) + tr[v] (prev[v] + tr[v] when pr is NULL), found
    as viterbi() finds it, and in arg its lowest v (0 when the max is -inf)."""
    cdef double best = -INFINITY, s
    cdef int v
    arg[0] = 0
    if pr != NULL:
        for v in range(S):
            s = (prev[v] + pr[v]) + tr[v]
            if s > best:
                best = s
                arg[0] = v
    else:
        for v in range(S):
            s = prev[v] + tr[v]
            if s > best:
                best = s
                arg[0] = v
    return best


cdef inline double viterbi_bounded(const Lattice* L, const Linear* m, const Bounded* B, int n,
                                   int32_t* out) noexcept nogil:
    """chain.pxd's viterbi() by bounded search (see the top of this file): writes the
    best label sequence to out[:n] and returns its score, both identical to viterbi()'s
    (scores finite or -inf). The start (i = 0) and the end are as in viterbi()."""
    cdef int i, y, j, k, top, size, known, n_act, S = L.S, T = S + 1
    cdef bint pairs = B.pmax != NULL, full = S < B.small, built
    cdef int K = min(max(B.top, 1), S), crowd = B.crowd
    cdef bint crowded
    cdef int64_t work, limit = <int64_t> S * S // B.budget if B.budget > 0 else INT64_MAX
    cdef double best, s, d, d0, d1, rest, bound, pb = 0.0, mt
    cdef int32_t arg, v, v0
    cdef const double* unary = L.unary
    cdef const double* un
    cdef const double* pair = L.pair
    cdef double* delta = L.delta
    cdef int32_t* back = L.back
    cdef const double* trans = m.trans
    cdef const double* tmax = B.tmax
    cdef const double* pm = NULL
    cdef double* key = B.key
    cdef int32_t* lab = B.lab
    cdef double* skey = B.skey
    cdef int32_t* slab = B.slab
    cdef int32_t* act = B.act
    cdef uint8_t* mark = B.mark
    cdef const double* prev
    cdef const double* pi = NULL
    cdef const double* pr = NULL
    cdef const double* tr
    cdef const double* tcol
    cdef double* cur
    cdef int32_t* bk
    if n == 0:
        return 0.0
    viterbi_start(L, m)
    for i in range(1, n):
        prev = delta + (i - 1) * S
        cur = delta + i * S
        bk = back + i * S
        if pairs:
            pi = pair + i * S * T
            pm = B.pmax + i * S
        if full:  # viterbi()'s search (without the pair part when it is zero)
            for y in range(S):
                best = full_row(prev, pi + y * T if pairs else NULL, trans + y * T, S, &arg)
                cur[y] = best + unary[i * S + y]
                bk[y] = arg
            continue
        # the K best of the previous column in decreasing order (skey, slab) and the
        # best of the others (rest)
        top = 0
        rest = -INFINITY
        for v in range(S):
            d = prev[v]
            if top < K:
                j = top
                top += 1
            elif d > skey[K - 1]:
                if skey[K - 1] > rest:
                    rest = skey[K - 1]
                j = K - 1
            else:
                if d > rest:
                    rest = d
                continue
            while j > 0 and skey[j - 1] < d:
                skey[j] = skey[j - 1]
                slab[j] = slab[j - 1]
                j -= 1
            skey[j] = d
            slab[j] = v
        # the best previous label to every label (a scan at -inf with label 0 takes it
        # when it scores more than -inf): final unless the next score's bound reaches
        # it, and then the label's scan is open
        d0, v0 = skey[0], slab[0]
        d1 = skey[1] if top > 1 else rest
        tcol = B.transT + v0 * S
        un = unary + i * S
        n_act = 0
        if pairs:
            for y in range(S):
                s = (d0 + pi[y * T + v0]) + tcol[y]
                cur[y] = s + un[y]
                bk[y] = v0 if s > -INFINITY else 0
                bound = (d1 + pm[y]) + tmax[y]
                act[n_act] = y
                n_act += bound >= s and bound != -INFINITY
        else:
            for y in range(S):
                s = d0 + tcol[y]
                cur[y] = s + un[y]
                bk[y] = v0 if s > -INFINITY else 0
                bound = d1 + tmax[y]
                act[n_act] = y
                n_act += bound >= s and bound != -INFINITY
        # the open scans, candidates best first while their bound (summed as a
        # candidate is summed) reaches the best score found; ties to the lower label
        built = False
        known = top
        size = 0
        # where most scans are open (crowd), or once the scans have examined more
        # than S^2 / budget candidates, the bounds are loose here: the full search of
        # the open labels costs less than sorting the column for them
        crowded = n_act * 100 > crowd * S
        work = 0
        for j in range(n_act):
            y = act[j]
            tr = trans + y * T
            mt = tmax[y]
            if pairs:
                pr = pi + y * T
                pb = pm[y]
            if crowded or work > limit:
                best = full_row(prev, pr if pairs else NULL, tr, S, &arg)
                cur[y] = best + un[y]
                bk[y] = arg
                continue
            best = (d0 + pr[v0]) + tr[v0] if pairs else d0 + tr[v0]  # as above
            arg = bk[y]
            k = 1
            while True:
                if k == known:
                    if k == S:
                        break
                    if not built:
                        # the others, past the top: stop unless their best reaches
                        bound = (rest + pb) + mt if pairs else rest + mt
                        if not bound >= best or bound == -INFINITY:
                            break
                        built = True
                        for k in range(top):
                            mark[slab[k]] = 1
                        size = 0
                        for v in range(S):
                            if mark[v]:
                                mark[v] = 0
                            else:
                                key[size] = prev[v]
                                lab[size] = v
                                size += 1
                        for k in range(size // 2 - 1, -1, -1):
                            sift_down(key, lab, k, size)
                        k = known
                    skey[known] = key[0]
                    slab[known] = lab[0]
                    known += 1
                    size -= 1
                    if size > 0:
                        key[0] = key[size]
                        lab[0] = lab[size]
                        sift_down(key, lab, 0, size)
                d = skey[k]
                bound = (d + pb) + mt if pairs else d + mt
                if not bound >= best or bound == -INFINITY:
                    break
                v = slab[k]
                s = (d + pr[v]) + tr[v] if pairs else d + tr[v]
                if s > best or (s == best and v < arg):
                    best = s
                    arg = v
                k += 1
            work += k
            cur[y] = best + un[y]
            bk[y] = arg
    return viterbi_finish(L, m, n, out)


cdef inline void pair_bound(Bounded* B, const Lattice* L, bint filled, int n) noexcept nogil:
    """B's bound on the pair part of a sequence of n positions (B from pass_search):
    taken from its table when the sequence filled it, none when not (the table is
    zero past the start, score_pair_linear's or score_tables' lazy)."""
    B.pmax = NULL
    if filled:
        pair_row_max(L.pair, n, B.S, B.pwork)
        B.pmax = B.pwork


cdef inline double pass_viterbi(const Lattice* L, const Linear* m, Bounded* B, bint filled, int n,
                                int32_t* out) noexcept nogil:
    """The best path in a learner's pass: viterbi() when B is NULL, else the same path
    by viterbi_bounded (B from pass_search), bounding the pair part from the table when
    the sequence filled it (filled) and leaving it out when not (the table is zero
    past the start, chain.pxd's score_pair_linear with lazy)."""
    if B == NULL:
        return viterbi(L, m, n, out)
    pair_bound(B, L, filled, n)
    return viterbi_bounded(L, m, B, n, out)
