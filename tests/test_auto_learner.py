"""learner = auto: each candidate tried on the held-out split as it would run if named,
the best held-out score winning, within the time budget."""
import numpy as np
import pytest

import seqbil
from conftest import sample_head
from seqbil.training import selection


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """120 sentences of the CoNLL-2000 sample (2,800 tokens): small enough for cross-validation."""
    return sample_head("conll2000_train.txt", 120, tmp_path_factory.mktemp("corpus") / "train.txt")


def train(corpus, lines, **options):
    return seqbil.train(train=str(corpus), config="conll2000", echo=lines.append, **options)


def test_auto_tries_each_candidate_as_named_and_keeps_the_best(corpus, monkeypatch):
    lines = []
    model = train(corpus, lines, learner="auto", candidates=["sp", "crf"], budget=1000.0)
    tried = model.training["selection"]["tried"]
    assert [r["learner"] for r in tried][:2] == ["sp", "crf"] and all("value" in r for r in tried)
    best = max(range(len(tried)), key=lambda i: (tried[i]["value"], -tried[i].get("nll", 0.0), -i))
    assert model.training["selection"]["chosen"]["learner"] == tried[best]["learner"] == model.training["learner"]
    if tried[best]["learner"] == "crf":
        assert model.training["params"]["c2"] == tried[best]["c2"]
    # the CRF's points are those of `--learner crf`'s own choice on the same folds (auto takes
    # fewer on a small corpus): the same scores
    from seqbil.learners import crf as crf_module
    monkeypatch.setattr(selection, "CV_TOKENS", selection.AUTO_CV_TOKENS)
    monkeypatch.setattr(crf_module, "C2_GRID", crf_module.COARSE_GRID)  # (auto walks a coarser path)
    named = train(corpus, [], learner="crf").training["selection"]["tried"]
    crf = [r for r in tried if r["learner"] == "crf"]
    assert [(r["c2"], r["value"], r["passes"]) for r in crf] == [(r["c2"], r["value"], r["passes"])
                                                                  for r in named][:len(crf)]
    assert crf[0]["epochs"] == 1000  # the CRF's own iteration cap, not the online learner's epochs
    assert any(line.startswith(f"chose {model.training['learner']}") for line in lines)
    info = seqbil.info.model_info(model)
    assert "chosen by 10-fold cross-validation: learner = " in seqbil.info.describe(info)


@pytest.mark.parametrize("second, what", [("crf", "not started"), ("pa", "stopped")])
def test_a_candidate_past_the_budget_is_stopped_and_not_chosen(corpus, monkeypatch, second, what):
    """A CRF is not started when less time is left than the quickest candidate took; an
    online learner starts, and stops when its pace says it cannot finish in time."""
    monkeypatch.setattr(selection, "CV_BUDGET_FLOOR", 0.0)
    lines = []
    model = train(corpus, lines, learner="auto", candidates=["sp", second], budget=0.01)
    tried = model.training["selection"]["tried"]
    assert [(r["learner"], r.get("stopped")) for r in tried] == [("sp", None), (second, "over the budget")]
    assert model.training["learner"] == "sp" and model.temperature > 0  # the online learner's temperature, fitted
    assert any(line.strip().startswith(second) and f": {what}, over the budget" in line for line in lines)


def test_a_named_learner_is_not_chosen(corpus):
    lines = []
    model = train(corpus, lines, learner="sp")
    assert "tried" not in model.training.get("selection", {}) and model.training["learner"] == "sp"


def test_auto_with_too_few_sentences_takes_the_first_candidate(tmp_path):
    five = sample_head("conll2000_train.txt", 5, tmp_path / "five.txt")
    lines = []
    model = train(five, lines, learner="auto", candidates=["crf", "sp"])
    assert model.training["learner"] == "crf"
    assert any("learner crf, the first candidate" in line for line in lines)


@pytest.mark.parametrize("options,why", [
    ({"tasks": ["a=x.txt", "b=y.txt"]}, "multi-task training"),
    ({"shards": 2}, "iterative parameter mixing"),
])
def test_auto_refuses_what_it_cannot_choose_for(corpus, options, why):
    with pytest.raises(seqbil.SeqbilError, match=f"learner 'auto' is not for {why}"):
        seqbil.train(train=None if "tasks" in options else str(corpus), config="conll2000", learner="auto",
                     echo=lambda line: None, **options)


def test_candidates_must_be_learners():
    with pytest.raises(seqbil.SeqbilError, match="'auto' is not a learner"):
        seqbil.params.resolve(None, {"learner": "auto", "candidates": ["sp", "auto"]})
    with pytest.raises(seqbil.SeqbilError, match="give distinct learners"):
        seqbil.params.resolve(None, {"learner": "auto", "candidates": ["sp", "sp"]})


def test_the_candidates_are_the_configs_learner_pa_and_the_crf_unless_given(tmp_path):
    resolve, config = seqbil.params.resolve, seqbil.params.find_config
    for learner, candidates in (("sp", ["sp", "pa", "crf"]), ("pa", ["pa", "crf"]), ("auto", ["sp", "pa", "crf"])):
        own = tmp_path / f"{learner}.toml"
        own.write_text(f'[train]\nlearner = "{learner}"\n')
        assert resolve(str(own), {"learner": "auto"}).candidates == candidates
    # the shipped configs name their own, their learner first
    assert resolve(config("cws"), {}).candidates == ["bol", "pa", "crf"]
    assert resolve(config("pos"), {}).learner == "auto"
    assert resolve(config("cws"), {"learner": "auto", "candidates": ["sp", "pa"]}).candidates == ["sp", "pa"]


def test_a_configs_auto_takes_its_first_candidate_where_nothing_can_be_chosen(tmp_path):
    """learner = auto from a config, for a multi-task run: the first candidate, said;
    the same run with auto as an argument is refused (above)."""
    cfg = tmp_path / "auto.toml"
    cfg.write_text('[corpus]\nformat = "conll"\n[features]\ntemplates = ["U00:%x[0,0]", "B"]\n'
                   '[train]\nlearner = "auto"\ncandidates = ["sp", "crf"]\nepochs = 2\n')
    tasks = []
    for name in ("a", "b"):
        sample_head("conll2000_train.txt", 20, tmp_path / f"{name}.txt")
        tasks.append(f"{name}={tmp_path / f'{name}.txt'}")
    lines = []
    model = seqbil.train(config=str(cfg), tasks=tasks, echo=lines.append)
    assert model.training["learner"] == "sp"
    assert any("learner sp, the config's first candidate: learner = auto cannot choose for multi-task training"
               in line for line in lines)


def test_a_run_stops_when_its_forecast_passes_would_end_past_the_deadline(corpus):
    """The deadline is far off, but at the pace of the passes so far the forecast passes
    would end past it: the run stops after one pass, or two when the first is warm-up
    (not the pace); without a forecast it runs all its passes; past the deadline, it
    stops after the pass that crossed it."""
    import time

    import numpy as np
    from seqbil.params import Settings
    from seqbil.training.prepare import make_learner, prepare
    settings = Settings.of({"learner": "sp", "epochs": 4, "temperature": 1.0,
                            "templates": ["U00:%x[0,0]", "U01:%x[0,1]", "B"]})
    for forecast, warmup, passes, seconds in ((10 ** 12, 0, 1, 1000.0), (10 ** 12, 1, 2, 1000.0),
                                              (0, 0, 4, 1000.0), (0, 1, 1, 0.0)):
        run = prepare(settings, str(corpus), None, None, None, None, lambda line: None)
        learner = make_learner(run, echo=lambda line: None)
        history = selection.run_passes(run, learner, np.random.default_rng(1), [], echo=lambda line: None,
                                       show_progress=False, score_dev=False, deadline=time.perf_counter() + seconds,
                                       forecast=forecast, warmup=warmup)
        assert len(history) == passes
        learner.finish()


def test_an_online_candidate_takes_its_best_number_of_epochs_on_the_pooled_folds(corpus):
    """Each online candidate is scored after every epoch over the held-out part (the
    folds' together); it takes the last epoch count within one standard error of the
    best score. Reference:
    the same split cut by hand, a model of that many epochs trained on each fold's rest by the
    API, its predictions pooled and scored."""
    import numpy as np
    from seqbil.evaluation import headline, score
    from seqbil.formats import make_format
    lines = []
    model = train(corpus, lines, learner="auto", candidates=["sp", "pa"], epochs=6)
    tried = model.training["selection"]["tried"]
    sentences = list(make_format("conll", None, -1).read(str(corpus)))
    rows = [[line.split() for line in block.splitlines()] for block in corpus.read_text().strip().split("\n\n")]
    assert [[r[-1] for r in s] for s in rows] == [s.labels for s in sentences]
    n, k = len(sentences), len(sentences) // 10
    # the held-out tenth, or the folds of cross-validation
    tokens = sum(map(len, rows))  # the held-out tenth, or each tenth in turn on a small corpus
    cuts = np.linspace(0, n, selection.CV_FOLDS + 1).astype(int) if tokens <= selection.AUTO_CV_TOKENS else [n - k, n]
    for row in tried:
        curve = row["curve"]
        # the last epoch within one standard error of the best, sqrt(p (1 - p) / n) on n held-out tokens
        tokens = sum(len(s) for a, b in zip(cuts[:-1], cuts[1:]) for s in rows[a:b])
        top = max(curve) / 100
        best = max(i for i, v in enumerate(curve) if v >= max(curve) - 100 * (top * (1 - top) / tokens) ** 0.5) + 1
        assert len(curve) == 6 and round(row["value"], 4) == curve[best - 1]  # (the curve is kept to 4 places)
        assert row.get("epochs", 6) == best
        for epochs in sorted({best, 6}):
            gold, pred = [], []
            for a, b in zip(cuts[:-1], cuts[1:]):
                fold = seqbil.train(train=rows[:a] + rows[b:], config="conll2000", learner=row["learner"],
                                    epochs=epochs, temperature=1.0, echo=lambda line: None)
                gold += [s.labels for s in sentences[a:b]]
                pred += fold.predict(sentences[a:b])
            assert headline(score("chunk", gold, pred))[1] == pytest.approx(curve[epochs - 1], abs=5e-5)
    chosen = model.training["selection"]["chosen"]
    winner = next(r for r in tried if r["learner"] == chosen["learner"])
    assert model.training["params"]["epochs"] == winner.get("epochs", 6)
    assert any(f"best after {winner.get('epochs', 6)} of 6 epochs" in line for line in lines)


def test_an_online_learner_stopped_early_is_the_run_of_that_many_epochs(corpus, monkeypatch):
    """When the held-out curve stops an online learner early (forced here at 2 of 6
    epochs), the temperature is fitted to held-out models of 2 epochs and the model
    trains 2 epochs: the model and temperature of `--learner sp --epochs 2`, whose
    temperature is fitted on the same folds."""
    real = selection._best_pass

    def at_two(trial, runs):
        name, _, _, values = real(trial, runs)
        return name, values[1], 2, values
    monkeypatch.setattr(selection, "_best_pass", at_two)
    auto = train(corpus, [], learner="auto", candidates=["sp"], epochs=6)
    assert auto.training["params"]["epochs"] == 2 and auto.training["selection"]["tried"][0]["epochs"] == 2
    named = train(corpus, [], learner="sp", epochs=2)
    assert auto.temperature == named.temperature
    from seqbil.formats import make_format
    sentences = list(make_format("conll", None, -1).read(str(sample_head("conll2000_test.txt", 30,
                                                                          corpus.parent / "test.txt"))))
    assert auto.predict(sentences) == named.predict(sentences)
    assert np.array_equal(auto.weights["W0"], named.weights["W0"])


def test_an_online_learner_best_after_its_last_epoch_is_not_trained_again(corpus, monkeypatch):
    """The held-out runs of a candidate whose curve peaks at its last epoch are the runs the
    temperature is fitted to: each fold trains once (forced at 6 of 6)."""
    real, calls = selection._best_pass, []

    def at_last(trial, runs):
        name, _, _, values = real(trial, runs)
        return name, values[-1], len(values), values
    monkeypatch.setattr(selection, "_best_pass", at_last)
    counted = selection._train_folds
    monkeypatch.setattr(selection, "_train_folds", lambda trial, *a, **k: calls.append(trial.point) or
                        counted(trial, *a, **k))
    auto = train(corpus, [], learner="auto", candidates=["sp"], epochs=6)
    assert auto.training["params"]["epochs"] == 6 and "epochs" not in auto.training["selection"]["tried"][0]
    assert len(calls) == 1
    named = train(corpus, [], learner="sp", epochs=6)
    assert auto.temperature == named.temperature


def test_the_best_candidate_lets_its_learner_go_while_the_next_trains(tmp_path, monkeypatch):
    """On the held-out tenth, the best candidate so far keeps only its held-out model while
    the next one trains (forced here: the first candidate wins). Its temperature is still
    the one fitted to that model: the temperature of the choice among sp alone, where no
    other candidate trains."""
    corpus = sample_head("conll2000_train.txt", 300, tmp_path / "train.txt")  # (held out: above AUTO_CV_TOKENS)
    seen, train_folds, score_trial = [], selection._train_folds, selection._score_trial

    def recording(trial, runs, bases, planned, best, *args, **kwargs):
        seen.append(None if best is None else (best.point["learner"], list(best.learners), len(best.frozen)))
        return train_folds(trial, runs, bases, planned, best, *args, **kwargs)

    def first_wins(trial, runs, choice, *args):
        row = score_trial(trial, runs, choice, *args)
        if trial.point["learner"] != choice.grid[0]["learner"]:
            trial.key = (-np.inf,)
        return row
    monkeypatch.setattr(selection, "_train_folds", recording)
    monkeypatch.setattr(selection, "_score_trial", first_wins)
    auto = train(corpus, [], learner="auto", candidates=["sp", "pa"])
    assert auto.training["selection"]["on"] == "held-out" and auto.training["learner"] == "sp"
    assert seen == [None, ("sp", [None], 1)]
    monkeypatch.undo()
    alone = train(corpus, [], learner="auto", candidates=["sp"])
    assert auto.temperature == alone.temperature and auto.temperature != 1.0


@pytest.mark.parametrize("name, options", [("sp", {}), ("sp", {"averaged": False}), ("pa", {}), ("arow", {}),
                                           ("bol", {}), ("bol", {"averaged": False}), ("bol", {"rank1": "global"}),
                                           ("bcd", {})])
def test_the_held_out_decode_reads_only_the_rows_it_needs(corpus, tmp_path, monkeypatch, name, options):
    """After each pass learner = auto decodes its held-out part from the weights of the
    attributes that part has (selection.held_out_rows, Learner.decode_parameters): the
    weights are parameters() at those rows, bit for bit, and the labels are those of
    the model decoded from all of them (Model.decode on the part as encoded)."""
    import numpy as np
    from seqbil.params import Settings
    from seqbil.storage import dense_store
    from seqbil.training.prepare import make_learner, prepare
    dev = sample_head("conll2000_test.txt", 40, tmp_path / "dev.txt")
    settings = Settings.of({"learner": name, "epochs": 1, "temperature": 1.0, **options,
                            "templates": ["U00:%x[0,0]", "U01:%x[0,1]", "B00:%x[-1,1]/%x[0,1]", "B01:%x[0,0]"]})
    run = prepare(settings, str(corpus), str(dev), None, None, None, lambda line: None)
    learner = make_learner(run, echo=lambda line: None)
    rows0, rows1, cut = selection.held_out_rows(run.dev_data)
    assert 0 < len(rows1) < run.index.n_attributes(1)  # (the dev part has unseen and missing attributes)
    rng = np.random.default_rng(5)
    for epoch in range(2):
        selection.run_passes(run, learner, rng, [], echo=lambda line: None, show_progress=False, score_dev=False)
        kind, full = learner.parameters()
        got_kind, got = learner.decode_parameters(rows0, rows1)
        assert got_kind == kind and set(got) == set(full)
        for key, value in full.items():
            rows = {"W0": rows0, "W1": rows1, "alpha": rows1, "beta": rows1}.get(key)
            np.testing.assert_array_equal(got[key], value if rows is None else value[rows], err_msg=key)
        run.model.use_store(kind, dense_store(kind, full, len(run.model.labels), run.model.precision))
        expected = run.model.decode(run.dev_data)
        run.model.weights = {}
        np.testing.assert_array_equal(selection._held_out_ids(run, learner), expected)
        monkeypatch.setattr(selection, "DENSE_DECODE_BYTES", 16)  # (above it: all the weights' sparse rows)
        np.testing.assert_array_equal(selection._held_out_ids(run, learner), expected)
        monkeypatch.undo()
    learner.finish()
