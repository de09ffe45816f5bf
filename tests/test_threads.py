"""--jobs N for the online learners: iterative parameter mixing on N threads, against
the same mixing done one copy after another in plain numpy."""
import numpy as np
import pytest

import seqbil
from conftest import sample_head
from seqbil import params
from seqbil.errors import ConfigError
from seqbil.evaluation import headline
from seqbil.learners import LEARNERS
from seqbil.learners.base import CHUNK, AveragedLinear, OnlineLearner
from seqbil.training.passes import run_passes
from seqbil.training.prepare import make_learner, prepare


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return sample_head("conll2000_train.txt", 150, tmp_path_factory.mktemp("corpus") / "train.txt")


def _run(corpus, learner, **options):
    settings = params.Settings.of(params.resolve(params.find_config("conll2000"),
                                                 {"learner": learner, "epochs": 3, **options}))
    run = prepare(settings, str(corpus), None, None, None, None, lambda line: None)
    return run, make_learner(run, None, None, lambda line: None)


def _all_rows(learner, name, order):
    return learner.get_rows(name, None if order is None else np.arange((learner.A0, learner.A1)[order]))


@pytest.mark.parametrize("learner, n, mixing", [("sp", 2, "uniform"), ("pa", 3, "uniform"), ("sp", 2, "mistakes"),
                                                 ("bol", 2, "uniform"), ("bol", 3, "mistakes"),
                                                 ("arow", 2, "uniform"), ("arow", 3, "mistakes"),
                                                 ("rpa", 2, "uniform"), ("bcd", 2, "uniform")])
def test_threads_mix_as_the_copies_trained_one_after_another(corpus, learner, n, mixing, monkeypatch):
    """The reference: n copies of the learner, each trained on its part of the epoch's
    order in turn, every parameter averaged over all its rows by the copies' weights
    in float64; for bol, then, the blocks of the 1st-order attributes at the positions
    an update reached get their factors again by R power steps from the mixed ones
    (refresh_blocks, as the shards of a cluster do), the averaging sums the jump at
    the mixed counter. arow's means and variances are combined as Gaussians instead:
    1/v = sum_i mu_i / v_i, m = v sum_i mu_i m_i / v_i. The rows are mixed on the
    threads, a part each."""
    from seqbil.training import threads
    monkeypatch.setattr(threads.ThreadMixer._parallel, "__defaults__", (4,))  # (parts of the rows from 4 on)
    # (rpa learns the word vectors that %emb templates read, mixed as the weights are)
    options = {"templates": ["U00:%x[-1,0]", "U01:%x[0,0]", "U10:%x[0,1]", "U90:%emb[0,0]", "U91:%emb[1,0]", "B"],
               "averaged": True, "embeddings": "random:4"} if learner == "rpa" else \
        {"bcd_rounds": 2, "bcd_epochs": 1} if learner == "bcd" else {}  # (bcd: alpha, beta, alpha, beta)
    run, threaded = _run(corpus, learner, jobs=n, mixing=mixing, **options)
    run_passes(run, threaded, np.random.default_rng(run.settings.seed), [], echo=lambda line: None,
               show_progress=False, score_dev=False)

    ref_run, first = _run(corpus, learner, jobs=1, mixing=mixing, **options)
    assert learner != "rpa" or (len(first.Phi) > 10 and "Phi" in first.mixing()[0])
    copies = [first] + [make_learner(ref_run, None, None, lambda line: None) for _ in range(n - 1)]
    names, scalars = first.mixing()
    rng, data = np.random.default_rng(ref_run.settings.seed), ref_run.data
    data.pos_diff = np.zeros(data.n_positions, np.uint8)
    for k in range(first.passes()):
        parts = np.array_split(rng.permutation(data.n_sequences).astype(np.int64), n)
        data.pos_diff[:] = 0
        for c in copies:
            c.start_pass(k)
        mistakes = [sum(c.train_chunk(data, part[i:i + CHUNK]) for i in range(0, len(part), CHUNK))
                    for c, part in zip(copies, parts)]
        for c in copies:
            c.end_pass(k)
        mu = [m / sum(mistakes) for m in mistakes] if mixing == "mistakes" else [1.0 / n] * n
        for name, order in names.items():
            if learner == "arow" and name.startswith("V"):
                continue  # (with its mean)
            rows = None if order is None else np.arange((first.A0, first.A1)[order])
            if learner == "arow":
                variance = "V" + (name[1:] if name[0] == "W" else name)
                means, variances = ([_all_rows(c, n, order) for c in copies] for n in (name, variance))
                precision = sum(m / v for m, v in zip(mu, variances))
                for c in copies:
                    c.set_rows(variance, rows, 1 / precision)
                    c.set_rows(name, rows, sum(m * w / v for m, w, v in zip(mu, means, variances)) / precision)
                continue
            mixed = sum(m * _all_rows(c, name, order).astype(np.float64) for m, c in zip(mu, copies))
            for c in copies:
                c.set_rows(name, rows, mixed)
        for name in scalars:
            value = sum(m * getattr(c, name) for m, c in zip(mu, copies))
            for c in copies:
                setattr(c, name, int(round(value)) if isinstance(getattr(c, name), int) else value)
        if learner == "bol":
            _refresh_reached(copies, data, first.counter)
    for name, order in names.items():
        np.testing.assert_allclose(_all_rows(threaded, name, order), _all_rows(first, name, order),
                                   rtol=1e-9 if learner != "bol" else 1e-7, atol=1e-12, err_msg=name)
    for name in scalars:
        assert getattr(threaded, name) == pytest.approx(getattr(first, name))


def _refresh_reached(copies, data, counter):
    """bol's mixed blocks at the 1st-order attributes of the flagged positions, as a
    cluster's mix refreshes them (refresh_blocks), set in every copy."""
    from seqbil._kernels.bol import refresh_blocks
    ptr = data.b_pointers()
    rows = np.array(sorted({int(data.b_ids[q]) for p in np.flatnonzero(data.pos_diff)
                            for q in range(ptr[p], ptr[p + 1])}), dtype=np.int64)
    first, S = copies[0], copies[0].S
    theta = np.ascontiguousarray(first.get_rows("theta", rows), dtype=np.float32)
    alpha, beta = first.get_rows("alpha", rows), first.get_rows("beta", rows)
    sigma = first.get_rows("sigma", rows).astype(np.float64)
    old = alpha.copy(), beta.copy()
    refresh_blocks(theta, alpha, beta, sigma, first.R)
    new = {"alpha": alpha, "beta": beta, "sigma": sigma}
    if first.averaged:
        new["Ua"] = first.get_rows("Ua", rows) + counter * (alpha - old[0])
        new["Ub"] = first.get_rows("Ub", rows) + counter * (beta - old[1])
    for c in copies:
        for name, value in new.items():
            c.set_rows(name, rows, value)
    assert len(rows) and theta.shape[1:] == (S, S + 1)


def test_ids_at_the_flagged_positions():
    from seqbil.dask.ipm_mix import ids_at
    rng = np.random.default_rng(3)
    for _ in range(20):
        P, n_ids = int(rng.integers(0, 30)), int(rng.integers(1, 15))
        ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 4, P))]).astype(np.int64)
        ids = rng.integers(0, n_ids, ptr[-1]).astype(np.int32)
        flags = (rng.random(P) < 0.4).astype(np.uint8)
        want = sorted({int(ids[q]) for p in range(P) if flags[p] for q in range(ptr[p], ptr[p + 1])})
        assert ids_at(ptr, ids, flags, n_ids).tolist() == want
    with pytest.raises(ValueError, match="do not fit"):
        ids_at(np.array([0, 2], np.int64), np.array([0, 5], np.int32), np.ones(1, np.uint8), 5)
    with pytest.raises(ValueError, match="do not fit"):
        ids_at(np.array([0, 3], np.int64), np.array([0, 1], np.int32), np.ones(1, np.uint8), 5)


def test_the_mix_through_get_rows_is_the_mix_in_place(corpus, monkeypatch):
    """A learner that keeps no pool mixes through get_rows and set_rows: the same model."""
    models = []
    for in_place in (True, False):
        if not in_place:
            monkeypatch.setattr(OnlineLearner, "row_pool", lambda self, name: None)
            monkeypatch.setattr(AveragedLinear, "row_pool", lambda self, name: None)
            monkeypatch.setattr(LEARNERS["sp"], "row_pool", lambda self, name: None)
        run, learner = _run(corpus, "sp", jobs=2)
        run_passes(run, learner, np.random.default_rng(1), [], echo=lambda line: None, show_progress=False,
                   score_dev=False)
        models.append({name: _all_rows(learner, name, order) for name, order in learner.mixing()[0].items()})
    for name in models[0]:
        np.testing.assert_allclose(models[0][name], models[1][name], rtol=1e-12, atol=1e-15, err_msg=name)


@pytest.mark.parametrize("learner", ["sp", "pa", "bol", "arow", "rpa", "bcd"])
def test_the_same_number_of_threads_gives_the_same_model(corpus, tmp_path, learner):
    models = [seqbil.train(train=str(corpus), config="conll2000", learner=learner, epochs=3, jobs=2, temperature=1.0)
              for _ in range(2)]
    one = seqbil.train(train=str(corpus), config="conll2000", learner=learner, epochs=3, temperature=1.0)
    paths = [tmp_path / f"m{i}.sbm" for i in range(3)]
    for model, path in zip(models + [one], paths):
        model.save(str(path))
    assert paths[0].read_bytes() == paths[1].read_bytes()
    assert paths[0].read_bytes() != paths[2].read_bytes()  # (two threads mix: not the one-thread run)
    f1 = [headline(seqbil.evaluate(model, str(corpus)))[1] for model in (models[0], one)]
    assert f1[0] > 85 and abs(f1[0] - f1[1]) < 5  # (both learned the training sentences)


def test_jobs_is_refused_where_the_passes_cannot_be_split(corpus, tmp_path):
    partial = tmp_path / "partial.txt"
    partial.write_text(open(corpus).read().replace(" B-NP\n", " ?\n", 5))
    with pytest.raises(ConfigError, match="partial labels trains on one thread"):
        seqbil.train(train=str(partial), config="conll2000", learner="sp", epochs=1, jobs=2, partial=True,
                     temperature=1.0)
