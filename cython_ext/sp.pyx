"""Structured perceptron (Collins 2002) on the linear first-order model, eq. (2).

Averaging uses the lazy trick of Daume (2006, p. 19): besides W keep U += c * dW,
where c counts the sequences seen; the averaged weights are W - U / c. An update
therefore touches only the weights of the features in dPhi.

The 1st-order weights (and their sums) have a row only for the attributes an update
reached, at the attribute's slot, given in the order they are first reached: the
rows that are never written stay untouched zero pages (on a segmentation corpus about
half the attributes never are).
"""
import numpy as np  # for the buffers of chain.pxd
from libc.stdint cimport int32_t, int64_t
from chain cimport (Corpus, Linear, Lattice, PathDiff, b_begin, corpus_view, linear_view, linear_tasks, update_targets,
                    for_sequence, task_buffers, check_tasks, lattice_new, chunk_limits, differs, path_diff,
                    next_diff, linear_update, score_unary, score_pair_linear, mark_wrong, mark_diff, MAX_TASKS)
from bounded cimport Bounded, pass_search, pass_viterbi, trans_rows_refresh, SMALL


cdef inline void pair_update(const Corpus* c, const Linear* m, const int32_t* pred, int64_t p0, int n, double* W1,
                             double* U1, double C, double cc, int32_t* slot, int64_t* used) noexcept nogil:
    """Perceptron step on the 1st-order weights W1 (a pool of S x (S + 1) rows, row
    slot[a] attribute a's; a row not yet reached takes the next free one) and their
    sums U1 (with tasks, on each weight the update reaches, update_targets)."""
    cdef int S = m.S, T = S + 1, t, n_t
    cdef Py_ssize_t row = S * T, r
    cdef int64_t k
    cdef double* w
    cdef double* u
    cdef double s
    cdef int32_t ids[MAX_TASKS]
    cdef double steps[MAX_TASKS]
    cdef PathDiff d = path_diff(c.labels + p0, pred, n, S)
    while next_diff(&d):
        for k in range(b_begin(c, p0 + d.i), b_begin(c, p0 + d.i + 1)):
            n_t = update_targets(m, 1, c.b_ids[k], ids, steps)
            for t in range(n_t):
                r = slot[ids[t]]
                if r < 0:
                    r = used[0]
                    slot[ids[t]] = <int32_t> r
                    used[0] += 1
                s = C * steps[t]
                w = W1 + r * row
                w[d.g * T + d.gp] += s
                w[d.p * T + d.pp] -= s
                if m.averaged:
                    s = cc * steps[t]
                    u = U1 + r * row
                    u[d.g * T + d.gp] += s
                    u[d.p * T + d.pp] -= s


cdef class PerceptronKernel:
    """The perceptron's arrays, updated in place: the linear part (W0, trans, end and,
    when averaged, U0, Utrans, Uend) and the 1st-order weights W1 (A1 x S x (S + 1))
    with their sums U1."""
    cdef Linear lin
    cdef double* W1
    cdef double* U1
    cdef int32_t* slot
    cdef double C
    cdef object arrays  # owns the memory the pointers above point into
    cdef public int bounded_from  # decode by bounded search (bounded.pxd) from this many labels

    def __init__(self, double[:, ::1] W0, double[:, :, ::1] W1, double[:, ::1] trans, double[::1] end,
                 double[:, ::1] U0, double[:, :, ::1] U1, double[:, ::1] Utrans, double[::1] Uend, double C,
                 bint averaged, bint transitions, int32_t[::1] slot, tasks=None):
        """W1, U1: pools of rows by slot (slot[a]: attribute a's row, -1 for none yet;
        as many rows as slot has entries). tasks: None, or multi-task learning as
        chain.pxd's linear_tasks takes it."""
        self.lin = linear_view(W0, trans, end, U0, Utrans, Uend, averaged, transitions)
        coupling = linear_tasks(&self.lin, tasks, trans.shape[0], end.shape[0])
        if W1.shape[0] < slot.shape[0] or (averaged and U1.shape[0] < slot.shape[0]):
            raise ValueError("the pools have fewer rows than slot has attributes")
        self.W1 = &W1[0, 0, 0]
        self.U1 = &U1[0, 0, 0]
        self.slot = &slot[0] if slot.shape[0] else NULL
        self.C = C
        self.bounded_from = SMALL
        self.arrays = (W0, W1, trans, end, U0, U1, Utrans, Uend, coupling, slot)

    def train_chunk(self, data, const int64_t[::1] order, int64_t counter, int64_t used):
        """One pass of perceptron updates over the sequences data[order].

        Returns (mistakes, counter, used): the number of wrongly decoded sequences, the
        updated averaging counter and the number of slots in use.
        """
        cdef Corpus c = corpus_view(data)
        cdef Linear m = self.lin, eff
        cdef const Linear* mm
        check_tasks(&c, &m, order)
        buffers = task_buffers(&eff, m.S)
        cdef double* W1 = self.W1
        cdef double* U1 = self.U1
        cdef double C = self.C, cc
        cdef int maxlen, maxb, n
        chunk_limits(order, c.seq_ptr, c.b_ptr, c.b_width, &maxlen, &maxb)
        cdef Lattice L
        work = lattice_new(&L, maxlen, m.S)
        # the path by bounded search (bounded.pxd), with one task's transitions only
        cdef Bounded B
        cdef Bounded* bp
        cdef bint filled
        search = pass_search(&B, &bp, m.S, m.trans, self.bounded_from if m.tasks == 0 else m.S + 1, maxlen)
        cdef Py_ssize_t j, N = order.shape[0]
        cdef int64_t p0, mistakes = 0
        with nogil:
            for j in range(N):
                p0 = c.seq_ptr[order[j]]
                n = <int>(c.seq_ptr[order[j] + 1] - p0)
                if n > 0:
                    mm = for_sequence(&m, &eff, &c, order[j])
                    score_unary(&c, mm, &L, p0, n)
                    filled = score_pair_linear(&c, W1, &L, p0, n, self.slot, bp != NULL)
                    pass_viterbi(&L, mm, bp, filled, n, L.pred)
                    if differs(c.labels + p0, L.pred, n):
                        mistakes += 1
                        mark_wrong(&c, order[j])
                        mark_diff(&c, L.pred, p0, n, m.S)
                        cc = C * counter
                        linear_update(&c, L.pred, p0, n, &m, C, cc)
                        pair_update(&c, &m, L.pred, p0, n, W1, U1, C, cc, self.slot, &used)
                        if bp != NULL:
                            trans_rows_refresh(m.trans, c.labels + p0, L.pred, n, bp)
                counter += 1
        return mistakes, counter, used
