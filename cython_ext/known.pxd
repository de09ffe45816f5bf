# What is known of the labels of a corpus's positions, for forced decoding and for
# training from partial labels: known[p] >= 0 is position p's label; -1 leaves it free;
# known[p] <= -2 allows the labels of row -2 - known[p] of sets (n_sets x S, 1 where a
# label is allowed). force() gives every label a position does not allow the score
# -inf, so that only the labellings that keep what is known remain: Viterbi, k-best,
# max-marginals and forward-backward alike (exp(-inf) = 0).
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.math cimport INFINITY
from chain cimport Lattice


cdef struct Known:
    const int32_t* ids        # one per position of the corpus, or NULL: nothing known
    const uint8_t* sets       # n_sets x S
    int n_sets


cdef inline Known known_view(data, const int32_t[::1] known, const uint8_t[:, ::1] sets, int S) except *:
    """The Known of a corpus's positions (ids NULL when known is None), every id and
    set checked: a label id below S (one at or above it, a label the model does not
    have, is free), a set row that exists and allows at least one label."""
    cdef Known k
    cdef Py_ssize_t p, r, y
    cdef bint allows
    k.ids, k.sets, k.n_sets = NULL, NULL, 0
    if known is None:
        return k
    if known.shape[0] != data.n_positions:
        raise ValueError("known labels: one per position")
    if sets is not None:
        if sets.shape[0] and sets.shape[1] != S:
            raise ValueError("label sets: one column per label")
        k.n_sets = sets.shape[0]
        for r in range(k.n_sets):
            allows = False
            for y in range(S):
                allows = allows or sets[r, y] != 0
            if not allows:
                raise ValueError(f"label set {r} allows no label")
        if k.n_sets:
            k.sets = &sets[0, 0]
    for p in range(known.shape[0]):
        if known[p] <= -2 and -2 - known[p] >= k.n_sets:
            raise ValueError(f"position {p} refers to a label set that does not exist")
    if known.shape[0]:
        k.ids = &known[0]
    return k


cdef inline void force(const Lattice* L, const Known* k, int64_t p0, int n) noexcept nogil:
    """Every label position p0 + i (i < n) does not allow scores -inf in L.unary."""
    cdef int i, y, S = L.S
    cdef int32_t v
    cdef const uint8_t* row
    if k.ids == NULL:
        return
    for i in range(n):
        v = k.ids[p0 + i]
        if 0 <= v < S:
            for y in range(S):
                if y != v:
                    L.unary[i * S + y] = -INFINITY
        elif v <= -2:
            row = k.sets + <Py_ssize_t> (-2 - v) * S
            for y in range(S):
                if not row[y]:
                    L.unary[i * S + y] = -INFINITY
