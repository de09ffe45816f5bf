"""Rules at training time ([tag] well_formed and forbid) and CRFsuite's
possible_transitions: the CRF's objective over the allowed labellings against
enumeration and its gradient against finite differences, the online learners and the
model keeping the rules, the corpus checked against them, and the model file."""
import itertools
import subprocess
import sys

import numpy as np
import pytest

import seqbil
from seqbil.errors import InputError
from seqbil.model import constraints
from seqbil.samples import sample_path
from seqbil.training.rules import check_corpus
from test_cli import ENV
from test_crf import finite_differences, make, path_score
from test_decode import random_dataset, tables


def random_rules(rng, data, S):
    """Masks (allowed S x (S + 1), end_allowed S) that forbid a few transitions, first and
    last labels, none of which the corpus's gold labels use."""
    used, ends = np.zeros((S, S + 1), dtype=bool), np.zeros(S, dtype=bool)
    for j in range(data.n_sequences):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        prev = S
        for y in data.labels[a:b]:
            used[y, prev], prev = True, y
        if b > a:
            ends[data.labels[b - 1]] = True
    allowed = used | (rng.random((S, S + 1)) < 0.6)
    end_allowed = ends | (rng.random(S) < 0.6)
    return allowed, end_allowed


def nll_over_allowed(data, W0, W1, trans, end, allowed, end_allowed):
    S, total = W0.shape[1], 0.0
    for j in range(data.n_sequences):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        tabs = (*tables(data, j, W0, W1), trans, end)

        def ok(path):
            return all(allowed[y, prev] for y, prev in zip(path, (S, *path[:-1]))) and end_allowed[path[-1]]
        paths = [p for p in itertools.product(range(S), repeat=b - a) if ok(p)]
        total += np.logaddexp.reduce([path_score(p, *tabs) for p in paths]) - path_score(data.labels[a:b], *tabs)
    return total


def test_crf_objective_over_the_allowed_labellings_equals_enumeration(rng):
    for _ in range(6):
        S, A0, A1 = int(rng.integers(2, 4)), 6, 4
        data = random_dataset(rng, 6, S, A0, A1)
        allowed, end_allowed = random_rules(rng, data, S)
        learner = make(data, S, A0, A1, c2=0.2)
        learner.forbid(~allowed, ~end_allowed)
        learner.x[...] = rng.normal(size=learner.x.shape)
        learner.forbid(~allowed, ~end_allowed)  # (their weights back at 0)
        kind, w = learner.parameters()
        f = learner.evaluate(learner.x, np.zeros_like(learner.x))
        want = nll_over_allowed(data, w["W0"], w["W1"], w["trans"], w["end"], allowed, end_allowed)
        assert f == pytest.approx(want + 0.2 * learner.x @ learner.x, rel=1e-10)


def test_crf_gradient_keeps_the_frozen_cells_and_equals_finite_differences(rng):
    for _ in range(5):
        S, A0, A1 = int(rng.integers(2, 4)), 6, int(rng.choice([0, 4]))
        data = random_dataset(rng, 5, S, A0, A1)
        allowed, end_allowed = random_rules(rng, data, S)
        learner = make(data, S, A0, A1, c2=0.1)
        learner.forbid(~allowed, ~end_allowed)
        x = rng.normal(size=learner.x.shape)
        frozen = np.zeros(len(x), dtype=bool)
        frozen[len(x) - S * (S + 2):] = np.concatenate([(~allowed).ravel(), ~end_allowed])
        x[frozen] = 0.0
        g = np.zeros_like(x)
        learner.evaluate(x, g)
        assert not g[frozen].any()
        fd = finite_differences(learner, x, 1e-6)
        np.testing.assert_allclose(g[~frozen], fd[~frozen], atol=1e-6)


def test_unseen_transitions_keep_their_weight_without_all_possible_transitions():
    model = seqbil.train(learner="crf", c2=0.1, epochs=30, all_possible_transitions=False)
    trans = model.store.trans
    labels = model.labels
    S = len(labels)
    seen = np.zeros((S, S + 1), dtype=bool)
    for block in sample_path("conll2000_train.txt").read_text(encoding="utf-8").strip().split("\n\n"):
        prev = S
        for line in block.splitlines():
            y = labels.index(line.split()[-1])
            seen[y, prev], prev = True, y
    assert not trans[~seen].any() and trans[seen].any()


def ill_formed(model, sentences):
    allowed, end_allowed = constraints.well_formed(model.labels, "iob2")
    index = {y: i for i, y in enumerate(model.labels)}
    bad = 0
    for tags in model.tag_many(sentences):
        prev, ok = len(model.labels), True
        for y in tags:
            ok, prev = ok and allowed[index[y], prev], index[y]
        bad += not (ok and end_allowed[prev])
    return bad


@pytest.mark.parametrize("learner", ["crf", "l2sgd", "sp", "pa", "bol", "arow"])
def test_every_learner_trains_over_the_allowed_labellings_and_the_model_keeps_them(tmp_path, learner):
    options = {"crf": {"c2": 0.1, "epochs": 40}, "l2sgd": {"c2": 0.1, "epochs": 5}}.get(learner, {"epochs": 3})
    model = seqbil.train(learner=learner, well_formed=True, model=str(tmp_path / "m.sbm"), **options)
    loaded = seqbil.load(tmp_path / "m.sbm")
    assert loaded.rules is not None and all(np.array_equal(a, b) for a, b in zip(loaded.rules, model.rules))
    assert np.isfinite(loaded.store.trans).all()  # the rules are kept apart from the weights
    test = [[line.split()[:-1] for line in block.splitlines()]
            for block in sample_path("conll2000_test.txt").read_text(encoding="utf-8").strip().split("\n\n")]
    assert ill_formed(loaded, test) == 0
    marginals = loaded.marginals(test[0])
    allowed = loaded.rules[0]
    S = len(loaded.labels)
    assert all(marginals[0][y] == 0 for y in range(S) if not allowed[y, S])  # no forbidden first label


def test_a_corpus_that_breaks_the_rules_is_refused(tmp_path):
    corpus = tmp_path / "bad.txt"
    corpus.write_text("the DT B-NP\ndog NN I-NP\n\nHe PRP B-NP\nsaid VBD I-VP\n\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--train", str(corpus), "--well-formed",
                           "--scheme", "iob2", "--learner", "sp", "--model", str(tmp_path / "m.sbm")],
                          capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert proc.returncode == 2 and "sentence 2 has I-VP after B-NP, which the rules forbid" in proc.stderr
    assert "Traceback" not in proc.stderr
    forbid = tmp_path / "forbid.txt"
    forbid.write_text("B-NP O\n", encoding="utf-8")
    data = seqbil.train(learner="sp", epochs=1)  # (a model only for its labels)
    from seqbil.features.dataset import Dataset
    labels = data.labels
    d = Dataset(np.array([0, 2]), np.array([labels.index("B-NP"), labels.index("O")], dtype=np.int32),
                np.zeros(3, np.int64), np.zeros(0, np.int32), np.zeros(3, np.int64), np.zeros(0, np.int32))
    rules = constraints.read_forbidden(forbid, labels)
    with pytest.raises(InputError, match="O after B-NP"):
        check_corpus(rules, d, labels, "x.txt")


def test_damaged_rules_in_a_model_file_are_refused(tmp_path):
    from seqbil.errors import ModelFileError
    from seqbil.modelfile import read_model, write_model
    model = seqbil.train(learner="sp", epochs=1, well_formed=True, model=str(tmp_path / "m.sbm"))
    meta, arrays = read_model(tmp_path / "m.sbm")
    arrays = dict(arrays)
    arrays["rules_allowed"] = np.zeros_like(arrays["rules_allowed"])  # no labelling left
    write_model(tmp_path / "bad.sbm", meta, arrays)
    with pytest.raises(ModelFileError, match="no labelling"):
        seqbil.load(tmp_path / "bad.sbm")
    arrays["rules_allowed"] = np.full((2, 2), 1, dtype=np.uint8)
    write_model(tmp_path / "bad.sbm", meta, arrays)
    with pytest.raises(ModelFileError, match="rules"):
        seqbil.load(tmp_path / "bad.sbm")
    assert model.rules is not None
