"""One pass of the re-embedding passive-aggressive learner (Denis & Ralaivola 2017,
Algorithm 1) and of PA-II (Crammer et al. 2006) over bag-of-words documents.

Documents are CSR arrays: document i holds the word ids ids[ptr[i]:ptr[i + 1]] with
the values vals[...] (x_t's non-zero entries; a word occurs at most once per document,
which seqbil/classify.py ensures). Labels are +1 or -1.

The embedding is stored transposed, E = Phi^T (p x k, one row per word): the Phi-step,
eq. (12), changes only the columns of Phi of the document's words, and Phi x_t reads
only those; as rows of E each is k adjacent doubles, where a k x p layout would
scatter every word's k entries p apart.

Every step is the closed form of Proposition 2:
    w-step,   eq. (11): w   = w_a   + tau_w y Phi x,     tau_w   = l(w_a; Phi) / (|Phi x|^2 + 1/(2C))
    Phi-step, eq. (12): Phi = Phi_a + tau_P y w x^T,     tau_P   = l(w; Phi_a) / (|w|^2 |x|^2 + lam/(2C))
where the anchor (w_a, Phi_a) is (w_t, Phi_t) in the anchored reading (block-coordinate
descent on problem (5)) and the current inner iterate in Algorithm 1 as written.
"""
from libc.stdint cimport int32_t, int64_t
from libc.math cimport fabs


# Its own small helpers: this kernel shares no structure with the sequence kernels, so
# it does not cimport chain.pxd or blocks.pxd.
cdef inline double dot(const double* a, const double* b, int k) noexcept nogil:
    cdef double s = 0.0
    cdef int d
    for d in range(k):
        s += a[d] * b[d]
    return s


cdef inline double hinge(double margin) noexcept nogil:
    return 1.0 - margin if margin < 1.0 else 0.0


def rpa_pass(const int64_t[::1] ptr, const int32_t[::1] ids, const double[::1] vals, const double[::1] y,
             const int64_t[::1] order, double[::1] w, double[:, ::1] E, double C, double lam, int inner,
             double tol, bint anchored, bint learn_phi, double[:, ::1] saved, double[::1] work):
    """Visit the documents in `order`, updating w (k) and the rows of E (p x k) in place.

    Per document, up to `inner` alternations of the w-step and the Phi-step, stopped
    when the objective Q_t of eq. (3) (at the iterate, with xi its hinge loss) changes
    by at most `tol` or the margin holds. learn_phi false: one w-step with Phi fixed,
    i.e. PA-II on Phi x. `saved` (at least max document length x k) keeps the rows of
    Phi_t, `work` (3 k) holds w_t, Phi_t x and Phi x.
    Returns (documents updated, inner iterations run)."""
    cdef int k = w.shape[0]
    cdef Py_ssize_t n = order.shape[0]
    if E.shape[1] != k or saved.shape[1] != k or work.shape[0] < 3 * k:
        raise ValueError("rpa_pass: w, E, saved and work disagree on the dimension k")
    cdef Py_ssize_t longest = 0, t
    for t in range(ptr.shape[0] - 1):
        longest = max(longest, ptr[t + 1] - ptr[t])
    if saved.shape[0] < longest:
        raise ValueError("rpa_pass: saved has fewer rows than the longest document")
    cdef double* wt = &work[0]          # w_t
    cdef double* z0 = &work[k]          # Phi_t x
    cdef double* z = &work[2 * k]       # Phi x at the current iterate
    cdef double* pw = &w[0]
    cdef double half_c = 0.5 / C, lam_c = lam * 0.5 / C
    cdef int64_t a, b, q, i
    cdef int d, it
    cdef double yt, xx, loss, tau, q_prev, q_now, dw, dphi, diff, step
    cdef double* row
    cdef const double* row0
    cdef int64_t updated = 0, steps = 0
    with nogil:
        for t in range(n):
            i = order[t]
            a, b = ptr[i], ptr[i + 1]
            yt = y[i]
            xx = 0.0
            for d in range(k):
                z[d] = 0.0
            for q in range(a, b):
                xx += vals[q] * vals[q]
                row = &E[ids[q], 0]
                for d in range(k):
                    z[d] += vals[q] * row[d]
            loss = hinge(yt * dot(pw, z, k))
            if loss == 0.0 or xx == 0.0:
                continue  # passive: the margin holds (or x = 0, which no step can change)
            updated += 1
            for d in range(k):
                wt[d] = pw[d]
                z0[d] = z[d]
            if learn_phi:
                for q in range(a, b):
                    row = &E[ids[q], 0]
                    for d in range(k):
                        saved[q - a, d] = row[d]
            q_prev = C * loss * loss    # Q_t at (w_t, Phi_t)
            for it in range(inner if learn_phi else 1):
                steps += 1
                # w-step with Phi fixed, eq. (11)
                if anchored:
                    loss = hinge(yt * dot(wt, z, k))
                    tau = loss / (dot(z, z, k) + half_c)
                    for d in range(k):
                        pw[d] = wt[d] + tau * yt * z[d]
                else:
                    loss = hinge(yt * dot(pw, z, k))
                    tau = loss / (dot(z, z, k) + half_c)
                    for d in range(k):
                        pw[d] += tau * yt * z[d]
                if not learn_phi:
                    break
                # Phi-step with w fixed, eq. (12): Phi x moves by tau y |x|^2 w
                if anchored:
                    loss = hinge(yt * dot(pw, z0, k))
                else:
                    loss = hinge(yt * dot(pw, z, k))
                tau = loss / (dot(pw, pw, k) * xx + lam_c)
                for q in range(a, b):
                    row = &E[ids[q], 0]
                    step = tau * yt * vals[q]
                    if anchored:
                        row0 = &saved[q - a, 0]
                        for d in range(k):
                            row[d] = row0[d] + step * pw[d]
                    else:
                        for d in range(k):
                            row[d] += step * pw[d]
                for d in range(k):
                    z[d] = (z0[d] if anchored else z[d]) + tau * yt * xx * pw[d]
                # Q_t of eq. (3) at the new iterate
                dw = 0.0
                for d in range(k):
                    dw += (pw[d] - wt[d]) * (pw[d] - wt[d])
                dphi = 0.0
                for q in range(a, b):
                    row = &E[ids[q], 0]
                    for d in range(k):
                        diff = row[d] - saved[q - a, d]
                        dphi += diff * diff
                loss = hinge(yt * dot(pw, z, k))
                q_now = 0.5 * dw + 0.5 * lam * dphi + C * loss * loss
                if loss == 0.0 or fabs(q_now - q_prev) <= tol:
                    break
                q_prev = q_now
    return updated, steps


def pa_pass(const int64_t[::1] ptr, const int32_t[::1] ids, const double[::1] vals, const double[::1] y,
            const int64_t[::1] order, double[::1] w, double C):
    """PA-II (Crammer et al. 2006) on the sparse vectors x themselves (w has one weight
    per word: the one-hot baseline, Phi = I): w += tau y x, tau = l / (|x|^2 + 1/(2C)).
    Returns the number of documents updated."""
    cdef Py_ssize_t n = order.shape[0], t
    cdef int64_t i, q, updated = 0
    cdef double s, xx, tau
    cdef double half_c = 0.5 / C
    with nogil:
        for t in range(n):
            i = order[t]
            s = 0.0
            xx = 0.0
            for q in range(ptr[i], ptr[i + 1]):
                s += w[ids[q]] * vals[q]
                xx += vals[q] * vals[q]
            s = hinge(y[i] * s)
            if s == 0.0 or xx == 0.0:
                continue
            updated += 1
            tau = s / (xx + half_c)
            for q in range(ptr[i], ptr[i + 1]):
                w[ids[q]] += tau * y[i] * vals[q]
    return updated
