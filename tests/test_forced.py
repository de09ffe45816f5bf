"""Forced decoding: the labels known in advance are kept and the rest decoded under them,
by every decoder (Viterbi, k-best, max-marginals, forward-backward), checked against
enumerating every labelling that keeps them."""
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import seqbil
from seqbil._kernels.decode import confidence_corpus, decode_corpus, marginals_corpus, nbest_corpus
from seqbil.errors import SeqbilError
from test_nbest import all_paths, assert_same_list, random_dataset, random_model, tables


def consistent(paths, scores, known):
    """The rows of paths (and their scores) that keep the known labels (-1: free)."""
    keep = np.all((paths == known) | (known < 0), axis=1)
    return paths[keep], scores[keep]


def through(paths, scores, i, S):
    """Best score of a path with label y at position i, for each y (-inf: none)."""
    return np.array([scores[paths[:, i] == y].max(initial=-np.inf) for y in range(S)])


def random_known(rng, P, S):
    """About a third of the positions given a label; a few given one the model lacks."""
    known = np.where(rng.random(P) < 0.35, rng.integers(0, S, P), -1).astype(np.int32)
    known[rng.random(P) < 0.05] = S + 3  # not a label: free, as -1
    return known


@pytest.mark.parametrize("kind", ["integer", "normal"])
@pytest.mark.parametrize("S", [1, 2, 3, 4])
@pytest.mark.parametrize("form", ["linear", "bilinear"])
def test_every_decoder_keeps_the_known_labels_and_equals_enumeration(rng, form, S, kind):
    data = random_dataset(rng, 12, S, 7, 5)
    weights, W1 = random_model(rng, form, S, kind)
    N, P, k, T = data.n_sequences, data.n_positions, 7, 1.7
    known = random_known(rng, P, S)
    best = np.full(P, -1, dtype=np.int32)
    decode_corpus(data, weights, best, known)
    paths, scores = np.full((k, P), -1, dtype=np.int32), np.full((N, k), np.nan)
    counts = np.zeros(N, dtype=np.int32)
    nbest_corpus(data, weights, k, paths, scores, counts, known)
    out, margins, sentence = np.full(P, -1, dtype=np.int32), np.zeros(P), np.zeros(N)
    confidence_corpus(data, weights, out, margins, sentence, known)
    m_out, m_best, marginals, logz = np.full(P, -1, dtype=np.int32), np.zeros(N), np.zeros((P, S)), np.zeros(N)
    marginals_corpus(data, weights, T, m_out, m_best, marginals, logz, known)
    assert np.array_equal(paths[0], best) and np.array_equal(out, best) and np.array_equal(m_out, best)
    given = (known >= 0) & (known < S)
    assert np.array_equal(best[given], known[given])  # every known label kept
    for j in range(N):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        unary, pair = tables(data, j, weights["W0"], W1)
        ref_paths, ref_scores = consistent(*all_paths(unary, pair, weights["trans"], weights["end"]),
                                           np.where(given[a:b], known[a:b], -1))
        assert counts[j] == min(k, len(ref_scores))
        assert_same_list(paths[:counts[j], a:b], scores[j, :counts[j]], ref_paths, ref_scores, exact=kind == "integer")
        for i in range(b - a):
            mu = through(ref_paths, ref_scores, i, S)
            if given[a + i] or S == 1:
                assert margins[a + i] == math.inf
            else:
                y = best[a + i]
                others = np.delete(mu, y)
                assert margins[a + i] == pytest.approx(mu[y] - others.max() if np.isfinite(others).any()
                                                       else math.inf, abs=1e-9)
        expected = math.inf if len(ref_scores) == 1 else ref_scores[0] - ref_scores[1]
        assert sentence[j] == pytest.approx(expected, abs=1e-9)
        # forward-backward over the labellings that keep the known labels: conditioned on them
        z = ref_scores / T
        ref_logz = np.logaddexp.reduce(z)
        assert logz[j] == pytest.approx(ref_logz, abs=1e-9)
        p = np.exp(z - ref_logz)
        for i in range(b - a):
            ref = np.array([p[ref_paths[:, i] == y].sum() for y in range(S)])
            np.testing.assert_allclose(marginals[a + i], ref, atol=1e-10)


def random_sets(rng, P, S):
    """A third of the positions given a set of allowed labels (two rows of sets), a third
    a label; ids and sets as known.pxd reads them."""
    sets = (rng.random((2, S)) < 0.5).astype(np.uint8)
    sets[:, 0] = 1  # (every set allows a label)
    r = rng.random(P)
    known = np.where(r < 0.33, -2 - rng.integers(0, 2, P), np.where(r < 0.66, rng.integers(0, S, P), -1))
    return known.astype(np.int32), sets


@pytest.mark.parametrize("S", [2, 3, 4])
@pytest.mark.parametrize("form", ["linear", "bilinear"])
def test_every_decoder_keeps_label_sets_and_equals_enumeration(rng, form, S):
    """Known sets of labels (segmentation's boundaries, partial labels): the decoders
    range over the labellings every position's set allows."""
    data = random_dataset(rng, 12, S, 7, 5)
    weights, W1 = random_model(rng, form, S, "normal")
    N, P, k = data.n_sequences, data.n_positions, 5
    known, sets = random_sets(rng, P, S)
    allowed = np.array([[(known[p] == y) if known[p] >= 0 else (known[p] == -1 or bool(sets[-2 - known[p], y]))
                         for y in range(S)] for p in range(P)])
    best = np.full(P, -1, dtype=np.int32)
    decode_corpus(data, weights, best, known, sets)
    paths, scores = np.full((k, P), -1, dtype=np.int32), np.full((N, k), np.nan)
    counts = np.zeros(N, dtype=np.int32)
    nbest_corpus(data, weights, k, paths, scores, counts, known, sets)
    m_out, m_best, marginals, logz = np.full(P, -1, dtype=np.int32), np.zeros(N), np.zeros((P, S)), np.zeros(N)
    marginals_corpus(data, weights, 1.0, m_out, m_best, marginals, logz, known, sets)
    assert np.array_equal(paths[0], best) and np.array_equal(m_out, best)
    for j in range(N):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        unary, pair = tables(data, j, weights["W0"], W1)
        every, every_scores = all_paths(unary, pair, weights["trans"], weights["end"])
        keep = np.array([all(allowed[a + i, y] for i, y in enumerate(path)) for path in every])
        ref_paths, ref_scores = every[keep], every_scores[keep]
        assert counts[j] == min(k, len(ref_scores))
        assert_same_list(paths[:counts[j], a:b], scores[j, :counts[j]], ref_paths, ref_scores, exact=False)
        assert logz[j] == pytest.approx(np.logaddexp.reduce(ref_scores), abs=1e-9)
        p = np.exp(ref_scores - np.logaddexp.reduce(ref_scores))
        for i in range(b - a):
            np.testing.assert_allclose(marginals[a + i], [p[ref_paths[:, i] == y].sum() for y in range(S)], atol=1e-10)


@pytest.fixture(scope="module")
def chunker(tmp_path_factory):
    path = tmp_path_factory.mktemp("forced") / "m.sbm"
    seqbil.train(None, config="conll2000", learner="sp", epochs=2, temperature=1.0, model=str(path))
    return path


SENTENCE = [["He", "PRP"], ["reckons", "VBZ"], ["the", "DT"], ["current", "JJ"], ["account", "NN"],
            ["deficit", "NN"], ["will", "MD"], ["narrow", "VB"]]


def test_the_api_keeps_known_labels_in_every_method(chunker):
    model = seqbil.load(str(chunker))
    free = model.tag(SENTENCE)
    known = [None] * len(SENTENCE)
    known[2] = "B-VP" if free[2] != "B-VP" else "O"  # a label the model would not have chosen
    forced = model.tag(SENTENCE, known=known)
    assert forced[2] == known[2]
    assert model.tag(SENTENCE, known=[None] * len(SENTENCE)) == free  # nothing known: plain tagging
    assert model.tag(SENTENCE, known=free) == free
    best = model.nbest(SENTENCE, 5, known=known)
    assert best[0][0] == forced and all(labels[2] == known[2] for labels, _ in best)
    labels, margins, margin = model.confidence(SENTENCE, known=known)
    assert labels == forced and margins[2] == math.inf and margin == pytest.approx(min(margins))
    marginals = model.marginals(SENTENCE, known=known)
    assert marginals[2, model.labels.index(known[2])] == pytest.approx(1.0)
    np.testing.assert_allclose(marginals.sum(axis=1), 1.0)
    assert model.tag_many([SENTENCE, SENTENCE], known=[known, None]) == [forced, free]
    for bad, message in (([None], "1 known labels for 8 tokens"), (["X"] + [None] * 7, "not one of the model's")):
        with pytest.raises(SeqbilError, match=message):
            model.tag(SENTENCE, known=bad)


def test_the_command_line_keeps_the_label_column_in_every_layout(chunker, tmp_path):
    model = seqbil.load(str(chunker))
    known = [None] * len(SENTENCE)
    free = model.tag(SENTENCE)
    known[2] = "B-VP" if free[2] != "B-VP" else "O"
    known[5] = "O"
    text = "".join(" ".join([*token, y or "?"]) + "\n" for token, y in zip(SENTENCE, known)) + "\n"
    (tmp_path / "in.txt").write_text(text * 3)

    def tag(*flags):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(chunker), "--force", *flags,
                               str(tmp_path / "in.txt")], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout
    from seqbil.tagging import BlockTagger
    assert BlockTagger(model, "x", "utf-8", None, False, force=True).fast == "columns"  # the compiled path
    forced = model.tag(SENTENCE, known=known)
    plain = tag()
    assert plain == ("".join(f"{' '.join([*token, y or '?'])} {p}\n" for token, y, p in zip(SENTENCE, known, forced))
                     + "\n") * 3
    assert tag("--jobs", "2") == plain
    assert tag("--encoding", "latin-1") == plain  # the reader and writer in Python
    best = model.nbest(SENTENCE, 3, known=known)
    assert [line.split()[-1] for line in tag("--nbest", "3").splitlines() if line and not line.startswith("#")] == \
        [y for labels, _ in best for y in labels] * 3
    probabilities = [line.split()[-1] for line in tag("--marginals").splitlines() if line and not line.startswith("#")]
    marginals = model.marginals(SENTENCE, known=known)
    for i, field in enumerate(probabilities[:len(SENTENCE)]):
        label, p = field.rsplit("/", 1)
        assert label == forced[i] and float(p) == pytest.approx(marginals[i, model.labels.index(label)], abs=1e-6)
    margins = [line.split()[-1] for line in tag("--confidence").splitlines() if line and not line.startswith("#")]
    assert margins[2] == "inf" and margins[5] == "inf"


def test_a_segmentation_model_keeps_the_boundaries_of_the_spaces(tmp_path):
    """--force with a segmentation model: a character before a space ends a word and one
    after it begins one, in every layout (the boundary probability there is 1); with no
    space, the same output as without --force."""
    seg = tmp_path / "s.sbm"
    seqbil.train(None, config="sighan2005", learner="sp", epochs=2, temperature=1.0, model=str(seg))
    text = "扬帆远东做与中国合作的先行\n扬帆 远东做与中 国合作的先行\n共同创造美好的新世纪\n"

    def run(*flags):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(seg), *flags], input=text,
                              capture_output=True, text=True, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout
    forced, plain = run("--force", "--marginals"), run("--marginals")
    boundaries = [line.split()[2:] for line in forced.splitlines() if line.startswith("# boundary")]
    assert float(boundaries[1][1]) == 1.0 and float(boundaries[1][6]) == 1.0  # 扬帆| and 中|
    assert [ln for ln in forced.splitlines() if "boundary" not in ln][-3:] == \
        [ln for ln in plain.splitlines() if "boundary" not in ln][-3:]  # no space, nothing forced
    assert run("--force").splitlines()[2] == run().splitlines()[2]
    # in Python, a known word: its characters' B, I, E kept, the rest segmented under them
    model = seqbil.load(seg)
    tags = model.tag("共同创造美好的新世纪", known=[None, None, None, None, "B", "I", "I", "E", None, None])
    assert tags[4:8] == ["B", "I", "I", "E"] and tags[8] in ("B", "S")
    second = run("--force").splitlines()[1].split()
    assert second[0] == "扬帆" and any(w.endswith("中") for w in second) and any(w.startswith("国") for w in second)


def test_the_sklearn_estimator_keeps_known_labels():
    from seqbil.sklearn import CRF
    rng = np.random.default_rng(4)
    X = [[{"w": f"w{rng.integers(6)}", "bias": 1.0} for _ in range(rng.integers(2, 7))] for _ in range(40)]
    y = [["A" if item["w"] in ("w0", "w1") else "B" if item["w"] == "w2" else "C" for item in x] for x in X]
    crf = CRF(algorithm="lbfgs", max_iterations=20).fit(X, y)
    known = [[("A" if i == 0 else None) for i in range(len(x))] for x in X]
    forced = crf.predict(X, known=known)
    assert all(labels[0] == "A" for labels in forced)
    for x, k, labels in zip(X, known, forced):
        assert labels == crf._need_model().tag([dict(item) for item in x], known=k)
    marginals = crf.predict_marginals(X, known=known)
    assert all(m[0]["A"] == pytest.approx(1.0) for m in marginals)
    assert crf.predict(X, known=None).tolist() == crf.predict(X).tolist()
    with pytest.raises(SeqbilError, match="not one of the model's"):
        crf.predict(X[:1], known=[["Z"] + [None] * (len(X[0]) - 1)])


def test_forced_and_constrained_decoding_of_a_model_of_attributes_and_of_a_task(tmp_path):
    """A CRFsuite-format model keeps the labels its lines give first; one task of a
    multi-task segmenter keeps to the B, I, E, S rules with --well-formed."""
    samples = Path(seqbil.__file__).parent / "samples"
    items = tmp_path / "items.sbm"
    seqbil.train(str(samples / "conll2000_train.crfsuite.gz"), config="crfsuite", learner="sp", epochs=1,
                 temperature=1.0, model=str(items))
    (tmp_path / "in.txt").write_text("B-NP\tw[0]=He\tpos[0]=PRP\n?\tw[0]=reckons\tpos[0]=VBZ\nB-VP\tw[0]=the\t"
                                     "pos[0]=DT\n\n")
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(items), "--force",
                           str(tmp_path / "in.txt")], capture_output=True, text=True)
    model = seqbil.load(str(items))
    tokens = [["w[0]=He", "pos[0]=PRP"], ["w[0]=reckons", "pos[0]=VBZ"], ["w[0]=the", "pos[0]=DT"]]
    assert proc.returncode == 0 and proc.stdout.split() == model.tag(tokens, known=["B-NP", None, "B-VP"])
    assert proc.stdout.split()[2] == "B-VP"
    lines = [line.strip() for line in (samples / "pku_train.utf8").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    for name, part in (("a", lines[:40]), ("b", lines[40:80])):
        (tmp_path / f"{name}.utf8").write_text("\n".join(part) + "\n", encoding="utf-8")
    tasks = tmp_path / "tasks.sbm"
    seqbil.train(config="sighan2005", tasks=[f"a={tmp_path / 'a.utf8'}", f"b={tmp_path / 'b.utf8'}"], learner="sp",
                 epochs=1, temperature=1.0, model=str(tasks))
    view = seqbil.load(str(tasks)).for_task("a").constrain(well_formed=True)
    text = "扬帆远东做与中国合作的先行者"
    labels = view.tag(list(text))
    assert labels[0] in ("B", "S") and labels[-1] in ("E", "S")
    assert all((p in "BI") == (y in "IE") for p, y in zip(labels, labels[1:]))
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(tasks), "--task", "a",
                           "--well-formed"], input=text + "\n", capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.split() == view.segment(text)
