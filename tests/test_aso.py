"""Structure from unlabeled text (seqbil aso): the SGD kernel, the closed form, the
SVD step and the features Theta phi(x) against slow references; the structure file;
training and tagging with a structure from the API and the command line."""
import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from scipy.optimize import minimize_scalar

import seqbil
from seqbil._kernels.aso import sgd_block
from seqbil.aso import closed_form, fold_target, shifted, target_ids, target_table
from seqbil.aso_svd import canonical_basis, top_singular
from seqbil.aso_text import read_text
from seqbil.cli import main
from seqbil.errors import ModelFileError
from seqbil.features.structure import Structure, StructureFeatures, parse_split
from seqbil.features.vectors import VectorTable
from seqbil.formats import make_format, read_corpus
from seqbil.formats.sentence import Corpus
from seqbil.samples import sample_path


def conll(path):
    return read_corpus(make_format("conll", None, -1), str(path))


def loss(p, y, hinge):
    z = p * y
    if hinge:
        return max(0.0, 1 - z)
    return max(0.0, 1 - z) ** 2 if z >= -1 else -4 * z


def slope(p, y, hinge):
    z = p * y
    if z >= 1:
        return 0.0
    if hinge:
        return -y
    return -2 * y * (1 - z) if z >= -1 else -4 * y


def reference_sgd(X, target, t0, B, order_list, lam, eta0, theta, hinge):
    """Plain SGD on lambda ||w||^2 + L(w.phi + v.Theta phi): dense w, no scale trick."""
    d = X.shape[1]
    h = 0 if theta is None else theta.shape[1]
    W, V, t = np.zeros((d, B)), np.zeros((h, B)), 0
    Xd = X.toarray()
    for order in order_list:
        for i in order:
            eta = eta0 / (1 + 2 * lam * eta0 * t)
            phi = Xd[i]
            z = phi @ theta if h else np.zeros(0)
            s = phi @ W + (z @ V if h else 0)
            y = np.where(np.arange(B) + t0 == target[i], 1.0, -1.0)
            g = np.array([slope(s[b], y[b], hinge) for b in range(B)])
            W = (1 - 2 * eta * lam) * W - eta * np.outer(phi, g)
            if h:
                V = V - eta * np.outer(z, g)
            t += 1
    return W, V


def random_problem(rng, n=60, d=12, per=3, m=5):
    rows = [np.sort(rng.choice(d, size=rng.integers(1, per + 1), replace=False)) for _ in range(n)]
    ptr = np.zeros(n + 1, np.int64)
    ptr[1:] = np.cumsum([len(r) for r in rows])
    ids = np.concatenate(rows).astype(np.int32)
    X = sp.csr_matrix((np.ones(len(ids)), ids, ptr), shape=(n, d))
    target = rng.integers(-1, m, size=n).astype(np.int32)
    return ptr, ids, X, target


@pytest.mark.parametrize("hinge", [0, 1])
@pytest.mark.parametrize("with_theta", [False, True])
def test_sgd_block_equals_plain_sgd(rng, hinge, with_theta):
    ptr, ids, X, target = random_problem(rng)
    d, B, t0 = X.shape[1], 3, 1
    theta = rng.standard_normal((d, 4)).astype(np.float32) * 0.3 if with_theta else None
    orders = [rng.permutation(X.shape[0]).astype(np.int64) for _ in range(2)]
    lam, eta0 = 0.05, 0.3
    W = np.zeros((d, B), np.float32)
    V = np.zeros((0 if theta is None else 4, B), np.float32)
    t = 0
    for order in orders:
        t = sgd_block(ptr, ids, target, t0, W, V, theta if theta is not None else np.zeros((0, 0), np.float32),
                      order, lam, eta0, t, hinge)
    assert t == 2 * X.shape[0]
    W_ref, V_ref = reference_sgd(X, target, t0, B, orders, lam, eta0,
                                 None if theta is None else theta.astype(np.float64), hinge)
    assert np.abs(W_ref).max() > 0.05  # it learned something
    np.testing.assert_allclose(W, W_ref, atol=2e-5, rtol=1e-4)
    np.testing.assert_allclose(V, V_ref, atol=2e-5, rtol=1e-4)


@pytest.mark.parametrize("loss_name", ["huber", "hinge"])
def test_closed_form_minimises_each_problem(rng, loss_name):
    """One feature per token: the closed form is the minimiser of each problem's
    objective, found here by a scalar search per (feature, problem)."""
    n, d, m, lam = 200, 6, 3, 0.01
    feature = rng.integers(-1, d, size=n)  # -1: no feature at this token
    rows = np.flatnonzero(feature >= 0)
    X = sp.csr_matrix((np.ones(len(rows)), (rows, feature[rows])), shape=(n, d))
    target = rng.integers(-1, m, size=n).astype(np.int32)
    U = closed_form(X, target, m, lam, loss_name)
    hinge = loss_name == "hinge"
    for f in range(d):
        at = np.flatnonzero(feature == f)
        for t in range(m):
            y = np.where(target[at] == t, 1.0, -1.0)

            def objective(u):
                return lam * u * u + sum(loss(u, yy, hinge) for yy in y) / n
            best = minimize_scalar(objective, bounds=(-2, 2), method="bounded", options={"xatol": 1e-9})
            assert objective(U[f, t]) <= best.fun + 1e-7
            assert abs(U[f, t] - best.x) < 1e-3


def test_top_singular_vectors(rng):
    M = rng.standard_normal((40, 15)).astype(np.float32)
    Theta, s = top_singular(M, 5)
    U, S, _ = np.linalg.svd(M.astype(np.float64), full_matrices=False)
    np.testing.assert_allclose(s, S[:5], rtol=1e-5)
    for k in range(5):  # the same directions, up to sign
        assert abs(abs(float(Theta[:, k] @ U[:, k])) - 1) < 1e-4
    np.testing.assert_allclose(Theta.T @ Theta, np.eye(5), atol=1e-5)  # Theta Theta^T = I (eq. 6)


def test_tied_singular_values_give_one_basis_whatever_the_solver_returns(rng):
    """Equal singular values span a subspace that a solver may return in any basis:
    here the problems (columns of M) in another order, and M's blocks flipped in sign,
    give the same Theta, the canonical basis of each span (the reference computes it
    from the projectors alone); a direction of singular value 0 is 0."""
    d, m = 30, 12
    L, _ = np.linalg.qr(rng.standard_normal((d, 6)))
    R, _ = np.linalg.qr(rng.standard_normal((m, 6)))
    S = np.array([5.0, 3.0, 3.0, 3.0, 1.0, 0.0])  # a cluster of three, and a null direction
    M = (L * S) @ R.T
    want = canonical_reference(L, S)
    for order in (np.arange(m), rng.permutation(m), rng.permutation(m)):
        for sign in (1, -1):
            Theta, s = top_singular((sign * M[:, order]).astype(np.float32), 6, seed=int(order[0]))
            np.testing.assert_allclose(s[:5], S[:5], rtol=1e-5)
            np.testing.assert_allclose(Theta, want, atol=2e-5)
    assert not Theta[:, 5].any()


def test_canonical_basis_is_the_reference_on_random_rotations(rng):
    """Any orthonormal basis of the same spans, with ties within float32 rounding: the
    same canonical columns."""
    for d, S in ((8, [2.0, 2.0, 1.0]), (50, [4.0, 4.0 * (1 - 1e-6), 4.0, 2.0, 1.0, 1.0]), (20, [1.0, 0.5])):
        S = np.array(S)
        L, _ = np.linalg.qr(rng.standard_normal((d, len(S))))
        want = canonical_reference(L, S)
        for _ in range(5):
            V = L.copy()
            for value in np.unique(np.round(S, 4)):  # rotate and reflect within each cluster
                at = np.flatnonzero(np.round(S, 4) == value)
                Q, _ = np.linalg.qr(rng.standard_normal((len(at), len(at))))
                V[:, at] = V[:, at] @ Q
            V *= rng.choice([-1, 1], len(S))
            U = V.astype(np.float32)
            canonical_basis(U, S)
            np.testing.assert_allclose(U, want, atol=1e-5)
            np.testing.assert_allclose(U.T @ U, np.eye(len(S)), atol=1e-5)


def test_targets_and_shifted_labels():
    corpus = Corpus(np.array([3, 2]), [["The", "cat", "the", "1990", "2001"]],
                    [np.array([0, 1, 2, 3, 4], np.int32)], [], np.full(5, -1, np.int32))
    names, tok = target_ids(corpus, 2)
    assert fold_target("Year-1990") == "year-0000"
    assert names == ["the", "0000"]  # "the" twice, "0000" twice; first seen first
    assert tok.tolist() == [0, -1, 0, 1, 1]
    assert shifted(tok, corpus.lengths, 1).tolist() == [-1, 0, -1, 1, -1]
    assert shifted(tok, corpus.lengths, -1).tolist() == [-1, 0, -1, -1, 1]


def test_parse_split_checks():
    name, texts, offsets, column = parse_split("left: %x[-1,0]|lower %x[-2,0] -> 0")
    assert (name, texts, offsets, column) == ("left", ["U00:%x[-1,0]|lower", "U01:%x[-2,0]"], [0], 0)
    # a column of tagged text predicted from the words and tags at the token itself
    assert parse_split("here: %x[0,0] %x[0,1] -> 0 @2")[2:] == ([0], 2)
    for bad in ("left %x[-1,0] -> 0", "left: %x[-1,0] ->", "left: %x[0,0] -> 0", "left: %x[0,0]|lower -> 0",
                "here: %x[0,2] -> 0 @2", "left: %x[-1,0] -> 0 0", "left: %x[-1,0] -> x", "left: %x[-1,0] -> 0 @x",
                "left: %dict[d] -> 0"):
        with pytest.raises(seqbil.SeqbilError):
            parse_split(bad)


@pytest.fixture(scope="module")
def unlabeled(tmp_path_factory):
    """The words of the bundled CoNLL sample as raw text (gzip), a sentence per line."""
    path = tmp_path_factory.mktemp("unlabeled") / "words.txt.gz"
    sentences = conll(sample_path("conll2000_train.txt"))
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for s in sentences:
            f.write(" ".join(s.columns[0]) + "\n")
    return path


@pytest.fixture(scope="module")
def structure_file(unlabeled, tmp_path_factory):
    path = tmp_path_factory.mktemp("structure") / "en.sbs"
    seqbil.learn_structure([unlabeled], path, targets=40, dim=6, aux_epochs=2, jobs=2)
    return path


def brute_force_vectors(split, corpus):
    """Theta phi(x) token by token: the split's attributes found by the index's numpy
    key reference and a search in its key tables, their Theta rows summed."""
    from seqbil.features.index import field_matrix
    index = split.index
    fields, rows = field_matrix(corpus, index.field_list, index.K,
                                lambda c, tokens: (index.fields[c].lookup(tokens, -1), len(index.fields[c])),
                                index.fold, index.layout, index.lexicon_codes)
    keys = index.keys(fields, rows, 0)
    table, ptr = index.tables[0]
    out = np.zeros((keys.shape[0], split.dim))
    for p in range(keys.shape[0]):
        for t in range(keys.shape[1]):
            part = table[ptr[t]:ptr[t + 1]]
            at = np.searchsorted(part, keys[p, t])
            if at < len(part) and part[at] == keys[p, t]:
                out[p] += split.theta[ptr[t] + at]
    return out


def test_structure_features_equal_brute_force(structure_file):
    structure = Structure.load(structure_file)
    assert [s.name for s in structure.splits] == ["left", "right", "word"]
    sents = conll(sample_path("conll2000_test.txt"))[:30]
    corpus = Corpus.of(sents)
    for split in structure.splits:
        assert split.theta.shape[1] == 6
        np.testing.assert_allclose(split.vectors(corpus), brute_force_vectors(split, corpus), atol=1e-5)
    # the window: the vectors of the tokens around, none outside the sentence, after the keyed entries
    feats = StructureFeatures(structure, [-1, 0, 2], scale=0.5)
    P = corpus.n_tokens
    rng = np.random.default_rng(3)
    k_ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 3, size=P))]).astype(np.int64)
    k_ids = rng.integers(0, 100, size=k_ptr[-1]).astype(np.int32)
    k_vals = rng.standard_normal(k_ptr[-1]).astype(np.float32)
    vec = structure.vectors(corpus) * np.float32(0.5)
    H = structure.dim
    for vals in (k_vals, None):
        ptr, ids, out_vals = feats.append(corpus, k_ptr, k_ids, vals, 100)
        start = 0
        for s in sents:
            for i in range(len(s)):
                p = start + i
                want_ids = list(k_ids[k_ptr[p]:k_ptr[p + 1]])
                want_vals = list(k_vals[k_ptr[p]:k_ptr[p + 1]] if vals is not None else np.ones(len(want_ids)))
                for k, w in enumerate([-1, 0, 2]):
                    if 0 <= i + w < len(s):
                        want_ids += list(range(100 + k * H, 100 + (k + 1) * H))
                        want_vals += list(vec[p + w])
                assert ids[ptr[p]:ptr[p + 1]].tolist() == want_ids
                np.testing.assert_allclose(out_vals[ptr[p]:ptr[p + 1]], want_vals, rtol=1e-6)
            start += len(s)


def test_structure_file_round_trip_and_damage(structure_file, tmp_path):
    a = Structure.load(structure_file)
    a.save(tmp_path / "copy.sbs")
    b = Structure.load(tmp_path / "copy.sbs")
    for x, y in zip(a.splits, b.splits):
        np.testing.assert_array_equal(x.theta, y.theta)
        assert x.spec() == y.spec() and x.rms == y.rms
    prov = b.provenance
    assert prov["targets"] == 40 and prov["unlabeled"][0]["units"] > 10000 and len(prov["unlabeled"][0]["sha256"]) == 64
    data = (tmp_path / "copy.sbs").read_bytes()
    (tmp_path / "cut.sbs").write_bytes(data[:len(data) // 2])
    with pytest.raises(ModelFileError):
        Structure.load(tmp_path / "cut.sbs")
    model = seqbil.train(config="conll2000", epochs=1)
    model.save(tmp_path / "m.sbm")
    with pytest.raises(ModelFileError, match="a seqbil model, not a structure"):
        Structure.load(tmp_path / "m.sbm")
    with pytest.raises(ModelFileError, match="a structure .seqbil aso., not a model"):
        seqbil.load(tmp_path / "copy.sbs")


def test_train_with_structure_tags_the_same_after_reload(structure_file, tmp_path):
    test = str(sample_path("conll2000_test.txt"))
    # (bol named: the API's and the command line's runs are compared, and a choice within a
    # time budget may differ between two runs on a busy machine)
    model = seqbil.train(config="conll2000", learner="bol", epochs=2, structure=str(structure_file),
                         structure_window="-1,0,1", structure_scale=0.5)
    S = Structure.load(structure_file).dim
    assert model.index.n_attributes(0) - model.index.n_keyed(0) == 3 * S
    model.save(tmp_path / "m.sbm")
    again = seqbil.load(tmp_path / "m.sbm")
    sents = conll(test)
    assert again.predict(sents) == model.predict(sents)
    # the structure's weights are used: without them the labels change
    plain = seqbil.train(config="conll2000", learner="bol", epochs=2)
    assert plain.predict(sents) != model.predict(sents)
    # the command line gives the same model
    result = CliRunner().invoke(main, ["train", "--config", "conll2000", "--learner", "bol", "--epochs", "2",
                                       "--structure", str(structure_file), "--structure-window", "-1,0,1", "--structure-scale",
                                       "0.5", "--model", str(tmp_path / "cli.sbm"), "-q"])
    assert result.exit_code == 0, result.output
    assert seqbil.load(tmp_path / "cli.sbm").predict(sents) == model.predict(sents)
    shown = CliRunner().invoke(main, ["inspect", str(tmp_path / "cli.sbm")]).output
    assert "structure: " in shown and "split word" in shown and "words.txt.gz" in shown


@pytest.mark.parametrize("learner", ["sp", "bcd"])
def test_every_learner_reads_the_structure(structure_file, learner):
    sents = conll(sample_path("conll2000_test.txt"))
    opts = {"learner": learner, "epochs": 1, "templates": ["U00:%x[0,0]", "U01:%x[0,1]", "B01:%x[0,1]", "B"]}
    with_s = seqbil.train(config="conll2000", structure=str(structure_file), **opts)
    without = seqbil.train(config="conll2000", **opts)
    assert with_s.predict(sents) != without.predict(sents)


def test_cli_aso_and_vectors(unlabeled, tmp_path, pku_sample):
    out, vec = tmp_path / "s.sbs", tmp_path / "s.vec"
    result = CliRunner().invoke(main, ["aso", "--unlabeled", str(unlabeled), "--out", str(out), "--targets", "30",
                                       "--dim", "4", "--aux-epochs", "1", "--vectors", str(vec), "-q"])
    assert result.exit_code == 0, result.output
    table = VectorTable.read(vec)
    structure = Structure.load(out)
    word = structure.splits[2]
    assert table.dim == 4 and table.words[:2] == [",", "the"]  # most frequent first
    one = Corpus(np.ones(1, np.int64), [["the"]], [np.zeros(1, np.int32)], [], np.full(1, -1, np.int32))
    np.testing.assert_allclose(table.matrix[1], word.vectors(one)[0] / word.rms, rtol=1e-5)
    # characters for a segmentation config; a structure of characters does not fit a corpus of words
    chars = tmp_path / "zh.txt"
    chars.write_text("".join(line.replace(" ", "") + "\n" for line in open(pku_sample, encoding="utf-8")),
                     encoding="utf-8")
    zh = tmp_path / "zh.sbs"
    result = CliRunner().invoke(main, ["aso", "--config", "sighan2005", "--unlabeled", str(chars), "--out", str(zh),
                                       "--targets", "30", "--dim", "4", "--aux-epochs", "1", "-q"])
    assert result.exit_code == 0, result.output
    assert Structure.load(zh).unit == "char"
    result = CliRunner().invoke(main, ["train", "--config", "conll2000", "--epochs", "1", "--structure", str(zh),
                                       "--model", str(tmp_path / "x.sbm"), "-q"])
    assert result.exit_code == 2 and "a structure of chars, for a corpus of tokens" in result.output


def test_cli_aso_bad_input(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n")
    for args, message in ((["--unlabeled", str(tmp_path / "missing.txt")], "missing.txt"),
                          (["--unlabeled", str(empty)], "empty.txt: no text"),
                          (["--unlabeled", str(empty), "--split", "bad"], "is not NAME: MACRO")):
        result = CliRunner().invoke(main, ["aso", *args, "--out", str(tmp_path / "s.sbs"), "-q"])
        assert result.exit_code == 2 and message in result.output, result.output
        assert not (tmp_path / "s.sbs").exists()


def test_read_text_units(tmp_path):
    path = tmp_path / "t.txt"
    path.write_text("a b  c\n\n扬帆 远东\n", encoding="utf-8")
    corpus, records = read_text([str(path)], "token")
    assert corpus.lengths.tolist() == [3, 2] and records[0]["units"] == 5
    corpus, _ = read_text([str(path)], "char")
    assert corpus.lengths.tolist() == [3, 4]
    assert [corpus.values[0][i] for i in corpus.ids[0][3:]] == list("扬帆远东")


def test_more_rounds_and_closed_form_splits(unlabeled):
    """A second round trains w and v with the first Theta (eq. 6) and takes the SVD of
    u = w + Theta^T v again: Theta stays orthonormal and moves; a one-template split is
    solved in closed form in the first round."""
    splits = ["left: %x[-1,0]|lower -> 0", "word: %x[0,0]|lower %x[0,0]|suffix:2 -> 1"]
    one = seqbil.learn_structure([unlabeled], targets=20, dim=4, aux_epochs=1, splits=splits)
    two = seqbil.learn_structure([unlabeled], targets=20, dim=4, aux_epochs=1, splits=splits, rounds=2)
    methods = [s["method"] for s in two.provenance["splits"]]
    assert methods == ["closed form; then 1 more round(s) by SGD", "SGD, 1 epochs; then 1 more round(s) by SGD"]
    for a, b in zip(one.splits, two.splits):
        np.testing.assert_allclose(b.theta.T @ b.theta, np.eye(4), atol=1e-4)
        assert np.abs(np.abs(a.theta.T @ b.theta) - np.eye(4)).max() > 1e-3  # not the same directions


def test_columns_of_tagged_text_and_two_structures(structure_file, tmp_path):
    """Text in columns (as seqbil tag writes it): splits read its columns and predict
    one (@COLUMN), as Ando & Zhang's problems that predict a tagger's output; a model
    reads two structures at once, and a split must find its columns in the corpus."""
    tagged = tmp_path / "tagged.txt"
    tagged.write_text(sample_path("conll2000_train.txt").read_text(encoding="utf-8"), encoding="utf-8")
    path = tmp_path / "tags.sbs"
    s = seqbil.learn_structure([tagged], path, unlabeled_format="columns", targets=30, dim=5, aux_epochs=1,
                               splits=["here: %x[0,0]|lower %x[0,1] -> 0 @2", "prev: %x[-1,1] -> 0 @1"])
    sents = conll(sample_path("conll2000_train.txt"))
    chunks = {y for x in sents for y in x.labels}
    assert s.provenance["target_columns"] == {"1": 30, "2": min(30, len(chunks))}
    assert [sp["method"] for sp in s.provenance["splits"]] == ["SGD, 1 epochs", "closed form"]
    assert [sp.column for sp in s.splits] == [2, 1]
    assert s.splits[1].dim == 5
    test = conll(sample_path("conll2000_test.txt"))
    one = seqbil.train(config="conll2000", learner="bol", epochs=1, structure=str(structure_file))
    two = seqbil.train(config="conll2000", learner="bol", epochs=1, structure=[str(structure_file), str(path)])
    extra = [m.index.n_attributes(0) - m.index.n_keyed(0) for m in (one, two)]
    assert extra[1] - extra[0] == 3 * s.dim
    two.save(tmp_path / "two.sbm")
    assert seqbil.load(tmp_path / "two.sbm").predict(test) == two.predict(test)
    shown = CliRunner().invoke(main, ["inspect", str(tmp_path / "two.sbm")]).output
    assert str(path) in shown and str(structure_file) in shown
    # a corpus without the POS column the splits read
    words_only = tmp_path / "wl.txt"
    words_only.write_text("".join("".join(f"{w} {y}\n" for w, y in zip(x.columns[0], x.labels)) + "\n"
                                  for x in sents[:50]), encoding="utf-8")
    template = tmp_path / "t.txt"
    template.write_text("U00:%x[0,0]\nB\n")
    result = CliRunner().invoke(main, ["train", "--config", "conll2000", "--template", str(template), "--learner",
                                       "sp", "--train", str(words_only), "--structure", str(path), "--epochs", "1",
                                       "--model", str(tmp_path / "x.sbm"), "-q"])
    assert result.exit_code == 2 and "split here" in result.output and "label column" in result.output
    assert not (tmp_path / "x.sbm").exists()


# --- the streamed computation against the whole text in memory ------------------------
# seqbil aso never encodes the whole text: it counts a split's attributes, trains the
# problems and sums the RMS over chunks of positions of the text held as value ids
# (SplitText, features.pyx: TextPositions). The reference below is the computation on
# the whole text at once: FeatureIndex.build over the corpus, every token's target,
# each epoch's order of all positions, the dense U and its dense SVD.

def markov_text(rng, n_sent=400, words=40, min_len=1, max_len=14):
    """Sentences of a small Markov chain over `words` words (each word's successor from
    a few likely ones): text with structure for the problems to find."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocab = [letters[i % 26] + letters[i // 26 % 26] + letters[i // 676] for i in range(words)]
    vocab = [w if i % 7 else w.title() for i, w in enumerate(vocab)] + ["1990", "1,5", "A-b"]
    nxt = [rng.choice(len(vocab), size=4, replace=False) for _ in vocab]
    out = []
    for _ in range(n_sent):
        w = rng.integers(len(vocab))
        sent = []
        for _ in range(rng.integers(min_len, max_len + 1)):
            sent.append(vocab[w])
            w = rng.choice(nxt[w]) if rng.random() < 0.85 else rng.integers(len(vocab))
        out.append(sent)
    return out


def write_parts(tmp_path, sentences, names=("a.txt", "b.txt.gz", "c.txt")):
    """The sentences in several files, one of them gzip, with blank lines between some."""
    paths, k = [], 0
    cuts = np.linspace(0, len(sentences), len(names) + 1).astype(int)
    for name, lo, hi in zip(names, cuts[:-1], cuts[1:]):
        path = tmp_path / name
        text = "".join(" ".join(s) + ("\n\n" if (k := k + 1) % 5 == 0 else "\n") for s in sentences[lo:hi])
        if name.endswith(".gz"):
            with gzip.open(path, "wt", encoding="utf-8") as f:
                f.write(text)
        else:
            path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    return paths


def aso_settings(**options):
    from seqbil import params
    return params.resolve(None, {"targets": 12, "dim": 4, "aux_epochs": 2, "aux_min_count": 2, **options})


def dense_top(U, h):
    """Top-h left singular vectors of U by a dense SVD in float64, in the canonical form."""
    L, S, _ = np.linalg.svd(U.astype(np.float64), full_matrices=False)
    return canonical_reference(L[:, :h], S[:h]), S[:h]


def canonical_reference(L, S, tie=1e-4):
    """The canonical basis of aso_svd.canonical_basis from the projectors alone: per cluster
    of tied values, the d x d projector P on its span, whose columns P e_i are taken in
    index order (the first at least half the longest remaining) and made orthonormal by
    Gram-Schmidt; the directions of values ~0 are 0. Only the spans of L are read."""
    out, start, h = np.zeros_like(L, dtype=np.float64), 0, L.shape[1]
    while start < h:
        end = start + 1
        while end < h and S[start] - S[end] <= tie * S[0]:
            end += 1
        if S[start] <= tie * S[0]:
            break
        P = L[:, start:end] @ L[:, start:end].T
        basis = []
        for c in range(start, end):
            R = P - sum(np.outer(b, b @ P) for b in basis) if basis else P.copy()
            norms = np.linalg.norm(R, axis=0)
            i = next(i for i in range(len(norms)) if norms[i] >= 0.5 * norms.max())
            basis.append(R[:, i] / norms[i])
            out[:, c] = basis[-1]
        start = end
    return out


def reference_split(corpus, texts, offsets, column, s, theta=None, rnd=0):
    """(index, X, U) of a split on the whole text at once: U = [u_l] of round rnd
    (trained with theta in later rounds), as seqbil aso computed it before it streamed."""
    from seqbil.features.index import FeatureIndex
    from seqbil.features.templates import TemplateSet, parse_template
    templates = TemplateSet(parse_template(t) for t in texts)
    index, parts = FeatureIndex.build(corpus, templates, s.aux_min_count)
    u_ptr, u_ids = parts[0], parts[1]
    names, tok = target_ids(corpus, s.targets, column)
    d, m, P = index.n_keyed(0), len(names), corpus.n_tokens
    targets = [shifted(tok, corpus.lengths, o) for o in offsets]
    X = sp.csr_matrix((np.ones(len(u_ids), np.float32), u_ids, u_ptr), shape=(P, d))
    if rnd == 0 and len(texts) == 1:
        U = []
        for tg in targets:  # the closed form as it was written: dense counts in float64
            rows = np.flatnonzero(tg >= 0)
            Y = sp.csr_matrix((np.ones(len(rows), np.float32), (rows, tg[rows])), shape=(P, m))
            pos = np.asarray((X.T @ Y).todense(), dtype=np.float64)
            total = np.asarray(X.sum(axis=0), dtype=np.float64).reshape(-1, 1)
            U.append(((2 * pos - total) / (s.aux_lambda * P + total)).astype(np.float32))
        return index, X, np.hstack(U)
    h = 0 if theta is None else theta.shape[1]
    rng = np.random.default_rng(s.seed + 7919 * rnd)
    orders = [rng.permutation(P).astype(np.int64) for _ in range(s.aux_epochs)]
    U = np.zeros((d, m * len(offsets)), np.float32)
    for k, tg in enumerate(targets):
        for b0 in range(0, m, 64):
            b1 = min(b0 + 64, m)
            W, V, t = np.zeros((d, b1 - b0), np.float32), np.zeros((h, b1 - b0), np.float32), 0
            for order in orders:
                t = sgd_block(u_ptr.astype(np.int64), u_ids, tg, b0, W, V,
                              theta if h else np.zeros((0, 0), np.float32), order, s.aux_lambda,
                              s.aux_rate, t, s.aux_loss == "hinge")
            if h:
                W += theta @ V
            U[:, k * m + b0:k * m + b1] = W
    return index, X, U


SPLITS = [("left", ["U00:%x[-1,0]|lower", "U01:%x[-2,0]"], [0], 0),          # SGD
          ("one", ["U00:%x[1,0]|lower"], [0, -1], 0),                         # closed form
          ("pair", ["U00:%x[0,0]", "U01:%x[0,0]|suffix:1", "U02:%x[-1,0]/%x[1,0]", "U03:bias"], [-2, 2], 0)]


@pytest.fixture(scope="module")
def markov(tmp_path_factory):
    rng = np.random.default_rng(11)
    sentences = markov_text(rng, words=80)
    paths = write_parts(tmp_path_factory.mktemp("markov"), sentences)
    return sentences, paths


def test_text_read_from_several_files_and_gzip(markov, tmp_path):
    """Several files (plain and gzip, blank lines) read as one text, the same as their
    sentences in one file."""
    sentences, paths = markov
    one = tmp_path / "all.txt"
    one.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    a, records = read_text(paths, "token")
    b, _ = read_text([str(one)], "token")
    assert [r["units"] for r in records] and sum(r["units"] for r in records) == b.n_tokens
    assert a.lengths.tolist() == b.lengths.tolist() == [len(s) for s in sentences]
    assert a.values[0] == b.values[0]
    np.testing.assert_array_equal(a.ids[0], b.ids[0])
    assert [a.values[0][i] for i in a.ids[0][:len(sentences[0])]] == sentences[0]


@pytest.mark.parametrize("split", SPLITS, ids=[s[0] for s in SPLITS])
def test_counts_of_parts_merged_are_the_whole_texts(markov, split):
    """The files read each on its own, over merged value tables (merge_values): their
    key counts added up (merge_key_counts) give every part the index of the files read
    together, and each part's features are those of its positions in the whole text."""
    from seqbil.aso_text import SplitText, merge_key_counts, merge_values
    from seqbil.features.templates import TemplateSet, parse_template
    _, paths = markov
    whole, _ = read_text(paths, "token")
    parts = merge_values([read_text([p], "token")[0] for p in paths])
    assert all(part.values == whole.values for part in parts)
    np.testing.assert_array_equal(np.concatenate([part.ids[0] for part in parts]), whole.ids[0])
    name, texts, offsets, column = split
    templates = TemplateSet(parse_template(t) for t in texts)
    for min_count in (1, 3):
        ref = SplitText(whole, templates, 50)
        index = ref.count(min_count)
        texts_ = [SplitText(part, templates, 50) for part in parts]
        merged = merge_key_counts([t.key_counts() for t in texts_])
        start = 0
        for text in texts_:
            mine = text.set_counts(merged, min_count)
            for a, b in zip(mine.tables[0], index.tables[0]):
                np.testing.assert_array_equal(a, b)
            at = np.arange(text.P, dtype=np.int64)
            got, want = text.csr(at), ref.csr(at + start)
            for a, b in zip(got, want):
                np.testing.assert_array_equal(a, b)
            start += text.P


@pytest.mark.parametrize("split", SPLITS, ids=[s[0] for s in SPLITS])
@pytest.mark.parametrize("chunk", [1, 37, 1 << 16])
def test_split_text_counts_and_encodes_as_the_whole_text(markov, split, chunk):
    """SplitText's index (counted chunk by chunk) is FeatureIndex.build's on the whole
    text, and its features, keys and targets at any positions are those of the whole
    text's encoding."""
    from seqbil.aso_text import SplitText
    from seqbil.features.index import FeatureIndex, field_matrix
    from seqbil.features.templates import TemplateSet, parse_template
    _, paths = markov
    corpus, _ = read_text(paths, "token")
    name, texts, offsets, column = split
    templates = TemplateSet(parse_template(t) for t in texts)
    for min_count in (1, 3):
        text = SplitText(corpus, templates, chunk)
        index = text.count(min_count)
        ref, parts = FeatureIndex.build(corpus, templates, min_count)
        assert index.field_list == ref.field_list
        for f in ref.field_list:
            assert index.fields[f].strings == ref.fields[f].strings
        for mine, theirs in zip(index.tables[0], ref.tables[0]):
            np.testing.assert_array_equal(mine, theirs)
        assert index.n_keyed(0) > 0
        rng = np.random.default_rng(min_count)
        at = rng.integers(0, corpus.n_tokens, size=500).astype(np.int64)
        ptr, ids = text.csr(at)
        X = sp.csr_matrix((np.ones(len(parts[1])), parts[1], parts[0]), shape=(corpus.n_tokens, index.n_keyed(0)))
        for k, p in enumerate(at):  # the attributes of each position, in the same order
            assert ids[ptr[k]:ptr[k + 1]].tolist() == parts[1][parts[0][p]:parts[0][p + 1]].tolist()
        assert (X[at] != sp.csr_matrix((np.ones(len(ids)), ids, ptr), shape=X[at].shape)).nnz == 0
        keys = np.empty((len(at), text.T), np.int64)
        text.positions.keys(at, keys)
        fields, where = field_matrix(corpus, ref.field_list, ref.K,
                                     lambda c, tokens: (ref.fields[c].lookup(tokens, -1), len(ref.fields[c])))
        np.testing.assert_array_equal(keys, ref.keys(fields, where, 0)[at])
    names, table, covered = target_table(corpus, 12, column)
    names_ref, tok = target_ids(corpus, 12, column)
    assert names == names_ref and covered == int(np.sum(tok >= 0))
    for o in offsets + [0, 3]:
        np.testing.assert_array_equal(text.values(at, column, table, o), shifted(tok, corpus.lengths, o)[at])
    with pytest.raises(IndexError):
        text.csr(np.array([corpus.n_tokens], np.int64))


def test_hashed_template_keys_at_positions(markov):
    """A template whose mixed radix would overflow is hashed: the same keys as from the
    field matrix, and the same attributes."""
    from seqbil.aso_text import SplitText
    from seqbil.features.index import FeatureIndex
    from seqbil.features.templates import TemplateSet, parse_template
    _, paths = markov
    corpus, _ = read_text(paths, "token")
    macro = "/".join(f"%x[{r},0]{f}" for r in (-2, -1, 1, 2) for f in ("", "|lower", "|shape", "|suffix:1"))
    templates = TemplateSet([parse_template("U00:" + macro), parse_template("U01:%x[0,0]")])
    text = SplitText(corpus, templates, 50)
    assert text.index.specs[0][3][0] == 0  # hashed
    index = text.count(1)
    ref, parts = FeatureIndex.build(corpus, templates, 1)
    np.testing.assert_array_equal(index.tables[0][0], ref.tables[0][0])
    ptr, ids = text.csr(np.arange(corpus.n_tokens, dtype=np.int64))
    np.testing.assert_array_equal(ptr, parts[0])
    np.testing.assert_array_equal(ids, parts[1])


@pytest.mark.parametrize("loss_name", ["huber", "hinge"])
def test_streamed_problems_equal_the_whole_text_ones(markov, loss_name):
    """The problems trained chunk by chunk (the epoch's order cut into chunks, all blocks
    on one chunk at a time, the scale carried over) are bit for bit those trained over
    the whole text's order; the closed form from counts gathered chunk by chunk too;
    and so is a later round, given the same Theta."""
    from seqbil.aso import StructureLearner
    from seqbil.aso_text import SplitText
    from seqbil.features.templates import TemplateSet, parse_template
    _, paths = markov
    corpus, _ = read_text(paths, "token")
    s = aso_settings(aux_loss=loss_name, targets=70)  # more than one block of 64 problems
    for name, texts, offsets, column in SPLITS:
        templates = TemplateSet(parse_template(t) for t in texts)
        _, X, U_ref = reference_split(corpus, texts, offsets, column, s)
        theta = dense_top(U_ref, 3)[0].astype(np.float32)
        _, _, U2_ref = reference_split(corpus, texts, offsets, column, s, theta, rnd=1)
        for chunk, jobs in ((1 << 16, 1), (53, 2)):
            learner = StructureLearner(s, corpus, "token", [(name, texts, offsets, column)], jobs, chunk=chunk)
            learner.targets = {column: target_table(corpus, s.targets, column)[:2] + (0.0,)}
            text = SplitText(corpus, templates, chunk)
            text.count(s.aux_min_count)
            U = learner.weights(text, 0, name, offsets, column)
            blocks = 1 if len(texts) == 1 else 2  # the SGD trains 64 problems at a time
            assert U_ref.shape[1] == 70 * len(offsets) and len(U) == blocks * len(offsets)
            if loss_name == "huber" or len(texts) > 1:  # the reference's closed form is the Huber one
                np.testing.assert_array_equal(np.hstack(U), U_ref)
            assert np.abs(U_ref).max() > 0.01
            np.testing.assert_array_equal(np.hstack(learner.weights(text, 1, name, offsets, column, theta)), U2_ref)


def test_closed_form_hinge_from_counts(markov):
    """The hinge's closed form from streamed counts equals the dense formula."""
    from seqbil.aso import StructureLearner
    from seqbil.aso_text import SplitText
    from seqbil.features.templates import TemplateSet, parse_template
    _, paths = markov
    corpus, _ = read_text(paths, "token")
    s = aso_settings(aux_loss="hinge", aux_lambda=0.01)
    name, texts, offsets, column = SPLITS[1]
    index, X, _ = reference_split(corpus, texts, offsets, column, s)
    names, tok = target_ids(corpus, s.targets, column)
    want = np.hstack([closed_form(X, shifted(tok, corpus.lengths, o), len(names), s.aux_lambda, "hinge")
                      for o in offsets])
    learner = StructureLearner(s, corpus, "token", [SPLITS[1]], chunk=29)
    learner.targets = {column: target_table(corpus, s.targets, column)[:2] + (0.0,)}
    text = SplitText(corpus, TemplateSet(parse_template(t) for t in texts), 29)
    text.count(s.aux_min_count)
    np.testing.assert_array_equal(np.hstack(learner.weights(text, 0, name, offsets, column)), want)
    assert np.abs(want).max() == 1.0  # some clipped


@pytest.mark.parametrize("rounds", [1, 2])
def test_learned_structure_equals_the_in_memory_reference(markov, tmp_path, rounds):
    """learn_structure on text read from several files (one gzip) gives every split the
    index, Theta (the same subspace: principal angles ~0; the same signed vectors) and
    RMS of the whole-text computation with a dense SVD."""
    sentences, paths = markov
    corpus, _ = read_text(paths, "token")
    specs = ["left: %x[-1,0]|lower %x[-2,0] -> 0", "one: %x[1,0]|lower -> 0 -1",
             "pair: %x[0,0] %x[0,0]|suffix:1 %x[-1,0]/%x[1,0] bias -> -2 2"]
    opts = {"targets": 12, "dim": 4, "aux_epochs": 2, "aux_min_count": 2, "rounds": rounds}
    structure = seqbil.learn_structure(paths, tmp_path / "m.sbs", splits=specs, jobs=2, **opts)
    s = aso_settings(**opts)
    for split, (name, texts, offsets, column) in zip(Structure.load(tmp_path / "m.sbs").splits, SPLITS):
        theta = None
        for r in range(rounds):
            index, X, U = reference_split(corpus, texts, offsets, column, s, theta, r)
            theta, sv = dense_top(U, 4)
            theta = theta.astype(np.float32)
        for mine, theirs in zip(split.index.tables[0], index.tables[0]):
            np.testing.assert_array_equal(mine, theirs)
        cosines = np.linalg.svd(split.theta.T.astype(np.float64) @ theta, compute_uv=False)
        assert cosines.min() > 1 - 1e-6, (name, cosines)
        np.testing.assert_allclose(split.theta, theta, atol=2e-4)
        rms = float(np.sqrt(np.mean(np.square(np.asarray(X @ theta, dtype=np.float64)))))
        assert split.rms == pytest.approx(rms, rel=1e-4)
        info = next(p for p in structure.provenance["splits"] if p["name"] == name)
        np.testing.assert_allclose(info["singular_values"][:4], sv, rtol=1e-4)


def test_top_singular_of_column_blocks(rng):
    """Column blocks (never put side by side) and more problems than features: the top
    singular vectors of the dense SVD."""
    for d, m, h in ((300, 130, 6), (40, 150, 5)):
        M = (rng.standard_normal((d, 8)) @ rng.standard_normal((8, m)) + 0.2 * rng.standard_normal((d, m)))
        M = M.astype(np.float32)
        blocks = [np.ascontiguousarray(M[:, a:a + 64]) for a in range(0, m, 64)]
        L, S = dense_top(M, h)
        for jobs in (1, 2):
            U, s = top_singular(blocks, h, jobs=jobs, rows=17)
            np.testing.assert_allclose(s, S, rtol=1e-5)
            np.testing.assert_allclose(U, L, atol=1e-4)
            np.testing.assert_allclose(U.T @ U, np.eye(h), atol=1e-5)


def test_memory_does_not_grow_with_the_text(tmp_path):
    """The same text given twice (twice the min count: the same features and targets)
    raises the peak of allocated memory by the text itself (4 bytes a token), the
    epoch's order (4) and the sentence lengths (8 a sentence), not by its encoding."""
    import tracemalloc

    from seqbil.aso import StructureLearner
    sentences = markov_text(np.random.default_rng(5), n_sent=3000, words=200)
    once, twice = tmp_path / "once.txt", tmp_path / "twice.txt"
    once.write_text("".join(" ".join(s) + "\n" for s in sentences), encoding="utf-8")
    twice.write_text(once.read_text(encoding="utf-8") * 2, encoding="utf-8")
    specs = [("pair", ["U00:%x[0,0]", "U01:%x[0,0]|suffix:1", "U02:%x[0,0]|lower", "U03:%x[-1,0]|shape"], [-1, 1], 0)]
    peaks, dims = [], []
    for path, min_count in ((once, 2), (twice, 4)):
        corpus, _ = read_text([str(path)], "token")
        s = aso_settings(aux_min_count=min_count, targets=40, aux_epochs=1)
        tracemalloc.start()
        structure = StructureLearner(s, corpus, "token", specs, chunk=2048).learn()
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        dims.append(structure.splits[0].theta.shape)
        P, N = corpus.n_tokens, len(corpus)
    assert dims[0] == dims[1]
    extra = (P // 2) * 8 + (N // 2) * 8
    assert peaks[1] - peaks[0] < extra + 64 * 1024, (peaks, extra)
