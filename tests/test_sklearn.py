"""seqbil.sklearn against the command line on the same data (the same weights and
predictions), its tagger against brute-force enumeration, and the scikit-learn
machinery around it (clone, pickling, cross_val_score, searches)."""
import itertools
import math
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV, cross_val_score  # noqa: E402

from seqbil._kernels.items import flatten  # noqa: E402
from seqbil.formats.crfsuite import escape  # noqa: E402
from seqbil.model import Model  # noqa: E402
from seqbil.samples import sample_path  # noqa: E402
from seqbil.sklearn import CRF, metrics, scorers  # noqa: E402
from seqbil.sklearn.tagger import Tagger  # noqa: E402

from test_cli import reference_chunk_scores, run  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from sklearn_speed import word2features  # noqa: E402  (the tutorial's features, as the benchmark has them)


@pytest.fixture(scope="module", autouse=True)
def no_workers_left():
    """cross_val_score(n_jobs=2) leaves joblib's reusable worker processes running:
    stop them, so that the tests after these see a process without children."""
    yield
    from joblib.externals.loky import get_reusable_executor
    get_reusable_executor().shutdown(wait=True)


def conll(path, n=None):
    return [[line.split() for line in block.splitlines()]
            for block in path.read_text(encoding="utf-8").strip().split("\n\n")][:n]


def data(name, n):
    sents = conll(sample_path(name), n)
    return [[word2features(s, i) for i in range(len(s))] for s in sents], [[row[-1] for row in s] for s in sents]


@pytest.fixture(scope="module")
def chunks():
    return data("conll2000_train.txt", 120), data("conll2000_test.txt", 40)


def write_crfsuite(path, X, y):
    """X, y as CRFsuite's attribute file, the names as python-crfsuite makes them."""
    names, lengths, ptr, ids, vals = flatten(X)
    w = np.ones(len(ids)) if vals is None else vals
    lines, p = [], 0
    for labels in y:
        for label in labels:
            lines.append("\t".join([label] + [f"{escape(names[ids[e]])}:{float(w[e])!r}"
                                             for e in range(ptr[p], ptr[p + 1])]))
            p += 1
        lines.append("")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


# --- the estimator against the command line --------------------------------------------

@pytest.mark.parametrize("algorithm, kwargs, flags", [
    ("lbfgs", {"c1": 0.05, "c2": 0.2, "max_iterations": 25}, ["--learner", "crf", "--c1", "0.05", "--c2", "0.2",
                                                              "--epochs", "25"]),
    ("ap", {"max_iterations": 4}, ["--learner", "sp", "--epochs", "4"]),
    ("pa", {"max_iterations": 3, "pa_type": 2, "c": 0.5}, ["--learner", "pa", "--epochs", "3", "--pa-type", "2",
                                                           "-C", "0.5"]),
    ("arow", {"max_iterations": 3, "variance": 0.5}, ["--learner", "arow", "--epochs", "3", "--arow-variance",
                                                      "0.5"]),
    ("bol", {"max_iterations": 3, "first_order": ["postag"]}, ["--learner", "bol", "--epochs", "3"]),
])
def test_estimator_equals_the_command_line(tmp_path, chunks, algorithm, kwargs, flags):
    (X, y), (Xt, yt) = chunks
    crf = CRF(algorithm=algorithm, params={"temperature": 1.0}, **kwargs).fit(X, y)
    write_crfsuite(tmp_path / "train.txt", X, y)
    write_crfsuite(tmp_path / "test.txt", Xt, yt)
    template = tmp_path / "t"
    template.write_text("\n".join(crf.templates()) + "\n")
    r = run("train", "--format", "crfsuite", "--train", tmp_path / "train.txt", "--template", template,
            "--temperature", "1", "--model", tmp_path / "m.sbm", "-q", *flags)
    assert r.exit_code == 0, r.output
    cli = Model.load(tmp_path / "m.sbm")
    mine, theirs = crf.tagger_.info(), Tagger(cli).info()
    assert mine.state_features == theirs.state_features and mine.transitions == theirs.transitions
    assert mine.first_order_features == theirs.first_order_features
    assert bool(mine.first_order_features) == (algorithm == "bol")
    assert mine.attributes == theirs.attributes and crf.classes_ == cli.labels
    r = run("tag", "--model", tmp_path / "m.sbm", tmp_path / "test.txt")
    assert [b.split("\n") for b in r.stdout.strip("\n").split("\n\n")] == [list(p) for p in crf.predict(Xt)]
    r = run("tag", "--model", tmp_path / "m.sbm", "--all-marginals", tmp_path / "test.txt")
    first = [line for line in r.stdout.split("\n\n")[0].splitlines() if not line.startswith("@")]
    for line, probs in zip(first, crf.predict_marginals_single(Xt[0])):
        shown = dict(field.rsplit(":", 1) for field in line.split("\t")[1:])
        assert {k: float(v) for k, v in shown.items()} == pytest.approx(probs, abs=1e-6)
    assert crf.score(Xt, yt) == metrics.flat_accuracy_score(yt, crf.predict(Xt))


def test_defaults_are_crfsuites(chunks):
    settings = CRF().settings()
    assert (settings.learner, settings.c1, settings.c2) == ("crf", 0.0, 1.0)
    assert settings.epochs == 2 ** 31 - 1 and settings.templates == ["U:%attr", "B"]
    assert CRF(algorithm="l2sgd").settings().epochs == 1000
    assert CRF(algorithm="ap").settings().epochs == 100
    assert CRF(algorithm="bol").settings().epochs == 20  # seqbil's own learner: its own default
    assert CRF(algorithm="bol", first_order="all").settings().templates == ["U:%attr", "B", "B:%attr"]
    with pytest.raises(ValueError, match="algorithm 'nope'"):
        CRF(algorithm="nope").fit(*chunks[0])
    with pytest.raises(ValueError, match="Pass both X_dev and y_dev"):
        CRF().fit(*chunks[0], X_dev=chunks[1][0])
    with pytest.raises(ValueError, match="sequence 2 has 1 items and 2 labels"):
        CRF().fit([[{"a": 1}], [{"a": 1}]], [["A"], ["A", "B"]])
    with pytest.raises(ValueError, match="not fitted"):
        CRF().predict([[{"a": 1}]])
    unfitted = CRF()
    assert unfitted.tagger_ is None and unfitted.classes_ is None and unfitted.state_features_ is None


# --- the tagger against enumeration -------------------------------------------------------

def test_tagger_probabilities_equal_enumeration(rng):
    """probability, marginal and tag of a small random CRF against every labelling,
    scored from the weights info() lists."""
    labels = ["A", "B", "C"]
    X = [[{"w": f"{rng.integers(4)}", "v": float(rng.normal())} for _ in range(rng.integers(1, 5))]
         for _ in range(25)]
    y = [[labels[k] for k in rng.integers(3, size=len(x))] for x in X]
    crf = CRF(max_iterations=30, c2=0.01).fit(X, y)
    tagger, info = crf.tagger_, crf.tagger_.info()

    def score(x, path):
        s = 0.0
        for t, (item, label) in enumerate(zip(x, path)):
            for name, value in (("w:" + item["w"], 1.0), ("v", item["v"])):
                s += value * info.state_features.get((name, label), 0.0)
            s += info.transitions.get((path[t - 1], label), 0.0) if t else info.start_features.get(label, 0.0)
        return s + info.end_features.get(path[-1], 0.0)

    for x in X[:6]:
        paths = list(itertools.product(tagger.labels(), repeat=len(x)))
        scores = np.array([score(x, p) for p in paths])
        logz = np.logaddexp.reduce(scores)
        best = list(paths[int(np.argmax(scores))])
        assert tagger.tag(x) == best
        for p, s in zip(paths[:20], scores):
            assert tagger.probability(list(p)) == pytest.approx(math.exp(s - logz), rel=1e-4, abs=1e-9)
        for t in range(len(x)):
            for label in labels:
                want = sum(math.exp(s - logz) for p, s in zip(paths, scores) if p[t] == label)
                assert tagger.marginal(label, t) == pytest.approx(want, abs=1e-5)
    with pytest.raises(ValueError):
        tagger.marginal("Z", 0)
    with pytest.raises(ValueError):
        tagger.marginal("A", 99)


# --- scikit-learn around it ----------------------------------------------------------------

def test_clone_pickle_and_model_filename(tmp_path, chunks):
    (X, y), (Xt, _) = chunks
    crf = CRF(algorithm="lbfgs", max_iterations=10, model_filename=str(tmp_path / "m.sbm"))
    assert clone(crf).get_params() == crf.get_params()
    crf.fit(X, y)
    pred = crf.predict(Xt)
    again = pickle.loads(pickle.dumps(crf))
    assert [list(p) for p in again.predict(Xt)] == [list(p) for p in pred]
    assert again.state_features_ == crf.state_features_
    opened = CRF(model_filename=str(tmp_path / "m.sbm"))  # predicts without fit
    assert [list(p) for p in opened.predict(Xt)] == [list(p) for p in pred]
    assert clone(crf).tagger_ is not None  # the clone reads the same model file, as in sklearn-crfsuite
    fresh = CRF(max_iterations=10)
    assert pickle.loads(pickle.dumps(fresh)).get_params() == fresh.get_params()


def test_cross_validation_and_searches(chunks):
    (X, y), _ = chunks
    scores = cross_val_score(CRF(max_iterations=10), X, y, cv=2, n_jobs=2, scoring=scorers.flat_accuracy)
    assert len(scores) == 2 and all(0.5 < s <= 1 for s in scores)
    search = GridSearchCV(CRF(max_iterations=10), {"c2": [0.01, 1.0]}, cv=2, scoring=scorers.chunk_f1)
    search.fit(X, y)
    assert search.best_params_["c2"] in (0.01, 1.0) and 0 < search.best_score_ <= 1
    search = RandomizedSearchCV(CRF(algorithm="ap", params={"temperature": 1.0}), {"max_iterations": [1, 2, 3]},
                                n_iter=2, cv=2, random_state=0, scoring=scorers.sequence_accuracy)
    search.fit(X, y)
    assert search.best_estimator_.tagger_ is not None


def test_chunk_metrics_equal_conlleval(rng):
    tags = ["B-NP", "I-NP", "B-VP", "I-VP", "O"]
    gold = [[tags[k] for k in rng.integers(5, size=rng.integers(1, 9))] for _ in range(30)]
    pred = [[g if rng.random() < 0.7 else tags[rng.integers(5)] for g in s] for s in gold]
    ref = reference_chunk_scores(gold, pred)
    assert metrics.chunk_f1_score(gold, pred) == pytest.approx(ref["f1"] / 100, abs=1e-12)
    assert metrics.chunk_precision_score(gold, pred) == pytest.approx(ref["precision"] / 100, abs=1e-12)
    assert metrics.chunk_recall_score(gold, pred) == pytest.approx(ref["recall"] / 100, abs=1e-12)
    flat_g, flat_p = sum(gold, []), sum(pred, [])
    assert metrics.flat_accuracy_score(gold, pred) == pytest.approx(np.mean([a == b for a, b in zip(flat_g, flat_p)]))
    assert metrics.sequence_accuracy_score(gold, pred) == pytest.approx(np.mean([g == p for g, p in zip(gold, pred)]))
    assert "overall" in metrics.chunk_classification_report(gold, pred)


def test_the_tutorial_example_runs(tmp_path, monkeypatch):
    """docs/examples/sklearn_tutorial.py (sklearn-crfsuite's tutorial), its randomized
    search cut to 2 settings."""
    import runpy
    from pathlib import Path
    source = Path(__file__).parent.parent / "docs" / "examples" / "sklearn_tutorial.py"
    text = source.read_text(encoding="utf-8")
    assert "n_iter=50," in text
    short = tmp_path / "tutorial.py"
    short.write_text(text.replace("n_iter=50,", "n_iter=2,"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    out = runpy.run_path(str(short), run_name="__main__")
    assert out["rs"].best_score_ > 0.5 and len(out["crf"].state_features_) > 100


def test_bad_settings_are_value_errors(chunks):
    X, y = chunks[0]
    with pytest.raises(ValueError, match="first_order"):
        CRF(algorithm="bcd").fit(X, y)
    with pytest.raises(ValueError, match="pa_type"):
        CRF(algorithm="pa", pa_type=7).fit(X, y)
    with pytest.raises(ValueError, match="sequence 3, item 2: the weight of 'g' is nan"):
        CRF().fit([[{"a": 1}]] * 2 + [[{"a": 1}, {"g": float("nan")}]], [["A"], ["A"], ["A", "B"]])


def test_the_pickle_holds_plain_data_and_the_model_bytes(chunks):
    X, y = chunks[0]
    crf = CRF(max_iterations=5).fit(X, y)
    data = pickle.dumps(crf)
    for name in (b"TrainingLog", b"Tagger", b"seqbil.model", b"numpy", b"Model"):
        assert name not in data  # only the estimator's class is named; the rest is plain data and bytes
    assert open(crf._path, "rb").read() in data
    again = pickle.loads(data)
    assert again.training_log_.last_iteration["num"] == crf.training_log_.last_iteration["num"] == 5
    assert again.training_log_.iterations == crf.training_log_.iterations
