# Shared inline kernels of the first-order chain: the structures every kernel takes,
# scoring, Viterbi and the walk over the positions a mistake updates.
#
# Conventions used by every kernel:
#   S labels 0..S-1; the previous-label index S stands for the start symbol.
#   unary[i, y]     score of label y at position i (0-order features)
#   pair[i, y, v]   score of labels (y_i = y, y_{i-1} = v) at position i (1st-order
#                   features); only pair[0, :, S] is used at i = 0 and only
#                   pair[i, :, :S] at i > 0, so kernels fill just those cells.
#   trans[y, v]     score of the label transition (y_i = y, y_{i-1} = v) at every
#                   position: the bare `B` template, always linear (S x (S+1)).
#   end[y]          score of ending the sequence in label y (stop transition).
# Positions of a corpus are stored as CSR arrays: the attribute ids active at
# position p are ids[ptr[p]:ptr[p + 1]]. A 0-order entry may carry a real value x
# (u_vals); without values every x is 1, and the kernels take a separate loop for
# that case, which computes exactly what they computed before values existed.
# Matrices are row-major. The structures below point into numpy arrays that the
# caller of their builder keeps alive, so the hot loops see plain pointers and no
# Python object. The kernels are built with boundscheck off (setup.py): &x[0] of an
# empty array only computes its address, which is never read.
import numpy as np
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.math cimport INFINITY

cdef extern from *:
    """
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    /* an asm statement: GCC 12 drops __builtin_prefetch from these kernels at -O1 and above */
    #define SEQBIL_PREFETCH(p) __asm__ __volatile__("prefetcht0 %0" : : "m"(*(const char*)(p)))
    #elif defined(__GNUC__) || defined(__clang__)
    #define SEQBIL_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #else
    #define SEQBIL_PREFETCH(p) ((void)(p))
    #endif
    """
    void SEQBIL_PREFETCH(const void* p) noexcept nogil


# The mixes of mix.pyx and bol.pyx visit rows scattered over large pools, one after
# another: each asks for the row MIX_AHEAD rows on while it mixes the current one.
cdef enum:
    MIX_AHEAD = 8


cdef inline void prefetch_span(const char* p, Py_ssize_t nbytes) noexcept nogil:
    """Every 64-byte line of p[0:nbytes] requested."""
    cdef Py_ssize_t k = 0
    if nbytes <= 0:
        return
    while k < nbytes:
        SEQBIL_PREFETCH(p + k)
        k += 64
    SEQBIL_PREFETCH(p + nbytes - 1)

# Scoring reads one weight row per attribute, at random places in arrays of hundreds
# of megabytes: it waits on memory, not arithmetic. The rows of the position
# PREFETCH_AHEAD steps ahead are requested while the current one is summed.
DEF PREFETCH_AHEAD = 2


# --- structures ---------------------------------------------------------------------

cdef struct Corpus:
    # An encoded Dataset (features/dataset.py).
    const int64_t* seq_ptr    # sequence j holds the positions seq_ptr[j]:seq_ptr[j + 1]
    const int32_t* labels     # gold label of every position
    const int64_t* u_ptr      # 0-order attributes of position p: u_ids[u_ptr[p]:u_ptr[p + 1]]
    const int32_t* u_ids
    const float* u_vals       # value x of each u_ids entry; NULL: every x is 1
    const int64_t* b_ptr      # 1st-order attributes, likewise; NULL when every position
    const int32_t* b_ids      # has b_width of them (b_begin)
    int64_t b_width
    const int32_t* seq_task   # multi-task training: the task of each sequence; else NULL
    uint8_t* seq_wrong        # set to 1 for each sequence the learner got wrong; NULL: not kept
    uint8_t* pos_diff         # set to 1 at each position an update reached (mark_diff); NULL: not kept


cdef struct Linear:
    # The linear part of a model: W0 (A0 x S), trans (S x (S + 1)), end (S), and
    # their averaging sums U0, Utrans, Uend (Daume 2006), read only when averaged.
    int S
    double* W0
    double* trans
    double* end
    double* U0
    double* Utrans
    double* Uend
    bint averaged
    bint transitions          # trans is learned (the template set has the bare B)
    # Multi-task learning (Cavallanti, Cesa-Bianchi & Gentile 2008, Figure 1 with the
    # interaction matrix of eq. 3) as augmented features: every weight has a shared
    # copy and a copy per task, and a sequence of task k is scored with the sum of
    # the shared copies and k's. An update on task k moves the shared copies by
    # step_shared = b / (K (1 + b)) and k's by step_own = 1 / (1 + b) times the
    # single-task step, so that the sum for task j moves by (A^-1)_{jk} times it.
    # trans and end then hold tasks + 1 copies (shared first, S rows each); the task
    # copies of the attributes are the ids own_lo[o] <= a < own_hi[o] of order o.
    int tasks                 # K, or 0 for single-task training
    int task                  # the task of the sequence being learned
    double step_shared
    double step_own
    int32_t own_lo[2]
    int32_t own_hi[2]
    # A general interaction matrix (Figure 1 in its explicit form): interaction is
    # A^-1 (K x K, by rows), the shared copies stay 0, and an update on task k moves
    # task j's copy of each attribute, a + rank[j] - rank[k] (every attribute has all
    # K copies, adjacent), by (A^-1)_{jk} times the step. NULL: eq. (3) as above.
    const double* interaction
    const int32_t* rank


# the most tasks a general interaction matrix may couple (update_targets' buffers)
cdef enum:
    MAX_TASKS = 64


cdef struct Rank1:
    # The 1st-order weights of the bilinear model, eq. (1): alpha[a] (S values) at
    # alpha + a * sa and beta[a] (S + 1) at beta + a * sb. The learners interleave them
    # (beta = alpha + S, sa = sb = 2S + 1): one cache line per attribute.
    # With slot (not NULL), attribute a's row is slot[a] instead of a, and an
    # attribute with slot -1 has no row (zero weights): a learner then keeps rows
    # only for the attributes that took part in a mistake (see blocks.pxd).
    double* alpha
    double* beta
    Py_ssize_t sa
    Py_ssize_t sb
    const int32_t* slot


cdef struct Lattice:
    # Score tables and Viterbi work space for sequences of up to maxlen positions.
    int S
    double* unary             # maxlen x S
    double* pair              # maxlen x S x (S + 1)
    double* delta             # maxlen x S
    int32_t* back             # maxlen x S
    int32_t* pred             # maxlen: the decoded path


cdef struct PathDiff:
    # A walk over the positions where a predicted path differs from the gold one in
    # the label or the label pair (y_i, y_{i-1}): where dPhi = Phi(gold) - Phi(pred)
    # is nonzero. See path_diff.
    const int32_t* gold
    const int32_t* pred
    int n
    int S
    int i                     # the current position
    int g, p                  # gold and predicted label at i
    int gp, pp                # and at i - 1 (S, the start symbol, at i = 0)


# --- building the structures (with the GIL) ----------------------------------------

cdef inline int check_rows(const double[:, :] m, str name) except -1:
    """Kernels walk rows by pointer: their elements must be adjacent."""
    if m.shape[0] > 0 and m.shape[1] > 1 and m.strides[1] != sizeof(double):
        raise ValueError(f"{name}: rows must be contiguous")
    return 0


cdef inline Corpus corpus_view(data) except *:
    """The CSR arrays of an encoded Dataset (int64 pointers, int32 ids, float32 values
    or None); the pointers stay valid while the caller holds data."""
    cdef const int64_t[::1] seq_ptr = data.seq_ptr
    cdef const int32_t[::1] labels = data.labels
    cdef const int64_t[::1] u_ptr = data.u_ptr
    cdef const int32_t[::1] u_ids = data.u_ids
    cdef const int64_t[::1] b_ptr
    cdef const int32_t[::1] b_ids = data.b_ids
    cdef const float[::1] u_vals
    cdef const int32_t[::1] seq_task
    cdef uint8_t[::1] seq_wrong
    cdef uint8_t[::1] pos_diff
    cdef Corpus c
    c.seq_ptr, c.labels = &seq_ptr[0], &labels[0]
    c.u_ptr, c.u_ids = &u_ptr[0], &u_ids[0]
    c.b_ids, c.b_ptr, c.b_width = &b_ids[0], NULL, 0
    if data.b_ptr is not None:
        b_ptr = data.b_ptr
        c.b_ptr = &b_ptr[0]
    else:
        # the kernels read b_ids[p * b_width + t] for every position p, unchecked
        c.b_width = data.b_width
        if c.b_width < 1 or b_ids.shape[0] != c.b_width * (seq_ptr[seq_ptr.shape[0] - 1]):
            raise ValueError("b_ids must hold b_width ids per position")
    c.u_vals = NULL
    c.seq_task = NULL
    c.seq_wrong = NULL
    wrong = getattr(data, "seq_wrong", None)
    if wrong is not None:
        if not (isinstance(wrong, np.ndarray) and wrong.dtype == np.uint8 and wrong.shape == (seq_ptr.shape[0] - 1,)):
            raise ValueError("seq_wrong must be a uint8 array with one flag per sequence")
        seq_wrong = wrong
        c.seq_wrong = &seq_wrong[0]
    c.pos_diff = NULL
    flags = getattr(data, "pos_diff", None)
    if flags is not None:
        if not (isinstance(flags, np.ndarray) and flags.dtype == np.uint8 and
                flags.shape == (seq_ptr[seq_ptr.shape[0] - 1],)):
            raise ValueError("pos_diff must be a uint8 array with one flag per position")
        if flags.shape[0] > 0:
            pos_diff = flags
            c.pos_diff = &pos_diff[0]
    tasks = getattr(data, "seq_task", None)
    if tasks is not None:
        if not (isinstance(tasks, np.ndarray) and tasks.dtype == np.int32 and
                tasks.shape == (seq_ptr.shape[0] - 1,)):
            raise ValueError("seq_task must be an int32 array with one task per sequence")
        seq_task = tasks
        c.seq_task = &seq_task[0]
    vals = getattr(data, "u_vals", None)
    if vals is not None:
        # the kernels read u_vals[q] for every entry q of u_ids, unchecked
        if not (isinstance(vals, np.ndarray) and vals.dtype == np.float32 and vals.shape == (u_ids.shape[0],)):
            raise ValueError("u_vals must be a float32 array as long as u_ids")
        u_vals = vals
        c.u_vals = &u_vals[0]
    return c


cdef inline Linear linear_view(const double[:, ::1] W0, const double[:, ::1] trans, const double[::1] end,
                               const double[:, ::1] U0, const double[:, ::1] Utrans, const double[::1] Uend,
                               bint averaged, bint transitions) except *:
    """The linear part over these arrays (the U* may be None without averaging).
    Decoding passes read-only arrays and never writes; the training kernels take
    theirs writable."""
    cdef Linear m
    m.S = W0.shape[1]
    # (tasks + 1) copies of trans and end in multi-task learning (linear_tasks)
    if m.S < 1 or trans.shape[1] != m.S + 1 or trans.shape[0] % m.S or end.shape[0] != trans.shape[0]:
        raise ValueError("W0, trans and end disagree on the number of labels")
    m.W0, m.trans, m.end = <double*> &W0[0, 0], <double*> &trans[0, 0], <double*> &end[0]
    m.U0 = m.Utrans = m.Uend = NULL
    if averaged:
        m.U0, m.Utrans, m.Uend = <double*> &U0[0, 0], <double*> &Utrans[0, 0], <double*> &Uend[0]
    m.averaged, m.transitions = averaged, transitions
    m.tasks = m.task = 0
    m.step_shared = m.step_own = 1.0
    m.own_lo[0] = m.own_hi[0] = m.own_lo[1] = m.own_hi[1] = 0
    m.interaction, m.rank = NULL, NULL
    return m


cdef inline tuple linear_tasks(Linear* m, tasks, Py_ssize_t trans_rows, Py_ssize_t end_len):
    """Set up multi-task learning on m from tasks = (K, b, (lo0, hi0), (lo1, hi1)) with
    eq. (3), or (K, A^-1, (lo0, hi0), (lo1, hi1), rank) with a general interaction
    matrix, or None for one task; trans_rows and end_len: what the learner allocated.
    Returns the arrays m points into, for the caller to keep."""
    if tasks is None:
        if trans_rows != m.S or end_len != m.S:
            raise ValueError("trans and end must hold one copy")
        return ()
    K, b, own0, own1 = tasks[:4]
    if K < 1 or trans_rows != (K + 1) * m.S or end_len != (K + 1) * m.S:
        raise ValueError("trans and end must hold a shared copy and one per task")
    m.tasks = K
    m.own_lo[0], m.own_hi[0] = own0
    m.own_lo[1], m.own_hi[1] = own1
    if len(tasks) == 4:
        if b < 0:
            raise ValueError("the coupling b must be >= 0")
        m.step_shared, m.step_own = b / (K * (1.0 + b)), 1.0 / (1.0 + b)
        return ()
    cdef const double[:, ::1] inverse = np.ascontiguousarray(b, dtype=np.float64)
    cdef const int32_t[::1] rank = np.ascontiguousarray(tasks[4], dtype=np.int32)
    if inverse.shape[0] != K or inverse.shape[1] != K or rank.shape[0] != K or K > MAX_TASKS:
        raise ValueError(f"a general interaction needs a K x K inverse and K ranks, K <= {MAX_TASKS}")
    m.step_shared, m.step_own = 0.0, 0.0
    m.interaction, m.rank = &inverse[0, 0], &rank[0]
    return inverse, rank


cdef inline int update_targets(const Linear* m, int order, int32_t a, int32_t* ids, double* steps) noexcept nogil:
    """The weights an update of attribute a of an order moves (ids) and by how much of
    the step (steps; MAX_TASKS room): a by 1 for one task, or by own_step with eq. (3);
    with a general interaction, on task k, every task j's copy of a task copy a by
    (A^-1)_{jk}, and no shared attribute. Returns how many."""
    cdef int j, K = m.tasks
    if m.interaction == NULL:
        ids[0], steps[0] = a, own_step(m, order, a)
        return 1
    if not m.own_lo[order] <= a < m.own_hi[order]:
        return 0
    for j in range(K):
        ids[j] = a + m.rank[j] - m.rank[m.task]
        steps[j] = m.interaction[j * K + m.task]
    return K


cdef inline int trans_targets(const Linear* m, int* copies, double* steps) noexcept nogil:
    """The copies of trans and end an update moves (0 shared, 1 + j task j's) and by
    how much of the step, as update_targets. Returns how many."""
    cdef int j, K = m.tasks
    if K == 0:
        copies[0], steps[0] = 0, 1.0
        return 1
    if m.interaction == NULL:
        copies[0], steps[0], copies[1], steps[1] = 0, m.step_shared, m.task + 1, m.step_own
        return 2
    for j in range(K):
        copies[j], steps[j] = j + 1, m.interaction[j * K + m.task]
    return K


cdef inline double own_step(const Linear* m, int order, int32_t a) noexcept nogil:
    """The step multiplier of attribute a of an order (1 for single-task learning)."""
    if m.tasks == 0:
        return 1.0
    return m.step_own if m.own_lo[order] <= a < m.own_hi[order] else m.step_shared


cdef inline const Linear* for_sequence(Linear* m, Linear* eff, const Corpus* c, int64_t j) noexcept nogil:
    """The linear part that scores sequence j: m itself for one task; for task k, a
    copy whose trans and end (in eff's own buffers) are the shared copies plus k's.
    Sets m.task."""
    if m.tasks == 0:
        return m
    cdef int S = m.S, k = c.seq_task[j], i
    cdef int TS = S * (S + 1)
    m.task = k
    cdef double* trans = eff.trans
    cdef double* end = eff.end
    eff[0] = m[0]
    eff.trans, eff.end = trans, end
    for i in range(TS):
        trans[i] = m.trans[i] + m.trans[(k + 1) * TS + i]
    for i in range(S):
        end[i] = m.end[i] + m.end[(k + 1) * S + i]
    return eff


cdef inline Rank1 rank1_view(const double[:, :] alpha, const double[:, :] beta) except *:
    """alpha (A1 x S) and beta (A1 x (S + 1)) by rows, which must be contiguous."""
    check_rows(alpha, "alpha")
    check_rows(beta, "beta")
    cdef Py_ssize_t size = sizeof(double)
    if alpha.strides[0] % size or beta.strides[0] % size:
        raise ValueError("alpha, beta: rows must start at whole doubles")
    cdef Rank1 w
    w.alpha, w.beta = <double*> &alpha[0, 0], <double*> &beta[0, 0]
    w.sa, w.sb = alpha.strides[0] // size, beta.strides[0] // size
    w.slot = NULL
    return w


cdef inline tuple lattice_new(Lattice* L, int maxlen, int S):
    """Point L at fresh zeroed tables for up to maxlen positions; returns the arrays
    that own them, for the caller to keep."""
    cdef double[:, ::1] unary = np.zeros((maxlen, S)), delta = np.zeros((maxlen, S))
    cdef double[:, :, ::1] pair = np.zeros((maxlen, S, S + 1))
    cdef int32_t[:, ::1] back = np.zeros((maxlen, S), dtype=np.int32)
    cdef int32_t[::1] pred = np.zeros(maxlen, dtype=np.int32)
    L.S = S
    L.unary, L.pair, L.delta = &unary[0, 0], &pair[0, 0, 0], &delta[0, 0]
    L.back, L.pred = &back[0, 0], &pred[0]
    return unary, pair, delta, back, pred


cdef inline tuple task_buffers(Linear* eff, int S):
    """Point eff at fresh trans and end buffers (for_sequence); returns their arrays."""
    cdef double[::1] trans = np.zeros(S * (S + 1)), end = np.zeros(S)
    eff.trans, eff.end = &trans[0], &end[0]
    return trans, end


cdef inline int check_tasks(const Corpus* c, const Linear* m, const int64_t[::1] order) except -1:
    """Multi-task learning needs a task in [0, K) for every sequence of the chunk."""
    cdef Py_ssize_t j
    if m.tasks == 0:
        return 0
    if c.seq_task == NULL:
        raise ValueError("multi-task learning needs the task of every sequence (seq_task)")
    for j in range(order.shape[0]):
        if not 0 <= c.seq_task[order[j]] < m.tasks:
            raise ValueError(f"sequence {order[j]} has task {c.seq_task[order[j]]}, not one of 0..{m.tasks - 1}")
    return 0


# --- sequences ------------------------------------------------------------------------

cdef inline int64_t b_begin(const Corpus* c, int64_t p) noexcept nogil:
    """Where the 1st-order attributes of position p start in b_ids (they end at
    b_begin(c, p + 1))."""
    return c.b_ptr[p] if c.b_ptr != NULL else p * c.b_width


cdef inline void chunk_limits(const int64_t[::1] order, const int64_t* seq_ptr, const int64_t* ptr,
                              int64_t width, int* maxlen, int* maxattr) noexcept nogil:
    """Longest sequence of the chunk, and most attributes of one sequence (CSR ptr, or
    width per position when ptr is NULL)."""
    cdef Py_ssize_t j
    cdef int64_t a, b
    maxlen[0] = 1
    maxattr[0] = 1
    for j in range(order.shape[0]):
        a = seq_ptr[order[j]]
        b = seq_ptr[order[j] + 1]
        maxlen[0] = max(maxlen[0], <int>(b - a))
        maxattr[0] = max(maxattr[0], <int>((ptr[b] - ptr[a]) if ptr != NULL else (b - a) * width))


cdef inline bint differs(const int32_t* gold, const int32_t* pred, int n) noexcept nogil:
    """Whether a decoded sequence differs from the gold one (a mistake)."""
    cdef int i
    for i in range(n):
        if pred[i] != gold[i]:
            return True
    return False


cdef inline void mark_wrong(const Corpus* c, int64_t j) noexcept nogil:
    """Note that sequence j was decoded wrongly (for the per-task mistake counts)."""
    if c.seq_wrong != NULL:
        c.seq_wrong[j] = 1


cdef inline PathDiff path_diff(const int32_t* gold, const int32_t* pred, int n, int S) noexcept nogil:
    """The walk over the positions where pred differs from gold in (y_i, y_{i-1}), the
    only positions whose attributes a mistake updates:

        d = path_diff(gold, pred, n, S)
        while next_diff(&d):
            ... d.i, (d.g, d.gp) on the gold path, (d.p, d.pp) on the predicted one
    """
    cdef PathDiff d
    d.gold, d.pred, d.n, d.S, d.i = gold, pred, n, S, -1
    d.g = d.p = d.gp = d.pp = 0
    return d


cdef inline bint next_diff(PathDiff* d) noexcept nogil:
    """Move d to the next differing position; False when there is none left."""
    cdef int i = d.i + 1, n = d.n
    cdef const int32_t* gold = d.gold
    cdef const int32_t* pred = d.pred
    # (y_i, y_{i-1}) differ where y_i or y_{i-1} does; y_{-1} is the start on both paths
    while i < n and gold[i] == pred[i] and (i == 0 or gold[i - 1] == pred[i - 1]):
        i += 1
    d.i = i
    if i >= n:
        return False
    d.g, d.p = gold[i], pred[i]
    d.gp = gold[i - 1] if i > 0 else d.S
    d.pp = pred[i - 1] if i > 0 else d.S
    return True


cdef inline void mark_diff(const Corpus* c, const int32_t* pred, int64_t p0, int n, int S) noexcept nogil:
    """Flag the positions of a wrongly decoded sequence where (y_i, y_{i-1}) differs:
    the only positions whose attributes an update reaches (iterative parameter mixing
    sends the rows of those attributes)."""
    if c.pos_diff == NULL:
        return
    cdef PathDiff d = path_diff(c.labels + p0, pred, n, S)
    while next_diff(&d):
        c.pos_diff[p0 + d.i] = 1


cdef inline void zero_order_step(const Corpus* c, const Linear* m, int64_t p, int g, int y, double C,
                                 double cc) noexcept nogil:
    """W0[a, g] += C x and W0[a, y] -= C x for the 0-order entries (a, x) at position p,
    and likewise U0 with cc: the 0-order part of C * dPhi at a position labelled g on
    the gold path and y on the predicted one (with tasks, for each weight the update
    reaches, update_targets)."""
    cdef int S = m.S, n, t
    cdef int64_t q
    cdef double* w
    cdef double* u
    cdef double s, su, x
    cdef bint averaged = m.averaged
    cdef int32_t ids[MAX_TASKS]
    cdef double steps[MAX_TASKS]
    if c.u_vals == NULL and m.tasks == 0:
        for q in range(c.u_ptr[p], c.u_ptr[p + 1]):
            w = m.W0 + <Py_ssize_t> c.u_ids[q] * S
            w[g] += C
            w[y] -= C
            if averaged:
                u = m.U0 + <Py_ssize_t> c.u_ids[q] * S
                u[g] += cc
                u[y] -= cc
    else:  # values, or the weights of multi-task learning an update reaches
        for q in range(c.u_ptr[p], c.u_ptr[p + 1]):
            n = update_targets(m, 0, c.u_ids[q], ids, steps)
            for t in range(n):
                x = (1.0 if c.u_vals == NULL else c.u_vals[q]) * steps[t]
                s = C * x
                w = m.W0 + <Py_ssize_t> ids[t] * S
                w[g] += s
                w[y] -= s
                if averaged:
                    su = cc * x
                    u = m.U0 + <Py_ssize_t> ids[t] * S
                    u[g] += su
                    u[y] -= su


cdef inline void linear_update(const Corpus* c, const int32_t* pred, int64_t p0, int n, const Linear* m,
                               double C, double cc) noexcept nogil:
    """Perceptron step on the linear part: 0-order weights (section 4.3; a valued entry
    steps by C x), label transitions and end scores; cc = C * counter goes to the
    averaging sums."""
    cdef int S = m.S, T = S + 1, g, p, i, n_copies
    cdef bint averaged = m.averaged
    cdef PathDiff d
    # one copy of trans and end for one task; with tasks, those trans_targets names
    # (the 0-order weights take theirs in zero_order_step, once)
    cdef int copies[MAX_TASKS]
    cdef double steps[MAX_TASKS]
    n_copies = trans_targets(m, copies, steps)
    cdef Py_ssize_t t_off, e_off
    cdef double s, sc
    for i in range(n_copies):
        t_off, e_off = copies[i] * S * T, copies[i] * S
        s, sc = C * steps[i], cc * steps[i]
        d = path_diff(c.labels + p0, pred, n, S)
        while next_diff(&d):
            if m.transitions and steps[i] != 0.0:
                m.trans[t_off + d.g * T + d.gp] += s
                m.trans[t_off + d.p * T + d.pp] -= s
                if averaged:
                    m.Utrans[t_off + d.g * T + d.gp] += sc
                    m.Utrans[t_off + d.p * T + d.pp] -= sc
            if i == 0 and d.g != d.p:
                zero_order_step(c, m, p0 + d.i, d.g, d.p, C, cc)
        g = c.labels[p0 + n - 1]
        p = pred[n - 1]
        if g != p and steps[i] != 0.0:
            m.end[e_off + g] += s
            m.end[e_off + p] -= s
            if averaged:
                m.Uend[e_off + g] += sc
                m.Uend[e_off + p] -= sc


# --- scoring and decoding -----------------------------------------------------------

cdef inline void prefetch_rows(const int32_t* ids, int64_t k0, int64_t k1, const char* base,
                               Py_ssize_t stride, Py_ssize_t nbytes) noexcept nogil:
    """Ask the cache for the rows (nbytes at base + id * stride) of the attributes ids[k0:k1]."""
    cdef int64_t k
    cdef Py_ssize_t off
    for k in range(k0, k1):
        off = 0
        while off < nbytes:
            SEQBIL_PREFETCH(base + ids[k] * stride + off)
            off += 64
        SEQBIL_PREFETCH(base + ids[k] * stride + nbytes - 1)


cdef inline void prefetch_slots(const int32_t* ids, int64_t k0, int64_t k1, const int32_t* slot) noexcept nogil:
    """Ask the cache for the slots of the attributes ids[k0:k1] (see prefetch_slot_rows)."""
    cdef int64_t k
    for k in range(k0, k1):
        SEQBIL_PREFETCH(slot + ids[k])


cdef inline void prefetch_slot_rows(const int32_t* ids, int64_t k0, int64_t k1, const int32_t* slot,
                                    const char* base, Py_ssize_t stride, Py_ssize_t nbytes) noexcept nogil:
    """prefetch_rows for rows found through slot[a], whose entries were asked for
    earlier (prefetch_slots), so that reading them here rarely waits."""
    cdef int64_t k
    cdef int32_t s
    cdef Py_ssize_t off
    for k in range(k0, k1):
        s = slot[ids[k]]
        if s < 0:
            continue
        off = 0
        while off < nbytes:
            SEQBIL_PREFETCH(base + s * stride + off)
            off += 64
        SEQBIL_PREFETCH(base + s * stride + nbytes - 1)


cdef inline void prefetch_first(const Corpus* c, const int32_t* ids, int64_t p0, int n, const int32_t* slot,
                                const char* base, Py_ssize_t stride, Py_ssize_t nbytes) noexcept nogil:
    """Before a sequence's first position: the rows of the next PREFETCH_AHEAD positions
    (through slot, the slots of twice as many)."""
    cdef int i
    if slot == NULL:
        for i in range(1, min(n, 1 + PREFETCH_AHEAD)):
            prefetch_rows(ids, b_begin(c, p0 + i), b_begin(c, p0 + i + 1), base, stride, nbytes)
    else:
        for i in range(1, min(n, 1 + 2 * PREFETCH_AHEAD)):
            prefetch_slots(ids, b_begin(c, p0 + i), b_begin(c, p0 + i + 1), slot)
        for i in range(1, min(n, 1 + PREFETCH_AHEAD)):
            prefetch_slot_rows(ids, b_begin(c, p0 + i), b_begin(c, p0 + i + 1), slot, base, stride, nbytes)


cdef inline void prefetch_ahead(const Corpus* c, const int32_t* ids, int64_t p0, int i, int n, const int32_t* slot,
                                const char* base, Py_ssize_t stride, Py_ssize_t nbytes) noexcept nogil:
    """At position i: the rows PREFETCH_AHEAD positions on (through slot, and the slots
    twice as far)."""
    cdef int64_t q = p0 + i + PREFETCH_AHEAD
    if slot == NULL:
        if i + PREFETCH_AHEAD < n:
            prefetch_rows(ids, b_begin(c, q), b_begin(c, q + 1), base, stride, nbytes)
    else:
        if i + 2 * PREFETCH_AHEAD < n:
            prefetch_slots(ids, b_begin(c, q + PREFETCH_AHEAD), b_begin(c, q + PREFETCH_AHEAD + 1), slot)
        if i + PREFETCH_AHEAD < n:
            prefetch_slot_rows(ids, b_begin(c, q), b_begin(c, q + 1), slot, base, stride, nbytes)


cdef inline void score_unary(const Corpus* c, const Linear* m, const Lattice* L, int64_t p0,
                             int n) noexcept nogil:
    """unary[i, y] = sum of x * W0[a, y] over the 0-order entries (a, x) at position p0 + i."""
    cdef int i, y, S = L.S
    cdef int64_t k
    cdef double x
    cdef double* out
    cdef const double* w
    cdef const int64_t* ptr = c.u_ptr
    cdef const int32_t* ids = c.u_ids
    cdef const float* vals = c.u_vals
    cdef const double* W0 = m.W0
    for i in range(n):
        out = L.unary + i * S
        for y in range(S):
            out[y] = 0.0
        if vals == NULL:
            for k in range(ptr[p0 + i], ptr[p0 + i + 1]):
                w = W0 + <Py_ssize_t> ids[k] * S
                for y in range(S):
                    out[y] += w[y]
        else:
            for k in range(ptr[p0 + i], ptr[p0 + i + 1]):
                w = W0 + <Py_ssize_t> ids[k] * S
                x = vals[k]
                for y in range(S):
                    out[y] += x * w[y]


cdef inline bint score_pair_linear(const Corpus* c, const double* W1, const Lattice* L, int64_t p0,
                                   int n, const int32_t* slot=NULL, bint lazy=False) noexcept nogil:
    """pair[i, y, v] = sum of W1[a, y, v] over the 1st-order attributes a at p0 + i (eq. 2),
    W1 being A1 x S x (S + 1), or, with slot, a pool whose row slot[a] is attribute
    a's (-1: a row of zeros). Rows are S + 1 wide; at i > 0 the start column S is
    filled too and never read. lazy: a sequence without 1st-order attributes fills
    the start column alone (a search that knows pair is zero past it reads no more).
    Returns whether the whole table was filled."""
    cdef int i, y, j, S = L.S, T = S + 1
    cdef Py_ssize_t row = S * T, r
    cdef int64_t k
    cdef double* out
    cdef const double* w
    cdef double* pair = L.pair
    cdef const int32_t* ids = c.b_ids
    for y in range(S):
        pair[y * T + S] = 0.0
    if lazy and b_begin(c, p0 + n) == b_begin(c, p0):
        return False
    cdef const char* base = <const char*> W1
    cdef Py_ssize_t stride = row * sizeof(double), nbytes = S * T * sizeof(double)
    prefetch_first(c, ids, p0, n, slot, base, stride, nbytes)
    for k in range(b_begin(c, p0), b_begin(c, p0 + 1)):
        r = ids[k] if slot == NULL else slot[ids[k]]
        if r < 0:
            continue
        for y in range(S):
            pair[y * T + S] += W1[r * row + y * T + S]
    for i in range(1, n):
        prefetch_ahead(c, ids, p0, i, n, slot, base, stride, nbytes)
        out = pair + i * row
        for j in range(S * T):
            out[j] = 0.0
        for k in range(b_begin(c, p0 + i), b_begin(c, p0 + i + 1)):
            r = ids[k] if slot == NULL else slot[ids[k]]
            if r < 0:
                continue
            w = W1 + r * row
            for j in range(S * T):
                out[j] += w[j]
    return True


cdef inline Py_ssize_t rank1_row(const Rank1* w, int32_t a) noexcept nogil:
    """The row of attribute a in w, -1 when it has none."""
    return a if w.slot == NULL else w.slot[a]


cdef inline void sum_outer4(const int32_t* ids, int64_t k0, int64_t k1, const Rank1* w,
                            double* out) noexcept nogil:
    """out = sum of alpha[a] beta[a]^T over ids[k0:k1] for four labels (B/I/E/S):
    fixed bounds let the compiler keep the 4 x 5 sum in registers."""
    cdef double acc[20]
    cdef int y, v
    cdef int64_t k
    cdef Py_ssize_t a
    cdef const double* al
    cdef const double* be
    for v in range(20):
        acc[v] = 0.0
    for k in range(k0, k1):
        a = rank1_row(w, ids[k])
        if a < 0:
            continue
        al = w.alpha + a * w.sa
        be = w.beta + a * w.sb
        for y in range(4):
            for v in range(5):
                acc[y * 5 + v] += al[y] * be[v]
    for v in range(20):
        out[v] = acc[v]


cdef inline void score_pair_bilinear(const Corpus* c, const Rank1* w, const Lattice* L, int64_t p0, int n,
                                     double scale=1.0) noexcept nogil:
    """pair[i, y, v] = scale * sum of alpha[a, y] * beta[a, v] over the 1st-order attributes
    at p0 + i (eq. 1). Rows are S + 1 wide, as in score_pair_linear."""
    cdef int i, y, v, S = L.S, T = S + 1
    cdef int64_t k
    cdef Py_ssize_t a
    cdef double ay
    cdef double* out
    cdef const double* al
    cdef const double* be
    cdef double* pair = L.pair
    cdef const int32_t* ids = c.b_ids
    cdef const int32_t* slot = w.slot
    cdef Py_ssize_t sa = w.sa, sb = w.sb
    # alpha[a] and beta[a] side by side (the usual layout): one prefetch covers both;
    # through slots, the slots are asked for one step before the rows
    cdef const char* base = <const char*> w.alpha
    cdef Py_ssize_t stride = sa * sizeof(double), nbytes = (2 * S + 1) * sizeof(double)
    for y in range(S):
        pair[y * T + S] = 0.0
    prefetch_first(c, ids, p0, n, slot, base, stride, nbytes)
    for k in range(b_begin(c, p0), b_begin(c, p0 + 1)):
        a = rank1_row(w, ids[k])
        if a < 0:
            continue
        for y in range(S):
            pair[y * T + S] += w.alpha[a * sa + y] * w.beta[a * sb + S]
    for i in range(1, n):
        prefetch_ahead(c, ids, p0, i, n, slot, base, stride, nbytes)
        out = pair + i * S * T
        if S == 4:
            sum_outer4(ids, b_begin(c, p0 + i), b_begin(c, p0 + i + 1), w, out)
            continue
        for v in range(S * T):
            out[v] = 0.0
        for k in range(b_begin(c, p0 + i), b_begin(c, p0 + i + 1)):
            a = rank1_row(w, ids[k])
            if a < 0:
                continue
            al = w.alpha + a * sa
            be = w.beta + a * sb
            for y in range(S):
                ay = al[y]
                for v in range(T):
                    out[y * T + v] += ay * be[v]
    if scale != 1.0:
        for y in range(S):
            pair[y * T + S] *= scale
        for i in range(1, n):
            out = pair + i * S * T
            for v in range(S * T):
                out[v] *= scale


cdef inline void viterbi_start(const Lattice* L, const Linear* m) noexcept nogil:
    """delta[0, y]: the first label's score, with the start column of pair and trans."""
    cdef int y, S = L.S, T = S + 1
    for y in range(S):
        L.delta[y] = L.unary[y] + L.pair[y * T + S] + m.trans[y * T + S]


cdef inline double viterbi_finish(const Lattice* L, const Linear* m, int n, int32_t* out) noexcept nogil:
    """The best last label by delta[n - 1] + end (ties to the lowest), the path back
    from it through L.back into out[:n], and its score."""
    cdef int i, y, S = L.S
    cdef double best = -INFINITY, s
    cdef int32_t arg = 0
    for y in range(S):
        s = L.delta[(n - 1) * S + y] + m.end[y]
        if s > best:
            best = s
            arg = y
    out[n - 1] = arg
    for i in range(n - 1, 0, -1):
        out[i - 1] = L.back[i * S + out[i]]
    return best


cdef inline double viterbi(const Lattice* L, const Linear* m, int n, int32_t* out) noexcept nogil:
    """First-order Viterbi (Viterbi 1967; Rabiner 1989, eq. 32-35) with start and stop scores.

    Writes the best label sequence to out[:n] and returns its score. Ties go to the
    lowest label index, so decoding is deterministic.
    """
    cdef int i, y, v, S = L.S, T = S + 1
    cdef double best, s
    cdef int32_t arg
    cdef const double* unary = L.unary
    cdef const double* pair = L.pair
    cdef double* delta = L.delta
    cdef int32_t* back = L.back
    cdef const double* trans = m.trans
    cdef const double* prev
    cdef const double* pr
    cdef const double* tr
    if n == 0:
        return 0.0
    viterbi_start(L, m)
    for i in range(1, n):
        prev = delta + (i - 1) * S
        for y in range(S):
            pr = pair + (i * S + y) * T  # row pointers: the inner loop is the hot spot
            tr = trans + y * T
            best = -INFINITY
            arg = 0
            for v in range(S):
                s = prev[v] + pr[v] + tr[v]
                if s > best:
                    best = s
                    arg = v
            delta[i * S + y] = best + unary[i * S + y]
            back[i * S + y] = arg
    return viterbi_finish(L, m, n, out)
