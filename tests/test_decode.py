"""Viterbi and corpus decoding against brute-force enumeration."""
import itertools

import numpy as np
import pytest

from seqbil._kernels.decode import decode_corpus, viterbi_best
from seqbil.features.dataset import Dataset


def brute_force(unary, pair, trans, end):
    n, S = unary.shape
    best = None
    for ys in itertools.product(range(S), repeat=n):
        s = pair[0, ys[0], S] + trans[ys[0], S] + end[ys[-1]] + sum(unary[i, ys[i]] for i in range(n)) \
            + sum(pair[i, ys[i], ys[i - 1]] + trans[ys[i], ys[i - 1]] for i in range(1, n))
        if best is None or s > best[0]:
            best = (s, ys)
    return best


@pytest.mark.parametrize("n,S", [(1, 1), (1, 4), (2, 3), (4, 3), (5, 2), (3, 5)])
def test_viterbi_equals_brute_force(rng, n, S):
    for _ in range(20):
        unary, pair, end = rng.normal(size=(n, S)), rng.normal(size=(n, S, S + 1)), rng.normal(size=S)
        trans = rng.normal(size=(S, S + 1))
        path, score = viterbi_best(unary, pair, trans, end)
        best_score, best_path = brute_force(unary, pair, trans, end)
        assert tuple(path) == best_path
        assert score == pytest.approx(best_score)


def random_dataset(rng, n_seq, S, A0, A1, max_len=4):
    lengths = rng.integers(1, max_len + 1, size=n_seq)
    seq_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    P = int(seq_ptr[-1])

    def csr(A):
        counts = rng.integers(0, 4, size=P) if A else np.zeros(P, np.int64)
        ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return ptr, rng.integers(0, A, size=int(ptr[-1])).astype(np.int32)
    return Dataset(seq_ptr, rng.integers(0, S, size=P).astype(np.int32), *csr(A0), *csr(A1))


def tables(data, j, W0, W1):
    """Score tables of sequence j computed directly from the weights (a 0-order entry
    with value x adds x * W0[a]; the values are all 1 when data.u_vals is None)."""
    a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
    S = W0.shape[1]
    unary, pair = np.zeros((b - a, S)), np.zeros((b - a, S, S + 1))
    vals = np.ones(len(data.u_ids)) if data.u_vals is None else data.u_vals.astype(np.float64)
    for i, p in enumerate(range(a, b)):
        for k in range(data.u_ptr[p], data.u_ptr[p + 1]):
            unary[i] += vals[k] * W0[data.u_ids[k]]
        for k in range(data.b_ptr[p], data.b_ptr[p + 1]):
            pair[i] += W1[data.b_ids[k]]
    return unary, pair


@pytest.mark.parametrize("S", [3, 4])  # 4 labels (BIES) take a fixed-size scoring path
@pytest.mark.parametrize("form", ["linear", "bilinear"])
def test_decode_corpus_equals_brute_force(rng, form, S):
    A0, A1 = 7, 5
    data = random_dataset(rng, 15, S, A0, A1)
    W0, end, trans = rng.normal(size=(A0, S)), rng.normal(size=S), rng.normal(size=(S, S + 1))
    if form == "linear":
        W1 = rng.normal(size=(A1, S, S + 1))
        extra = {"W1": W1}
    else:
        ab = rng.normal(size=(A1, 2 * S + 1))  # alpha[a] next to beta[a], as the learner keeps them
        alpha, beta = ab[:, :S], ab[:, S:]
        W1 = alpha[:, :, None] * beta[:, None, :]
        extra = {"alpha": alpha, "beta": beta}
    out = np.full(data.n_positions, -1, dtype=np.int32)
    decode_corpus(data, {"W0": W0, "trans": trans, "end": end, **extra}, out)
    for j in range(data.n_sequences):
        unary, pair = tables(data, j, W0, W1)
        assert tuple(out[data.seq_ptr[j]:data.seq_ptr[j + 1]]) == brute_force(unary, pair, trans, end)[1]


@pytest.mark.parametrize("S", [20, 33, 60])  # from 20 labels decode_corpus searches by bounds (bounded.pxd)
@pytest.mark.parametrize("form", ["linear", "bilinear", "transitions only"])
@pytest.mark.parametrize("scores", ["normal", "integers"])  # (integers: ties, which go to the lowest label)
def test_decode_corpus_with_many_labels_equals_the_full_search(rng, form, S, scores):
    """The labels of decode_corpus against chain.pxd's full Viterbi on the same tables
    (viterbi_best), with forbidden transitions and forced positions."""
    A0, A1 = 9, 0 if form == "transitions only" else 6
    data = random_dataset(rng, 30, S, A0, A1, max_len=7)
    draw = (lambda *shape: rng.normal(size=shape)) if scores == "normal" else \
        (lambda *shape: rng.integers(-2, 3, size=shape).astype(np.float64))
    W0, end, trans = draw(A0, S), draw(S), draw(S, S + 1)
    trans[rng.random(trans.shape) < 0.1] = -np.inf  # rules: forbidden transitions
    if form == "bilinear":
        ab = draw(A1, 2 * S + 1)
        alpha, beta = ab[:, :S], ab[:, S:]
        W1, extra = alpha[:, :, None] * beta[:, None, :], {"alpha": alpha, "beta": beta}
    else:
        W1 = draw(A1, S, S + 1)
        extra = {"W1": W1}
    known = np.where(rng.random(data.n_positions) < 0.1, rng.integers(0, S, data.n_positions), -1).astype(np.int32)
    out = np.full(data.n_positions, -1, dtype=np.int32)
    decode_corpus(data, {"W0": W0, "trans": trans, "end": end, **extra}, out, known=known)
    for j in range(data.n_sequences):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        unary, pair = tables(data, j, W0, W1)
        for i, v in enumerate(known[a:b]):
            if v >= 0:
                unary[i, np.arange(S) != v] = -np.inf
        path, _ = viterbi_best(np.ascontiguousarray(unary), np.ascontiguousarray(pair), trans, end)
        assert tuple(out[a:b]) == tuple(path)
