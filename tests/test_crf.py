"""The CRF learner: its feature set, objective and gradient against enumeration of
every labelling and finite differences on small random corpora."""
import itertools

import numpy as np
import pytest

from seqbil import params
from seqbil.learners.crf import CRF, feature_set
from test_decode import random_dataset, tables


def settings(**kw):
    s = params.defaults()
    s.update(learner="crf", **kw)
    return s


def make(data, S, A0, A1, transitions=True, **kw):
    learner = CRF(S, A0, A1, settings(**kw), transitions)
    learner.kernel = None
    from seqbil._kernels.crf import CRFKernel
    learner.ptr0, learner.lab0, learner.ptr1, learner.cell1 = feature_set(data, S, A0, A1,
                                                                          learner.settings["all_possible_states"])
    learner.kernel = CRFKernel(S, learner.ptr0, learner.lab0, learner.ptr1, learner.cell1, transitions)
    learner.x, learner.obs = np.zeros(learner.kernel.size), np.zeros(learner.kernel.size)
    learner.kernel.observed(data, learner.obs)
    from seqbil.learners.crf import sequence_blocks
    from concurrent.futures import ThreadPoolExecutor
    learner.blocks = sequence_blocks(data.seq_ptr, learner.jobs)
    learner.n_keyed = learner.kernel.size - S * (S + 2)
    learner.buffers = [(np.zeros(2 * learner.n_keyed), np.zeros(S * (S + 2))) for _ in learner.blocks]
    learner._pool = ThreadPoolExecutor(len(learner.blocks)) if len(learner.blocks) > 1 else None
    learner._data = data
    return learner


def nll_by_enumeration(data, W0, W1, trans, end):
    """sum over sequences of -log p(gold | x), every labelling enumerated."""
    S, total = W0.shape[1], 0.0
    for j in range(data.n_sequences):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        unary, pair = tables(data, j, W0, W1)

        def score(path):
            s, prev = end[path[-1]], S
            for i, y in enumerate(path):
                s += unary[i] [y] + pair[i, y, prev] + trans[y, prev]
                prev = y
            return s
        logz = np.logaddexp.reduce([score(p) for p in itertools.product(range(S), repeat=b - a)])
        total += logz - score(data.labels[a:b])
    return total


@pytest.mark.parametrize("all_states", [False, True])
@pytest.mark.parametrize("transitions", [True, False])
def test_objective_equals_enumeration(rng, all_states, transitions):
    for _ in range(5):
        S, A0, A1 = int(rng.integers(1, 4)), 6, 4
        data = random_dataset(rng, 5, S, A0, A1)
        learner = make(data, S, A0, A1, transitions, all_possible_states=all_states, c2=0.3)
        learner.x[...] = rng.normal(size=learner.x.shape)
        if not transitions:  # the transitions are not features then: they stay zero
            kind, w = learner.parameters()
            learner.x[len(learner.lab0) + len(learner.cell1):][:S * (S + 1)] = 0.0
        kind, w = learner.parameters()
        g = np.zeros_like(learner.x)
        f = learner.evaluate(learner.x, g)
        want = nll_by_enumeration(data, w["W0"], w["W1"], w["trans"], w["end"]) + 0.3 * learner.x @ learner.x
        assert f == pytest.approx(want, rel=1e-10)


def test_gradient_equals_finite_differences(rng):
    for _ in range(5):
        S, A0, A1 = int(rng.integers(2, 4)), 6, 4
        data = random_dataset(rng, 5, S, A0, A1)
        learner = make(data, S, A0, A1, c2=0.1)
        x = rng.normal(size=learner.x.shape)
        g = np.zeros_like(x)
        learner.evaluate(x, g)
        h, fd = 1e-6, np.zeros_like(x)
        for k in range(len(x)):
            e = np.zeros_like(x)
            e[k] = h
            fd[k] = (learner.evaluate(x + e, np.zeros_like(x)) - learner.evaluate(x - e, np.zeros_like(x))) / (2 * h)
        np.testing.assert_allclose(g, fd, atol=1e-6)


def test_feature_set_is_the_seen_pairs(rng):
    S, A0, A1 = 3, 9, 5
    data = random_dataset(rng, 8, S, A0, A1)
    ptr0, lab0, ptr1, cell1 = feature_set(data, S, A0, A1, False)
    seen0, seen1 = set(), set()
    for j in range(data.n_sequences):
        for p in range(data.seq_ptr[j], data.seq_ptr[j + 1]):
            prev = data.labels[p - 1] if p > data.seq_ptr[j] else S
            seen0 |= {(int(a), int(data.labels[p])) for a in data.u_ids[data.u_ptr[p]:data.u_ptr[p + 1]]}
            seen1 |= {(int(a), int(data.labels[p]) * (S + 1) + int(prev))
                      for a in data.b_ids[data.b_ptr[p]:data.b_ptr[p + 1]]}
    got0 = {(a, int(y)) for a in range(A0) for y in lab0[ptr0[a]:ptr0[a + 1]]}
    got1 = {(a, int(c)) for a in range(A1) for c in cell1[ptr1[a]:ptr1[a + 1]]}
    assert got0 == seen0 and got1 == seen1
    assert all(np.all(np.diff(lab0[ptr0[a]:ptr0[a + 1]]) > 0) for a in range(A0))


def test_threads_give_the_same_objective(rng):
    S, A0, A1 = 3, 30, 10
    data = random_dataset(rng, 200, S, A0, A1)
    x = rng.normal(size=make(data, S, A0, A1).x.shape)
    results = []
    for jobs in (1, 2, 3):
        learner = make(data, S, A0, A1, jobs=jobs)
        g = np.zeros_like(x)
        results.append((learner.evaluate(x, g), g))
    for f, g in results[1:]:
        assert f == pytest.approx(results[0][0], rel=1e-12)
        np.testing.assert_allclose(g, results[0][1], rtol=1e-10, atol=1e-10)
    learner = make(data, S, A0, A1, jobs=2)
    g = np.zeros_like(x)
    assert learner.evaluate(x, g) == results[1][0] and np.array_equal(g, results[1][1])  # the same, bit for bit
