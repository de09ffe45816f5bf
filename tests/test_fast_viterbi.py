"""Viterbi by bounded search (bounded.pxd) against the full search and brute force:
the same path and the same score, bit for bit, ties included."""
import itertools

import numpy as np
import pytest

from seqbil._kernels.decode import viterbi_best, viterbi_bounded_best, viterbi_tables


def brute_force(unary, pair, trans, end):
    """The best score, and among the best paths the one the Viterbi recursion keeps
    (lowest last label, then the lowest label before it, ...): the least path read
    backwards. Exact for integer-valued scores."""
    n, S = unary.shape
    best = None
    for ys in itertools.product(range(S), repeat=n):
        s = pair[0, ys[0], S] + trans[ys[0], S] + end[ys[-1]] + sum(unary[i, ys[i]] for i in range(n)) \
            + sum(pair[i, ys[i], ys[i - 1]] + trans[ys[i], ys[i - 1]] for i in range(1, n))
        key = (-s, ys[::-1])
        if best is None or key < best:
            best = key
    return -best[0], best[1][::-1]


def integer_tables(rng, n, S, lo=-2, hi=2, forbid=0.0, sparse=None):
    """Integer-valued score tables (so that ties occur), a share forbid of the
    transitions and end scores -inf, and pair zero at i > 0 (sparse None) or nonzero
    in a share sparse of its cells."""
    unary = rng.integers(lo, hi + 1, size=(n, S)).astype(float)
    trans = rng.integers(lo, hi + 1, size=(S, S + 1)).astype(float)
    end = rng.integers(lo, hi + 1, size=S).astype(float)
    trans[rng.random((S, S + 1)) < forbid] = -np.inf
    end[rng.random(S) < forbid / 2] = -np.inf
    pair = np.zeros((n, S, S + 1))
    pair[0, :, S] = rng.integers(lo, hi + 1, size=S)
    if sparse is not None:
        cells = rng.random((n, S, S + 1)) < sparse
        cells[0] = False
        pair[cells] = rng.integers(lo, hi + 1, size=int(cells.sum()))
    return unary, pair, trans, end


# the search as used (the full one below its default number of labels), and the
# bounded search at any number of labels with 1, 2 and 8 labels kept in order before
# the heap, so that small tables reach every branch, with and without the full search
# of the open labels of crowded positions (a quarter or more open, or any) and of
# those left once the scans have examined a few candidates (budget)
SEARCHES = [{}, {"top": 1, "small": 1, "crowd": 100, "budget": 0}, {"top": 2, "small": 1, "crowd": 100, "budget": 0},
            {"top": 8, "small": 1, "crowd": 100, "budget": 0}, {"top": 2, "small": 1, "crowd": 25, "budget": 0},
            {"top": 2, "small": 1, "crowd": 0}, {"top": 2, "small": 1, "crowd": 100, "budget": 10 ** 6},
            {"top": 2, "small": 1, "crowd": 100, "budget": 4}]


@pytest.fixture(params=SEARCHES, ids=["default", "top1", "top2", "top8", "crowd25", "crowd0", "budget0", "budget4"])
def search(request):
    return request.param


def same(a, b):
    """Two (path, score) results are identical (a score of NaN, from a table with no
    allowed path ending, equal to NaN)."""
    return np.array_equal(a[0], b[0]) and (a[1] == b[1] or (np.isnan(a[1]) and np.isnan(b[1])))


@pytest.mark.parametrize("n,S", [(1, 1), (1, 2), (1, 5), (2, 1), (3, 1), (2, 2), (4, 2), (6, 2), (3, 3),
                                 (4, 3), (3, 4), (2, 6)])
@pytest.mark.parametrize("pairs", [False, True])
def test_bounded_equals_brute_force(rng, n, S, pairs, search):
    for t in range(30):
        unary, pair, trans, end = integer_tables(rng, n, S, forbid=0.2 if t % 2 else 0.0,
                                                 sparse=0.3 if pairs else None)
        path, score = viterbi_bounded_best(unary, pair, trans, end, pairs=pairs, **search)
        best_score, best_path = brute_force(unary, pair, trans, end)
        if best_score == -np.inf:  # every path forbidden: as the full search, which keeps label 0
            assert same((path, score), viterbi_best(unary, pair, trans, end))
            continue
        assert score == best_score
        assert tuple(path) == best_path
        assert same((path, score), viterbi_best(unary, pair, trans, end))


@pytest.mark.parametrize("S", [1, 2, 3, 5, 8, 17, 44, 64, 130])
@pytest.mark.parametrize("kind", ["ties", "forbidden", "real", "dominant", "flat"])
@pytest.mark.parametrize("pairs", [False, True])
def test_bounded_equals_full_search(rng, S, kind, pairs, search):
    """Path and score identical to viterbi_best's, bit for bit."""
    for _ in range(40):
        n = int(rng.integers(1, 12))
        sparse = 0.1 if pairs else None
        if kind == "ties":
            unary, pair, trans, end = integer_tables(rng, n, S, lo=-1, hi=1, sparse=sparse)
        elif kind == "forbidden":
            unary, pair, trans, end = integer_tables(rng, n, S, forbid=0.5, sparse=sparse)
            unary[rng.random((n, S)) < 0.2] = -np.inf  # forced decoding's -inf labels
        else:
            unary, pair, trans, end = integer_tables(rng, n, S, sparse=sparse)
            scale = {"real": 1.0, "dominant": 0.3, "flat": 3.0}[kind]
            unary = rng.normal(size=(n, S))
            trans[np.isfinite(trans)] = scale * rng.normal(size=int(np.isfinite(trans).sum()))
            pair[pair != 0] = rng.normal(size=int((pair != 0).sum()))
            if kind == "dominant":  # a trained tagger: one label far ahead at each token
                unary[np.arange(n), rng.integers(0, S, size=n)] += 8.0
        assert same(viterbi_bounded_best(unary, pair, trans, end, pairs=pairs, **search),
                    viterbi_best(unary, pair, trans, end))


def test_all_equal_scores(search):
    """Every path ties: the full search's all-zero path."""
    for S in (1, 2, 7):
        for n in (1, 2, 5):
            tables = np.zeros((n, S)), np.zeros((n, S, S + 1)), np.zeros((S, S + 1)), np.zeros(S)
            path, score = viterbi_bounded_best(*tables, **search)
            assert score == 0.0 and not path.any()
            assert same((path, score), viterbi_best(*tables))


def test_forbidden_rows_and_columns(rng, search):
    """Labels no transition may enter or leave, and a label that may follow nothing."""
    for _ in range(200):
        S, n = int(rng.integers(2, 9)), int(rng.integers(1, 7))
        unary, pair, trans, end = integer_tables(rng, n, S)
        trans[rng.integers(0, S)] = -np.inf  # a label nothing may precede
        trans[:, rng.integers(0, S)] = -np.inf  # a label nothing may follow
        for pairs in (False, True):
            assert same(viterbi_bounded_best(unary, pair, trans, end, pairs=pairs, **search),
                        viterbi_best(unary, pair, trans, end))


def test_without_pairs_ignores_pair(rng, search):
    """pairs=False reads only the start column of pair; with pair zero at i > 0 that
    is the full search."""
    unary, pair, trans, end = integer_tables(rng, 6, 5)
    junk = pair.copy()
    junk[1:] = rng.normal(size=junk[1:].shape)
    assert same(viterbi_bounded_best(unary, junk, trans, end, pairs=False, **search),
                viterbi_best(unary, pair, trans, end))


@pytest.mark.parametrize("shared_pair", [False, True])
def test_tables_corpus(rng, shared_pair, search):
    """viterbi_tables decodes each sequence as viterbi_best does, by either search."""
    S, lengths = 30, rng.integers(1, 15, size=40)
    seq_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    P, maxlen = int(seq_ptr[-1]), int(lengths.max())
    unary = rng.normal(size=(P, S))
    unary[np.arange(P), rng.integers(0, S, size=P)] += 5.0
    trans, end = rng.normal(size=(S, S + 1)), rng.normal(size=S)
    trans[rng.random((S, S + 1)) < 0.1] = -np.inf
    pair = np.zeros((maxlen, S, S + 1))
    if shared_pair:
        cells = rng.random(pair.shape) < 0.05
        pair[cells] = rng.normal(size=int(cells.sum()))
    results = []
    for bounded in (False, True):
        out, scores = np.zeros(P, np.int32), np.zeros(len(lengths))
        viterbi_tables(unary, seq_ptr, trans, end, out, scores, bounded, pair if shared_pair else None, **search)
        results.append((out, scores))
    assert np.array_equal(results[0][0], results[1][0]) and np.array_equal(results[0][1], results[1][1])
    for j in range(len(lengths)):
        a, b = seq_ptr[j], seq_ptr[j + 1]
        path, score = viterbi_best(np.ascontiguousarray(unary[a:b]), np.ascontiguousarray(pair[:b - a]), trans, end)
        assert np.array_equal(results[1][0][a:b], path) and results[1][1][j] == score


def test_bad_arguments():
    with pytest.raises(ValueError):
        viterbi_bounded_best(np.zeros((2, 3)), np.zeros((2, 3, 4)), np.zeros((3, 4)), np.zeros(3), top=0)
    with pytest.raises(ValueError):
        viterbi_bounded_best(np.zeros((2, 3)), np.zeros((2, 3, 3)), np.zeros((3, 4)), np.zeros(3))
    with pytest.raises(ValueError):
        viterbi_tables(np.zeros((4, 3)), np.array([0, 4], np.int64), np.zeros((3, 4)), np.zeros(3),
                       np.zeros(3, np.int32), np.zeros(1), True)
