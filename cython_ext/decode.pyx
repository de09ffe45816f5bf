"""Corpus decoding with the linear (eq. 2) and bilinear (eq. 1) first-order models:
the best path (Viterbi), the K best paths (list Viterbi), max-marginal margins and
marginal probabilities (sum-product forward-backward, fb.pxd)."""
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.math cimport INFINITY
from libc.stdlib cimport qsort
from chain cimport Corpus, Linear, Lattice, corpus_view, linear_view, lattice_new, viterbi, SEQBIL_PREFETCH
from fb cimport FB, fb_new, fb_log, fb_scaled, forward_backward, path_score
from known cimport Known, known_view, force
from bounded cimport (Bounded, bounded_new, pass_search, pass_viterbi, pair_bound, viterbi_bounded, pair_row_max,
                     TOP, SMALL, BUDGET)


DEF HEADS_AHEAD = 3
DEF CELLS_AHEAD = 2


cdef struct Rows:
    # Weight rows over attributes (seqbil/storage.py). As (cell, value) pairs: the
    # cells of row a are idx[ptr[a]:ptr[a + 1]]; dense (ptr and idx NULL): row a is
    # val[a * width:(a + 1) * width]. Values in val32 or val64 (the other is NULL).
    const int64_t* ptr
    const int32_t* idx
    const float* val32
    const double* val64
    int64_t n_rows
    int64_t nnz               # cells (pairs), or n_rows * width (dense)
    int width


cdef struct Weights:
    # A model as decoding reads it: dense trans and end (in m), the 0-order rows and
    # the 1st-order rows of either form (W1 cells of the linear model, or the alpha |
    # beta cells of the bilinear one).
    Linear m
    Rows w0
    Rows w1
    bint bilinear
    bint sums32  # each position's 0-order sum rounded to float32 after every term (CRF++'s binary models)


cdef Rows rows_view(rows, int width) except *:
    """The arrays of a storage.Rows; they stay valid while the caller holds it."""
    cdef const int64_t[::1] ptr
    cdef const int32_t[::1] idx
    cdef const float[::1] v32
    cdef const double[::1] v64
    cdef Rows r
    if rows.width != width:
        raise ValueError("sparse weights do not fit the model")
    flat = rows.val.reshape(-1)
    r.ptr, r.idx, r.n_rows, r.nnz, r.width = NULL, NULL, rows.n_rows, flat.shape[0], width
    if not rows.dense:
        ptr, idx = rows.ptr, rows.idx
        if ptr.shape[0] < 1 or flat.shape[0] != idx.shape[0]:
            raise ValueError("sparse weights are inconsistent")
        r.ptr, r.idx = &ptr[0], &idx[0]
    elif rows.val.ndim != 2 or rows.val.shape[1] != width:
        raise ValueError("dense weights are inconsistent")
    r.val32, r.val64 = NULL, NULL
    if flat.dtype == np.float32:
        v32 = flat
        r.val32 = &v32[0]
    else:
        v64 = flat
        r.val64 = &v64[0]
    return r


def as_store(weights):
    """Decoding weights as a storage.Store; dense blocks (a dict of W0, and W1 or
    alpha and beta, trans and end, as the learners hold them) are converted at
    float64, exactly."""
    from seqbil.storage import Store, sparse_weights
    if isinstance(weights, Store):
        return weights
    S = weights["end"].shape[0]
    return sparse_weights("linear" if "W1" in weights else "bilinear", weights, S, "float64")


cdef Weights weights_view(store) except *:
    """The arrays of a storage.Store (see decode_corpus); they stay valid while the
    caller holds the store."""
    cdef Weights w
    cdef int S
    end = store.end
    S = end.shape[0]
    w.m = linear_view(np.zeros((0, S)), store.trans, end, None, None, None, False, False)
    w.bilinear = store.bilinear
    w.sums32 = store.sums32
    w.w0 = rows_view(store.w0, S)
    w.w1 = rows_view(store.w1, 2 * S + 1) if w.bilinear else rows_view(store.w1, S * (S + 1))
    if (w.w0.val32 == NULL) != (w.w1.val32 == NULL):
        raise ValueError("the weight blocks have different precisions")
    return w


cdef inline bint row_bounds(const Rows* r, int32_t a, int64_t* lo, int64_t* hi) noexcept nogil:
    """The cells of row a (positions in idx and val); False for a row outside the
    arrays (a damaged model file read without checking its checksum): it is skipped."""
    if a < 0 or a >= r.n_rows:
        return False
    if r.ptr == NULL:
        lo[0] = <int64_t> a * r.width
        hi[0] = lo[0] + r.width
        return True
    lo[0] = r.ptr[a]
    hi[0] = r.ptr[a + 1]
    return 0 <= lo[0] <= hi[0] <= r.nnz


cdef inline void prefetch_rows_of(const Rows* r, const int32_t* ids, const int64_t* ptr, int64_t p,
                                  bint heads) noexcept nogil:
    """Ask the cache for what scoring position p will read: the row pointers (heads),
    or the cells themselves (once the pointers are in)."""
    cdef int64_t k, lo
    cdef int32_t a
    for k in range(ptr[p], ptr[p + 1]):
        a = ids[k]
        if a < 0 or a >= r.n_rows:
            continue
        if heads and r.ptr != NULL:
            SEQBIL_PREFETCH(r.ptr + a)
            continue
        if heads or r.ptr == NULL:
            lo = <int64_t> a * r.width
        else:
            lo = r.ptr[a]
            if lo < 0 or lo >= r.nnz:
                continue
            SEQBIL_PREFETCH(r.idx + lo)
        if r.val32 != NULL:
            SEQBIL_PREFETCH(r.val32 + lo)
        else:
            SEQBIL_PREFETCH(r.val64 + lo)


ctypedef fused real:
    float
    double


cdef inline bint score_rows(const Corpus* c, const Weights* w, const Lattice* L, int64_t p0, int n,
                            const real* v0, const real* v1, bint lazy) noexcept nogil:
    """score_tables for weights of one floating-point type (v0, v1: the values of w.w0, w.w1)."""
    cdef int i, S = L.S, T = S + 1, y, v
    cdef int64_t k, q, r, lo, hi, split
    cdef int j
    cdef double x, ay
    cdef double acc[20]
    cdef double* out
    cdef const real* row
    cdef const Rows* w0 = &w.w0
    cdef const Rows* w1 = &w.w1
    cdef int block = S * T
    cdef bint pairs = not lazy or c.b_ptr[p0 + n] > c.b_ptr[p0]
    if not pairs:  # no 1st-order attribute in the sequence: the start column alone
        for y in range(S):
            L.pair[y * T + S] = 0.0
    for i in range(min(n, HEADS_AHEAD)):
        prefetch_rows_of(w1, c.b_ids, c.b_ptr, p0 + i, True)
        prefetch_rows_of(w0, c.u_ids, c.u_ptr, p0 + i, True)
    for i in range(min(n, CELLS_AHEAD)):
        prefetch_rows_of(w1, c.b_ids, c.b_ptr, p0 + i, False)
        prefetch_rows_of(w0, c.u_ids, c.u_ptr, p0 + i, False)
    for i in range(n):
        if i + HEADS_AHEAD < n:
            prefetch_rows_of(w1, c.b_ids, c.b_ptr, p0 + i + HEADS_AHEAD, True)
            prefetch_rows_of(w0, c.u_ids, c.u_ptr, p0 + i + HEADS_AHEAD, True)
        if i + CELLS_AHEAD < n:
            prefetch_rows_of(w1, c.b_ids, c.b_ptr, p0 + i + CELLS_AHEAD, False)
            prefetch_rows_of(w0, c.u_ids, c.u_ptr, p0 + i + CELLS_AHEAD, False)
        out = L.unary + i * S
        for j in range(S):
            out[j] = 0.0
        for k in range(c.u_ptr[p0 + i], c.u_ptr[p0 + i + 1]):
            if not row_bounds(w0, c.u_ids[k], &lo, &hi):
                continue
            x = c.u_vals[k] if c.u_vals != NULL else 1.0
            if w.sums32:  # a float32 sum, as CRF++ adds the weights of a node's features (float c += alpha[f])
                for q in range(lo, hi):
                    j = (q - lo) if w0.ptr == NULL else w0.idx[q]
                    if 0 <= j < S:
                        out[j] = <float>(out[j] + x * v0[q])  # (double rounding is exact here: 53 > 2 * 24 + 1)
            elif w0.ptr == NULL:
                for j in range(S):
                    out[j] += x * v0[lo + j]
            else:
                for q in range(lo, hi):
                    j = w0.idx[q]
                    if 0 <= j < S:
                        out[j] += x * v0[q]
        if not pairs:
            continue
        out = L.pair + i * block
        if w.bilinear and w1.ptr == NULL and S == 4:
            # dense alpha | beta with four labels (B/I/E/S): the 4 x 5 sum in registers
            for j in range(20):
                acc[j] = 0.0
            for k in range(c.b_ptr[p0 + i], c.b_ptr[p0 + i + 1]):
                if row_bounds(w1, c.b_ids[k], &lo, &hi):
                    row = v1 + lo
                    for y in range(4):
                        for v in range(5):
                            acc[y * 5 + v] += row[y] * row[4 + v]
            for j in range(20):
                out[j] = acc[j]
            continue
        for j in range(block):
            out[j] = 0.0
        for k in range(c.b_ptr[p0 + i], c.b_ptr[p0 + i + 1]):
            if not row_bounds(w1, c.b_ids[k], &lo, &hi):
                continue
            if not w.bilinear:
                if w1.ptr == NULL:
                    for j in range(block):
                        out[j] += v1[lo + j]
                else:
                    for q in range(lo, hi):
                        j = w1.idx[q]
                        if 0 <= j < block:
                            out[j] += v1[q]
            elif w1.ptr == NULL:  # dense alpha | beta
                row = v1 + lo
                for y in range(S):
                    ay = row[y]
                    for v in range(T):
                        out[y * T + v] += ay * row[S + v]
            else:  # cells ascend: alpha's (j < S) before beta's (j >= S)
                split = lo
                while split < hi and w1.idx[split] < S:
                    split += 1
                for q in range(lo, split):
                    j = w1.idx[q]
                    if j < 0:
                        continue
                    ay = v1[q]
                    for r in range(split, hi):
                        if 0 <= w1.idx[r] - S < T:
                            out[j * T + w1.idx[r] - S] += ay * v1[r]

    return pairs


cdef inline bint score_tables(const Corpus* c, const Weights* w, const Lattice* L, int64_t p0,
                              int n, bint lazy=False) noexcept nogil:
    """unary and pair tables of the sequence at positions p0:p0 + n from the weight rows:
    unary[i, y] = sum of x * W0[a, y] over the 0-order entries (a, x) at i; pair[i, y, v]
    = sum of W1[a, y, v] (eq. 2) or of alpha[a, y] * beta[a, v] (eq. 1) over the
    1st-order attributes at i. Scoring waits on memory, not arithmetic: the rows of
    position i + 2 are asked for ahead. lazy: a sequence without 1st-order attributes
    gets the start column of pair alone (pair[0, y, S] = 0), for a decoder that then
    reads no more of it; returns whether pair was filled."""
    if w.w0.val32 != NULL:
        return score_rows(c, w, L, p0, n, w.w0.val32, w.w1.val32, lazy)
    return score_rows(c, w, L, p0, n, w.w0.val64, w.w1.val64, lazy)


cdef int longest(Corpus* c, Py_ssize_t N) noexcept:
    cdef Py_ssize_t j
    cdef int maxlen = 1
    for j in range(N):
        maxlen = max(maxlen, <int>(c.seq_ptr[j + 1] - c.seq_ptr[j]))
    return maxlen


def viterbi_best(const double[:, ::1] unary, const double[:, :, ::1] pair, const double[:, ::1] trans,
                 const double[::1] end):
    """Best path and score for one sequence of score tables (see chain.pxd for the layout)."""
    cdef int n = unary.shape[0], S = unary.shape[1]
    check_tables(unary, pair, trans, end)
    out = np.zeros(n, dtype=np.int32)
    cdef int32_t[::1] path = out
    cdef Lattice L
    work = lattice_new(&L, max(n, 1), S)
    L.unary, L.pair = <double*> &unary[0, 0], <double*> &pair[0, 0, 0]  # read only
    cdef Linear m = linear_view(np.zeros((0, S)), trans, end, None, None, None, False, False)
    cdef double best = viterbi(&L, &m, n, &path[0])
    return out, best


def viterbi_bounded_best(const double[:, ::1] unary, const double[:, :, ::1] pair, const double[:, ::1] trans,
                         const double[::1] end, bint pairs=True, int top=TOP, int small=SMALL,
                         int crowd=-1, int budget=BUDGET):
    """viterbi_best by bounded search (bounded.pxd): the same path and score. pairs:
    whether pair is read (its bound taken from the table itself); without it pair
    must be zero at i > 0 and only its start column is read. top, small, crowd, budget:
    Bounded's (small=1: the bounded search at any number of labels; crowd=100: never
    the full search of the open labels for crowding, -1: its default for S labels;
    budget=0: never for work)."""
    cdef int n = unary.shape[0], S = unary.shape[1]
    check_tables(unary, pair, trans, end)
    out = np.zeros(n, dtype=np.int32)
    cdef int32_t[::1] path = out
    cdef Lattice L
    work = lattice_new(&L, 1, S)
    cdef double[:, ::1] delta = np.zeros((max(n, 1), S))
    cdef int32_t[:, ::1] back = np.zeros((max(n, 1), S), dtype=np.int32)
    L.unary, L.pair = <double*> &unary[0, 0], <double*> &pair[0, 0, 0]  # read only
    L.delta, L.back = &delta[0, 0], &back[0, 0]
    cdef Bounded B
    arrays = bounded_new(&B, S, &trans[0, 0], top, small, crowd, budget)
    cdef double[:, ::1] pmax = np.zeros((max(n, 1), S))
    if pairs:
        pair_row_max(&pair[0, 0, 0], n, S, &pmax[0, 0])
        B.pmax = &pmax[0, 0]
    cdef Linear m = linear_view(np.zeros((0, S)), trans, end, None, None, None, False, False)
    cdef double best = viterbi_bounded(&L, &m, &B, n, &path[0])
    return out, best


def viterbi_tables(const double[:, ::1] unary, const int64_t[::1] seq_ptr, const double[:, ::1] trans,
                   const double[::1] end, int32_t[::1] out, double[::1] scores, bint bounded,
                   const double[:, :, ::1] pair=None, int top=TOP, int small=SMALL, int crowd=-1,
                   int budget=BUDGET):
    """Decode sequences of score tables (benchmarks/viterbi_labels.py): sequence j has
    the unary rows seq_ptr[j]:seq_ptr[j + 1]; pair (maxlen x S x (S + 1)) is shared by
    every sequence, zero when None. Writes each path to out and its score to scores.
    bounded: viterbi_bounded (without pair, the pair part is never read), else viterbi
    (reading a zero pair table, as the full search does for a model with `B` alone);
    top, small, crowd, budget: as viterbi_bounded_best's."""
    cdef int S = unary.shape[1], n
    cdef Py_ssize_t j, N = seq_ptr.shape[0] - 1
    cdef int maxlen = 1
    for j in range(N):
        maxlen = max(maxlen, <int>(seq_ptr[j + 1] - seq_ptr[j]))
    if trans.shape[0] != S or trans.shape[1] != S + 1 or end.shape[0] != S or out.shape[0] != unary.shape[0] \
            or scores.shape[0] != N or seq_ptr[N] != unary.shape[0] or (pair is not None and (
            pair.shape[0] < maxlen or pair.shape[1] != S or pair.shape[2] != S + 1)):
        raise ValueError("score tables have inconsistent shapes")
    cdef Lattice L
    work = lattice_new(&L, maxlen, S)
    if pair is not None:
        L.pair = <double*> &pair[0, 0, 0]  # read only
    elif not bounded:
        np.asarray(work[1])[...] = 0.0  # written, as scoring writes it: not calloc's shared zero pages
    cdef Bounded B
    arrays = bounded_new(&B, S, &trans[0, 0], top, small, crowd, budget)
    cdef double[:, ::1] pmax = np.zeros((maxlen, S))
    if pair is not None:
        pair_row_max(L.pair, maxlen, S, &pmax[0, 0])
        B.pmax = &pmax[0, 0]
    cdef Linear m = linear_view(np.zeros((0, S)), trans, end, None, None, None, False, False)
    cdef const double* base = &unary[0, 0]
    with nogil:
        for j in range(N):
            n = <int>(seq_ptr[j + 1] - seq_ptr[j])
            L.unary = <double*> (base + seq_ptr[j] * S)
            if bounded:
                scores[j] = viterbi_bounded(&L, &m, &B, n, &out[seq_ptr[j]])
            else:
                scores[j] = viterbi(&L, &m, n, &out[seq_ptr[j]])


cdef Corpus csr_corpus(data) except *:
    """corpus_view of data encoded for tagging, whose 1st-order ids are always CSR."""
    cdef Corpus c = corpus_view(data)
    if c.b_ptr == NULL:
        raise ValueError("decoding reads the 1st-order attributes by b_ptr")
    return c


def decode_corpus(data, weights, int32_t[::1] out, const int32_t[::1] known=None,
                  const uint8_t[:, ::1] sets=None):
    """Viterbi-decode every sequence of an encoded Dataset into out (one label id per
    position). weights: a storage.Store (the sparse rows of W0 and of W1, or of a
    bilinear model's AB; trans and end dense float64), or the dense blocks (as_store).
    known: a label id per position, kept (forced decoding), -1 (free) or -2 - r, one
    of the labels of row r of sets (known.pxd)."""
    cdef Corpus c = csr_corpus(data)
    weights = as_store(weights)
    cdef Weights w = weights_view(weights)
    cdef Known K = known_view(data, known, sets, w.m.S)
    cdef Py_ssize_t j, N = len(data.seq_ptr) - 1
    cdef Lattice L
    cdef int maxlen = longest(&c, N), S = w.m.S
    work = lattice_new(&L, maxlen, S)
    cdef int64_t p0
    cdef int n
    # from SMALL labels on, the bounded search (bounded.pxd): the same paths, most pairs
    # of labels never scored; its bound on the pair part is taken from each table
    cdef Bounded B
    cdef Bounded* bp
    cdef bint filled
    search = pass_search(&B, &bp, S, w.m.trans, SMALL, maxlen)
    with nogil:
        for j in range(N):
            p0 = c.seq_ptr[j]
            n = <int>(c.seq_ptr[j + 1] - p0)
            filled = score_tables(&c, &w, &L, p0, n, bp != NULL)
            force(&L, &K, p0, n)
            pass_viterbi(&L, &w.m, bp, filled, n, &out[p0])


# --- the K best paths -----------------------------------------------------------------

cdef struct KBest:
    # List-Viterbi work space for sequences of up to maxlen positions: the K best
    # partial paths ending in each (position, label), best first.
    int K
    double* score             # maxlen x S x K: score of the r-th best path ending in (i, y)
    int32_t* prev             # maxlen x S x K: its label at i - 1
    int32_t* rank             # maxlen x S x K: that prefix's rank among the paths ending in (i - 1, prev)
    int32_t* count            # maxlen x S: how many of the K exist (fewer than K near the start)
    int32_t* head             # S: merge cursors


cdef struct Ranked:
    # A previous label and its best partial score, for the bounded list Viterbi
    double key
    int32_t label


cdef int ranked_desc(const void* a, const void* b) noexcept nogil:
    """qsort's order of Ranked: the greater key first."""
    cdef double x = (<const Ranked*> a).key, y = (<const Ranked*> b).key
    return (x < y) - (x > y)


cdef inline bint ahead(double s, int v, int h, double s2, int v2, int h2) noexcept nogil:
    """Whether candidate (score s, previous label v, its rank h) comes before (s2, v2,
    h2) in kbest's merge: the greater score, then the lower label, then the better rank
    (merge_next takes the first strict maximum over the labels' sorted lists; with
    every score left -inf, the lowest label)."""
    return s > s2 or (s == s2 and (v < v2 or (v == v2 and h < h2)))


cdef void kbest_column_bounded(const Lattice* L, const Linear* m, const KBest* B, const Bounded* D, Ranked* order,
                               int i) noexcept nogil:
    """kbest's lists of position i (score, prev, rank, count) by bounded search: the
    same lists, bit for bit. The previous labels are taken by their best partial
    score, best first; every candidate of label v scores at most that score + the
    pair bound (D.pmax, NULL: no pair part past the start) + D.tmax[y] (summed as a
    candidate is summed: bounded.pxd), so once a label's bound is below the K-th
    candidate kept, no later label can enter the list. Within a label the candidates
    come sorted: its scan stops at the first that does not enter."""
    cdef int y, j, v, h, r, filled, S = L.S, T = S + 1, K = B.K
    cdef bint pairs = D.pmax != NULL
    cdef double s, d, bound, pb = 0.0, mt
    cdef const double* sprev = B.score + <Py_ssize_t> (i - 1) * S * K
    cdef const int32_t* cprev = B.count + (i - 1) * S
    cdef const double* pi = L.pair + <Py_ssize_t> i * S * T
    cdef const double* pr = NULL
    cdef const double* tr
    cdef const double* un = L.unary + i * S
    cdef double* score
    cdef int32_t* prev
    cdef int32_t* rank
    for v in range(S):
        order[v].key = sprev[v * K]
        order[v].label = v
    qsort(order, S, sizeof(Ranked), ranked_desc)
    for y in range(S):
        tr = m.trans + y * T
        mt = D.tmax[y]
        if pairs:
            pr = pi + y * T
            pb = D.pmax[i * S + y]
        score = B.score + (<Py_ssize_t> i * S + y) * K
        prev = B.prev + (<Py_ssize_t> i * S + y) * K
        rank = B.rank + (<Py_ssize_t> i * S + y) * K
        filled = 0
        for j in range(S):
            d, v = order[j].key, order[j].label
            bound = (d + pb) + mt if pairs else d + mt
            if filled == K and bound < score[K - 1]:
                break
            for h in range(cprev[v]):
                s = (sprev[v * K + h] + pr[v]) + tr[v] if pairs else sprev[v * K + h] + tr[v]
                if filled == K and not ahead(s, v, h, score[K - 1], prev[K - 1], rank[K - 1]):
                    break  # (the label's later candidates score no more)
                r = filled if filled < K else K - 1
                while r > 0 and ahead(s, v, h, score[r - 1], prev[r - 1], rank[r - 1]):
                    score[r], prev[r], rank[r] = score[r - 1], prev[r - 1], rank[r - 1]
                    r -= 1
                score[r], prev[r], rank[r] = s, v, h
                if filled < K:
                    filled += 1
        for r in range(filled):
            score[r] = score[r] + un[y]
        B.count[i * S + y] = filled


cdef tuple kbest_new(KBest* B, int maxlen, int S, int K):
    """Point B at fresh tables; returns the arrays that own them, for the caller to keep."""
    cdef Py_ssize_t size = <Py_ssize_t> maxlen * S * K
    cdef double[::1] score = np.zeros(size)
    cdef int32_t[::1] prev = np.zeros(size, dtype=np.int32)
    cdef int32_t[::1] rank = np.zeros(size, dtype=np.int32)
    cdef int32_t[::1] count = np.zeros(maxlen * S, dtype=np.int32)
    cdef int32_t[::1] head = np.zeros(S, dtype=np.int32)
    B.K = K
    B.score, B.prev, B.rank, B.count, B.head = &score[0], &prev[0], &rank[0], &count[0], &head[0]
    return score, prev, rank, count, head


cdef inline int merge_next(const double* sprev, const int32_t* cprev, const int32_t* head, const double* a,
                           const double* b, int S, int K, double* best) noexcept nogil:
    """One step of kbest's merge of the K-best lists of the previous labels: the label
    v whose next candidate, sprev[v * K + head[v]] + a[v] (+ b[v] unless b is NULL,
    summed in that order, as viterbi() sums), is the best, with that score in best;
    -1 when every list is used up. Each list is sorted, so its next candidate is at
    its cursor (head); as in viterbi(), the first strict maximum wins and -inf loses
    to nothing (then the lowest label with a candidate left)."""
    cdef int v, arg = -1
    cdef double s
    best[0] = -INFINITY
    for v in range(S):
        if head[v] < cprev[v]:
            s = sprev[v * K + head[v]] + a[v]
            if b != NULL:
                s = s + b[v]
            if s > best[0]:
                best[0] = s
                arg = v
    if arg < 0:
        for v in range(S):
            if head[v] < cprev[v]:
                return v
    return arg


cdef int kbest(const Lattice* L, const Linear* m, const KBest* B, int n, int32_t* paths, Py_ssize_t stride,
               double* scores, const Bounded* D=NULL, Ranked* order=NULL) noexcept nogil:
    """The K best label sequences of one sequence of score tables, by list Viterbi
    (Seshadri & Sundberg 1994, the parallel list Viterbi algorithm; Nilsson &
    Goldberger 2001 give the same list by other means): each (position, label) keeps
    its K best partial paths, the merge of the K best of every previous label.

    Writes path r to paths[r * stride:r * stride + n] and its score to scores[r], best
    first, and returns how many there are: min(K, S ** n). A score is accumulated
    exactly as viterbi() accumulates it, and ties go as viterbi() breaks them (lower
    label at the last position, then at the one before, ...; among equal partial
    scores, the lower previous label, then the better-ranked prefix), so path 0 is
    viterbi()'s path with viterbi()'s score, bit for bit.

    D (and order, S Ranked of work space): the lists of each position past the first
    by kbest_column_bounded, the same lists.
    """
    cdef int i, y, v, r, h, arg, filled, found, S = L.S, T = S + 1, K = B.K
    cdef double best
    cdef const double* unary = L.unary
    cdef const double* pair = L.pair
    cdef const double* trans = m.trans
    cdef const double* end = m.end
    cdef const double* pr
    cdef const double* tr
    cdef const double* sprev
    cdef const int32_t* cprev
    cdef double* score = B.score
    cdef int32_t* prev = B.prev
    cdef int32_t* rank = B.rank
    cdef int32_t* count = B.count
    cdef int32_t* head = B.head
    cdef int32_t* out
    cdef Py_ssize_t at
    if n == 0:
        scores[0] = 0.0  # one path, the empty one
        return 1
    for y in range(S):
        score[y * K] = unary[y] + pair[y * T + S] + trans[y * T + S]
        prev[y * K] = S
        rank[y * K] = 0
        count[y] = 1
    for i in range(1, n):
        if D != NULL:
            kbest_column_bounded(L, m, B, D, order, i)
            continue
        sprev = score + <Py_ssize_t> (i - 1) * S * K
        cprev = count + (i - 1) * S
        for y in range(S):
            pr = pair + (i * S + y) * T
            tr = trans + y * T
            at = (<Py_ssize_t> i * S + y) * K
            for v in range(S):
                head[v] = 0
            filled = 0
            for r in range(K):
                arg = merge_next(sprev, cprev, head, pr, tr, S, K, &best)
                if arg < 0:
                    break  # fewer than K paths end here
                score[at + r] = best + unary[i * S + y]
                prev[at + r] = arg
                rank[at + r] = head[arg]
                head[arg] += 1
                filled += 1
            count[i * S + y] = filled
    # the K best of the complete paths, merged over the last label
    cprev = count + (n - 1) * S
    sprev = score + <Py_ssize_t> (n - 1) * S * K
    for y in range(S):
        head[y] = 0
    found = 0
    for r in range(K):
        arg = merge_next(sprev, cprev, head, end, NULL, S, K, &best)
        if arg < 0 or (best == -INFINITY and r > 0):
            break  # (-inf: a labelling that forced or task-bound labels rule out, not a path)
        scores[r] = best
        out = paths + r * stride
        y = arg
        h = head[arg]
        head[arg] += 1
        out[n - 1] = y
        for i in range(n - 1, 0, -1):
            at = (<Py_ssize_t> i * S + y) * K + h
            out[i - 1] = prev[at]
            h = rank[at]
            y = out[i - 1]
        found = r + 1
    return found


def nbest_rows(int S, int maxlen, int k):
    """min(k, S ** maxlen): how many paths sequences of up to maxlen positions can have
    among the k asked for (the rows nbest_corpus needs)."""
    cdef int i
    cdef int64_t total = 1
    for i in range(maxlen):
        total *= S
        if total >= k:
            return k
    return <int> total


def nbest_corpus(data, weights, int k, int32_t[:, ::1] paths, double[:, ::1] scores, int32_t[::1] counts,
                 const int32_t[::1] known=None, const uint8_t[:, ::1] sets=None, int small=SMALL):
    """The k best paths of every sequence of an encoded Dataset (see kbest): path r of
    sequence j goes to paths[r, seq_ptr[j]:seq_ptr[j + 1]] and its score to
    scores[j, r], best first; counts[j] = how many there are, min(k, S ** length); the
    rest of row j is left as it was. paths needs nbest_rows(S, longest sequence, k)
    rows and scores as many columns, which is also the K of the work space. weights as
    for decode_corpus; paths[0] is decode_corpus's output. known: as for decode_corpus
    (the paths are those that keep the known labels; fewer when fewer do). From small
    labels on, the lists by bounded search (kbest_column_bounded): the same lists."""
    cdef Corpus c = csr_corpus(data)
    weights = as_store(weights)
    cdef Weights w = weights_view(weights)
    cdef Known K = known_view(data, known, sets, w.m.S)
    cdef Py_ssize_t j, N = len(data.seq_ptr) - 1
    if k < 1:
        raise ValueError("k must be at least 1")
    cdef int maxlen = longest(&c, N)
    k = nbest_rows(w.m.S, maxlen, k)
    if paths.shape[0] < k or paths.shape[1] != data.n_positions or scores.shape[0] != N or scores.shape[1] < k \
            or counts.shape[0] != N:
        raise ValueError("output arrays have the wrong shapes")
    cdef Lattice L
    work = lattice_new(&L, maxlen, w.m.S)
    cdef KBest B
    lists = kbest_new(&B, maxlen, w.m.S, k)
    cdef int64_t p0
    cdef int n, S = w.m.S
    cdef Py_ssize_t stride = paths.shape[1]
    # from small labels on, bounded search (its pair bound taken from each table, as
    # decode_corpus takes it)
    cdef Bounded D
    cdef Bounded* dp
    cdef bint filled
    search = pass_search(&D, &dp, S, w.m.trans, small, maxlen)
    cdef uint8_t[::1] order = np.zeros((S if dp != NULL else 1) * sizeof(Ranked), dtype=np.uint8)
    with nogil:
        for j in range(N):
            p0 = c.seq_ptr[j]
            n = <int>(c.seq_ptr[j + 1] - p0)
            filled = score_tables(&c, &w, &L, p0, n, dp != NULL)
            force(&L, &K, p0, n)
            if dp != NULL:
                pair_bound(dp, &L, filled, n)
            counts[j] = kbest(&L, &w.m, &B, n, &paths[0, p0], stride, &scores[j, 0], dp, <Ranked*> &order[0])


# --- max-marginals ---------------------------------------------------------------------

cdef void margins(const Lattice* L, const Linear* m, int n, const int32_t* path, double* beta,
                  double* out) noexcept nogil:
    """Max-marginal margins of a best path (forward-backward in the max-plus semiring;
    the max-product form of Rabiner 1989's forward and backward variables). Expects
    viterbi() to have run: L.delta holds the forward maxima alpha[i, y], the best score
    of a prefix ending in y at i (unary[i, y] included). beta[i, y] = the best score of
    a suffix after (i, y), end score included, so alpha + beta = the best score of a
    path through y at i. out[i] = that for path[i] minus the best over the other labels
    at i: >= 0, 0 where another label ties, +inf with a single label."""
    cdef int i, y, v, S = L.S, T = S + 1
    cdef double best, s, top, other
    cdef const double* unary = L.unary
    cdef const double* pair = L.pair
    cdef const double* alpha = L.delta
    cdef const double* trans = m.trans
    cdef const double* cur
    if n == 0:
        return
    for y in range(S):
        beta[(n - 1) * S + y] = m.end[y]
    for i in range(n - 1, 0, -1):
        cur = beta + i * S
        for v in range(S):
            best = -INFINITY
            for y in range(S):
                s = pair[(i * S + y) * T + v] + trans[y * T + v] + unary[i * S + y] + cur[y]
                if s > best:
                    best = s
            beta[(i - 1) * S + v] = best
    for i in range(n):
        top = alpha[i * S + path[i]] + beta[i * S + path[i]]
        other = -INFINITY
        for y in range(S):
            if y != path[i]:
                other = max(other, alpha[i * S + y] + beta[i * S + y])
        # path[i] is on a best path, so a negative difference is rounding: a tie
        out[i] = max(top - other, 0.0)


def confidence_corpus(data, weights, int32_t[::1] out, double[::1] token_margins, double[::1] sentence_margins,
                      const int32_t[::1] known=None, const uint8_t[:, ::1] sets=None):
    """Best path (as decode_corpus) of every sequence of an encoded Dataset into out, the
    max-marginal margin of each of its labels into token_margins (see margins), and per
    sequence the score of the best path minus that of the second best (the first two
    of kbest) into sentence_margins: 0 on a tie, +inf when there is no second path
    (one label, or every label known). known: as for decode_corpus (a known label's
    margin is +inf: no other labelling keeps it)."""
    cdef Corpus c = csr_corpus(data)
    weights = as_store(weights)
    cdef Weights w = weights_view(weights)
    cdef Known K = known_view(data, known, sets, w.m.S)
    cdef Py_ssize_t j, N = len(data.seq_ptr) - 1
    if out.shape[0] != data.n_positions or token_margins.shape[0] != data.n_positions \
            or sentence_margins.shape[0] != N:
        raise ValueError("output arrays have the wrong shapes")
    cdef int maxlen = longest(&c, N), S = w.m.S
    cdef Lattice L
    work = lattice_new(&L, maxlen, S)
    cdef KBest B
    lists = kbest_new(&B, maxlen, S, 2)
    cdef double[::1] beta = np.zeros(maxlen * S)
    cdef int32_t[:, ::1] two = np.zeros((2, maxlen), dtype=np.int32)
    cdef double top2[2]
    cdef int64_t p0
    cdef int n
    with nogil:
        for j in range(N):
            p0 = c.seq_ptr[j]
            n = <int>(c.seq_ptr[j + 1] - p0)
            score_tables(&c, &w, &L, p0, n)
            force(&L, &K, p0, n)
            viterbi(&L, &w.m, n, &out[p0])
            margins(&L, &w.m, n, &out[p0], &beta[0], &token_margins[p0])
            if kbest(&L, &w.m, &B, n, &two[0, 0], maxlen, top2) < 2:
                sentence_margins[j] = INFINITY
            else:
                sentence_margins[j] = top2[0] - top2[1]


# --- marginal probabilities ------------------------------------------------------------

def marginals_corpus(data, weights, double temperature, int32_t[::1] out, double[::1] best,
                     double[:, ::1] marginals, double[::1] log_partition, const int32_t[::1] known=None,
                     const uint8_t[:, ::1] sets=None):
    """For every sequence of an encoded Dataset: the best path into out (as
    decode_corpus) and its score into best, log Z into log_partition and the marginal
    probability of every label at every position into marginals (positions x labels),
    under p(y | x) = exp(score(y) / temperature) / Z (see fb.pxd). The probability of
    the best path is exp(best / temperature - log Z). known: as for decode_corpus; Z and
    the marginals are then over the labellings that keep the known labels, so the
    marginals are conditioned on them and exp(best / temperature - log Z) is the best
    path's probability given them."""
    cdef Corpus c = csr_corpus(data)
    weights = as_store(weights)
    cdef Weights w = weights_view(weights)
    cdef Known K = known_view(data, known, sets, w.m.S)
    cdef Py_ssize_t j, N = len(data.seq_ptr) - 1
    cdef int S = w.m.S
    if not temperature > 0.0 or temperature == INFINITY:
        raise ValueError("the temperature must be a positive number")
    if out.shape[0] != data.n_positions or marginals.shape[0] != data.n_positions or marginals.shape[1] != S \
            or best.shape[0] != N or log_partition.shape[0] != N:
        raise ValueError("output arrays have the wrong shapes")
    cdef int maxlen = longest(&c, N)
    cdef Lattice L
    work = lattice_new(&L, maxlen, S)
    cdef FB F
    tables = fb_new(&F, maxlen, S)
    F.fixed_trans = True  # (the model's transitions, for the call)
    cdef const double* pair = L.pair if w.w1.n_rows > 0 else NULL
    cdef double invT = 1.0 / temperature
    cdef int64_t p0
    cdef int n, i
    with nogil:
        for j in range(N):
            p0 = c.seq_ptr[j]
            n = <int>(c.seq_ptr[j + 1] - p0)
            score_tables(&c, &w, &L, p0, n)
            force(&L, &K, p0, n)
            best[j] = viterbi(&L, &w.m, n, &out[p0])
            log_partition[j] = forward_backward(&F, L.unary, pair, w.m.trans, w.m.end, n, invT, False)
            for i in range(n * S):
                marginals[p0 + i // S, i % S] = F.P[i]


def path_scores(data, weights, const int32_t[::1] labels, double[::1] out):
    """score(y) of the labelling labels (one label id per position, each in [0, S)) of
    every sequence of an encoded Dataset, into out."""
    cdef Corpus c = csr_corpus(data)
    weights = as_store(weights)
    cdef Weights w = weights_view(weights)
    cdef Py_ssize_t j, N = len(data.seq_ptr) - 1
    cdef int S = w.m.S
    if labels.shape[0] != data.n_positions or out.shape[0] != N:
        raise ValueError("arrays have the wrong shapes")
    for j in range(labels.shape[0]):
        if not 0 <= labels[j] < S:
            raise ValueError(f"label id {labels[j]} at position {j} is not one of the model's")
    cdef Lattice L
    work = lattice_new(&L, longest(&c, N), S)
    cdef int64_t p0
    cdef int n
    with nogil:
        for j in range(N):
            p0 = c.seq_ptr[j]
            n = <int>(c.seq_ptr[j + 1] - p0)
            score_tables(&c, &w, &L, p0, n)
            out[j] = path_score(L.unary, L.pair, w.m.trans, w.m.end, n, S, &labels[p0])


def forward_backward_tables(const double[:, ::1] unary, pair, const double[:, ::1] trans,
                            const double[::1] end, double temperature=1.0, bint pairs=True, bint log_space=False,
                            bint scaled=False):
    """(log Z, node marginals n x S, pair marginals n x S x S, their sum over i > 0 S x S)
    of one sequence of score tables (fb.pxd; pair marginals [i, y, v] = p(y_i = y,
    y_{i-1} = v) for i > 0, row 0 zero). pair None: no 1st-order scores (the pair factors
    are the transitions' alone, made once). log_space: the log-space recursion that
    fb_scaled falls back on; scaled: fb_scaled alone, without that fallback (log Z NaN
    where it would be taken)."""
    cdef int n = unary.shape[0], S = unary.shape[1]
    cdef const double[:, :, ::1] pair_view = pair if pair is not None else np.zeros((n, S, S + 1))
    check_tables(unary, pair_view, trans, end)
    cdef const double* pp = &pair_view[0, 0, 0] if pair is not None and n > 0 else NULL
    cdef FB F
    tables = fb_new(&F, n, S)
    sums = np.zeros((S, S))
    cdef double[:, ::1] sums_view = sums
    cdef double logz = 0.0
    if n > 0 and log_space:
        logz = fb_log(&F, &unary[0, 0], pp, &trans[0, 0], &end[0], n, 1.0 / temperature, True)
        sums[...] = np.asarray(tables[7])[S * S:n * S * S].reshape(-1, S, S).sum(axis=0)
    elif n > 0 and scaled:
        logz = fb_scaled(&F, &unary[0, 0], pp, &trans[0, 0], &end[0], n, 1.0 / temperature, pairs,
                         &sums_view[0, 0], S)
    elif n > 0:
        logz = forward_backward(&F, &unary[0, 0], pp, &trans[0, 0], &end[0], n, 1.0 / temperature, pairs,
                                &sums_view[0, 0], S)
    P = np.asarray(tables[6])[:n * S].reshape(n, S).copy()
    PP = np.asarray(tables[7])[:n * S * S].reshape(n, S, S).copy()
    PP[:1] = 0.0
    return logz, P, PP, sums


# --- one sequence of score tables (tests, experiments) ---------------------------------

cdef int check_tables(const double[:, ::1] unary, const double[:, :, ::1] pair, const double[:, ::1] trans,
                      const double[::1] end) except -1:
    cdef int n = unary.shape[0], S = unary.shape[1]
    if pair.shape[0] != n or pair.shape[1] != S or pair.shape[2] != S + 1 or end.shape[0] != S \
            or trans.shape[0] != S or trans.shape[1] != S + 1:
        raise ValueError("score tables have inconsistent shapes")
    return 0


def viterbi_nbest(const double[:, ::1] unary, const double[:, :, ::1] pair, const double[:, ::1] trans,
                  const double[::1] end, int k):
    """The k best paths of one sequence of score tables (see kbest): an int32 array of
    min(k, S ** n) rows of n labels, best first, and their scores."""
    cdef int n = unary.shape[0], S = unary.shape[1]
    check_tables(unary, pair, trans, end)
    if k < 1:
        raise ValueError("k must be at least 1")
    k = nbest_rows(S, n, k)
    paths = np.zeros((k, n), dtype=np.int32)
    scores = np.zeros(k)
    cdef int32_t[:, ::1] p = paths
    cdef double[::1] s = scores
    cdef Lattice L
    work = lattice_new(&L, max(n, 1), S)
    L.unary, L.pair = <double*> &unary[0, 0], <double*> &pair[0, 0, 0]  # read only
    cdef KBest B
    lists = kbest_new(&B, max(n, 1), S, k)
    cdef Linear m = linear_view(np.zeros((0, S)), trans, end, None, None, None, False, False)
    cdef int found = kbest(&L, &m, &B, n, &p[0, 0], n, &s[0])
    return paths[:found], scores[:found]


def viterbi_confidence(const double[:, ::1] unary, const double[:, :, ::1] pair, const double[:, ::1] trans,
                       const double[::1] end):
    """Best path of one sequence of score tables, the max-marginal margin of each of its
    labels and the sentence margin (best minus second-best score; +inf without a
    second path), as confidence_corpus computes them."""
    cdef int n = unary.shape[0], S = unary.shape[1]
    check_tables(unary, pair, trans, end)
    out, margin = np.zeros(n, dtype=np.int32), np.zeros(n)
    cdef int32_t[::1] path = out
    cdef double[::1] mg = margin
    cdef double[::1] beta = np.zeros(max(n, 1) * S)
    cdef int32_t[:, ::1] two = np.zeros((2, max(n, 1)), dtype=np.int32)
    cdef double top2[2]
    cdef Lattice L
    work = lattice_new(&L, max(n, 1), S)
    L.unary, L.pair = <double*> &unary[0, 0], <double*> &pair[0, 0, 0]  # read only
    cdef KBest B
    lists = kbest_new(&B, max(n, 1), S, 2)
    cdef Linear m = linear_view(np.zeros((0, S)), trans, end, None, None, None, False, False)
    viterbi(&L, &m, n, &path[0])
    margins(&L, &m, n, &path[0], &beta[0], &mg[0])
    found = kbest(&L, &m, &B, n, &two[0, 0], max(n, 1), top2)
    return out, margin, (top2[0] - top2[1]) if found >= 2 else np.inf
