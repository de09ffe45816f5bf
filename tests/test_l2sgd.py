"""The l2sgd learner (CRFsuite's train_l2sgd.c): its SGD steps against a dense
reference that enumerates every labelling, its calibration against a transcription of
CRFsuite's, its epochs and stopping test, and whole runs against the crf learner's
optimum, checkpoints and the parameter table."""
import itertools
import math

import numpy as np
import pytest

import seqbil
from seqbil import params
from seqbil.features.dataset import Dataset
from seqbil.learners.l2sgd import L2SGD
from seqbil.model import Model
from seqbil.samples import sample_path
from test_decode import random_dataset

TRAIN = sample_path("conll2000_train.txt")


def settings(**kw):
    return params.Settings.of({"learner": "l2sgd", **L2SGD.defaults, **kw})


def make(data, S, A0, A1, transitions=True, **kw):
    learner = L2SGD(S, A0, A1, settings(**kw), transitions)
    learner.prepare(data)
    return learner


def learnable(rng, n, S, A0, A1):
    """random_dataset whose labels follow the first attribute of their position, so that
    SGD lowers the loss of sentences it has not seen yet."""
    data = random_dataset(rng, n, S, A0, A1)
    for p in range(data.n_positions):
        if data.u_ptr[p + 1] > data.u_ptr[p]:
            data.labels[p] = data.u_ids[data.u_ptr[p]] % S
    return data


def without_first_order(data):
    return Dataset(data.seq_ptr, data.labels, data.u_ptr, data.u_ids, np.zeros(data.n_positions + 1, np.int64),
                   np.zeros(0, np.int32))


def with_values(rng, data):
    """data with real-valued 0-order entries."""
    return Dataset(data.seq_ptr, data.labels, data.u_ptr, data.u_ids, data.b_ptr, data.b_ids,
                   u_vals=rng.uniform(-1.5, 2.0, size=len(data.u_ids)).astype(np.float32))


class Dense:
    """The CRF of a learner's feature set written out: phi(y) of every labelling of
    every sequence, as dense vectors over the learner's features."""

    def __init__(self, learner, data):
        S, T = learner.S, learner.S + 1
        self.S, self.transitions = S, learner.transitions
        n0, n1 = len(learner.lab0), len(learner.cell1)
        where0 = {(a, int(learner.lab0[q])): q for a in range(learner.A0)
                  for q in range(learner.ptr0[a], learner.ptr0[a + 1])}
        where1 = {(a, int(learner.cell1[q])): n0 + q for a in range(learner.A1)
                  for q in range(learner.ptr1[a], learner.ptr1[a + 1])}
        offt, size = n0 + n1, learner.kernel.size
        vals = np.ones(len(data.u_ids)) if data.u_vals is None else data.u_vals.astype(np.float64)
        self.paths, self.gold = [], []
        for j in range(data.n_sequences):
            a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
            paths = list(itertools.product(range(S), repeat=b - a))
            phis = np.zeros((len(paths), size))
            for r, path in enumerate(paths):
                prev = S
                for i, p in enumerate(range(a, b)):
                    y = path[i]
                    for k in range(data.u_ptr[p], data.u_ptr[p + 1]):
                        q = where0.get((int(data.u_ids[k]), y))
                        if q is not None:
                            phis[r, q] += vals[k]
                    for k in range(data.b_ptr[p], data.b_ptr[p + 1]):
                        q = where1.get((int(data.b_ids[k]), y * T + prev))
                        if q is not None:
                            phis[r, q] += 1.0
                    if self.transitions:
                        phis[r, offt + y * T + prev] += 1.0
                    prev = y
                phis[r, offt + S * T + path[-1]] += 1.0
            self.paths.append(phis)
            self.gold.append(paths.index(tuple(int(y) for y in data.labels[a:b])))

    def loss_and_gradient(self, w, j):
        """-log p(y_j | x_j) at w and its gradient E[phi] - phi(y_j)."""
        phis = self.paths[j]
        scores = phis @ w
        logz = np.logaddexp.reduce(scores)
        p = np.exp(scores - logz)
        return logz - scores[self.gold[j]], p @ phis - phis[self.gold[j]]

    def sgd(self, w, order, t0, lam, t):
        """The steps of train_l2sgd.c in their plain form: w <- (1 - eta lam) w, then
        w <- w - eta grad at that w. Returns (w, sum of the losses, t, eta)."""
        w, total, eta = w.copy(), 0.0, None
        for j in order:
            eta = 1.0 / (lam * (t0 + t))
            w *= 1.0 - eta * lam
            loss, g = self.loss_and_gradient(w, j)
            total += loss
            w -= eta * g
            t += 1
        return w, total, t, eta


@pytest.mark.parametrize("first_order", [True, False])
@pytest.mark.parametrize("transitions", [True, False])
@pytest.mark.parametrize("values", [False, True])
def test_sgd_steps_equal_the_dense_reference(rng, first_order, transitions, values):
    """A few steps of CRFKernel.sgd from random weights, the decay kept as one factor,
    are the plain steps on dense vectors; the losses are those of enumeration."""
    for _ in range(4):
        S, A0, A1 = int(rng.integers(1, 4)), 6, 4 if first_order else 0
        data = random_dataset(rng, 5, S, A0, 4)
        if not first_order:
            data = without_first_order(data)
        if values:
            data = with_values(rng, data)
        learner = make(data, S, A0, A1, transitions)
        dense = Dense(learner, data)
        w0 = rng.normal(size=learner.x.shape)
        if not transitions:
            off = len(learner.lab0) + len(learner.cell1)
            w0[off:off + S * (S + 1)] = 0.0
        order = rng.integers(0, data.n_sequences, size=7).astype(np.int64)
        lam, t0, t = float(rng.uniform(0.05, 0.5)), float(rng.uniform(2.0, 5.0)), float(rng.integers(0, 3))
        want, want_loss, want_t, want_eta = dense.sgd(w0, order, t0, lam, t)
        x = w0.copy()
        total, t_after, decay, eta = learner.kernel.sgd(data, x, order, t0, lam, t)
        assert decay == pytest.approx(np.prod([1 - 1 / (t0 + t + i) for i in range(len(order))]), rel=1e-12)
        assert decay <= 0.5  # the factor did the shrinking: x alone is not the weights
        np.testing.assert_allclose(x * decay, want, rtol=1e-10, atol=1e-12)
        assert total == pytest.approx(want_loss, rel=1e-10)
        assert t_after == want_t and eta == pytest.approx(want_eta, rel=1e-14)
        # loss(): the sum of -log p at given weights
        assert learner.kernel.loss(data, want, order) == \
            pytest.approx(sum(dense.loss_and_gradient(want, j)[0] for j in order), rel=1e-10)


def test_step_gradient_equals_finite_differences(rng):
    """One step from w with a tiny eta moves w by -eta (lam w' + grad), the gradient
    of -log p taken by central differences of loss()."""
    S, A0, A1 = 3, 6, 4
    data = random_dataset(rng, 4, S, A0, A1)
    learner = make(data, S, A0, A1)
    w = rng.normal(size=learner.x.shape)
    j = np.array([2], dtype=np.int64)
    lam, t0 = 0.3, 1e7  # eta = 1 / (lam t0): a small step
    eta = 1.0 / (lam * t0)
    x = w.copy()
    _, _, decay, _ = learner.kernel.sgd(data, x, j, t0, lam, 0.0)
    shrunk = (1 - eta * lam) * w
    h, fd = 1e-6, np.zeros_like(w)
    for k in range(len(w)):
        e = np.zeros_like(w)
        e[k] = h
        fd[k] = (learner.kernel.loss(data, shrunk + e, j) - learner.kernel.loss(data, shrunk - e, j)) / (2 * h)
    np.testing.assert_allclose((shrunk - x * decay) / eta, fd, atol=1e-6)


def crfsuite_calibration(dense, w0, sample, N, lam, eta, rate, candidates, max_trials):
    """train_l2sgd.c's l2sgd_calibration() written out over the dense reference:
    returns (the eta it chooses, the losses of its trials)."""
    S = len(sample)
    init_loss = sum(dense.loss_and_gradient(w0, j)[0] for j in sample) + 0.5 * lam * (w0 @ w0) * S
    num, dec, trials, best_loss, best_eta, init_eta, losses = candidates, 0, 1, 1.7976931348623157e308, eta, \
        eta, []
    while num > 0 or not dec:
        w, loss, _, _ = dense.sgd(w0, sample, 1.0 / (lam * eta), lam, 0)
        loss += 0.5 * lam * (w @ w) * S  # l2sgd() called with N = S
        losses.append(loss)
        ok = math.isfinite(loss) and loss < init_loss
        if ok:
            num -= 1
        if math.isfinite(loss) and loss < best_loss:
            best_loss, best_eta = loss, eta
        if not dec:
            if ok and 0 < num:
                eta *= rate
            else:
                dec, num, eta = 1, candidates, init_eta / rate
        else:
            eta /= rate
        trials += 1
        if max_trials <= trials:
            break
    return best_eta, losses


@pytest.mark.parametrize("c2, rate, candidates, max_trials", [(0.3, 2.0, 10, 20), (2.0, 3.0, 3, 20),
                                                               (0.05, 2.0, 4, 6)])
def test_calibration_chooses_crfsuites_eta(rng, c2, rate, candidates, max_trials):
    S, A0, A1 = 3, 8, 4
    data = learnable(rng, 30, S, A0, A1)
    learner = make(data, S, A0, A1, c2=c2, seed=7, calibration_samples=12, calibration_rate=rate,
                   calibration_candidates=candidates, calibration_max_trials=max_trials)
    record = learner.calibrate(data)
    dense = Dense(learner, data)
    sample = np.random.default_rng(7).permutation(30)[:12]  # the learner's generator's first draw
    lam = 2 * c2 / 30
    eta, losses = crfsuite_calibration(dense, np.zeros_like(learner.x), sample, 30, lam, 0.1, rate, candidates,
                                       max_trials)
    assert record["eta"] == eta and learner.t0 == pytest.approx(1 / (lam * eta), rel=1e-15)
    assert len(record["trials"]) == len(losses)
    np.testing.assert_allclose([loss for _, loss in record["trials"]], losses, rtol=1e-10)
    # the case is not degenerate: etas that lower the loss and one that does not, a search downwards
    etas = [e for e, _ in record["trials"]]
    assert len(etas) >= 3 and min(etas) < 0.1
    assert min(losses) < record["initial_loss"] < max(losses)


def run_epochs(learner, data, n):
    records, weights = [], []
    for k in range(n):
        records.append(learner.train_pass(data, k))
        weights.append(learner.x.copy())
        if records[-1]["stop"]:
            break
    return records, weights


def test_epochs_follow_crfsuite(rng):
    """An epoch is the steps over a permutation from the learner's generator (after the
    calibration's); its objective is the summed losses plus c2 |w|^2; the delta test
    looks period epochs back; the model is the weights of the best epoch."""
    S, A0, A1 = 3, 8, 4
    data = learnable(rng, 20, S, A0, A1)
    learner = make(data, S, A0, A1, c2=0.5, seed=3, period=2, delta=0.02, calibration_samples=8)
    dense = Dense(learner, data)
    records, weights = run_epochs(learner, data, 40)
    gen = np.random.default_rng(3)
    gen.permutation(20)  # the calibration's sample
    lam, t0, w, t = 2 * 0.5 / 20, learner.t0, np.zeros_like(learner.x), 0
    for k, record in enumerate(records):
        w, total, t, eta = dense.sgd(w, gen.permutation(20), t0, lam, t)
        np.testing.assert_allclose(weights[k], w, rtol=1e-9, atol=1e-12)
        assert record["objective"] == pytest.approx(total + 0.5 * w @ w, rel=1e-10)
        assert record["updates"] == t == 20 * (k + 1) and record["eta"] == pytest.approx(eta, rel=1e-14)
        if k >= 2:
            ratio = (records[k - 2]["objective"] - record["objective"]) / record["objective"]
            assert record["improvement"] == pytest.approx(ratio, rel=1e-12)
            assert (record["stop"] is not None) == (ratio < 0.02)
        else:
            assert record["improvement"] is None and record["stop"] is None
    assert records[-1]["stop"] and 3 <= len(records) < 40
    learner.finish()
    best = int(np.argmin([r["objective"] for r in records]))
    assert np.array_equal(learner.x, weights[best])


def test_the_best_epoch_is_kept_when_the_objective_rises(rng):
    """With a learning rate far too large the objective goes up and down: the model is
    the weights of the epoch with the least objective, not the last."""
    S, A0, A1 = 3, 8, 4
    data = random_dataset(rng, 20, S, A0, A1)
    learner = make(data, S, A0, A1, c2=0.01, period=0, calibration_eta=50.0, calibration_max_trials=2,
                   calibration_rate=1.5)
    records, weights = run_epochs(learner, data, 12)
    objectives = [r["objective"] for r in records]
    assert len(records) == 12 and np.argmin(objectives) != len(objectives) - 1
    learner.finish()
    assert np.array_equal(learner.x, weights[int(np.argmin(objectives))])


def exact_objective(model, path, c2):
    """sum_j -log p(y_j | x_j) + c2 |w|^2 of a model on a corpus, through the model's
    own scores and log Z (decode.pyx)."""
    from seqbil._kernels.decode import path_scores
    from seqbil.formats import make_format, read_corpus

    sentences = list(read_corpus(make_format("conll", None, -1), str(path), "utf-8"))
    data = model.encode(sentences)
    scores = np.zeros(data.n_sequences)
    path_scores(data, model.store, data.labels, scores)
    logz = model.decode_marginals(data)[3]
    w = model.weights
    return float(np.sum(logz - scores)) + c2 * sum(float(np.sum(w[k] ** 2)) for k in ("W0", "W1", "trans", "end"))


@pytest.fixture(scope="module")
def crf_optimum():
    """The crf learner's L-BFGS optimum on the CoNLL sample, c2 = 1."""
    model = seqbil.train(str(TRAIN), config="conll2000", learner="crf", c2=1.0, epochs=1000, precision="float64")
    assert model.training["passes_run"] < 1000  # it converged
    return model, exact_objective(model, TRAIN, 1.0)


def test_sgd_ends_near_the_crf_optimum(crf_optimum):
    """On the CoNLL sample SGD ends within a small fraction of the optimum L-BFGS finds
    for the same objective, above it, and the two models tag alike."""
    crf, optimum = crf_optimum
    model = seqbil.train(str(TRAIN), config="conll2000", learner="l2sgd", c2=1.0, epochs=100, precision="float64")
    assert model.training["passes_run"] == 100
    reached = exact_objective(model, TRAIN, 1.0)
    assert optimum * (1 - 1e-6) <= reached <= optimum * (1 + 1e-3)
    from seqbil.formats import make_format, read_corpus

    test = list(read_corpus(make_format("conll", None, -1), str(sample_path("conll2000_test.txt")), "utf-8"))
    a, b = model.predict(test), crf.predict(test)
    same = np.mean(np.concatenate([np.array(x) == np.array(y) for x, y in zip(a, b)]))
    assert same > 0.99


def test_interrupted_and_resumed_run_gives_the_same_model_bytes(tmp_path):
    from test_reliability import interrupt_after

    options = {"config": "conll2000", "learner": "l2sgd", "epochs": 5, "calibration_samples": 200}
    data = str(TRAIN)
    whole = tmp_path / "whole.sbm"
    seqbil.train(data, model=str(whole), **options)
    for after in (1, 3):
        part, ckpt = tmp_path / f"part{after}.sbm", tmp_path / f"part{after}.ckpt"
        seqbil.train(data, model=str(part), checkpoint_every=100, checkpoint=str(ckpt), echo=interrupt_after(after),
                     **options)
        assert Model.load(part).training["passes_run"] == after
        seqbil.resume(str(ckpt), str(part))
        assert part.read_bytes() == whole.read_bytes()


def test_continues_a_model(tmp_path):
    """--init-model: the calibration and the epochs start from the model's weights, so
    the first epoch's objective is already near the end of the first run."""
    first = tmp_path / "first.sbm"
    lines = []
    seqbil.train(str(TRAIN), config="conll2000", learner="l2sgd", epochs=8, model=str(first))
    seqbil.train(str(TRAIN), config="conll2000", learner="l2sgd", epochs=1, init_model=str(first), echo=lines.append)
    again = [line for line in lines if line.startswith("epoch 1/1")]
    fresh = []
    seqbil.train(str(TRAIN), config="conll2000", learner="l2sgd", epochs=1, echo=fresh.append)
    objective = [float(line.split("objective ")[1].split(",")[0]) for line in again + [
        line for line in fresh if line.startswith("epoch 1/1")]]
    assert objective[0] < 0.8 * objective[1]


def test_settings_and_refusals(tmp_path):
    s = params.resolve(None, {"learner": "l2sgd"})
    assert s.delta == L2SGD.defaults["delta"] and s.epochs == L2SGD.defaults["epochs"]
    s = params.resolve(None, {"learner": "crf"})
    assert s.delta == params.by_name()["delta"].default != L2SGD.defaults["delta"]
    s = params.resolve(None, {"learner": "l2sgd", "delta": 0.5})
    assert s.delta == 0.5
    row = next(line for line in params.describe("markdown").splitlines() if line.startswith("| `[train] delta`"))
    assert f"{params.by_name()['delta'].default:g} (l2sgd: {L2SGD.defaults['delta']:g})" in row
    with pytest.raises(seqbil.SeqbilError, match="'crf_delta' is now called 'delta'"):
        params.resolve(None, {"crf_delta": 0.1})
    (tmp_path / "c.toml").write_text("[train]\ncrf_period = 3\n")
    with pytest.raises(seqbil.SeqbilError, match=r"c.toml:2: \[train\] crf_period is now called period"):
        params.load_config(tmp_path / "c.toml")
    with pytest.raises(seqbil.SeqbilError, match=r"c2 = 0.0: l2sgd needs an L2 term"):
        seqbil.train(config="conll2000", learner="l2sgd", c2=0.0, epochs=1)
    with pytest.raises(seqbil.SeqbilError, match="does not support iterative parameter mixing"):
        seqbil.train(str(TRAIN), config="conll2000", learner="l2sgd", shards=2)
