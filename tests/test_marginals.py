"""Marginal probabilities (sum-product forward-backward) against enumeration of every
labelling on small random cases."""
import itertools

import numpy as np
import pytest

from seqbil._kernels.decode import forward_backward_tables
from seqbil.learners import LEARNERS


def enumerate_paths(unary, pair, trans, end, temperature=1.0):
    """log Z, node marginals and pair marginals by brute force over all S ** n paths."""
    n, S = unary.shape
    scores, paths = [], list(itertools.product(range(S), repeat=n))
    for path in paths:
        s, prev = 0.0, S
        for i, y in enumerate(path):
            s += unary[i, y] + pair[i, y, prev] + trans[y, prev]
            prev = y
        scores.append((s + end[path[-1]]) / temperature)
    scores = np.array(scores)
    logz = np.logaddexp.reduce(scores)
    p = np.exp(scores - logz)
    P, PP = np.zeros((n, S)), np.zeros((n, S, S))
    for path, q in zip(paths, p):
        for i, y in enumerate(path):
            P[i, y] += q
            if i > 0:
                PP[i, y, path[i - 1]] += q
    return logz, P, PP


def random_tables(rng, n, S, scale=1.0, first_order=True):
    unary = rng.normal(0, scale, (n, S))
    pair = rng.normal(0, scale, (n, S, S + 1)) if first_order else np.zeros((n, S, S + 1))
    return unary, pair, rng.normal(0, scale, (S, S + 1)), rng.normal(0, scale, S)


@pytest.mark.parametrize("scale", [0.1, 1.0, 5.0])
@pytest.mark.parametrize("first_order", [True, False])
@pytest.mark.parametrize("log_space", [False, True])
def test_forward_backward_equals_enumeration(rng, scale, first_order, log_space):
    for _ in range(20):
        n, S = int(rng.integers(1, 6)), int(rng.integers(1, 5))
        tables = random_tables(rng, n, S, scale, first_order)
        temperature = float(rng.uniform(0.3, 3.0))
        logz, P, PP, _ = forward_backward_tables(*tables, temperature=temperature, log_space=log_space)
        want = enumerate_paths(*tables, temperature)
        assert logz == pytest.approx(want[0], rel=1e-12, abs=1e-9)
        np.testing.assert_allclose(P, want[1], atol=1e-9)
        np.testing.assert_allclose(PP, want[2], atol=1e-9)


def test_scores_far_apart_fall_back_to_log_space(rng):
    """Scores that differ by thousands underflow the scaled recursion; the result is
    still exact."""
    for _ in range(20):
        n, S = int(rng.integers(2, 6)), int(rng.integers(2, 5))
        tables = random_tables(rng, n, S, 2000.0)
        logz, P, PP, _ = forward_backward_tables(*tables)
        want = enumerate_paths(*tables)
        assert logz == pytest.approx(want[0], rel=1e-12)
        np.testing.assert_allclose(P, want[1], atol=1e-9)
        np.testing.assert_allclose(PP, want[2], atol=1e-9)
        assert np.all(np.isfinite(P))


def test_long_sequences_at_any_scale_equal_log_space(rng):
    """Over longer sequences (past enumeration) the scaled recursion can lose a path's
    mass to underflow while its sums stay positive, or overflow a backward value where
    a forward one underflowed; either must be caught. The log-space recursion, checked
    against enumeration above, is the reference."""
    for _ in range(400):
        n, S = int(rng.integers(5, 26)), int(rng.integers(2, 8))
        tables = random_tables(rng, n, S, 10 ** rng.uniform(1, 3.5))
        logz, P, PP, _ = forward_backward_tables(*tables)
        want = forward_backward_tables(*tables, log_space=True)
        assert logz == pytest.approx(want[0], rel=1e-12)
        np.testing.assert_allclose(P, want[1], atol=1e-9)
        np.testing.assert_allclose(PP, want[2], atol=1e-9)


@pytest.mark.parametrize("first_order", [True, False])
def test_the_scaled_recursion_alone_equals_log_space(rng, first_order):
    """At moderate scores the scaled recursion holds without its log-space fallback
    (which would hide a wrong scaled result behind a right one): log Z, the marginals
    and the pair marginals summed over positions equal the log-space recursion's, for
    label counts past its blocks of four rows and lengths past its blocks of four
    positions. Without 1st-order scores (pair None) the pair factors are the
    transitions' alone, made once, and the pair sums are made after the backward pass;
    with them, the transitions' factors times exp of the scores, of those not zero."""
    for _ in range(80):
        n, S = int(rng.integers(1, 20)), int(rng.integers(1, 14))
        unary, pair, trans, end = random_tables(rng, n, S, 1.0, first_order)
        pair[rng.random(pair.shape) < 0.5] = 0.0  # (a factor made without an exp where a score is zero)
        temperature = float(rng.uniform(0.5, 2.0))
        pairs = bool(rng.integers(2))  # (the pair sums without the pair marginals kept, or from them)
        got = forward_backward_tables(unary, pair if first_order else None, trans, end, temperature, pairs=pairs,
                                      scaled=True)
        want = forward_backward_tables(unary, pair, trans, end, temperature, log_space=True)
        assert got[0] == pytest.approx(want[0], rel=1e-12)
        for a, b in zip(got[1:], want[1:]) if pairs else ((got[1], want[1]), (got[3], want[3])):
            np.testing.assert_allclose(a, b, atol=1e-9)


# --- the compiled corpus functions and the Model API -------------------------------------

from seqbil._kernels.decode import marginals_corpus, path_scores  # noqa: E402
from test_decode import random_dataset, tables  # noqa: E402


@pytest.mark.parametrize("kind", ["linear", "bilinear"])
def test_marginals_corpus_equals_enumeration(rng, kind):
    for _ in range(5):
        S, A0, A1 = int(rng.integers(1, 5)), 7, 5
        data = random_dataset(rng, 6, S, A0, A1)
        W0 = rng.normal(size=(A0, S))
        if kind == "linear":
            W1 = rng.normal(size=(A1, S, S + 1))
            weights = {"W0": W0, "W1": W1}
        else:
            alpha, beta = rng.normal(size=(A1, S)), rng.normal(size=(A1, S + 1))
            W1 = alpha[:, :, None] * beta[:, None, :]
            weights = {"W0": W0, "alpha": alpha, "beta": beta}
        trans, end = rng.normal(size=(S, S + 1)), rng.normal(size=S)
        weights.update(trans=trans, end=end)
        T = float(rng.uniform(0.5, 2.0))
        P, N = data.n_positions, data.n_sequences
        out, best, marg, logz = np.zeros(P, np.int32), np.zeros(N), np.zeros((P, S)), np.zeros(N)
        marginals_corpus(data, weights, T, out, best, marg, logz)
        gold_scores = np.zeros(N)
        path_scores(data, weights, data.labels, gold_scores)
        for j in range(N):
            a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
            unary, pair = tables(data, j, W0, W1)
            want_logz, want_p, _ = enumerate_paths(unary, pair, trans, end, T)
            assert logz[j] == pytest.approx(want_logz, rel=1e-10)
            np.testing.assert_allclose(marg[a:b], want_p, atol=1e-10)
            # the scores of the best path and of the gold one, summed by hand
            for path, score in ((out[a:b], best[j]), (data.labels[a:b], gold_scores[j])):
                prev, s = S, end[path[-1]]
                for i, y in enumerate(path):
                    s += unary[i, y] + pair[i, y, prev] + trans[y, prev]
                    prev = y
                assert score == pytest.approx(s, rel=1e-10, abs=1e-10)


def toy_corpus(rng, n, labels=("A", "B", "C"), words=("a", "b", "c", "d")):
    """Sentences of 1 to 4 tokens: word, a tag column, label (the label depends on the
    word and on the previous label, so that every weight block is used)."""
    out = []
    for _ in range(n):
        rows, prev = [], 0
        for _ in range(int(rng.integers(1, 5))):
            w = int(rng.integers(len(words)))
            y = (w + prev + int(rng.random() < 0.2)) % len(labels)
            rows.append([words[w], f"t{w % 2}", labels[y]])
            prev = y
        out.append(rows)
    return out


TOY_TEMPLATES = "U00:%x[0,0]\nU01:%x[-1,0]\nU02:%x[0,1]/%x[1,0]\nB00:%x[0,1]\nB\n"


def check_model_probabilities(model, sentences):
    """Enumerate every labelling of each sentence through nbest (its scores are the
    model's): probabilities, log Z and marginals must agree with it."""
    S, T = len(model.labels), model.temperature
    for rows in sentences:
        tokens = [r[:-1] for r in rows]
        every = model.nbest(tokens, S ** len(tokens))
        assert len(every) == S ** len(tokens)
        scores = np.array([s for _, s in every]) / T
        logz = np.logaddexp.reduce(scores)
        assert model.log_partition(tokens) == pytest.approx(logz, rel=1e-9, abs=1e-9)
        want = np.zeros((len(tokens), S))
        for (labels, _), s in zip(every, scores):
            p = np.exp(s - logz)
            for i, y in enumerate(labels):
                want[i, model.labels.index(y)] += p
        for labels, _ in every[:3]:
            assert model.probability(tokens, labels) == pytest.approx(
                np.exp(scores[every.index((labels, _))] - logz), rel=1e-9)
        np.testing.assert_allclose(model.marginals(tokens), want, atol=1e-9)
        got = model.predict_marginals([model.format.sentence(tokens, 1)])[0]
        assert got[0] == every[0][0] and got[1] == pytest.approx(np.exp(scores[0] - logz), rel=1e-9)


@pytest.mark.parametrize("learner", sorted(LEARNERS))
def test_model_marginals_every_learner(rng, tmp_path, learner):
    import seqbil

    (tmp_path / "t.template").write_text(TOY_TEMPLATES)
    model = seqbil.train(toy_corpus(rng, 60), template=str(tmp_path / "t.template"), learner=learner, epochs=3,
                         precision="float64", model=str(tmp_path / "m.sbm"))
    model = seqbil.load(str(tmp_path / "m.sbm"))
    check_model_probabilities(model, toy_corpus(rng, 8))
    model.temperature = 3.5
    check_model_probabilities(model, toy_corpus(rng, 4))


def test_multitask_model_marginals(rng, tmp_path):
    import seqbil

    (tmp_path / "t.template").write_text(TOY_TEMPLATES)
    for name in ("one", "two"):
        with open(tmp_path / f"{name}.txt", "w") as f:
            f.write("\n".join("\n".join(" ".join(r) for r in s) + "\n" for s in toy_corpus(rng, 30)))
    model = seqbil.train(template=str(tmp_path / "t.template"), learner="sp", epochs=2,
                         tasks=[f"{n}={tmp_path / n}.txt" for n in ("one", "two")])
    check_model_probabilities(model.for_task("two"), toy_corpus(rng, 4))


def test_temperature_is_saved(rng, tmp_path):
    import seqbil

    (tmp_path / "t.template").write_text(TOY_TEMPLATES)
    model = seqbil.train(toy_corpus(rng, 20), template=str(tmp_path / "t.template"), learner="sp", epochs=1)
    model.temperature = 2.25
    model.save(str(tmp_path / "m.sbm"))
    assert seqbil.load(str(tmp_path / "m.sbm")).temperature == 2.25
