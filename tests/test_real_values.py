"""Real-valued 0-order features (Dataset.u_vals) in decoding and in every learner.

The references are slow and dense: a sequence's features Phi(x, y) are built as
arrays shaped like the weights (a 0-order entry (a, x) at a position labelled y
adds x to W0[a, y]), paths are found by enumerating all of them, and each learner's
update is written on these arrays. The kernels must agree on random corpora whose
values are binary (u_vals None), all 1.0, or real (some negative, some zero).
"""
import dataclasses
import itertools
import zlib

import numpy as np
import pytest

from seqbil._kernels.decode import decode_corpus
from seqbil.checkpoint import fingerprint
from seqbil.features.dataset import Dataset
from seqbil.learners import LEARNERS
from seqbil.params import Settings
from test_bcd import sequence_score
from test_decode import brute_force, random_dataset, tables

KINDS = ["binary", "ones", "real"]


def with_values(data, rng, kind):
    """data with u_vals of the given kind: None, all 1.0, or normal with about a
    quarter of them exactly 0."""
    if kind == "binary":
        return dataclasses.replace(data, u_vals=None)
    vals = np.ones(len(data.u_ids), dtype=np.float32)
    if kind == "real":
        vals = rng.normal(size=len(data.u_ids)).astype(np.float32)
        vals[rng.random(len(vals)) < 0.25] = 0.0
    return dataclasses.replace(data, u_vals=vals)


def corpus(rng, kind, S=3, A0=6, A1=4, n_seq=14):
    return with_values(random_dataset(rng, n_seq, S, A0, A1), rng, kind)


# --- 1. decoding ----------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("form", ["linear", "bilinear"])
@pytest.mark.parametrize("S", [1, 2, 3])
def test_decode_corpus_with_values_equals_brute_force(rng, kind, form, S):
    A0, A1 = 6, 4
    values_mattered = False
    for _ in range(4):
        data = corpus(rng, kind, S, A0, A1, n_seq=12)
        W0, end, trans = rng.normal(size=(A0, S)), rng.normal(size=S), rng.normal(size=(S, S + 1))
        if form == "linear":
            W1 = rng.normal(size=(A1, S, S + 1))
            extra = {"W1": W1}
        else:
            ab = rng.normal(size=(A1, 2 * S + 1))
            alpha, beta = ab[:, :S], ab[:, S:]
            W1 = alpha[:, :, None] * beta[:, None, :]
            extra = {"alpha": alpha, "beta": beta}
        out = np.full(data.n_positions, -1, dtype=np.int32)
        decode_corpus(data, {"W0": W0, "trans": trans, "end": end, **extra}, out)
        binary = dataclasses.replace(data, u_vals=None)
        for j in range(data.n_sequences):
            best = brute_force(*tables(data, j, W0, W1), trans, end)[1]
            assert tuple(out[data.seq_ptr[j]:data.seq_ptr[j + 1]]) == best
            values_mattered |= best != brute_force(*tables(binary, j, W0, W1), trans, end)[1]
    assert values_mattered == (kind == "real" and S > 1)


def test_corpus_view_rejects_values_it_cannot_read(rng):
    data = corpus(rng, "real")
    weights = {"W0": np.zeros((6, 3)), "W1": np.zeros((4, 3, 4)), "trans": np.zeros((3, 4)), "end": np.zeros(3)}
    out = np.zeros(data.n_positions, dtype=np.int32)
    for bad in (data.u_vals.astype(np.float64), data.u_vals[:-1], np.tile(data.u_vals, 2)[::2]):
        with pytest.raises(ValueError):
            decode_corpus(dataclasses.replace(data, u_vals=bad), weights, out)


# --- 2. training against dense references ---------------------------------------------

def best_path(unary, pair, trans, end):
    """The best label sequence and its score, all S^n sequences enumerated with numpy.
    Scores accumulate left to right in the kernels' Viterbi order, and ties go to the
    sequence whose labels, read from the last, are smallest: Viterbi's rule of the
    lowest label at every back-pointer."""
    n, S = unary.shape
    Y = np.array(list(itertools.product(range(S), repeat=n)))
    s = (unary[0, Y[:, 0]] + pair[0, Y[:, 0], S]) + trans[Y[:, 0], S]
    for i in range(1, n):
        s = ((s + pair[i, Y[:, i], Y[:, i - 1]]) + trans[Y[:, i], Y[:, i - 1]]) + unary[i, Y[:, i]]
    s = s + end[Y[:, -1]]
    order = np.lexsort(Y.T)  # last label first
    best = order[np.argmax(s[order])]
    return Y[best], s[best]


def features(data, j, y, S, A0, A1):
    """Phi(x_j, y) by weight array: 0-order entry (a, x) at position i adds x to
    W0[a, y_i]; 1st-order attribute a adds 1 to W1[a, y_i, y_{i-1}] (y_{-1} = S, the
    start); trans[y_i, y_{i-1}] and end[y_last] count the transitions."""
    vals = np.ones(len(data.u_ids)) if data.u_vals is None else data.u_vals.astype(np.float64)
    phi = {"W0": np.zeros((A0, S)), "W1": np.zeros((A1, S, S + 1)), "trans": np.zeros((S, S + 1)),
           "end": np.zeros(S)}
    for i, p in enumerate(range(data.seq_ptr[j], data.seq_ptr[j + 1])):
        prev = y[i - 1] if i else S
        for k in range(data.u_ptr[p], data.u_ptr[p + 1]):
            phi["W0"][data.u_ids[k], y[i]] += vals[k]
        for k in range(data.b_ptr[p], data.b_ptr[p + 1]):
            phi["W1"][data.b_ids[k], y[i], prev] += 1.0
        phi["trans"][y[i], prev] += 1.0
    phi["end"][y[-1]] += 1.0
    return phi


def dphi(data, j, gold, pred, S, A0, A1):
    """dPhi = Phi(gold) - Phi(pred) of sequence j."""
    g, p = features(data, j, gold, S, A0, A1), features(data, j, pred, S, A0, A1)
    return {k: g[k] - p[k] for k in g}


def epoch_orders(rng, data, epochs):
    return [rng.permutation(data.n_sequences).astype(np.int64) for _ in range(epochs)]


class Snapshots:
    """The running mean of the weights over the initial and every later step: what
    lazy averaging (Daume 2006) computes."""

    def __init__(self, weights):
        self.total, self.steps = {k: np.array(v, dtype=float) for k, v in weights.items()}, 0

    def add(self, weights):
        for k in self.total:
            self.total[k] += weights[k]
        self.steps += 1

    def mean(self):
        return {k: v / (self.steps + 1) for k, v in self.total.items()}


def perceptron_reference(data, orders, S, A0, A1, C):
    """Collins (2002): on a mistake W += C dPhi. Returns (final, mean) weights."""
    W = {"W0": np.zeros((A0, S)), "W1": np.zeros((A1, S, S + 1)), "trans": np.zeros((S, S + 1)), "end": np.zeros(S)}
    avg = Snapshots(W)
    for order in orders:
        for j in order:
            gold = data.labels[data.seq_ptr[j]:data.seq_ptr[j + 1]]
            pred, _ = best_path(*tables(data, j, W["W0"], W["W1"]), W["trans"], W["end"])
            if not np.array_equal(pred, gold):
                d = dphi(data, j, gold, pred, S, A0, A1)
                for k in W:
                    W[k] += C * d[k]
            avg.add(W)
    return W, avg.mean()


def refresh_reference(theta, alpha, beta, sigma, R):
    """The block refresh of bol.pyx (_refresh) in numpy: R power steps on Theta_a
    normalised by the previous sigma, warm-started from (alpha / sigma, beta); or,
    without a usable previous pair, normalised power steps from about the unit
    vector of the column of the largest entry. Keeps the orientation of alpha."""
    S, T = theta.shape
    new_sigma, old_u = -1.0, alpha
    if sigma > 0:
        u, v = alpha / sigma, beta.copy()
        old_u = u
        for _ in range(R):
            u = theta @ v / sigma
            v = theta.T @ u / sigma
            nb = np.linalg.norm(v)
            if nb > 1e50 or 0 < nb < 1e-50:
                v = v / nb
        if R == 0:
            u = theta @ v
        na, nb = np.linalg.norm(u), np.linalg.norm(v)
        if na > 0 and nb > 0:
            u, v = u / na, v / nb
            new_sigma = u @ (theta @ v)
    if new_sigma <= 0:
        old_u = alpha
        if not np.abs(theta).max() > 0:
            return np.zeros(S), np.zeros(T), 0.0
        c = int(np.argmax(np.abs(theta))) % T  # first largest entry, row by row
        v = 0.01 * (0.5 + ((np.arange(T) + 1) * 0.6180339887498949) % 1.0)
        v[c] = 1.0
        for _ in range(max(R, 1)):
            u = theta @ v
            u = u / np.linalg.norm(u)
            v = theta.T @ u
            v = v / np.linalg.norm(v)
        new_sigma = u @ (theta @ v)
    flip = -1.0 if u @ old_u < 0 else 1.0
    return flip * new_sigma * u, (flip * v if new_sigma > 0 else np.zeros(T)), max(new_sigma, 0.0)


def block_bilinear_reference(data, orders, S, A0, A1, C, R):
    """Algorithm 2 (Wu & Sun 2015), block mode: on a mistake the linear part steps by
    C dPhi (section 4.3), and every 1st-order attribute at a position whose label
    pair differs has its block Theta_a += C dPhi_a refreshed (even when dPhi_a sums to
    zero, as the kernel's walk over the differing positions does). Returns (final,
    mean) of the scoring weights."""
    lin = {"W0": np.zeros((A0, S)), "trans": np.zeros((S, S + 1)), "end": np.zeros(S)}
    alpha, beta, sigma, theta = np.zeros((A1, S)), np.zeros((A1, S + 1)), np.zeros(A1), np.zeros((A1, S, S + 1))
    weights = lambda: {**lin, "alpha": alpha, "beta": beta}  # noqa: E731
    avg = Snapshots(weights())
    for order in orders:
        for j in order:
            p0 = data.seq_ptr[j]
            gold = data.labels[p0:data.seq_ptr[j + 1]]
            W1 = alpha[:, :, None] * beta[:, None, :]
            pred, _ = best_path(*tables(data, j, lin["W0"], W1), lin["trans"], lin["end"])
            if not np.array_equal(pred, gold):
                d = dphi(data, j, gold, pred, S, A0, A1)
                for k in lin:
                    lin[k] += C * d[k]
                differ = [i for i in range(len(gold)) if gold[i] != pred[i] or (i and gold[i - 1] != pred[i - 1])]
                touched = {int(a) for i in differ for a in data.b_ids[data.b_ptr[p0 + i]:data.b_ptr[p0 + i + 1]]}
                for a in sorted(touched):
                    # the learner keeps Theta in float32 (cython_ext/blocks.pxd)
                    theta[a] = (theta[a] + C * d["W1"][a]).astype(np.float32)
                    alpha[a], beta[a], sigma[a] = refresh_reference(theta[a], alpha[a], beta[a], sigma[a], R)
            avg.add(weights())
    return weights(), avg.mean()


def bcd_reference(data, schedule, S, A0, A1, C):
    """Algorithm 1 (Wu & Sun 2015): passes of PA-I (Crammer et al. 2006) over the
    linear part and alpha (side 0, features beta[a, y_{i-1}]) or beta (side 1,
    features alpha[a, y_i]), the other side fixed: on a mistake the step is
    tau = min(C, (s(pred) - s(gold) + 1) / |dphi|^2) along dphi."""
    W0, trans, end = np.zeros((A0, S)), np.zeros((S, S + 1)), np.zeros(S)
    alpha, beta = np.full((A1, S), 1 / np.sqrt(S)), np.full((A1, S + 1), 1 / np.sqrt(S + 1))
    for order, side in schedule:
        for j in order:
            gold = data.labels[data.seq_ptr[j]:data.seq_ptr[j + 1]]
            W1 = alpha[:, :, None] * beta[:, None, :]
            pred, guess = best_path(*tables(data, j, W0, W1), trans, end)
            if np.array_equal(pred, gold):
                continue
            d = dphi(data, j, gold, pred, S, A0, A1)
            d1 = np.einsum("ayv,av->ay", d["W1"], beta) if side == 0 else np.einsum("ayv,ay->av", d["W1"], alpha)
            sq = sum((d[k] ** 2).sum() for k in ("W0", "trans", "end")) + (d1 ** 2).sum()
            loss = guess - sequence_score(data, j, gold, W0, trans, end, alpha, beta) + 1.0
            tau = min(C, loss / sq) if sq else 0.0
            W0 += tau * d["W0"]
            trans += tau * d["trans"]
            end += tau * d["end"]
            (alpha if side == 0 else beta)[:] += tau * d1
    return {"W0": W0, "trans": trans, "end": end, "alpha": alpha, "beta": beta}


def assert_weights_close(got, want):
    assert set(want) <= set(got)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-9, atol=1e-10, err_msg=k)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("averaged", [False, True])
def test_perceptron_equals_the_dense_reference(rng, kind, averaged):
    S, A0, A1 = 3, 6, 4
    data = corpus(rng, kind, S, A0, A1)
    orders = epoch_orders(rng, data, 3)
    C = 0.7
    learner = LEARNERS["sp"](S, A0, A1, Settings.of({"averaged": averaged, "C": C}))
    mistakes = sum(learner.train_chunk(data, order) for order in orders)
    final, mean = perceptron_reference(data, orders, S, A0, A1, C)
    assert mistakes > 0
    assert_weights_close(learner.parameters()[1], mean if averaged else final)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("averaged", [False, True])
def test_block_bilinear_equals_the_dense_reference(rng, kind, averaged):
    S, A0, A1 = 3, 6, 4
    data = corpus(rng, kind, S, A0, A1)
    orders = epoch_orders(rng, data, 3)
    C, R = 0.7, 4
    learner = LEARNERS["bol"](S, A0, A1, Settings.of({"averaged": averaged, "C": C, "power_steps": R}))
    mistakes = sum(learner.train_chunk(data, order) for order in orders)
    final, mean = block_bilinear_reference(data, orders, S, A0, A1, C, R)
    assert mistakes > 0 and learner.blocks.used > 0
    assert_weights_close(learner.parameters()[1], mean if averaged else final)


@pytest.mark.parametrize("kind", KINDS)
def test_bcd_equals_the_dense_reference(rng, kind):
    S, A0, A1 = 3, 6, 4
    data = corpus(rng, kind, S, A0, A1)
    learner = LEARNERS["bcd"](S, A0, A1, Settings.of({"C": 0.7, "bcd_rounds": 2, "bcd_epochs": 2}))
    schedule = []
    for k in range(learner.passes()):
        learner.start_pass(k)
        order = rng.permutation(data.n_sequences).astype(np.int64)
        learner.train_chunk(data, order)
        schedule.append((order, learner.side))
    assert {side for _, side in schedule} == {0, 1}
    assert_weights_close(learner.parameters()[1], bcd_reference(data, schedule, S, A0, A1, 0.7))


@pytest.mark.parametrize("side", [0, 1])
def test_one_pa_step_with_values_makes_the_margin_exactly_one(rng, side):
    """With a step below C, PA-I lands on the margin: the squared norm of dphi must
    count the entries' values squared (as summed per attribute)."""
    from seqbil._kernels.bcd import BCDKernel
    S, A0, A1 = 3, 6, 4
    checked = 0
    for _ in range(4):
        data = corpus(rng, "real", S, A0, A1)
        W0, end, trans = rng.normal(size=(A0, S)), rng.normal(size=S), rng.normal(size=(S, S + 1))
        alpha, beta = rng.normal(size=(A1, S)), rng.normal(size=(A1, S + 1))
        kernel = BCDKernel(W0, trans, end, alpha, beta, np.full(A0, -1, np.int32), np.full(A1, -1, np.int32), 1e9,
                           True)
        weights = {"W0": W0, "trans": trans, "end": end, "alpha": alpha, "beta": beta}
        for j in range(data.n_sequences):
            out = np.zeros(data.n_positions, dtype=np.int32)
            decode_corpus(data, weights, out)
            a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
            guess, gold = list(out[a:b]), list(data.labels[a:b])
            if guess == gold:
                continue
            assert kernel.train_chunk(data, np.array([j], dtype=np.int64), side) == 1
            margin = sequence_score(data, j, gold, W0, trans, end, alpha, beta) - \
                sequence_score(data, j, guess, W0, trans, end, alpha, beta)
            assert margin == pytest.approx(1.0, abs=1e-9)
            checked += 1
    assert checked >= 5


# --- 3. values of 1, and value 2 as a repeated entry -------------------------------------

CONFIGS = [("sp", {"averaged": False}), ("sp", {"averaged": True}), ("bol", {"averaged": False}),
           ("bol", {"averaged": True}), ("bol", {"rank1": "global", "averaged": False}),
           ("bol", {"rank1": "global", "averaged": True}), ("bcd", {"bcd_rounds": 2, "bcd_epochs": 2})]
CONFIG_IDS = ["sp", "sp-avg", "bol", "bol-avg", "global", "global-avg", "bcd"]


def train(name, options, data, S, A0, A1, seed):
    """A learner trained on data for all its passes (bcd) or 3 epochs, shuffled by seed."""
    learner = LEARNERS[name](S, A0, A1, Settings.of(options))
    rng = np.random.default_rng(seed)
    for k in range(learner.passes() if name == "bcd" else 3):
        learner.start_pass(k)
        learner.train_chunk(data, rng.permutation(data.n_sequences).astype(np.int64))
    return learner


@pytest.mark.parametrize("name,options", CONFIGS, ids=CONFIG_IDS)
def test_values_of_one_train_exactly_like_no_values(rng, name, options):
    S, A0, A1 = 3, 6, 4
    binary = corpus(rng, "binary", S, A0, A1, n_seq=20)
    ones = with_values(binary, rng, "ones")
    a, b = (train(name, options, d, S, A0, A1, seed=7) for d in (binary, ones))
    arrays_a, arrays_b = a.snapshot()[0], b.snapshot()[0]
    assert set(arrays_a) == set(arrays_b)
    for k in arrays_a:
        assert np.array_equal(arrays_a[k], arrays_b[k]), k
    assert a.snapshot()[1] == b.snapshot()[1]
    assert any(np.any(v) for v in a.parameters()[1].values())


def merge_repeats(data, rng):
    """(repeated, merged): some 0-order entries of data written twice at their position
    with no values, and the same corpus with each such entry once, valued 2."""
    twice = rng.random(len(data.u_ids)) < 0.4
    counts = np.diff(data.u_ptr)
    per_position = np.add.reduceat(twice.astype(np.int64), data.u_ptr[:-1]) * (counts > 0)
    ptr = np.concatenate([[0], np.cumsum(counts + per_position)]).astype(np.int64)
    repeated = dataclasses.replace(data, u_ptr=ptr, u_ids=np.repeat(data.u_ids, 1 + twice).astype(np.int32),
                                   u_vals=None)
    merged = dataclasses.replace(data, u_vals=np.where(twice, 2.0, 1.0).astype(np.float32))
    return repeated, merged


@pytest.mark.parametrize("name,options", CONFIGS, ids=CONFIG_IDS)
def test_a_repeated_entry_equals_one_entry_of_value_two(rng, name, options):
    S, A0, A1 = 3, 6, 4
    repeated, merged = merge_repeats(corpus(rng, "binary", S, A0, A1, n_seq=20), rng)
    assert len(repeated.u_ids) > len(merged.u_ids)
    a, b = (train(name, options, d, S, A0, A1, seed=3) for d in (repeated, merged))
    assert_weights_close(a.parameters()[1], b.parameters()[1])


def test_merge_repeats_builds_what_it_says(rng):
    data = corpus(rng, "binary")
    repeated, merged = merge_repeats(data, rng)
    for p in range(data.n_positions):
        r = repeated.u_ids[repeated.u_ptr[p]:repeated.u_ptr[p + 1]]
        m = np.repeat(merged.u_ids[merged.u_ptr[p]:merged.u_ptr[p + 1]],
                      merged.u_vals[merged.u_ptr[p]:merged.u_ptr[p + 1]].astype(int))
        assert list(r) == list(m)


# --- checkpoints --------------------------------------------------------------------

def test_fingerprint_counts_values_only_when_present(rng):
    data = corpus(rng, "binary")
    crc = 0
    for array in (data.seq_ptr, data.labels, data.u_ptr, data.u_ids, data.b_ptr, data.b_ids):
        crc = zlib.crc32(np.ascontiguousarray(array).data.cast("B"), crc)
    assert fingerprint(data) == crc  # as before values existed: old checkpoints still resume
    ones = with_values(data, rng, "ones")
    real = with_values(data, rng, "real")
    changed = dataclasses.replace(real, u_vals=real.u_vals.copy())
    changed.u_vals[0] += 1.0
    prints = {fingerprint(d) for d in (data, ones, real, changed)}
    assert len(prints) == 4


def test_dataset_values_default_to_none():
    empty = [np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(1, np.int64), np.zeros(0, np.int32),
             np.zeros(1, np.int64), np.zeros(0, np.int32)]
    assert Dataset(*empty).u_vals is None
