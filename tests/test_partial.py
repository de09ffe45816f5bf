"""Training from partial labels (formats/partial.py): the encoding of what is known,
the CRF's objective over the labellings consistent with it against enumeration and its
gradient against finite differences, the latent targets of the online learners against
a brute-force constrained argmax, scoring against partial gold, and training end to
end from files, the API and the command line."""
import itertools
import subprocess
import sys

import numpy as np
import pytest

import seqbil
from seqbil.evaluation import score
from seqbil.formats import partial
from seqbil.learners.latent import LatentTargets
from seqbil.samples import sample_path
from test_crf import finite_differences, make, path_score
from test_decode import random_dataset, tables
from test_cli import ENV


def test_parse_and_labels_of():
    assert partial.parse("B-NP") == "B-NP"
    assert partial.parse("?") is None
    assert partial.parse("B-NP|I-NP") == frozenset({"B-NP", "I-NP"})
    assert partial.parse("B-NP|") == "B-NP"  # a set of one label is that label
    assert partial.labels_of(["O", "?", "B-NP|I-NP", "B-VP"]) == {"O", "B-NP", "I-NP", "B-VP"}


def test_encode_gives_ids_unknowns_and_deduplicated_sets():
    labels = ["B", "I", "O"]
    values = ["O", "?", "B|I", "I|B", "B", "X|O", "X"]
    ids = np.array([0, 1, 2, 3, 4, 5, 6, -1, 1], dtype=np.int32)
    targets, known, sets = partial.encode(values, ids, labels)
    # O, unknown, set {B, I} (twice: one row), B, X|O -> O (X unknown to the model), X -> unknown, no label
    assert known.tolist() == [2, -1, -2, -2, 0, 2, -1, -1, -1]
    assert sets.tolist() == [[1, 1, 0]]
    for t, k in zip(targets, known):  # every target is a label the position allows
        assert (t == k) if k >= 0 else (k == -1 or sets[-2 - k][t])
    targets, known, _ = partial.encode(["B", "I"], np.array([0, 1]), ["B", "I"])
    assert known is None and targets.tolist() == [0, 1]


def random_partial(rng, data, S):
    """data's labels made partial at random: each position known, unknown, or a set
    that holds its label."""
    P = data.n_positions
    sets = np.zeros((2, S), np.uint8)
    known = data.labels.copy()
    for p in range(P):
        r = rng.random()
        if r < 0.3:
            known[p] = -1
        elif r < 0.5 and S > 1:
            row = int(rng.integers(2))
            known[p] = -2 - row
            sets[row, data.labels[p]] = 1
    for row in range(2):
        if not sets[row].any():
            sets[row, 0] = 1
    for p in range(P):  # (the set rows filled, a position's label may have been left out of its row)
        if known[p] <= -2 and not sets[-2 - known[p], data.labels[p]]:
            sets[-2 - known[p], data.labels[p]] = 1
    data.known, data.label_sets = known, sets
    return data


def allows(data, p, y):
    k = data.known[p]
    return k == y if k >= 0 else k == -1 or bool(data.label_sets[-2 - k][y])


def partial_nll_by_enumeration(data, W0, W1, trans, end):
    """sum over sequences of -log of the probability of the labellings that keep what
    is known, every labelling enumerated."""
    S, total = W0.shape[1], 0.0
    for j in range(data.n_sequences):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        tabs = (*tables(data, j, W0, W1), trans, end)
        paths = list(itertools.product(range(S), repeat=b - a))
        logz = np.logaddexp.reduce([path_score(p, *tabs) for p in paths])
        kept = [path_score(p, *tabs) for p in paths if all(allows(data, a + i, y) for i, y in enumerate(p))]
        total += logz - np.logaddexp.reduce(kept)
    return total


@pytest.mark.parametrize("transitions", [True, False])
def test_crf_objective_over_the_consistent_labellings_equals_enumeration(rng, transitions):
    for _ in range(6):
        S, A0, A1 = int(rng.integers(2, 4)), 6, 4 if transitions else 0
        data = random_partial(rng, random_dataset(rng, 6, S, A0, A1), S)
        learner = make(data, S, A0, A1, transitions, c2=0.2)
        learner.x[...] = rng.normal(size=learner.x.shape)
        if not transitions:
            learner.x[len(learner.lab0) + len(learner.cell1):][:S * (S + 1)] = 0.0
        kind, w = learner.parameters()
        f = learner.evaluate(learner.x, np.zeros_like(learner.x))
        want = partial_nll_by_enumeration(data, w["W0"], w["W1"], w["trans"], w["end"]) + 0.2 * learner.x @ learner.x
        assert f == pytest.approx(want, rel=1e-10)


def test_crf_partial_gradient_equals_finite_differences(rng):
    for _ in range(5):
        S, A0, A1 = int(rng.integers(2, 4)), 6, int(rng.choice([0, 4]))
        data = random_partial(rng, random_dataset(rng, 5, S, A0, A1), S)
        learner = make(data, S, A0, A1, c2=0.1)
        x = rng.normal(size=learner.x.shape)
        g = np.zeros_like(x)
        learner.evaluate(x, g)
        np.testing.assert_allclose(g, finite_differences(learner, x, 1e-6), atol=1e-6)


def test_crf_features_cover_every_label_a_position_allows(rng):
    S, A0, A1 = 3, 7, 4
    data = random_partial(rng, random_dataset(rng, 8, S, A0, A1), S)
    learner = make(data, S, A0, A1)
    for p in range(data.n_positions):
        for k in range(data.u_ptr[p], data.u_ptr[p + 1]):
            a = data.u_ids[k]
            have = set(learner.lab0[learner.ptr0[a]:learner.ptr0[a + 1]].tolist())
            assert {y for y in range(S) if allows(data, p, y)} <= have


class FixedWeights:
    """A stand-in learner whose current weights are given (linear)."""

    def __init__(self, S, W0, W1, trans, end):
        self.S, self.w = S, {"W0": W0, "W1": W1, "trans": trans, "end": end}

    def current_rows(self, rows0, rows1):
        return "linear", {"W0": self.w["W0"][rows0], "W1": self.w["W1"][rows1], "trans": self.w["trans"],
                          "end": self.w["end"]}


def test_latent_targets_are_the_best_consistent_labellings(rng):
    for _ in range(5):
        S, A0, A1 = 3, 6, 4
        data = random_partial(rng, random_dataset(rng, 10, S, A0, A1), S)
        gold = data.labels.copy()
        W0, W1 = rng.normal(size=(A0, S)), rng.normal(size=(A1, S, S + 1))
        trans, end = rng.normal(size=(S, S + 1)), rng.normal(size=S)
        order = rng.permutation(data.n_sequences)[:6].astype(np.int64)
        LatentTargets(data).refresh(FixedWeights(S, W0, W1, trans, end), order)
        for j in range(data.n_sequences):
            a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
            if j not in order or all(data.known[a:b] >= 0):  # not refreshed: the targets stay
                assert data.labels[a:b].tolist() == gold[a:b].tolist()
                continue
            tabs = (*tables(data, j, W0, W1), trans, end)
            kept = [p for p in itertools.product(range(S), repeat=b - a)
                    if all(allows(data, a + i, y) for i, y in enumerate(p))]
            best = max(kept, key=lambda p: path_score(p, *tabs))
            assert path_score(tuple(data.labels[a:b]), *tabs) == pytest.approx(path_score(best, *tabs), abs=1e-9)
            assert all(allows(data, a + i, y) for i, y in enumerate(data.labels[a:b]))


def test_scores_count_only_the_known_tokens():
    gold = [["B", None, "O"], [frozenset({"B", "I"}), "O"]]
    pred = [["B", "I", "B"], ["I", "O"]]
    r = score("chunk", gold, pred)
    assert r["partial"] == "chunk" and r["known_tokens"] == 4 and r["unknown_tokens"] == 1
    assert r["accuracy"] == pytest.approx(75.0)


def partial_corpus(path, fraction, seed=1):
    """The bundled CoNLL-2000 sample with a fraction of the labels replaced by ?."""
    rng = np.random.default_rng(seed)
    lines = []
    for line in sample_path("conll2000_train.txt").read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if fields and rng.random() < fraction:
            fields[-1] = "?"
        lines.append(" ".join(fields))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("learner", ["crf", "sp"])
def test_training_keeps_what_is_known(tmp_path, learner):
    """A partially labelled corpus trains, and the model learns what its known labels
    say: on its own known tokens it is nearly as accurate as a model of the whole
    labels is on them."""
    path = partial_corpus(tmp_path / "partial.txt", 0.3)
    options = {"c2": 0.1, "epochs": 60} if learner == "crf" else {"epochs": 5}
    model = seqbil.train(str(path), partial=True, learner=learner, **options)
    assert "?" not in model.labels and set(model.labels) <= set(seqbil.train(learner="sp", epochs=1).labels)
    result = seqbil.evaluate(model, sample_path("conll2000_test.txt"))
    assert result["f1"] > 80


def test_partial_is_refused_where_it_cannot_apply(tmp_path):
    path = partial_corpus(tmp_path / "partial.txt", 0.3)
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--train", str(path), "--partial",
                           "--learner", "l2sgd", "--model", str(tmp_path / "m.sbm")], capture_output=True, text=True,
                          env=ENV, cwd=tmp_path)
    assert proc.returncode == 2 and "partial = true: not with learner l2sgd" in proc.stderr
    assert "Traceback" not in proc.stderr
    # without --partial, ? is a label like any other
    model = seqbil.train(str(path), learner="sp", epochs=1)
    assert "?" in model.labels


def test_eval_scores_the_known_tokens_and_says_so(tmp_path):
    path = partial_corpus(tmp_path / "partial.txt", 0.4)
    model = seqbil.train(learner="sp", epochs=2, model=str(tmp_path / "m.sbm"))
    result = seqbil.evaluate(model, path, partial=True)
    gold = [line.split()[-1] for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert result["partial"] == "chunk" and result["known_tokens"] == sum(y != "?" for y in gold)
    pred = [y for s in model.tag_many([[line.split()[:-1] for line in block.splitlines()]
                                       for block in path.read_text(encoding="utf-8").strip().split("\n\n")])
            for y in s]
    right = sum(p == g for p, g in zip(pred, gold) if g != "?")
    assert result["accuracy"] == pytest.approx(100 * right / result["known_tokens"])
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "eval", "-m", str(tmp_path / "m.sbm"), "--data",
                           str(path), "--partial"], capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert proc.returncode == 0 and f"scored the {result['known_tokens']} tokens whose label is known" in proc.stderr
    assert proc.stdout.startswith(f"accuracy: {result['accuracy']:.2f}% ({result['known_tokens']} known tokens")
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "eval", "-m", str(tmp_path / "m.sbm"), "--data",
                           str(path)], capture_output=True, text=True, env=ENV, cwd=tmp_path)
    assert proc.returncode == 2 and "give --partial" in proc.stderr


def test_sklearn_takes_none_and_sets_in_y():
    pytest.importorskip("sklearn")
    from seqbil.sklearn import CRF
    rows = [line.split() for line in sample_path("conll2000_train.txt").read_text(encoding="utf-8").splitlines()]
    X, y, xs, ys = [], [], [], []
    for r in rows + [[]]:
        if not r:
            if xs:
                X.append(xs)
                y.append(ys)
            xs, ys = [], []
            continue
        xs.append({"w": r[0], "p": r[1]})
        ys.append(r[2])
    rng = np.random.default_rng(3)
    partial_y = [[None if rng.random() < 0.3 else {label, "O"} if rng.random() < 0.1 else label for label in s]
                 for s in y]
    crf = CRF(algorithm="ap", max_iterations=3).fit(X[:200], partial_y[:200])
    assert "?" not in crf.classes_ and not any("|" in c for c in crf.classes_)
    assert all(len(p) == len(x) for p, x in zip(crf.predict(X[:5]), X[:5]))
    with pytest.raises(ValueError, match="reads as a partial label"):
        CRF(algorithm="ap", max_iterations=1).fit(X[:2], [["?"] * len(X[0]), [None] * len(X[1])])
    with pytest.raises(ValueError, match="is not a non-empty set of labels"):
        CRF(algorithm="ap", max_iterations=1).fit(X[:1], [[set()] * len(X[0])])


def test_segmentation_partial_tags_keep_the_gold_and_know_what_they_say(rng):
    """Text segmented in part: every character's partial label allows its gold tag;
    a space's neighbours end and begin words; a matched word's inner characters are
    inside it."""
    from seqbil.formats.partial import parse
    from seqbil.formats.sighan import bies_tags, partial_tags
    alphabet = "abcdef"
    for _ in range(300):
        words = ["".join(rng.choice(list(alphabet), int(rng.integers(1, 4)))) for _ in range(int(rng.integers(1, 6)))]
        gold = bies_tags(words)
        keep = rng.random(len(words) - 1) < 0.5
        chars, breaks, at = list("".join(words)), [], 0
        for w, kept in zip(words[:-1], keep):
            at += len(w)
            if kept:
                breaks.append(at)
        def allowed(t):
            found = parse(t)
            return {found} if isinstance(found, str) else found or {"B", "I", "E", "S"}
        # no word list: what the spaces say, which the gold always keeps
        tags = partial_tags(chars, tuple(breaks), set(), 3)
        assert all(g in allowed(t) for t, g in zip(tags, gold))
        for b in breaks:
            assert allowed(tags[b - 1]) <= {"E", "S"} and allowed(tags[b]) <= {"B", "S"}
        # a word list: a matched word is one word inside (its inner characters neither end nor begin one)
        lexicon = {w for w in words if len(w) > 1 and rng.random() < 0.5}
        tags = partial_tags(chars, tuple(breaks), lexicon, 3)
        text = "".join(chars)
        for i in range(len(chars)):
            for w in lexicon:
                if text.startswith(w, i) and allowed(tags[i]) <= {"B", "I"} and allowed(tags[i + len(w) - 1]) \
                        <= {"I", "E"}:
                    assert all(allowed(tags[k]) == {"I"} for k in range(i + 1, i + len(w) - 1))
        for b in breaks:
            assert allowed(tags[b - 1]) <= {"E", "S"} and allowed(tags[b]) <= {"B", "S"}


def test_a_segmenter_trains_from_text_segmented_in_part_and_a_word_list(tmp_path):
    lines = sample_path("pku_train.utf8").read_text(encoding="utf-8").splitlines()
    rng = np.random.default_rng(2)
    half = [" ".join("".join(ws[k] for k in range(i, j)) for i, j in _pieces(len(ws), rng)) for ws in
            (line.split() for line in lines) if ws]
    (tmp_path / "half.txt").write_text("\n".join(half) + "\n", encoding="utf-8")
    (tmp_path / "words.txt").write_text("\n".join(sorted({w for line in lines for w in line.split() if len(w) > 1})),
                                        encoding="utf-8")
    test = [line.split() for line in sample_path("pku_test.utf8").read_text(encoding="utf-8").splitlines() if line]

    def f1(**options):
        model = seqbil.train(str(tmp_path / "half.txt"), config="sighan2005", learner="sp", epochs=5, **options)
        got = [model.tag("".join(ws)) for ws in test]
        from seqbil.evaluation import score
        from seqbil.formats.sighan import bies_tags
        return score("segment", [bies_tags(ws) for ws in test], got, chars=[list("".join(ws)) for ws in test])["f1"]
    plain, partial = f1(), f1(partial=True, partial_words=str(tmp_path / "words.txt"))
    assert partial > plain + 20  # the words joined where a space went missing are not words
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--config", "cws", "--partial", "--train",
                           str(tmp_path / "half.txt"), "--model", str(tmp_path / "m.sbm")], capture_output=True,
                          text=True, env=ENV, cwd=tmp_path)
    assert proc.returncode == 2 and "words=train" in proc.stderr and "Traceback" not in proc.stderr


def _pieces(n, rng):
    """Spans of a line's n words, each word joined to the next with probability 1/2."""
    spans, start = [], 0
    for i in range(1, n):
        if rng.random() < 0.5:
            spans.append((start, i))
            start = i
    return spans + [(start, n)]
