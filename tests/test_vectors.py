"""Real-valued features from word vectors (%vec): reading vector files, the entries each
position gets (against a position-by-position construction), and models that use them:
one-hot vectors train exactly the model of the plain word template."""
import numpy as np
import pytest

import seqbil
from conftest import sentence
from seqbil.errors import InputError
from seqbil.features.dataset import encode
from seqbil.features.templates import TemplateSet, parse_template
from seqbil.features.vectors import VectorFeatures, VectorTable


def test_word2vec_text_with_and_without_header(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("3 2\nthe 0.5 -1\nCat 1e-1 2\ndog 0 0\n", encoding="utf-8")
    b = tmp_path / "b.txt"
    b.write_text("the 0.5 -1\nCat 0.1 2\n", encoding="utf-8")
    ta, tb = VectorTable.read(a), VectorTable.read(b)
    assert ta.words == ["the", "Cat", "dog"] and tb.words == ["the", "Cat"] and ta.dim == 2
    assert np.allclose(ta.matrix[1], [0.1, 2.0]) and ta.matrix.dtype == np.float32
    # exact match first, then lower case, else -1
    assert list(ta.rows(["the", "The", "Cat", "cat", "DOG", "bird"])) == [0, 0, 1, -1, 2, -1]


def test_npy_with_vocabulary(tmp_path):
    np.save(tmp_path / "v.npy", np.arange(6, dtype=np.float64).reshape(3, 2))
    (tmp_path / "v.vocab").write_text("a\nb\nc\n", encoding="utf-8")
    t = VectorTable.read(tmp_path / "v.npy")
    assert t.words == ["a", "b", "c"] and np.array_equal(t.matrix[2], [4, 5])


@pytest.mark.parametrize("text, message", [
    ("the 0.5 -1\ncat 1\n", "1 components, expected 2"), ("the 0.5 x\n", "not a word followed by numbers"),
    ("", "no vectors")])
def test_bad_vector_files_name_the_line(tmp_path, text, message):
    path = tmp_path / "v.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=message):
        VectorTable.read(path)


@pytest.mark.parametrize("unknown", ["learned", "zero"])
@pytest.mark.parametrize("seed", range(4))
def test_entries_match_a_position_by_position_construction(seed, unknown):
    rng = np.random.default_rng(seed)
    vocab = ["a", "b", "C", "d", "e"]
    table = VectorTable(["a", "b", "c"], rng.normal(size=(3, 4)).astype(np.float32))
    texts = ["U00:%x[0,0]", "U01:%x[-1,0]/%x[0,0]", "U10:%vec[0,0,emb]", "U11:%vec[-1,0,emb]", "B"]
    templates = TemplateSet(parse_template(t) for t in texts)
    sents = []
    for _ in range(6):
        words = [str(w) for w in rng.choice(vocab, int(rng.integers(1, 6)))]
        sents.append(sentence(words, labels=["O"] * len(words)))
    plain = TemplateSet(parse_template(t) for t in texts if "%vec" not in t)
    ref_data, _ = encode(sents, plain, None, ["O"])
    vectors = VectorFeatures(templates.vector_templates, {"emb": table}, unknown, 0.5)
    data, index = encode(sents, templates, None, ["O"], vectors=vectors)
    A = index.n_keyed(0)
    assert index.n_attributes(0) == A + 2 * (4 + (unknown == "learned"))
    p = 0
    for s in sents:
        words = s.columns[0]
        for i in range(len(s)):
            expected = [(int(a), 1.0) for a in ref_data.u_ids[ref_data.u_ptr[p]:ref_data.u_ptr[p + 1]]]
            for k, offset in enumerate((0, -1)):
                base = A + k * (4 + (unknown == "learned"))
                j = i + offset
                if not 0 <= j < len(words):
                    continue
                row = table.index.get(words[j], table.index.get(words[j].lower()))
                if row is not None:
                    expected += [(base + d, 0.5 * float(table.matrix[row, d])) for d in range(4)]
                elif unknown == "learned":
                    expected.append((base + 4, 1.0))
            lo, hi = data.u_ptr[p], data.u_ptr[p + 1]
            got = list(zip(data.u_ids[lo:hi].tolist(), data.u_vals[lo:hi].tolist()))
            assert [a for a, _ in got] == [a for a, _ in expected]
            assert np.allclose([v for _, v in got], [v for _, v in expected])
            p += 1


def _corpus(rng, n, vocab):
    out = []
    for _ in range(n):
        toks = [str(w) for w in rng.choice(vocab, int(rng.integers(1, 7)))]
        out.append([[t, "B-X" if t[0] in "ab" else "O"] for t in toks])
    return out


@pytest.mark.parametrize("learner", ["sp", "bol", "bcd"])
def test_one_hot_vectors_train_the_plain_word_model(tmp_path, learner):
    """With one-hot vectors (one dimension per word, value 1), U00:%vec[0,0,emb] reads
    what U00:%x[0,0] reads: the same updates, the same tags, the same weights up to the
    order of the attributes."""
    rng = np.random.default_rng(7)
    vocab = ["ab", "ac", "bd", "xe", "yf", "zg"]
    path = tmp_path / "onehot.txt"
    path.write_text("".join(f"{w} " + " ".join("1" if j == i else "0" for j in range(len(vocab))) + "\n"
                            for i, w in enumerate(vocab)), encoding="utf-8")
    train, test = _corpus(rng, 30, vocab), _corpus(rng, 10, vocab + ["new"])
    common = dict(config="conll2000", learner=learner, epochs=3, averaged=learner != "bcd")
    bilinear = ["B10:%x[-1,0]"] if learner != "sp" else []
    plain = seqbil.train(train, templates=["U00:%x[0,0]", *bilinear, "B"], **common)
    vec = seqbil.train(train, templates=["U00:%vec[0,0,emb]", *bilinear, "B"], vectors=[f"emb={path}"],
                       vector_unknown="zero", **common)
    words = [[r[0] for r in s] for s in test]
    assert vec.tag_many(words) == plain.tag_many(words)
    # the weight row of word w: its attribute in the plain model, its dimension in the vector model
    for d, w in enumerate(vocab):
        s = plain.format.sentence([w], 1)
        u_ptr, u_ids = plain.index.encode([s])[:2]
        if u_ptr[1] > u_ptr[0]:  # seen in training
            assert np.allclose(plain.weights["W0"][u_ids[0]], vec.weights["W0"][d]), w
        else:
            assert not vec.weights["W0"][d].any()
    vec.save(tmp_path / "m.sbm")
    again = seqbil.load(tmp_path / "m.sbm")
    assert again.tag_many(words) == vec.tag_many(words)
    assert again.index.vectors.tables["emb"].words == vec.index.vectors.tables["emb"].words
    record = again.training["vectors"]["emb"]
    assert record["source"] == str(path) and record["dim"] == record["rows_in_file"] == len(vocab)
    assert record["rows_kept"] == len({r[0] for s in train for r in s})


def test_vectors_must_be_named():
    from seqbil.errors import ConfigError
    with pytest.raises(ConfigError, match="vectors 'emb'.*emb=FILE"):
        seqbil.train([[["a", "O"]]], config="conll2000", learner="sp", epochs=1, templates=["U00:%vec[0,0,emb]", "B"])


@pytest.mark.parametrize("text, line", [("the 0.1 0.2\nof nan 0.3\n", 2), ("2 2\nthe 0.1 inf\n", 2),
                                        ("the 1e39 0\n", 1)])
def test_vector_files_with_numbers_float32_cannot_hold_are_refused(tmp_path, text, line):
    path = tmp_path / "v.txt"
    path.write_text(text)
    with pytest.raises(InputError, match="not a finite number") as info:
        VectorTable.read(path)
    assert info.value.line == line


@pytest.mark.parametrize("matrix, message", [(np.array([[1.0, np.nan]]), "component 1 is nan"),
                                             (np.array([[1e300, 0.0]]), "not a finite number"),
                                             (np.array([[1 + 2j, 0]]), "complex"),
                                             (np.array([["a", "b"]]), "<U1")])
def test_npy_vectors_that_are_not_real_finite_numbers_are_refused(tmp_path, matrix, message):
    np.save(tmp_path / "v.npy", matrix)
    (tmp_path / "v.vocab").write_text("the\n")
    with pytest.raises(InputError, match=message):
        VectorTable.read(tmp_path / "v.npy")


def test_random_embeddings_of_an_absurd_dimension_are_refused():
    from seqbil.errors import ConfigError
    from seqbil.features.vectors import embedding_table
    with pytest.raises(ConfigError, match="from 1 to 100,000"):
        embedding_table("random:99999999999", ["a"])
