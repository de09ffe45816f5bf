# The dual side of the online bilinear learner (Wu & Sun 2015, Algorithm 2), shared by
# its block-mode kernel (bol.pyx) and the paper's literal global mode (bol_global.pyx).
#
# The dual matrix Theta = sum of C * dPhi over the mistakes is block diagonal, one
# S x (S+1) block per 1st-order attribute. Blocks are stored densely, but only for
# attributes that took part in a mistake (`slot[a]` indexes a growing pool; see
# learners/bol.py: BlockPool), as float32, at half the memory: Theta sums C * dPhi,
# whose entries are whole multiples of C for binary features, so that with C = 1
# (and no multi-task steps) float32 holds them exactly up to 2^24 mistakes on one
# cell; other steps are rounded to float32 as they are added (relative error 6e-8).
# Products with the blocks are summed in double.
import numpy as np
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from chain cimport (Corpus, Linear, Rank1, Lattice, PathDiff, SEQBIL_PREFETCH, b_begin, update_targets, path_diff,
                    next_diff, differs, linear_update, score_unary, score_pair_bilinear, viterbi, MAX_TASKS)


cdef struct Dual:
    int S
    int32_t* slot             # slot[a]: pool index of Theta_a, -1 until a takes part in a mistake
    float* pool               # S x (S + 1) values per slot
    int64_t n_slots           # slots in use
    int32_t* mark             # mark[a]: index of a in touched while an update runs, else -1
    int32_t* touched          # the attributes of the current C * dPhi, in order of first visit
    double* dblk              # their blocks of C * dPhi


ctypedef fused real:
    float
    double


cdef inline Dual dual_view(int32_t[::1] slot, float[:, :, ::1] pool, int32_t[::1] mark) except *:
    """The Theta pool of a learner (kept alive by the caller); see dual_buffers."""
    cdef Dual d
    d.S = pool.shape[1]
    if pool.shape[2] != d.S + 1 or mark.shape[0] != slot.shape[0] or pool.shape[0] < slot.shape[0]:
        raise ValueError("slot, pool and mark do not fit")
    d.slot, d.pool, d.mark = &slot[0], &pool[0, 0, 0], &mark[0]
    d.n_slots = 0
    d.touched, d.dblk = NULL, NULL
    return d


cdef inline tuple dual_buffers(Dual* d, int maxb):
    """Point d at fresh per-update buffers for up to maxb touched attributes; returns
    the arrays that own them, for the caller to keep."""
    cdef int32_t[::1] touched = np.zeros(maxb, dtype=np.int32)
    cdef double[:, :, ::1] dblk = np.zeros((maxb, d.S, d.S + 1))
    d.touched, d.dblk = &touched[0], &dblk[0, 0, 0]
    return touched, dblk


cdef inline int collect_dphi(const Corpus* c, const Linear* m, const int32_t* pred, int64_t p0, int n, Dual* d,
                             double C) noexcept nogil:
    """Gather C * dPhi of a mistaken sequence per touched attribute block (with tasks,
    on each block the update reaches, times its multiplier: update_targets).

    touched[:k] lists the attributes, dblk[j] holds the block of touched[j], and
    mark[a] = j until absorb resets it. Returns k."""
    cdef int S = d.S, T = S + 1, k = 0, j, t, n_t
    cdef int64_t q
    cdef int32_t a
    cdef double s
    cdef double* blk
    cdef int32_t ids[MAX_TASKS]
    cdef double steps[MAX_TASKS]
    cdef PathDiff at = path_diff(c.labels + p0, pred, n, S)
    while next_diff(&at):
        for q in range(b_begin(c, p0 + at.i), b_begin(c, p0 + at.i + 1)):
            n_t = update_targets(m, 1, c.b_ids[q], ids, steps)
            for t in range(n_t):
                a = ids[t]
                j = d.mark[a]
                if j < 0:
                    j = k
                    d.mark[a] = k
                    d.touched[k] = a
                    memset(d.dblk + k * S * T, 0, S * T * sizeof(double))
                    k += 1
                blk = d.dblk + j * S * T
                s = C * steps[t]
                blk[at.g * T + at.gp] += s
                blk[at.p * T + at.pp] -= s
    return k


cdef inline void prefetch_blocks(const Dual* d, int k, const double* sigma) noexcept nogil:
    """Ask the cache for the Theta blocks of the k touched attributes (their slots
    first and, unless sigma is NULL, sigma by slot), which lie at random places: the
    refresh loop then finds them."""
    cdef int j, off, n = d.S * (d.S + 1), nbytes = n * sizeof(float)
    cdef int64_t s
    for j in range(k):
        SEQBIL_PREFETCH(&d.slot[d.touched[j]])
    for j in range(k):
        s = d.slot[d.touched[j]]
        if s >= 0:
            if sigma != NULL:
                SEQBIL_PREFETCH(&sigma[s])
            off = 0
            while off < nbytes:
                SEQBIL_PREFETCH(<char*> (d.pool + s * n) + off)
                off += 64


cdef inline float* theta_block(Dual* d, int32_t a) noexcept nogil:
    """The Theta block of attribute a, given a zeroed pool slot on first use."""
    cdef int n = d.S * (d.S + 1)
    cdef int64_t s = d.slot[a]
    if s < 0:
        s = d.n_slots
        d.slot[a] = <int32_t> s
        d.n_slots += 1
        memset(d.pool + s * n, 0, n * sizeof(float))
    return d.pool + s * n


cdef inline float* absorb(Dual* d, int j) noexcept nogil:
    """Theta_a += C * dPhi_a (Algorithm 2, line 6) for the j-th touched attribute a;
    clears mark[a] and returns Theta_a."""
    cdef int32_t a = d.touched[j]
    cdef int r, c, S = d.S, T = S + 1
    d.mark[a] = -1
    cdef float* th = theta_block(d, a)
    cdef const double* D = d.dblk + j * S * T
    for r in range(S):
        for c in range(T):
            th[r * T + c] += D[r * T + c]
    return th


cdef inline int bilinear_mistake(const Corpus* c, const Linear* m, const Linear* scorer, const Rank1* w,
                                 double scale, const Lattice* L, Dual* d, const double* sigma, int64_t p0, int n,
                                 double C, double cc) noexcept nogil:
    """Algorithm 2, lines 4-5 for the sequence at p0: decode with the bilinear model
    (1st-order scores times scale; scorer: the linear part that scores this sequence,
    chain.pxd: for_sequence, m: the one updated). On a mistake, take the linear step (section 4.3,
    cc = C * counter for averaging) and gather C * dPhi_t in d, asking the cache for
    the Theta blocks it touches (see prefetch_blocks). Returns the number of touched
    blocks, or -1 when the decoded path is right."""
    score_unary(c, scorer, L, p0, n)
    score_pair_bilinear(c, w, L, p0, n, scale)
    viterbi(L, scorer, n, L.pred)
    if not differs(c.labels + p0, L.pred, n):
        return -1
    linear_update(c, L.pred, p0, n, m, C, cc)
    cdef int k = collect_dphi(c, m, L.pred, p0, n, d, C)
    prefetch_blocks(d, k, sigma)
    return k


# --- small dense products on the blocks ------------------------------------------------

cdef inline double dot(const double* x, const double* y, int n) noexcept nogil:
    cdef double s = 0.0
    cdef int i
    for i in range(n):
        s += x[i] * y[i]
    return s


cdef inline void matvec(const real* M, const double* x, double* out, int rows, int cols,
                        double scale, bint accumulate) noexcept nogil:
    """out (+)= scale * M x for a row-major rows x cols matrix."""
    cdef int r, c
    cdef double s
    for r in range(rows):
        s = 0.0
        for c in range(cols):
            s += M[r * cols + c] * x[c]
        out[r] = out[r] + scale * s if accumulate else scale * s


cdef inline void rmatvec(const real* M, const double* x, double* out, int rows, int cols,
                         double scale, bint accumulate) noexcept nogil:
    """out (+)= scale * M^T x for a row-major rows x cols matrix."""
    cdef int r, c
    if not accumulate:
        for c in range(cols):
            out[c] = 0.0
    for r in range(rows):
        if x[r] != 0.0:
            for c in range(cols):
                out[c] += scale * M[r * cols + c] * x[r]
