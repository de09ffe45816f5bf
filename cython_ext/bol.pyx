"""Online learning of the rank-1 bilinear model (Wu & Sun 2015, Algorithm 2).

The dual matrix Theta = sum of C * dPhi over the mistakes is block diagonal, one
S x (S+1) block per 1st-order attribute. Blocks are stored densely, but only for
attributes that took part in a mistake (`slot[a]` indexes a growing pool).

Block mode (`bol_chunk`): W_a = sigma_a u_a v_a^T is the top singular
triple of Theta_a, i.e. the gradient of F*(Theta) = sum_a sigma_1(Theta_a)^2 / 2.
After a mistake each touched block runs R power steps warm-started from its
previous (u_a, v_a), normalised by its own sigma_a as in eqs. (9)-(12) (see
warm_pair for how they are evaluated), then takes sigma_a as the Rayleigh
quotient of the new pair (supplement).
A block with no previous pair (sigma_a = 0) starts from the unit vector of the
column holding its largest entry, which Theta_a cannot annihilate, plus a small
fixed dense part (so the start is not orthogonal to the top right singular vector
of an integer-valued block), and runs plain normalised power steps.

Global mode (`bol_chunk` with global_mode): the paper's literal reading, one sigma_1 and one
(alpha, beta) over all blocks, normalised globally. The norms are kept as two
scalar scales so no step writes densely (see learners/bol.py).

Parameters for scoring: alpha[a] = sigma_a u_a and beta[a] = v_a (block mode).
Averaging keeps U += c * delta (Daume 2006), generalised to scaled vectors in
global mode: U += delta * (sum of past scales).
"""
cimport cython
import numpy as np
from libc.math cimport sqrt, fabs
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from chain cimport SEQBIL_PREFETCH, decode_buffers, linear_update, differs, chunk_limits, check_rows, score_unary, score_pair_bilinear, viterbi


@cython.boundscheck(False)
@cython.wraparound(False)
cdef int collect_dphi(const int32_t[::1] labels, const int32_t[::1] pred, int64_t p0, int n, int S,
                      const int64_t[::1] b_ptr, const int32_t[::1] b_ids, double C,
                      int32_t[::1] mark, int32_t[::1] touched, double[:, :, ::1] dblk) noexcept nogil:
    """Gather C * dPhi of a mistaken sequence per touched attribute block.

    touched[:k] lists the attributes, dblk[j] holds the block of touched[j], and
    mark[a] = j while the update runs (the caller resets it to -1)."""
    cdef int i, g, p, gp, pp, k = 0, j
    cdef int64_t q
    cdef int32_t a
    for i in range(n):
        g = labels[p0 + i]
        p = pred[i]
        gp = labels[p0 + i - 1] if i > 0 else S
        pp = pred[i - 1] if i > 0 else S
        if g == p and gp == pp:
            continue
        for q in range(b_ptr[p0 + i], b_ptr[p0 + i + 1]):
            a = b_ids[q]
            j = mark[a]
            if j < 0:
                j = k
                mark[a] = k
                touched[k] = a
                memset(&dblk[k, 0, 0], 0, S * (S + 1) * sizeof(double))
                k += 1
            dblk[j, g, gp] += C
            dblk[j, p, pp] -= C
    return k


cdef inline void prefetch_blocks(int k, const int32_t[::1] touched, const int64_t[::1] slot,
                                 double[:, :, ::1] pool, const double[::1] sigma) noexcept nogil:
    """Ask the cache for the Theta blocks of the k touched attributes (their slots and
    sigmas first), which lie at random places: the refresh loop then finds them."""
    cdef int j, off, nbytes = pool.shape[1] * pool.shape[2] * sizeof(double)
    cdef int64_t s
    for j in range(k):
        SEQBIL_PREFETCH(&slot[touched[j]])
        if sigma.shape[0] > 0:
            SEQBIL_PREFETCH(&sigma[touched[j]])
    for j in range(k):
        s = slot[touched[j]]
        if s >= 0:
            off = 0
            while off < nbytes:
                SEQBIL_PREFETCH(<char*> &pool[s, 0, 0] + off)
                off += 64


cdef inline double* theta_block(int32_t a, int64_t[::1] slot, double[:, :, ::1] pool,
                                int64_t* n_slots) noexcept nogil:
    """The Theta block of attribute a, given a zeroed pool slot on first use."""
    cdef int64_t s = slot[a]
    if s < 0:
        s = n_slots[0]
        slot[a] = s
        n_slots[0] += 1
        memset(&pool[s, 0, 0], 0, pool.shape[1] * pool.shape[2] * sizeof(double))
    return &pool[s, 0, 0]


cdef inline double dot(const double* x, const double* y, int n) noexcept nogil:
    cdef double s = 0.0
    cdef int i
    for i in range(n):
        s += x[i] * y[i]
    return s


cdef inline void matvec(const double* M, const double* x, double* out, int rows, int cols,
                        double scale, bint accumulate) noexcept nogil:
    """out (+)= scale * M x for a row-major rows x cols matrix."""
    cdef int r, c
    cdef double s
    for r in range(rows):
        s = 0.0
        for c in range(cols):
            s += M[r * cols + c] * x[c]
        out[r] = out[r] + scale * s if accumulate else scale * s


cdef inline void rmatvec(const double* M, const double* x, double* out, int rows, int cols,
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


@cython.cdivision(True)
cdef inline double fresh_pair(const double* Th, int S, int R, double* u, double* v) noexcept nogil:
    """Top singular pair of a block by R normalised power steps from about e_c, c the
    column of the block's largest entry. Returns sigma (0 for a zero block)."""
    cdef int r, c, best_c = 0, tau, T = S + 1
    cdef double best = 0.0, nrm
    for r in range(S):
        for c in range(T):
            if fabs(Th[r * T + c]) > best:
                best = fabs(Th[r * T + c])
                best_c = c
    if best == 0.0:
        return 0.0
    for c in range(T):  # e_c plus a small fixed dense part, so that v is not orthogonal to v_1
        v[c] = 0.01 * (0.5 + ((c + 1) * 0.6180339887498949) % 1.0)
    v[best_c] = 1.0
    for tau in range(max(R, 1)):
        matvec(Th, v, u, S, T, 1.0, False)
        nrm = sqrt(dot(u, u, S))
        for r in range(S):
            u[r] /= nrm
        rmatvec(Th, u, v, S, T, 1.0, False)
        nrm = sqrt(dot(v, v, T))
        for c in range(T):
            v[c] /= nrm
    matvec(Th, v, u + S, S, T, 1.0, False)  # u + S: scratch row after u (caller gives 2S)
    return dot(u, u + S, S)


@cython.cdivision(True)
cdef inline double warm_pair(const double* Th, int S, int R, double sigma, double* u, double* v,
                      double* tmp) noexcept nogil:
    """R power steps on Theta_t (= Th) warm-started from v, each normalised by the
    block's previous sigma, as in eqs. (9)-(12): when (u, v, sigma) is the exact
    top triple of Theta_{t-1}, the iterates equal the paper's alpha-bar = u + Delta
    alpha and beta-bar = v + Delta beta. Computing alpha-bar = Theta_t beta-bar / sigma
    directly, rather than u plus the increments, keeps this exact power iteration
    when the previous pair was not converged (the Delta form would carry the old
    residual along) and avoids the cancellation in u + Delta alpha when sigma shrinks.
    Overwrites (u, v) with the normalised pair and returns the new sigma (Rayleigh
    quotient, as the supplement's formula), or -1 when the iterate vanished."""
    cdef int r, c, tau, T = S + 1
    cdef double na, nb
    for tau in range(R):
        matvec(Th, v, u, S, T, 1.0 / sigma, False)
        rmatvec(Th, u, v, S, T, 1.0 / sigma, False)
        nb = sqrt(dot(v, v, T))
        if nb > 1e50 or (0.0 < nb < 1e-50):  # the scale is immaterial; keep it finite
            for c in range(T):
                v[c] /= nb
    if R == 0:
        matvec(Th, v, u, S, T, 1.0, False)
    na = sqrt(dot(u, u, S))
    nb = sqrt(dot(v, v, T))
    if na == 0.0 or nb == 0.0:
        return -1.0
    for r in range(S):
        u[r] /= na
    for c in range(T):
        v[c] /= nb
    matvec(Th, v, tmp, S, T, 1.0, False)
    return dot(u, tmp, S)


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def block_update(const double[:, ::1] Th, double[::1] alpha, double[::1] beta, double sigma, int R):
    """One rank-1 refresh of a single block Theta_t = Th, for tests. Updates alpha
    (= sigma u) and beta (= v) in place and returns the new sigma."""
    cdef int S = Th.shape[0]
    work = np.zeros(8 * (S + 1))
    cdef double[::1] w = work
    return _refresh(&Th[0, 0], S, R, &alpha[0], &beta[0], sigma, &w[0])


@cython.cdivision(True)
cdef double _refresh(const double* Th, int S, int R, double* alpha, double* beta,
                     double sigma, double* work) noexcept nogil:
    """New (alpha, beta, sigma) of one block; work holds 8 (S + 1) doubles."""
    cdef int r, c, T = S + 1
    cdef double* u = work
    cdef double* v = work + 2 * T
    cdef double* tmp = work + 5 * T
    cdef double* old_u = work + 6 * T
    cdef double new_sigma = -1.0, flip
    if sigma > 0.0:
        for r in range(S):
            u[r] = alpha[r] / sigma
            old_u[r] = u[r]
        for c in range(T):
            v[c] = beta[c]
        if S == 4:  # BIES: a literal size lets the compiler unroll the 4 x 5 products
            new_sigma = warm_pair(Th, 4, R, sigma, u, v, tmp)
        else:
            new_sigma = warm_pair(Th, S, R, sigma, u, v, tmp)
    if new_sigma <= 0.0:  # no usable previous pair: start afresh
        for r in range(S):
            old_u[r] = alpha[r]
        new_sigma = fresh_pair(Th, 4, R, u, v) if S == 4 else fresh_pair(Th, S, R, u, v)
    # keep the orientation of the pair (u, v) and (-u, -v) are the same W_a;
    # a flip would cancel in the average
    flip = -1.0 if dot(u, old_u, S) < 0.0 else 1.0
    for r in range(S):
        alpha[r] = flip * new_sigma * u[r]
    for c in range(T):
        beta[c] = flip * v[c] if new_sigma > 0.0 else 0.0
    return new_sigma


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
def bol_chunk(const int64_t[::1] order, const int64_t[::1] seq_ptr, const int32_t[::1] labels,
              const int64_t[::1] u_ptr, const int32_t[::1] u_ids,
              const int64_t[::1] b_ptr, const int32_t[::1] b_ids,
              double[:, ::1] W0, double[:, ::1] trans, double[::1] end, double[:, ::1] U0,
              double[:, ::1] Utrans, double[::1] Uend,
              double[:, :] alpha, double[:, :] beta, double[::1] sigma, double[::1] state,
              double[:, :] Ua, double[:, :] Ub,
              int64_t[::1] slot, double[:, :, ::1] pool, int64_t n_slots,
              int32_t[::1] mark, double C, int R, int64_t counter, bint averaged,
              bint transitions, bint global_mode):
    """Algorithm 2 over the sequences in order; returns (mistakes, counter, n_slots,
    blocks_updated). The pool has a slot for every attribute.

    Block mode: alpha[a] = sigma_a u_a, beta[a] = v_a, refreshed block by block.

    Global mode (the paper read literally): one sigma_1 and one unit-norm (alpha, beta)
    over the whole block-diagonal Theta, with alpha = s_a * alpha_raw and beta =
    s_b * beta_raw (the arrays given), so that the global normalisation is a change of
    two scalars and every step touches only the blocks in dPhi. state = [sigma, s_a,
    s_b, |alpha|^2, |beta|^2, G_a, G_b], G being the running sums of the scales of
    sigma * alpha and beta used for averaging. First update: Theta_0 = 0 has
    sigma_0 = 0 and eq. (9) would divide by it; the first update divides by
    C * |dPhi_1|_F instead (the scale of Theta_1)."""
    for m, name in ((alpha, "alpha"), (beta, "beta"), (Ua, "Ua"), (Ub, "Ub")):
        check_rows(m, name)
    cdef int S = end.shape[0], T = S + 1
    cdef Py_ssize_t jj, N = order.shape[0]
    cdef int maxlen, maxb
    cdef int64_t p0
    chunk_limits(order, seq_ptr, b_ptr, &maxlen, &maxb)
    cdef double[:, ::1] unary, delta
    cdef double[:, :, ::1] pair
    cdef int32_t[:, ::1] back
    cdef int32_t[::1] pred
    unary, pair, delta, back, pred = decode_buffers(maxlen, S)
    cdef int32_t[::1] touched = np.zeros(maxb, dtype=np.int32)
    cdef double[:, :, ::1] dblk = np.zeros((maxb, S, T))
    cdef double[::1] work = np.zeros(8 * T)
    cdef double[::1] old = np.zeros(2 * T)
    cdef int gb = maxb if global_mode else 1
    cdef double[:, ::1] al = np.zeros((gb, S))      # global mode: alpha, beta of the touched blocks
    cdef double[:, ::1] be = np.zeros((gb, T))
    cdef double[:, ::1] da = np.zeros((gb, S))      # and their Delta alpha, Delta beta
    cdef double[:, ::1] db = np.zeros((gb, T))
    cdef double[::1] tmp = np.zeros(T)
    cdef int64_t mistakes = 0, updated = 0
    cdef int n, k, j, r, c
    cdef int32_t a
    cdef double cc
    cdef double* th
    with nogil:
        for jj in range(N):
            p0 = seq_ptr[order[jj]]
            n = <int>(seq_ptr[order[jj] + 1] - p0)
            if n > 0:
                score_unary(u_ids, u_ptr, p0, n, W0, unary)
                score_pair_bilinear(b_ids, b_ptr, p0, n, alpha, beta, pair,
                                    state[0] * state[1] * state[2] if global_mode else 1.0)
                viterbi(unary, pair, trans, end, n, delta, back, pred)
                if differs(labels, p0, pred, n):
                    mistakes += 1
                    cc = C * counter
                    linear_update(labels, pred, p0, n, S, u_ptr, u_ids, C, cc, W0, trans, end, U0, Utrans, Uend,
                                  averaged, transitions)
                    k = collect_dphi(labels, pred, p0, n, S, b_ptr, b_ids, C, mark, touched, dblk)
                    prefetch_blocks(k, touched, slot, pool, sigma)
                    for j in range(k):
                        a = touched[j]
                        mark[a] = -1
                        th = theta_block(a, slot, pool, &n_slots)
                        for r in range(S):
                            for c in range(T):
                                th[r * T + c] += dblk[j, r, c]
                        if global_mode:
                            for r in range(S):
                                al[j, r] = state[1] * alpha[a, r]
                                da[j, r] = 0.0
                            for c in range(T):
                                be[j, c] = state[2] * beta[a, c]
                                db[j, c] = 0.0
                            continue
                        if averaged:
                            for r in range(S):
                                old[r] = alpha[a, r]
                            for c in range(T):
                                old[S + c] = beta[a, c]
                        sigma[a] = _refresh(th, S, R, &alpha[a, 0], &beta[a, 0], sigma[a], &work[0])
                        if sigma[a] < 0.0:
                            sigma[a] = 0.0
                        if averaged:
                            for r in range(S):
                                Ua[a, r] += counter * (alpha[a, r] - old[r])
                            for c in range(T):
                                Ub[a, c] += counter * (beta[a, c] - old[S + c])
                        updated += 1
                    if global_mode and k > 0:
                        updated += global_step(k, touched, dblk, slot, pool, al, be, da, db, tmp, unary,
                                               alpha, beta, state, Ua, Ub, S, R, averaged)
            if global_mode:
                state[5] += state[0] * state[1]
                state[6] += state[2]
            counter += 1
    return mistakes, counter, n_slots, updated


@cython.boundscheck(False)
@cython.wraparound(False)
@cython.cdivision(True)
cdef int global_step(int k, int32_t[::1] touched, double[:, :, ::1] dblk, int64_t[::1] slot,
                     double[:, :, ::1] pool, double[:, ::1] al, double[:, ::1] be, double[:, ::1] da,
                     double[:, ::1] db, double[::1] tmp, double[:, ::1] scratch,
                     double[:, :] a_raw, double[:, :] b_raw, double[::1] state,
                     double[:, :] Ua, double[:, :] Ub, int S, int R, bint averaged) noexcept nogil:
    """Eqs. (9)-(12) and the supplement over the k touched blocks; returns k, or 0 if
    the iterate vanished."""
    cdef int T = S + 1, j, r, c, tau
    cdef int32_t a
    cdef double sig, sig_use, na2, nb2, num, ga, gb, fro = 0.0
    cdef double* th
    for j in range(k):
        for r in range(S):
            for c in range(T):
                fro += dblk[j, r, c] * dblk[j, r, c]
    if fro == 0.0:
        return 0
    sig = state[0]
    sig_use = sig if sig > 0.0 else sqrt(fro)  # first update: see the docstring
    for tau in range(R):
        for j in range(k):                       # eq. (9)
            th = &pool[slot[touched[j]], 0, 0]
            matvec(&dblk[j, 0, 0], &be[j, 0], &da[j, 0], S, T, 1.0 / sig_use, False)
            matvec(th, &db[j, 0], &da[j, 0], S, T, 1.0 / sig_use, True)
        for j in range(k):                       # eq. (11)
            th = &pool[slot[touched[j]], 0, 0]
            rmatvec(&dblk[j, 0, 0], &al[j, 0], &db[j, 0], S, T, 1.0 / sig_use, False)
            rmatvec(th, &da[j, 0], &db[j, 0], S, T, 1.0 / sig_use, True)
    # supplement: incremental norms and sigma from the touched blocks only
    na2 = state[3]
    nb2 = state[4]
    num = sig * sqrt(state[3] * state[4])
    for j in range(k):
        th = &pool[slot[touched[j]], 0, 0]
        na2 += 2.0 * dot(&al[j, 0], &da[j, 0], S) + dot(&da[j, 0], &da[j, 0], S)
        nb2 += 2.0 * dot(&be[j, 0], &db[j, 0], T) + dot(&db[j, 0], &db[j, 0], T)
        matvec(&dblk[j, 0, 0], &be[j, 0], &tmp[0], S, T, 1.0, False)
        num += dot(&al[j, 0], &tmp[0], S)                       # alpha' C dPhi beta
        for c in range(T):
            tmp[c] = be[j, c] + db[j, c]
        matvec(th, &tmp[0], &scratch[0, 0], S, T, 1.0, False)
        num += dot(&da[j, 0], &scratch[0, 0], S)                # Delta-alpha' Theta beta-bar
        matvec(th, &db[j, 0], &scratch[0, 0], S, T, 1.0, False)
        num += dot(&al[j, 0], &scratch[0, 0], S)                # alpha' Theta Delta-beta
    if na2 <= 0.0 or nb2 <= 0.0:
        return 0
    ga = 1.0 / state[1]
    gb = 1.0 / state[2]
    for j in range(k):
        a = touched[j]
        for r in range(S):
            a_raw[a, r] += da[j, r] * ga
            if averaged:
                Ua[a, r] += da[j, r] * ga * state[5]
        for c in range(T):
            b_raw[a, c] += db[j, c] * gb
            if averaged:
                Ub[a, c] += db[j, c] * gb * state[6]
    state[0] = num / sqrt(na2 * nb2)
    state[1] /= sqrt(na2)
    state[2] /= sqrt(nb2)
    state[3] = 1.0
    state[4] = 1.0
    return k


def global_update(double[:, :, ::1] theta, const double[:, :, ::1] D, double[:, :] a_raw,
                  double[:, :] b_raw, double[::1] state, int R):
    """One global-mode update on small dense data, for tests: theta[a] and D[a] are the
    blocks of Theta_{t-1} and C dPhi_t of every attribute a (all counted as touched).
    Updates theta, a_raw, b_raw and state in place; returns the blocks updated."""
    cdef int A = theta.shape[0], S = theta.shape[1], T = S + 1, j, r, c
    touched_arr = np.arange(A, dtype=np.int32)
    slot_arr = np.arange(A, dtype=np.int64)
    al, be = np.zeros((A, S)), np.zeros((A, T))
    for j in range(A):
        for r in range(S):
            al[j, r] = state[1] * a_raw[j, r]
            for c in range(T):
                theta[j, r, c] += D[j, r, c]
        for c in range(T):
            be[j, c] = state[2] * b_raw[j, c]
    return global_step(A, touched_arr, D.copy(), slot_arr, theta, al, be, np.zeros((A, S)),
                       np.zeros((A, T)), np.zeros(T), np.zeros((1, S)), a_raw, b_raw, state,
                       np.zeros((0, 0)), np.zeros((0, 0)), S, R, False)
