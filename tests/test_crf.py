"""The CRF learner: its feature set, objective and gradient against enumeration of
every labelling and finite differences on small random corpora."""
import itertools

import numpy as np
import pytest

from seqbil import params
from seqbil.learners.crf import CRF, feature_set
from test_decode import random_dataset, tables


def settings(**kw):
    return params.Settings.of({"learner": "crf", **kw})


def make(data, S, A0, A1, transitions=True, **kw):
    """A CRF learner prepared on data, ready to evaluate."""
    learner = CRF(S, A0, A1, settings(**kw), transitions)
    learner.prepare(data)
    learner._data = data
    return learner


def path_score(path, unary, pair, trans, end):
    """The score of one labelling of a sequence's tables (test_decode.tables)."""
    s, prev = end[path[-1]], len(end)
    for i, y in enumerate(path):
        s += unary[i][y] + pair[i, y, prev] + trans[y, prev]
        prev = y
    return s


def nll_by_enumeration(data, W0, W1, trans, end):
    """sum over sequences of -log p(gold | x), every labelling enumerated."""
    S, total = W0.shape[1], 0.0
    for j in range(data.n_sequences):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        tabs = (*tables(data, j, W0, W1), trans, end)
        logz = np.logaddexp.reduce([path_score(p, *tabs) for p in itertools.product(range(S), repeat=b - a)])
        total += logz - path_score(data.labels[a:b], *tabs)
    return total


@pytest.mark.parametrize("all_states", [False, True])
@pytest.mark.parametrize("transitions", [True, False])
@pytest.mark.parametrize("A1", [4, 0])  # (0: the transitions' factors made once for all sequences)
def test_objective_equals_enumeration(rng, all_states, transitions, A1):
    for _ in range(5):
        S, A0 = int(rng.integers(1, 4)), 6
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


def nll_by_recursion(data, W0, W1, trans, end):
    """nll_by_enumeration for longer sequences and more labels: log Z by the forward
    recursion in log space, a dense logaddexp over every label pair."""
    S, total = W0.shape[1], 0.0
    for j in range(data.n_sequences):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        unary, pair, trans_, end_ = (*tables(data, j, W0, W1), trans, end)
        alpha = unary[0] + pair[0, :, S] + trans_[:, S]
        for i in range(1, b - a):
            # alpha_i[y] = unary[i, y] + log sum_v exp(alpha_{i-1}[v] + pair[i, y, v] + trans[y, v])
            alpha = unary[i] + np.logaddexp.reduce(alpha[None, :] + pair[i, :, :S] + trans_[:, :S], axis=1)
        total += np.logaddexp.reduce(alpha + end_) - path_score(data.labels[a:b], unary, pair, trans_, end_)
    return total


def finite_differences(learner, x, h):
    """The objective's gradient at x by central differences of step h."""
    fd = np.zeros_like(x)
    for k in range(len(x)):
        e = np.zeros_like(x)
        e[k] = h
        fd[k] = (learner.evaluate(x + e, np.zeros_like(x)) - learner.evaluate(x - e, np.zeros_like(x))) / (2 * h)
    return fd


def test_gradient_equals_finite_differences(rng):
    for _ in range(5):
        S, A0, A1 = int(rng.integers(2, 4)), 6, 4
        data = random_dataset(rng, 5, S, A0, A1)
        learner = make(data, S, A0, A1, c2=0.1)
        x = rng.normal(size=learner.x.shape)
        g = np.zeros_like(x)
        learner.evaluate(x, g)
        np.testing.assert_allclose(g, finite_differences(learner, x, 1e-6), atol=1e-6)


def test_gradient_at_large_weights_equals_finite_differences(rng):
    """Weights in the hundreds, longer sequences and no 1st-order attributes (the
    transitions' expected counts summed inside the forward-backward): the sequences
    the scaled recursion cannot hold are redone in log space without leaving a part
    of their pair marginals behind."""
    for _ in range(60):
        S, A0 = int(rng.integers(2, 6)), 6
        data = random_dataset(rng, 4, S, A0, 0, max_len=12)
        learner = make(data, S, A0, 0, c2=0.0)
        x = rng.normal(size=learner.x.shape) * 10 ** rng.uniform(1.5, 3)
        g = np.zeros_like(x)
        learner.evaluate(x, g)
        np.testing.assert_allclose(g, finite_differences(learner, x, 1e-4), atol=1e-4)


@pytest.mark.parametrize("A1", [0, 3])
def test_gradient_with_many_labels_equals_finite_differences(rng, A1):
    """Label counts past the recursions' blocks of four rows (and their remainders), and
    sequences long enough that the transitions' expected counts (summed after the
    backward pass, four positions at a time, without 1st-order attributes) take
    several blocks."""
    for S in (5, 8, 11):
        data = random_dataset(rng, 3, S, 5, A1, max_len=14)
        learner = make(data, S, 5, A1, c2=0.1)
        x = learner.x[...] = rng.normal(size=learner.x.shape)
        g = np.zeros_like(x)
        f = learner.evaluate(x, g)
        kind, w = learner.parameters()  # the objective, against the dense log-space recursion
        want = nll_by_recursion(data, w["W0"], w["W1"], w["trans"], w["end"]) + 0.1 * x @ x
        assert f == pytest.approx(want, rel=1e-10)
        np.testing.assert_allclose(g, finite_differences(learner, x, 1e-6), atol=1e-6)


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


# --- training runs ---------------------------------------------------------------------

from test_marginals import TOY_TEMPLATES, check_model_probabilities, toy_corpus  # noqa: E402


def toy_model(rng, tmp_path, **options):
    import seqbil

    (tmp_path / "t.template").write_text(TOY_TEMPLATES)
    return seqbil.train(toy_corpus(rng, 80), template=str(tmp_path / "t.template"), learner="crf",
                        precision="float64", **options)


def test_crf_model_probabilities_are_its_distribution(rng, tmp_path):
    model = toy_model(rng, tmp_path, c2=0.1, epochs=50)
    assert model.temperature == 1.0
    check_model_probabilities(model, toy_corpus(rng, 6))


def test_crf_reaches_the_minimum(rng):
    """The optimizer (liblbfgs's L-BFGS) ends where scipy's L-BFGS-B ends on the same
    objective."""
    from scipy.optimize import minimize

    S, A0, A1 = 3, 20, 8
    data = random_dataset(rng, 60, S, A0, A1)
    learner = make(data, S, A0, A1, c2=0.05, crf_epsilon=1e-9, delta=0.0)
    while learner.train_pass(data, 0)["stop"] is None:
        pass
    learner._data = data
    mine = learner.evaluate(learner.x.copy(), np.zeros_like(learner.x))

    def fg(x):
        g = np.zeros_like(x)
        return learner.evaluate(x, g), g
    theirs = minimize(fg, np.zeros_like(learner.x), jac=True, method="L-BFGS-B", options={"gtol": 1e-10,
                                                                                          "ftol": 1e-15})
    assert mine == pytest.approx(theirs.fun, rel=1e-8)


def test_crf_l1_gives_zeros_and_the_optimum(rng):
    """OWL-QN: many weights exactly 0, and the subgradient optimality conditions of
    f + c1 |x|_1 hold at the end."""
    S, A0, A1 = 3, 20, 8
    data = random_dataset(rng, 60, S, A0, A1)
    learner = make(data, S, A0, A1, c1=2.0, c2=0.0, crf_epsilon=1e-8, delta=0.0)
    while learner.train_pass(data, 0)["stop"] is None:
        pass
    x, g = learner.x, np.zeros_like(learner.x)
    learner._data = data
    learner.evaluate(x.copy(), g)
    assert np.count_nonzero(x == 0) > 0
    nz = x != 0
    np.testing.assert_allclose(g[nz] + 2.0 * np.sign(x[nz]), 0, atol=1e-3)
    assert np.all(np.abs(g[~nz]) <= 2.0 + 1e-3)


def test_crf_jobs(rng, tmp_path):
    """The same jobs: the same model, byte for byte; other jobs: sums in another order."""
    import seqbil

    corpus = toy_corpus(rng, 300)
    (tmp_path / "t.template").write_text(TOY_TEMPLATES)
    files = {}
    for name, jobs in (("a", 2), ("b", 2), ("c", 1)):
        seqbil.train(corpus, template=str(tmp_path / "t.template"), learner="crf", epochs=15, jobs=jobs,
                     precision="float64", model=str(tmp_path / f"{name}.sbm"))
        files[name] = tmp_path / f"{name}.sbm"
    assert files["a"].read_bytes() == files["b"].read_bytes()
    a, c = seqbil.load(str(files["a"])), seqbil.load(str(files["c"]))
    test = toy_corpus(rng, 50)
    assert a.tag_many([[r[:-1] for r in s] for s in test]) == c.tag_many([[r[:-1] for r in s] for s in test])
    for name in ("W0", "trans", "end"):
        np.testing.assert_allclose(a.weights[name], c.weights[name], atol=1e-6)


def test_crf_refuses_what_it_cannot_do(rng, tmp_path):
    import seqbil

    (tmp_path / "t.template").write_text(TOY_TEMPLATES)
    for name in ("one", "two"):
        with open(tmp_path / f"{name}.txt", "w") as f:
            f.write("\n".join("\n".join(" ".join(r) for r in s) + "\n" for s in toy_corpus(rng, 10)))
    with pytest.raises(seqbil.SeqbilError, match="does not learn several tasks"):
        seqbil.train(template=str(tmp_path / "t.template"), learner="crf",
                     tasks=[f"{n}={tmp_path / n}.txt" for n in ("one", "two")])
    with pytest.raises(seqbil.SeqbilError, match="does not support iterative parameter mixing"):
        seqbil.train(str(tmp_path / "one.txt"), template=str(tmp_path / "t.template"), learner="crf", shards=2)
