"""Linear-chain CRF (Lafferty, McCallum & Pereira 2001) trained by maximum likelihood,
with CRFsuite's objective and optimizer (train_lbfgs.c, liblbfgs):

    minimize  sum_j -log p(y_j | x_j) + c2 * ||w||^2 + c1 * ||w||_1

by L-BFGS (Nocedal 1980; Liu & Nocedal 1989), or OWL-QN (Andrew & Gao 2007) when c1 > 0.
A pass is one iteration of the optimizer, so every iteration is logged, scored on the
dev data and checkpointed like an epoch of the online learners.

The weights are CRFsuite's feature set (cython_ext/crf.pyx): by default one per
(attribute, label) pair seen in training (and per (1st-order attribute, label pair)
pair seen), plus every label transition and end score; every pair with
all_possible_states.
"""
import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .._kernels.crf import CRFKernel
from .._kernels.linalg import dot
from ..linesearch import LINESEARCHES
from ..optimize import LBFGS
from ..parameter import Param
from .base import BatchLearner, Checkpointed, register

# the coefficients tried when none is given, strongest regularisation first (the path
# stops two steps past the best): CRFsuite's default c2 = 1 and CRF++'s -c 0.5 .. 500
# (c2 = 1 / (2 c)) lie inside
C2_GRID = (3.0, 1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001)
C1_GRID = (3.0, 1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001)
# learner = auto's path, a point a decade: each point costs 40 or more iterations on each
# fold, and on the development suite's dev splits the best c2 of the finer path scored
# within noise of its decade neighbours; it goes one decade further, where the small
# corpora's path was still climbing (bn-indian, mr-indian: best at 0.001)
COARSE_GRID = (1.0, 0.1, 0.01, 0.001, 0.0001)
# the optimizer's line searches that CRFsuite names (it has no name for Armijo's)
CRFSUITE_LINESEARCHES = tuple(name for name in LINESEARCHES if name != "Armijo")


def seen_pairs(ids, cells, width, n_rows):
    """CSR lists of the distinct (row, cell) pairs (ids[k], cells[k]): (ptr int64
    [n_rows + 1], cells int32, ascending within each row)."""
    keys = np.unique(ids.astype(np.int64) * width + cells)
    counts = np.bincount(keys // width, minlength=n_rows)
    return np.concatenate([[0], np.cumsum(counts)]).astype(np.int64), (keys % width).astype(np.int32)


def feature_set(data, S, A0, A1, all_states):
    """The CRF's features over an encoded training corpus: (ptr0, lab0, ptr1, cell1).
    Under partial labels (data.known) a position's pairs are those of every label it
    may have: the likelihood of what is known sums over all of them."""
    if all_states:
        ptr0 = np.arange(A0 + 1, dtype=np.int64) * S
        lab0 = np.tile(np.arange(S, dtype=np.int32), A0)
    else:
        ptr0, lab0 = seen_pairs(*_pairs(data.u_ptr, data.u_ids, _kinds(data), None, data, S, 1), S, A0)
    b_ptr = data.b_pointers()
    if len(data.b_ids):
        kind = _kinds(data)
        prev = np.empty(data.n_positions, dtype=np.int64)
        prev[1:] = kind[:-1]
        prev[data.seq_ptr[:-1][np.diff(data.seq_ptr) > 0]] = S  # the start symbol
        ptr1, cell1 = seen_pairs(*_pairs(b_ptr, data.b_ids, kind, prev, data, S, S + 1), S * (S + 1), A1)
    else:
        ptr1, cell1 = np.zeros(A1 + 1, dtype=np.int64), np.zeros(0, dtype=np.int32)
    return ptr0, lab0, ptr1, cell1


def _kinds(data):
    """Each position's label id, or what data.known says of it (-1, -2 - r)."""
    return (data.labels if data.known is None else data.known).astype(np.int64)


def _allowed(kind, data, S):
    """The labels a kind allows (S, the start symbol, as itself)."""
    if kind >= 0:
        return np.array([kind])
    return np.arange(S) if kind == -1 else np.flatnonzero(data.label_sets[-2 - kind])


def _pairs(ptr, ids, kind, prev, data, S, width):
    """(ids, cells) of the features the positions' attributes take: a 0-order
    attribute's label (prev None), or a 1st-order one's cell y * width + v. A
    position whose label (or previous label) is a set, or unknown, takes every cell
    they allow."""
    per = np.diff(ptr)
    known = (kind >= 0) if prev is None else (kind >= 0) & (prev >= 0)
    cell = kind if prev is None else kind * width + prev
    out_ids, out_cells = [ids[np.repeat(known, per)]], [np.repeat(cell[known], per[known])]
    if not known.all():
        groups = np.stack([kind, prev if prev is not None else np.zeros_like(kind)], axis=1)[~known]
        where = np.flatnonzero(~known)
        for group in np.unique(groups, axis=0):
            at = np.zeros(len(kind), dtype=bool)
            at[where[(groups == group).all(axis=1)]] = True
            attrs = np.unique(ids[np.repeat(at, per)])
            cells = _allowed(group[0], data, S)
            if prev is not None:
                cells = (cells[:, None] * width + _allowed(group[1], data, S)[None, :]).ravel()
            out_ids.append(np.repeat(attrs, len(cells)))
            out_cells.append(np.tile(cells, len(attrs)))
    return np.concatenate(out_ids), np.concatenate(out_cells).astype(np.int64)


def seen_transitions(data, S):
    """(trans S x (S + 1), end S) of the transitions, first labels (column S) and last
    labels the training corpus holds; under partial labels, every one its positions
    allow."""
    kind = _kinds(data)
    prev = np.full(len(kind), S, dtype=np.int64)
    prev[1:] = kind[:-1]
    starts, ends = data.seq_ptr[:-1], data.seq_ptr[1:]
    prev[starts[ends > starts]] = S
    trans, end = np.zeros((S, S + 1), dtype=bool), np.zeros(S, dtype=bool)
    for y, v in set(zip(kind.tolist(), prev.tolist())):
        trans[np.ix_(_allowed(y, data, S), _allowed(v, data, S))] = True
    for y in set(kind[ends[ends > starts] - 1].tolist()):
        end[_allowed(y, data, S)] = True
    return trans, end


def sequence_blocks(seq_ptr, k):
    """k ranges of sequences with about as many positions each."""
    N, P = len(seq_ptr) - 1, int(seq_ptr[-1])
    cuts = np.searchsorted(seq_ptr, np.linspace(0, P, k + 1)[1:-1]) if k > 1 else []
    bounds = [0, *sorted(set(int(c) for c in cuts)), N]
    return [(a, b) for a, b in zip(bounds[:-1], bounds[1:]) if b > a] or [(0, N)]


class CRFWeights:
    """The weights of a linear-chain CRF as one vector x over CRFsuite's feature set
    (cython_ext/crf.pyx): building it, the model's blocks, continuing a model. For the
    learners that train it (crf, l2sgd)."""
    FEATURE_SET = ("ptr0", "lab0", "ptr1", "cell1")  # the arrays of the feature set (build_features)

    def build_features(self, data):
        """The feature set of the training corpus, its kernel and x = 0; without
        all_possible_transitions, the transitions, first and last labels not seen in
        training keep their weight (0), as CRFsuite has no feature for them."""
        self.ptr0, self.lab0, self.ptr1, self.cell1 = feature_set(data, self.S, self.A0, self.A1,
                                                                  self.settings.all_possible_states)
        self.kernel = CRFKernel(self.S, self.ptr0, self.lab0, self.ptr1, self.cell1, self.transitions)
        self.x = np.zeros(self.kernel.size)
        S = self.S
        self.forbidden = np.zeros(S * (S + 2), dtype=np.uint8)
        self.frozen = np.zeros(S * (S + 2), dtype=np.uint8)
        if not self.settings.all_possible_transitions:
            trans, end = seen_transitions(data, S)
            self.frozen[:] = ~np.concatenate([trans.ravel(), end])
        self.kernel.set_rules(self.forbidden, self.frozen)
        self.frozen_cells = np.flatnonzero(self.frozen)  # (what evaluate zeroes in the gradient)

    def forbid(self, trans, end):
        """Train over the labellings the rules allow (Learner.forbid): the forbidden
        transitions and last labels score -inf in the kernel, and keep their weight, 0."""
        cells = np.concatenate([trans.ravel(), end]).astype(np.uint8)
        self.forbidden |= cells
        self.frozen |= cells
        self.x[len(self.x) - len(cells):][cells.astype(bool)] = 0.0
        self.kernel.set_rules(self.forbidden, self.frozen)
        self.frozen_cells = np.flatnonzero(self.frozen)

    @property
    def n_features(self):
        return self.kernel.size

    def parameters(self):
        S, T, x = self.S, self.S + 1, self.x
        W0 = np.zeros((self.A0, S))
        rows = np.repeat(np.arange(self.A0), np.diff(self.ptr0))
        W0[rows, self.lab0] = x[:len(self.lab0)]
        W1 = np.zeros((self.A1, S * T))
        rows = np.repeat(np.arange(self.A1), np.diff(self.ptr1))
        off = len(self.lab0)
        W1[rows, self.cell1] = x[off:off + len(self.cell1)]
        off += len(self.cell1)
        trans = x[off:off + S * T].reshape(S, T).copy()
        end = x[off + S * T:].copy()
        return "linear", {"W0": W0, "W1": W1.reshape(self.A1, S, T), "trans": trans, "end": end}

    def warm_start(self, weights):
        """Start from a saved model's weights at the features of this feature set (a
        weight of the model outside it is dropped)."""
        S, T = self.S, self.S + 1
        rows = np.repeat(np.arange(self.A0), np.diff(self.ptr0))
        self.x[:len(self.lab0)] = weights["W0"][rows, self.lab0]
        off = len(self.lab0)
        rows = np.repeat(np.arange(self.A1), np.diff(self.ptr1))
        self.x[off:off + len(self.cell1)] = weights["W1"].reshape(self.A1, S * T)[rows, self.cell1]
        off += len(self.cell1)
        self.x[off:off + S * T] = weights["trans"].reshape(-1)
        self.x[off + S * T:] = weights["end"]


@register
class CRF(CRFWeights, BatchLearner):
    name = "crf"
    summary = "linear-chain CRF (Lafferty et al. 2001) by maximum likelihood: L-BFGS with L2 (c2), OWL-QN with " \
              "L1 (c1), as CRFsuite"
    averages = False
    probabilistic = True
    defaults = {"epochs": 1000}
    checkpointed = Checkpointed(arrays=("x",), fixed=("obs",) + CRFWeights.FEATURE_SET, parts={"opt:": "optimizer"})
    shown = (("objective", "objective {:.6g}"), ("gnorm", "|g| {:.4g}"), ("step", "step {:.3g}"),
             ("evaluations", lambda n: f"{n} evaluation{'s' if n != 1 else ''}"))
    # all_possible_states, c1, c2, period, delta and jobs are in the core table (params.py)
    options = (
        Param("penalty", str, "l2", "CRF: which coefficients are chosen on held-out data when neither c1 nor c2 "
              "is given: l2 (c2; c1 = 0), l1 (c1; c2 = 0) or elasticnet (both); a given c1 or c2 is used as given, "
              "the other at its default", choices=("l2", "l1", "elasticnet")),
        Param("crf_memories", int, 6, "CRF: L-BFGS memory, the number of corrections kept (CRFsuite's "
              "num_memories)", positive=True, maximum=10 ** 4),
        Param("crf_epsilon", float, 1e-5, "CRF: stop when |gradient| / max(1, |w|) < epsilon (CRFsuite's epsilon)",
              minimum=0),
        Param("crf_linesearch", str, "MoreThuente", "CRF: line search of L-BFGS (CRFsuite's linesearch; OWL-QN, "
              "c1 > 0, always backtracks)", choices=CRFSUITE_LINESEARCHES),
        Param("crf_max_linesearch", int, 20, "CRF: most trials of one line search (CRFsuite's max_linesearch)",
              positive=True, maximum=10 ** 4),
    )

    @classmethod
    def grid(cls, settings, coarse=False):
        """The regularisation is what decides a CRF's accuracy on a small corpus (CRF++
        on its chunking example loses 1.9 F1 at -c 0.5 against -c 4), so without a
        given c1 or c2 they are chosen: a path from strong to weak regularisation."""
        if settings.given("c1") or settings.given("c2"):
            return []
        penalty = settings.penalty
        if penalty == "l2":
            return [{"c1": 0.0, "c2": c} for c in (COARSE_GRID if coarse else C2_GRID)]
        if penalty == "l1":
            return [{"c1": c, "c2": 0.0} for c in (COARSE_GRID if coarse else C1_GRID)]
        return [{"c1": a, "c2": b} for a in (1.0, 0.3, 0.1) for b in (1.0, 0.1, 0.01)]

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        self.c1, self.c2 = float(settings.c1), float(settings.c2)
        jobs = int(settings.jobs)
        self.jobs = jobs or (os.cpu_count() or 1)
        self.kernel = self.optimizer = None
        self._data = self._pool = None

    def pass_name(self, k):
        return f"iteration {k + 1}/{self.passes()}"

    def prepare(self, data):
        """The feature set and the observed counts of the training corpus."""
        S = self.S
        self.build_features(data)
        self.obs = np.zeros(self.kernel.size)
        self.kernel.observed(data, self.obs, data.known)
        self.blocks = sequence_blocks(data.seq_ptr, self.jobs)
        # per block: the keyed weights interleaved with their gradient, and the gradient
        # of the transitions and end scores (cython_ext/crf.pyx: expected)
        self.n_keyed = self.kernel.size - S * (S + 2)
        self.buffers = [(np.zeros(2 * self.n_keyed), np.zeros(S * (S + 2))) for _ in self.blocks]
        if len(self.blocks) > 1:
            self._pool = ThreadPoolExecutor(len(self.blocks))

        s = self.settings
        self.optimizer = LBFGS(self.x, self.evaluate, c1=self.c1, num_memories=s.crf_memories,
                               epsilon=s.crf_epsilon, period=s.period, delta=s.delta,
                               linesearch=s.crf_linesearch, max_linesearch=s.crf_max_linesearch)

    def evaluate(self, x, g):
        """The objective's smooth part at x: sum of -log p(y | x) over the training
        sequences (-log p(known | x) for a partially labelled one: CRFKernel.expected)
        plus c2 ||x||^2; its gradient into g."""
        data, K = self._data, self.n_keyed
        for xg, gte in self.buffers:
            xg[0::2], xg[1::2], gte[...] = x[:K], 0.0, 0.0

        def block(i):
            return self.kernel.expected(data, self.buffers[i][0], x[K:], self.buffers[i][1], *self.blocks[i],
                                        data.known, data.label_sets)
        parts = list(self._pool.map(block, range(len(self.blocks)))) if self._pool else [block(0)]
        logz = 0.0
        for i, (xg, gte) in enumerate(self.buffers):  # summed in a fixed order: the same result every time
            logz += parts[i]
            if i == 0:
                g[:K], g[K:] = xg[1::2], gte
            else:
                g[:K] += xg[1::2]
                g[K:] += gte
        g -= self.obs
        g += (2.0 * self.c2) * x
        g[K + self.frozen_cells] = 0.0  # (weights that are no features: they keep their value)
        return logz - dot(x, self.obs) + self.c2 * dot(x, x)

    def train_pass(self, data, k):
        """One iteration of the optimizer; returns its record (objective, gradient
        norm, step, evaluations, and stop: why the optimizer ended, or None)."""
        self._data = data
        try:
            return self.optimizer.step()
        finally:
            self._data = None

    def finish(self):
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None
        self.obs = self.buffers = self.optimizer = None
