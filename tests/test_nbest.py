"""K-best decoding (list Viterbi) and max-marginal margins against brute-force
enumeration of every path, and `seqbil tag --nbest/--confidence`."""
import itertools
import math

import numpy as np
import pytest
from click.testing import CliRunner

import seqbil
from seqbil._kernels.decode import (confidence_corpus, decode_corpus, nbest_corpus, viterbi_best, viterbi_confidence,
                                    viterbi_nbest)
from seqbil.cli import main
from seqbil.features.dataset import Dataset
from seqbil.samples import sample_path


# --- references -------------------------------------------------------------------------

def all_paths(unary, pair, trans, end):
    """Every label sequence (rows) and its score, in the order the decoders must list
    them: best first; equal scores by the labels read from the last position back
    (viterbi()'s tie rule). Exact for the integer weights below."""
    n, S = unary.shape
    if n == 0:
        return np.zeros((1, 0), dtype=int), np.zeros(1)
    paths = np.array(list(itertools.product(range(S), repeat=n)))
    idx = np.arange(n)
    scores = pair[0, paths[:, 0], S] + trans[paths[:, 0], S] + unary[idx, paths].sum(1) + end[paths[:, -1]]
    if n > 1:
        scores += (pair[idx[1:], paths[:, 1:], paths[:, :-1]] + trans[paths[:, 1:], paths[:, :-1]]).sum(1)
    order = np.lexsort([paths[:, i] for i in range(n)] + [-scores])  # last key first
    return paths[order], scores[order]


def through(paths, scores, i, S):
    """Best score of a path with label y at position i, for each y (-inf: none)."""
    return np.array([scores[paths[:, i] == y].max() for y in range(S)])


def assert_same_list(got_paths, got_scores, paths, scores, exact):
    """The k best: same scores; same paths where the order is fixed by the scores
    (everywhere with exact arithmetic, where ties follow viterbi()'s rule)."""
    k = len(got_scores)
    assert np.allclose(got_scores, scores[:k], rtol=1e-12, atol=1e-9)
    assert np.all(np.diff(got_scores) <= 0)
    for r in range(k):
        distinct = all(abs(scores[r] - scores[q]) > 1e-9 for q in (r - 1, r + 1) if 0 <= q < len(scores))
        if exact or distinct:
            assert tuple(got_paths[r]) == tuple(paths[r]), r


def random_weights(rng, kind, shape):
    """Small integers (frequent exact ties, exact sums) or normal reals."""
    return rng.integers(-2, 3, size=shape).astype(np.float64) if kind == "integer" else rng.normal(size=shape)


# --- one sequence of score tables ---------------------------------------------------

@pytest.mark.parametrize("kind", ["integer", "normal"])
def test_nbest_and_margins_of_tables_equal_brute_force(rng, kind):
    for _ in range(150):
        n, S = int(rng.integers(0, 6)), int(rng.integers(1, 4))
        unary, pair = random_weights(rng, kind, (n, S)), random_weights(rng, kind, (n, S, S + 1))
        trans, end = random_weights(rng, kind, (S, S + 1)), random_weights(rng, kind, S)
        paths, scores = all_paths(unary, pair, trans, end)
        k = int(rng.integers(1, len(scores) + 4))  # sometimes more than there are
        got_paths, got_scores = viterbi_nbest(unary, pair, trans, end, k)
        assert got_paths.shape == (min(k, S ** n), n)
        assert_same_list(got_paths, got_scores, paths, scores, exact=kind == "integer")
        best, best_score = viterbi_best(unary, pair, trans, end)
        assert tuple(got_paths[0]) == tuple(best) and got_scores[0] == best_score  # bit for bit

        path, margins, sentence = viterbi_confidence(unary, pair, trans, end)
        assert tuple(path) == tuple(best)
        for i in range(n):
            mu = through(paths, scores, i, S)
            others = np.delete(mu, path[i])
            assert margins[i] == (math.inf if S == 1 else pytest.approx(mu[path[i]] - others.max(), abs=1e-9))
        if len(scores) == 1:
            assert sentence == math.inf
        else:
            assert sentence == pytest.approx(scores[0] - scores[1], abs=1e-9)
            if k >= 2:
                assert sentence == got_scores[0] - got_scores[1]
            assert sentence == pytest.approx(margins.min(), abs=1e-9)  # the second best leaves the best somewhere


def test_k_beyond_the_number_of_paths_gives_every_path_once(rng):
    S, n = 3, 3
    unary, pair = rng.normal(size=(n, S)), rng.normal(size=(n, S, S + 1))
    trans, end = rng.normal(size=(S, S + 1)), rng.normal(size=S)
    got_paths, got_scores = viterbi_nbest(unary, pair, trans, end, 1000)
    assert len(got_scores) == S ** n
    assert sorted(map(tuple, got_paths)) == list(itertools.product(range(S), repeat=n))
    assert np.all(np.diff(got_scores) <= 0)
    paths, scores = viterbi_nbest(np.zeros((0, 2)), np.zeros((0, 2, 3)), np.zeros((2, 3)), np.zeros(2), 5)
    assert paths.shape == (1, 0) and scores.tolist() == [0.0]  # an empty sequence: one empty path


def test_ties_keep_viterbi_order():
    # every path scores 0: the list is all paths, last label first, as viterbi() prefers
    S, n = 2, 3
    paths, scores = viterbi_nbest(np.zeros((n, S)), np.zeros((n, S, S + 1)), np.zeros((S, S + 1)), np.zeros(S), 8)
    assert [tuple(p[::-1]) for p in paths] == list(itertools.product(range(S), repeat=n))
    assert scores.tolist() == [0.0] * 8


# --- corpora of random linear and bilinear models ----------------------------------------

def random_dataset(rng, n_seq, S, A0, A1):
    lengths = rng.integers(1, 6, size=n_seq)
    seq_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    P = int(seq_ptr[-1])

    def csr(A):
        counts = rng.integers(0, 4, size=P)
        ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        return ptr, rng.integers(0, A, size=int(ptr[-1])).astype(np.int32)
    return Dataset(seq_ptr, rng.integers(0, S, size=P).astype(np.int32), *csr(A0), *csr(A1))


def tables(data, j, W0, W1):
    """Score tables of sequence j, straight from the weights."""
    a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
    S = W0.shape[1]
    unary, pair = np.zeros((b - a, S)), np.zeros((b - a, S, S + 1))
    for i, p in enumerate(range(a, b)):
        for k in range(data.u_ptr[p], data.u_ptr[p + 1]):
            unary[i] += W0[data.u_ids[k]]
        for k in range(data.b_ptr[p], data.b_ptr[p + 1]):
            pair[i] += W1[data.b_ids[k]]
    return unary, pair


def random_model(rng, form, S, kind, A0=7, A1=5):
    W0, trans, end = (random_weights(rng, kind, shape) for shape in ((A0, S), (S, S + 1), (S,)))
    if form == "linear":
        W1 = random_weights(rng, kind, (A1, S, S + 1))
        return {"W0": W0, "trans": trans, "end": end, "W1": W1}, W1
    ab = random_weights(rng, kind, (A1, 2 * S + 1))  # alpha[a] next to beta[a], as the learners keep them
    alpha, beta = ab[:, :S], ab[:, S:]
    return {"W0": W0, "trans": trans, "end": end, "alpha": alpha, "beta": beta}, alpha[:, :, None] * beta[:, None, :]


@pytest.mark.parametrize("kind", ["integer", "normal"])
@pytest.mark.parametrize("S", [1, 2, 3, 4])  # 4 labels (BIES) take a fixed-size scoring path
@pytest.mark.parametrize("form", ["linear", "bilinear"])
@pytest.mark.parametrize("small", [20, 1], ids=["full", "bounded"])  # the bounded lists from `small` labels
def test_corpus_nbest_and_confidence_equal_brute_force(rng, form, S, kind, small):
    data = random_dataset(rng, 12, S, 7, 5)
    weights, W1 = random_model(rng, form, S, kind)
    N, P, k = data.n_sequences, data.n_positions, 7
    paths, scores = np.full((k, P), -1, dtype=np.int32), np.full((N, k), np.nan)
    counts = np.zeros(N, dtype=np.int32)
    nbest_corpus(data, weights, k, paths, scores, counts, small=small)
    best = np.full(P, -1, dtype=np.int32)
    decode_corpus(data, weights, best)
    assert np.array_equal(paths[0], best)  # rank 0 is decode_corpus's path, ties included
    out, margins, sentence = np.full(P, -1, dtype=np.int32), np.zeros(P), np.zeros(N)
    confidence_corpus(data, weights, out, margins, sentence)
    assert np.array_equal(out, best)
    for j in range(N):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        unary, pair = tables(data, j, weights["W0"], W1)
        ref_paths, ref_scores = all_paths(unary, pair, weights["trans"], weights["end"])
        assert counts[j] == min(k, S ** (b - a))
        assert_same_list(paths[:counts[j], a:b], scores[j, :counts[j]], ref_paths, ref_scores, exact=kind == "integer")
        assert np.isnan(scores[j, counts[j]:]).all() and (paths[counts[j]:, a:b] == -1).all()
        for i in range(b - a):
            mu = through(ref_paths, ref_scores, i, S)
            y = best[a + i]
            assert mu[y] == pytest.approx(ref_scores[0])  # the predicted label is on a best path
            expected = math.inf if S == 1 else mu[y] - np.delete(mu, y).max()
            assert margins[a + i] == pytest.approx(expected, abs=1e-9)
        if len(ref_scores) == 1:
            assert sentence[j] == math.inf
        else:
            assert sentence[j] == pytest.approx(ref_scores[0] - ref_scores[1], abs=1e-9)
            assert sentence[j] == scores[j, 0] - scores[j, 1]


def test_nbest_corpus_asks_for_no_more_rows_than_paths(rng):
    data = random_dataset(rng, 5, 2, 7, 5)
    weights, _ = random_model(rng, "linear", 2, "normal")
    longest = int(np.diff(data.seq_ptr).max())
    rows = 2 ** longest
    paths = np.zeros((rows, data.n_positions), dtype=np.int32)
    scores, counts = np.zeros((data.n_sequences, rows)), np.zeros(data.n_sequences, dtype=np.int32)
    nbest_corpus(data, weights, 10 ** 6, paths, scores, counts)  # k far beyond S ** length
    assert counts.tolist() == (2 ** np.diff(data.seq_ptr)).tolist()
    with pytest.raises(ValueError):
        nbest_corpus(data, weights, 10 ** 6, paths[:rows - 1], scores, counts)


# --- the Python API and the command line on trained models -----------------------------------

@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nbest")
    trained = {"chunker": seqbil.train(config="conll2000", epochs=2, learner="bol"),  # bilinear
               "linear": seqbil.train(config="conll2000", epochs=2, learner="sp"),
               "segmenter": seqbil.train(config="sighan2005", epochs=2)}
    for name, model in trained.items():
        model.save(folder / f"{name}.sbm")
    return trained, folder


SENTENCE = [["He", "PRP"], ["reckons", "VBZ"], ["the", "DT"], ["current", "JJ"], ["account", "NN"]]


@pytest.mark.parametrize("name", ["chunker", "linear"])
def test_model_nbest_and_confidence_equal_brute_force(models, name):
    model = models[0][name]
    assert model.kind == ("bilinear" if name == "chunker" else "linear")
    tokens = SENTENCE[:2]
    sentence = model.format.sentence(tokens, 1)
    data = model.encode([sentence])
    w = model.weights
    W1 = w["W1"] if model.kind == "linear" else w["alpha"][:, :, None] * w["beta"][:, None, :]
    unary, pair = tables(data, 0, w["W0"], W1)
    paths, scores = all_paths(unary, pair, w["trans"], w["end"])
    S = len(model.labels)
    found = model.nbest(tokens, S ** 2 + 5)
    assert len(found) == S ** 2
    assert_same_list([[model.labels.index(y) for y in labels] for labels, _ in found],
                     [score for _, score in found], paths, scores, exact=False)
    labels, margins, margin = model.confidence(tokens)
    assert labels == found[0][0] == model.tag(tokens)
    for i in range(2):
        mu = through(paths, scores, i, S)
        y = model.labels.index(labels[i])
        assert margins[i] == pytest.approx(mu[y] - np.delete(mu, y).max(), abs=1e-9)
    assert margin == pytest.approx(scores[0] - scores[1], abs=1e-9)


def test_model_api(models):
    chunker, segmenter = models[0]["chunker"], models[0]["segmenter"]
    found = chunker.nbest(SENTENCE, 5)
    assert len(found) == 5 and found[0][0] == chunker.tag(SENTENCE)
    assert all(isinstance(score, float) and len(labels) == len(SENTENCE) for labels, score in found)
    assert len({tuple(labels) for labels, _ in found}) == 5
    labels, margins, margin = chunker.confidence(SENTENCE)
    assert labels == found[0][0] and len(margins) == len(SENTENCE) and min(margins) >= 0
    assert margin == found[0][1] - found[1][1] and margin == pytest.approx(min(margins))
    text = "扬帆远东做与中国合作的先行"
    found = segmenter.nbest(text, 3)
    assert found[0][0] == segmenter.tag(text) and all(set(tags) <= set("BIES") for tags, _ in found)
    assert segmenter.confidence(text)[0] == segmenter.tag(text)
    assert chunker.nbest([], 3) == [([], 0.0)] and chunker.confidence([]) == ([], [], math.inf)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(seqbil.SeqbilError, match="k must be"):
            chunker.nbest(SENTENCE, bad)


def run(*args, input=None):
    return CliRunner().invoke(main, list(map(str, args)), input=input, catch_exceptions=False)


def blocks(output):
    """(header line, body lines) of each `# ...` line of tag output."""
    found = []
    for line in output.split("\n"):
        if line.startswith("# "):
            found.append((line, []))
        else:
            found[-1][1].append(line)
    return found


def test_cli_nbest_conll(models):
    model, path = models[0]["chunker"], models[1] / "chunker.sbm"
    first = sample_path("conll2000_test.txt").read_text(encoding="utf-8").split("\n\n")[0]
    rows = [line.split() for line in first.splitlines()]
    tokens = [row[:-1] for row in rows]
    text = "".join(" ".join(t) + "\n" for t in tokens) + "\nOK UH\n"
    result = run("tag", "--model", path, "--nbest", 3, input=text)
    assert result.exit_code == 0, result.output
    found = blocks(result.output)
    assert [h.split()[:2] for h, _ in found] == [["#", str(r)] for r in (0, 1, 2)] * 2
    for (header, body), (labels, score) in zip(found[:3], model.nbest(tokens, 3)):
        assert float(header.split()[2]) == pytest.approx(score, rel=1e-9)
        assert body[-1] == "" and [line.split() for line in body[:-1]] == [t + [y] for t, y in zip(tokens, labels)]
    plain = run("tag", "--model", path, input=text).output
    assert "\n".join(found[0][1]) + "\n" == plain.split("\n\n")[0] + "\n\n"  # rank 0 is the plain output
    assert [line.split()[:2] for line in result.output.split("\n") if line.startswith("OK ")] == [["OK", "UH"]] * 3


def test_cli_nbest_segmentation(models):
    model, path = models[0]["segmenter"], models[1] / "segmenter.sbm"
    text = "扬帆远东做与中国合作的先行\n\n中国\n"
    result = run("tag", "--model", path, "--nbest", 3, input=text)
    assert result.exit_code == 0, result.output
    lines = result.output.split("\n")[:-1]
    headers = lines[::2]
    assert [h.split()[1] for h in headers] == ["0", "1", "2", "0", "0", "1", "2"]  # an empty line: one empty path
    plain = run("tag", "--model", path, input=text).output.split("\n")
    assert lines[1] == plain[0] and lines[7] == "" and lines[9] == plain[2]
    for (header, body), (tags, score) in zip(blocks(result.output)[:3], model.nbest("扬帆远东做与中国合作的先行", 3)):
        assert float(header.split()[2]) == pytest.approx(score, rel=1e-9)
        assert "".join(body[0].split()) == "扬帆远东做与中国合作的先行"


def test_cli_confidence(models):
    chunker = models[0]["chunker"]
    text = "".join(" ".join(t) + "\n" for t in SENTENCE)
    result = run("tag", "--model", models[1] / "chunker.sbm", "--confidence", input=text)
    assert result.exit_code == 0, result.output
    labels, margins, margin = chunker.confidence(SENTENCE)
    lines = result.output.split("\n")
    assert lines[0].startswith("# confidence ") and float(lines[0].split()[2]) == pytest.approx(margin, rel=1e-9)
    for line, token, y, m in zip(lines[1:], SENTENCE, labels, margins, strict=False):
        fields = line.split()
        assert fields[:3] == token + [y] and float(fields[3]) == pytest.approx(m, rel=1e-9, abs=1e-12)
    assert lines[len(SENTENCE) + 1:] == ["", ""]

    segmenter, path = models[0]["segmenter"], models[1] / "segmenter.sbm"
    result = run("tag", "--model", path, "--confidence", input="扬帆远东做与中国合作的先行\n\n")
    lines = result.output.split("\n")
    assert lines[0] == f"# confidence {segmenter.confidence('扬帆远东做与中国合作的先行')[2]:.10g}"
    assert lines[1] == run("tag", "--model", path, input="扬帆远东做与中国合作的先行\n").output.rstrip("\n")
    assert lines[2:] == ["# confidence inf", "", ""]


def test_cli_options_are_checked_and_documented(models):
    path = models[1] / "chunker.sbm"
    for args in (["--nbest", 0], ["--nbest", 2, "--confidence"]):
        result = CliRunner().invoke(main, ["tag", "--model", str(path), *map(str, args)], input="He PRP\n")
        assert result.exit_code == 2 and "Traceback" not in result.output
    help_text = run("tag", "--help").output
    assert "--nbest K" in help_text and "--confidence" in help_text and "# RANK SCORE" in help_text


@pytest.mark.parametrize("S", [2, 5, 20, 44])
@pytest.mark.parametrize("kind", ["ties", "normal", "dominant", "forced"])
@pytest.mark.parametrize("pairs", [False, True])
@pytest.mark.parametrize("k", [1, 3, 10])
def test_bounded_nbest_lists_are_the_full_ones(rng, S, kind, pairs, k):
    """The K best by bounded search (from 1 label: always) against the full list
    Viterbi (never): the same paths, scores and counts, bit for bit, ties included."""
    from test_forced import random_known
    data = random_dataset(rng, 30, S, 9, 6)
    if not pairs:  # no 1st-order attribute: the pair table is left out past the start
        data = Dataset(data.seq_ptr, data.labels, data.u_ptr, data.u_ids, np.zeros(data.n_positions + 1, np.int64),
                       np.zeros(0, np.int32))
    if kind == "ties":
        weights, _ = random_model(rng, "linear", S, "integer", 9, 6)
        weights = {name: np.sign(w) for name, w in weights.items()}  # -1, 0, 1: most candidates tie
    else:
        weights, _ = random_model(rng, "linear", S, "normal", 9, 6)
        if kind == "dominant":  # a trained tagger: each attribute's label far ahead
            weights["W0"][np.arange(9), rng.integers(0, S, size=9)] += 6.0
    known = random_known(rng, data.n_positions, S) if kind == "forced" else None
    N, P = data.n_sequences, data.n_positions
    lists = []
    for small in (1 << 30, 1):
        paths, scores = np.full((k, P), -1, dtype=np.int32), np.full((N, k), np.nan)
        counts = np.zeros(N, dtype=np.int32)
        nbest_corpus(data, weights, k, paths, scores, counts, known, small=small)
        lists.append((paths, scores, counts))
    (full_paths, full_scores, full_counts), (paths, scores, counts) = lists
    assert np.array_equal(counts, full_counts)
    assert np.array_equal(paths, full_paths)
    np.testing.assert_array_equal(scores, full_scores)  # (NaN where neither has a path)
