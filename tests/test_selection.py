"""What training chooses on held-out data (a CRF's c2, the temperature of an online
learner's probabilities), the temperature fit and the calibration error, and the
stages of a training run."""
import math
from pathlib import Path

import numpy as np
import pytest

import seqbil
from seqbil.storage import Rows
from seqbil import params, training
from seqbil.calibration import expected_calibration_error, fit_temperature, token_nll
from seqbil.formats import make_format, read_corpus
from seqbil.samples import sample_path


def conll_rows(n, start=0):
    """The first n sentences of the CoNLL sample from `start`, as rows of columns."""
    fmt = make_format("conll", None, -1)
    sentences = read_corpus(fmt, str(sample_path("conll2000_train.txt")), "utf-8")[start:start + n]
    return [[[*cols, y] for cols, y in zip(zip(*[c for c in s.columns if c is not None]), s.labels)]
            for s in sentences]


def slow_ece(confidence, correct, bins):
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        members = [i for i, c in enumerate(confidence) if lo <= c < hi or (b == bins - 1 and c == 1.0)]
        if members:
            acc = sum(correct[i] for i in members) / len(members)
            conf = sum(confidence[i] for i in members) / len(members)
            total += len(members) / len(confidence) * abs(acc - conf)
    return total


def test_expected_calibration_error_against_a_loop(rng):
    for _ in range(50):
        n = int(rng.integers(1, 60))
        conf = rng.uniform(0, 1, n)
        conf[rng.uniform(size=n) < 0.1] = 1.0
        correct = (rng.uniform(size=n) < conf).astype(float)
        bins = int(rng.integers(1, 20))
        assert expected_calibration_error(conf, correct, bins) == pytest.approx(slow_ece(conf, correct, bins),
                                                                                 abs=1e-12)
    assert expected_calibration_error([], [], 15) == 0.0
    for bad in (np.nan, -0.1, 1.5):
        with pytest.raises(ValueError, match="probabilities"):
            expected_calibration_error([0.5, bad], [1, 0], 15)


def test_fitted_temperature_is_the_least_token_nll():
    """The fit is the minimum of the token NLL over T: a fine grid in log T finds no
    lower value, and the NLL at T equals -sum log of the marginals Model.marginals
    gives for the gold labels."""
    rows = conll_rows(120)
    model = seqbil.train(rows[:100], config="conll2000", learner="sp", epochs=2, temperature=1.0)
    data = model.encode(seqbil.api._in_memory(make_format("conll", None, -1), rows[100:], "dev"))
    temperature, info = fit_temperature(model, data)
    nll = lambda t: token_nll(model, data, t)[0]
    grid = np.exp(np.linspace(math.log(temperature) - 2, math.log(temperature) + 2, 401))
    assert nll(temperature) <= min(nll(t) for t in grid) + 1e-6
    assert info["nll"] == pytest.approx(nll(temperature) / info["tokens"])
    model.temperature = temperature
    want = 0.0
    for sentence in rows[100:]:
        m = model.marginals([r[:-1] for r in sentence])
        want -= sum(math.log(m[i, model.labels.index(r[-1])]) for i, r in enumerate(sentence)
                    if r[-1] in model.labels)
    assert nll(temperature) == pytest.approx(want, rel=1e-9)


@pytest.mark.parametrize("learner", ["sp", "bol"])
def test_temperature_without_dev_is_fitted_on_the_last_tenth(learner, monkeypatch):
    """No dev set: the temperature is the one a model trained on the first nine
    tenths fits on the last tenth, which is what a run with that dev set fits."""
    monkeypatch.setattr(training.selection, "CV_TOKENS", 0)
    rows = conll_rows(60)
    whole = seqbil.train(rows, config="conll2000", learner=learner, epochs=3)
    part = seqbil.train(rows[:-6], dev=rows[-6:], config="conll2000", learner=learner, epochs=3)
    assert whole.temperature == part.temperature != 1.0
    assert whole.training["selection"]["temperature"]["value"] == whole.temperature
    # the final model trains on all the data with the same settings
    fixed = seqbil.train(rows, config="conll2000", learner=learner, epochs=3, temperature=whole.temperature)
    for name, w in fixed.weights.items():
        np.testing.assert_array_equal(np.asarray(whole.weights[name]), np.asarray(w))


@pytest.mark.parametrize("learner", ["sp", "crf"])
def test_a_file_held_out_from_gives_what_its_sentences_give(learner, monkeypatch, tmp_path):
    """A training file is read into a Corpus and the tenth held out read again (the
    sentences are never all in memory as strings): the same choice and model as the
    same sentences given in memory."""
    monkeypatch.setattr(training.selection, "CV_TOKENS", 0)
    rows = conll_rows(60)
    path = tmp_path / "train.txt"
    path.write_text("".join("".join(" ".join(r) + "\n" for r in s) + "\n" for s in rows), encoding="utf-8")
    options = dict(config="conll2000", learner=learner, epochs=3)
    by_file, in_memory = seqbil.train(str(path), **options), seqbil.train(rows, **options)
    assert by_file.training["selection"] == in_memory.training["selection"]
    assert by_file.temperature == in_memory.temperature
    for name, w in in_memory.weights.items():
        np.testing.assert_array_equal(np.asarray(by_file.weights[name]), np.asarray(w))


def test_given_temperature_and_crf_temperature():
    rows = conll_rows(30)
    assert seqbil.train(rows, config="conll2000", learner="sp", epochs=1, temperature=2.5).temperature == 2.5
    crf = seqbil.train(rows, config="conll2000", learner="crf", c2=1.0, epochs=5)
    assert crf.temperature == 1.0 and "selection" not in crf.training


def test_crf_chooses_c2_on_the_held_out_tenth(monkeypatch):
    """Without c2: the grid runs on the first nine tenths, the best held-out score
    wins (then the held-out log-likelihood), and the model trains on everything at
    that c2: the model trained with that c2 given."""
    monkeypatch.setattr(training.selection, "CV_TOKENS", 0)
    rows = conll_rows(80)
    echoed = []
    model = seqbil.train(rows, config="conll2000", learner="crf", epochs=30, echo=echoed.append)
    sel = model.training["selection"]
    keys = [(t["value"], -t["nll"]) for t in sel["tried"]]
    best = keys.index(max(keys))
    assert sel["chosen"]["c2"] == sel["tried"][best]["c2"] == model.training["params"]["c2"]
    assert [t["c2"] for t in sel["tried"]] == list(seqbil.learners.crf.C2_GRID[:len(keys)])
    assert any(line.startswith("chose c2 = ") for line in echoed)
    given = seqbil.train(rows, config="conll2000", learner="crf", epochs=30, c2=sel["chosen"]["c2"])
    for name, w in given.weights.items():
        np.testing.assert_array_equal(np.asarray(model.weights[name]), np.asarray(w))
    # each tried value is the held-out score of the model trained on the nine tenths
    held = seqbil.train(rows[:-8], dev=rows[-8:], config="conll2000", learner="crf", epochs=30,
                        c2=sel["tried"][0]["c2"])
    assert held.training["last_dev"]["value"] == pytest.approx(sel["tried"][0]["value"])


def test_small_corpora_choose_by_cross_validation():
    """Up to CV_TOKENS tokens: each tenth held out in turn; the temperature is the
    least NLL over all ten held-out tenths, each scored by the model trained on the
    other nine, and the c2 of a CRF wins on the pooled held-out predictions."""
    from seqbil.evaluation import score
    rows = conll_rows(40)
    assert sum(map(len, rows)) <= training.CV_TOKENS
    whole = seqbil.train(rows, config="conll2000", learner="sp", epochs=2)
    assert whole.training["selection"]["temperature"]["on"] == "10-fold cross-validation"
    fmt = make_format("conll", None, -1)
    pairs, cuts = [], np.linspace(0, 40, 11).astype(int)
    for a, b in zip(cuts[:-1], cuts[1:]):
        part = seqbil.train(rows[:a] + rows[b:], config="conll2000", learner="sp", epochs=2, temperature=1.0)
        pairs.append((part, part.encode(seqbil.api._in_memory(fmt, rows[a:b], "held"))))
    assert whole.temperature == pytest.approx(fit_temperature(pairs)[0], rel=1e-9)
    crf = seqbil.train(rows, config="conll2000", learner="crf", epochs=15)
    sel = crf.training["selection"]
    assert sel["on"] == "10-fold cross-validation"
    gold, pred = [], []
    c2 = sel["tried"][0]["c2"]  # the first of the path starts from zero, as these runs do
    for a, b in zip(cuts[:-1], cuts[1:]):
        part = seqbil.train(rows[:a] + rows[b:], config="conll2000", learner="crf", epochs=15, c2=c2)
        pred += part.tag_many([[r[:-1] for r in s] for s in rows[a:b]])
        gold += [[r[-1] for r in s] for s in rows[a:b]]
    assert score("chunk", gold, pred)["f1"] == pytest.approx(sel["tried"][0]["value"], abs=1e-9)


def test_crf_chooses_c2_on_the_dev_set_and_keeps_that_run(tmp_path):
    rows = conll_rows(60)
    dev = tmp_path / "dev.txt"
    dev.write_text("".join("".join(" ".join(r) + "\n" for r in s) + "\n" for s in conll_rows(20, start=100)))
    model = seqbil.train(rows, dev=str(dev), config="conll2000", learner="crf", epochs=25)
    sel = model.training["selection"]
    assert sel["on"] == "dev"
    chosen = [t for t in sel["tried"] if t["c2"] == sel["chosen"]["c2"]][0]
    assert chosen["value"] == max(t["value"] for t in sel["tried"])
    assert seqbil.evaluate(model, str(dev))["f1"] == pytest.approx(chosen["value"], abs=1e-9)


def test_l1_penalty_chooses_c1():
    rows = conll_rows(40)
    model = seqbil.train(rows, config="conll2000", learner="crf", epochs=10, penalty="l1")
    sel = model.training["selection"]
    assert all(t["c2"] == 0.0 for t in sel["tried"]) and sel["chosen"]["c1"] > 0
    assert model.training["params"]["c1"] == sel["chosen"]["c1"]


def test_no_dev_and_shards_or_tasks_leave_the_temperature_at_1(tmp_path):
    path = tmp_path / "a.utf8"
    path.write_text(sample_path("pku_train.utf8").read_text(encoding="utf-8"), encoding="utf-8")
    echoed = []
    model = seqbil.train(tasks=[f"a={path}", f"b={path}"], config="sighan2005", learner="sp", epochs=1,
                         echo=echoed.append)
    assert model.temperature == 1.0
    assert any("temperature 1: not fitted (multi-task training" in line for line in echoed)


def test_the_stages_give_the_model_train_gives():
    rows = conll_rows(40)
    settings = params.resolve(params.find_config("conll2000"), {"learner": "sp", "epochs": 2,
                                                                         "temperature": 1.0})
    sentences = seqbil.api._in_memory(make_format("conll", None, -1), rows, "train")
    run = training.prepare(settings, sentences, None, None, "conll2000", None, lambda line: None)
    learner = training.make_learner(run)
    history = training.run_passes(run, learner, np.random.default_rng(settings.seed), [], echo=lambda l: None,
                                  show_progress=False)
    assert [r["pass"] for r in history] == [1, 2]
    model = training.finish(run, learner, history)
    training.set_temperature(run, model, lambda line: None)
    training.compact(run, model, lambda line: None)
    want = seqbil.train(rows, config="conll2000", learner="sp", epochs=2, temperature=1.0)
    assert model.labels == want.labels
    for name, w in want.weights.items():
        np.testing.assert_array_equal(np.asarray(model.weights[name]), np.asarray(w))


def test_calibration_benchmark_measures_the_viterbi_labels_marginals(tmp_path):
    """benchmarks/calibration.py: its ECE is the binned gap between the marginal of
    each token's tag() label (Model.marginals) and whether that label is right."""
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    from calibration import calibration
    rows = conll_rows(60)
    model = seqbil.train(rows[:50], config="conll2000", learner="sp", epochs=2)
    test = seqbil.api._in_memory(make_format("conll", None, -1), rows[50:], "test")
    got = calibration(model, test)
    for name, t in (("t1", 1.0), ("fitted", model.temperature)):
        saved, model.temperature = model.temperature, t
        conf, right = [], []
        for sentence in rows[50:]:
            tokens = [r[:-1] for r in sentence]
            labels, m = model.tag(tokens), model.marginals(tokens)
            conf += [m[i, model.labels.index(y)] for i, y in enumerate(labels)]
            right += [y == r[-1] for y, r in zip(labels, sentence)]
        model.temperature = saved
        assert got[name]["ece"] == pytest.approx(slow_ece(conf, right, 15), abs=1e-9)
        assert got[name]["accuracy"] == pytest.approx(np.mean(right))


def test_inspect_says_what_was_chosen_and_where(tmp_path):
    from seqbil.info import describe, model_info
    rows = conll_rows(40)
    crf = seqbil.train(rows, config="conll2000", learner="crf", epochs=10, model=str(tmp_path / "c.sbm"))
    text = describe(model_info(seqbil.load(str(tmp_path / "c.sbm")), tmp_path / "c.sbm"))
    c2 = crf.training["selection"]["chosen"]["c2"]
    assert f"chosen by 10-fold cross-validation: c2 = {c2:g} (by F1; tried c2 3: " in text
    assert "scores / 1 (the CRF's own distribution)" in text
    sp = seqbil.train(rows, config="conll2000", learner="sp", epochs=1, model=str(tmp_path / "s.sbm"))
    text = describe(model_info(seqbil.load(str(tmp_path / "s.sbm")), tmp_path / "s.sbm"))
    assert f"scores / {sp.temperature:g} (temperature fitted by 10-fold cross-validation: token NLL" in text
    seqbil.train(rows, config="conll2000", learner="sp", epochs=1, temperature=3, model=str(tmp_path / "g.sbm"))
    assert "scores / 3 (temperature given)" in describe(model_info(seqbil.load(str(tmp_path / "g.sbm")),
                                                                    tmp_path / "g.sbm"))


def test_an_interrupt_while_choosing_stops_the_run(monkeypatch):
    """SIGINT during a held-out run ends the whole training, not just that run of the
    grid: the model is that held-out run's, marked as interrupted."""
    import os
    import signal
    from seqbil.learners.crf import CRF
    rows = conll_rows(40)
    seen, step = [], CRF.train_pass

    def interrupted_pass(self, data, k):
        os.kill(os.getpid(), signal.SIGINT)  # taken by the run's graceful stop: it ends after this pass
        return step(self, data, k)
    monkeypatch.setattr(CRF, "train_pass", interrupted_pass)
    model = seqbil.train(rows, config="conll2000", learner="crf", epochs=5, echo=seen.append)
    assert any(line.startswith("interrupted while choosing c2: ") for line in seen), seen
    assert not any(line.startswith("chose ") for line in seen)
    assert model.training["interrupted"] == "while choosing c2" and model.training["passes_run"] == 1
    assert model.tag([r[:-1] for r in rows[0]])  # a model that tags


@pytest.mark.parametrize("learner,averaged,template", [("sp", True, None), ("sp", False, None), ("bol", True, None),
                                                       ("bol", False, None), ("pa", True, None), ("arow", True, None),
                                                       ("bol", True, "B")])
def test_final_parameters_are_the_parameters(learner, averaged, template):
    """What a learner gives once training is over (made in its own arrays) is what
    parameters() gives, bit for bit."""
    rows = conll_rows(40)
    options = {"learner": learner, "epochs": 2, "temperature": 1.0, "averaged": averaged}
    if template:  # bol with 1st-order attributes to factor
        options["templates"] = ["U00:%x[0,0]", "U01:%x[0,1]", "B01:%x[0,1]", "B"]
    settings = params.resolve(params.find_config("conll2000"), options)
    sentences = seqbil.api._in_memory(make_format("conll", None, -1), rows, "train")
    run = training.prepare(settings, sentences, None, None, "conll2000", None, lambda line: None)
    learner_ = training.make_learner(run)
    training.run_passes(run, learner_, np.random.default_rng(1), [], echo=lambda l: None, show_progress=False)
    kind, want = learner_.parameters()
    want = {k: np.array(v) for k, v in want.items()}
    learner_.finish()
    got_kind, got = learner_.final_parameters()
    assert got_kind == kind and set(got) == set(want)
    for name in want:  # (sp's W1 comes at the model's precision, to which the model rounds it anyway,
        # as the sparse rows the model keeps)
        value = got[name]
        if isinstance(value, Rows):
            assert value.width == want[name][0].size and value.n_rows == len(want[name])
            value = value.to_dense(value.val.dtype).reshape(want[name].shape)
        np.testing.assert_array_equal(np.asarray(value), want[name].astype(np.asarray(value).dtype))


def test_bounded_minimizer_finds_the_minimum(rng):
    """Brent's bounded search (calibration.minimize_bounded): within xatol of the
    minimum of random unimodal functions, and at the bound when the minimum lies
    beyond it."""
    from seqbil.calibration import minimize_bounded
    for _ in range(200):
        c, s, p = rng.uniform(-8, 8), rng.uniform(0.2, 5), int(rng.choice([2, 4]))
        x = minimize_bounded(lambda t: s * abs(t - c) ** p + 0.3 * math.cosh(0.1 * (t - c)), -9.2, 9.2, xatol=1e-4)
        assert abs(x - c) < 1e-4 * (10 if p == 4 else 1)
    assert abs(minimize_bounded(lambda t: (t - 20) ** 2, -9.2, 9.2, xatol=1e-4) - 9.2) < 1e-3
    assert abs(minimize_bounded(lambda t: (t + 20) ** 2, -9.2, 9.2, xatol=1e-4) + 9.2) < 1e-3


def fake_fold(rng, metric, pool, partial=False):
    """A held-out part as the choice sees it: gold sentences of random labels from
    pool (ill-formed tag sequences and empty sentences included), a model knowing a
    random part of the pool in a random order, and random predicted ids."""
    from types import SimpleNamespace

    from conftest import sentence
    known = list(rng.permutation(pool)[:rng.integers(1, len(pool) + 1)])
    sentences = []
    for _ in range(rng.integers(1, 7)):
        n = int(rng.integers(0, 9))
        sentences.append(sentence([f"c{i}" for i in range(n)], labels=[str(y) for y in rng.choice(pool, n)]))
    ptr = np.concatenate([[0], np.cumsum([len(s.labels) for s in sentences])])
    model = SimpleNamespace(corpus={"metric": metric}, label_array=lambda: np.array(known, dtype=object))
    run = SimpleNamespace(model=model, dev_sentences=sentences, settings=SimpleNamespace(partial=partial),
                          dev_data=SimpleNamespace(seq_ptr=ptr, n_sequences=len(sentences)))
    return run, rng.integers(0, len(known), int(ptr[-1]))


@pytest.mark.parametrize("metric, pool", [("segment", ["B", "I", "E", "S"]), ("segment", ["B", "I", "E", "S", "X"]),
                                          ("accuracy", ["NN", "VB", "DT", "JJ", "."])])
def test_the_curve_headline_from_ids_is_the_scorers(metric, pool):
    """The held-out score after each pass, counted over id arrays (ids_headline), equals
    evaluation.score's headline over the label strings, on random folds: the same
    name and the same float."""
    from seqbil.training.scoring import ids_headline
    from seqbil.training.selection import _pooled_score
    rng = np.random.default_rng(7)
    for case in range(300):
        folds = [fake_fold(rng, metric, pool) for _ in range(rng.integers(1, 4))]
        runs, ids = [r for r, _ in folds], [i for _, i in folds]
        pred = [list(run.model.label_array()[i[run.dev_data.seq_ptr[j]:run.dev_data.seq_ptr[j + 1]]])
                for run, i in folds for j in range(run.dev_data.n_sequences)]
        assert ids_headline(runs)(ids) == _pooled_score(runs, pred), case


def test_the_curve_headline_leaves_chunks_and_partial_labels_to_the_scorer():
    from seqbil.training.scoring import ids_headline
    rng = np.random.default_rng(3)
    assert ids_headline([fake_fold(rng, "chunk", ["B-NP", "I-NP", "O"])[0]]) is None
    assert ids_headline([fake_fold(rng, "accuracy", ["NN", "VB"], partial=True)[0]]) is None
