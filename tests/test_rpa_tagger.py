"""The rpa learner end to end: %emb templates, the embeddings setting, the model it saves.

The kernel's steps are checked against a brute-force reference in test_rpa_kernel.py;
here, what a user runs: training through the API and the CLI, tagging with the saved
model, the frozen baseline, and the errors."""
import subprocess
import sys

import numpy as np
import pytest

import seqbil
from seqbil.errors import ConfigError
from seqbil.features.templates import EMB
from seqbil.features.vectors import FALLBACK
from seqbil.learners.rpa import ReEmbeddingPA
from conftest import sample_path

TRAIN, TEST = sample_path("conll2000_train.txt"), sample_path("conll2000_test.txt")
TEMPLATES = ["U00:%x[-1,0]", "U01:%x[0,0]", "U02:%x[1,0]", "U10:%x[0,1]", "U90:%emb[-1,0]", "U91:%emb[0,0]",
             "U92:%emb[1,0]", "B"]


def train(**options):
    return seqbil.train(TRAIN, templates=TEMPLATES, learner="rpa", epochs=3, **options)


def sentences():
    out, block = [], []
    for line in open(TEST, encoding="utf-8"):
        if line.strip():
            block.append(line.split()[:2])
        elif block:
            out.append(block)
            block = []
    return out[:40]


def test_learned_vectors_travel_with_the_model(tmp_path):
    """The saved model tags as the trained one; the table keeps every training word,
    the `vocab` further words of the file and the fallback, which unseen words read."""
    vectors = tmp_path / "v.txt"
    rng = np.random.default_rng(0)
    words = ["the", "of", "zzunseen1", "zzunseen2", "zzunseen3"]
    vectors.write_text("".join(f"{w} " + " ".join(f"{x:.4f}" for x in rng.normal(size=4)) + "\n" for w in words))
    model = train(embeddings=str(vectors), embedding_vocab=2)
    table = model.index.vectors.tables[EMB]
    assert "zzunseen1" in table.index and "zzunseen2" in table.index and "zzunseen3" not in table.index
    assert table.words[-1] == FALLBACK and table.dim == 4
    path = tmp_path / "m.sbm"
    model.save(path)
    again = seqbil.load(path)
    sents = sentences() + [[["zzunseen3", "NN"], ["qq", "NN"]]]
    assert again.tag_many(sents) == model.tag_many(sents)
    np.testing.assert_array_equal(again.index.vectors.tables[EMB].matrix, table.matrix)
    moved = model.training["vectors"][EMB]["moved"]
    assert moved["mean_moved"] > 0 and moved["frequent_words"] > 0


def test_unseen_word_reads_the_fallback_vector():
    """A word without a row scores exactly as the fallback row's word would."""
    model = train(embeddings="random:5")
    table = model.index.vectors.tables[EMB]
    rows = table.rows(["zzneverseen"])
    assert rows[0] == -1
    # the fallback row is the zero vector for random vectors: the unseen word's %emb
    # features add nothing, whatever the word
    assert np.all(table.matrix[table.index[FALLBACK]] == 0)
    a = model.tag_many([[["zzneverseen", "NN"], ["the", "DT"]]])
    b = model.tag_many([[["zzother", "NN"], ["the", "DT"]]])
    assert a == b


def test_vectors_move_only_when_learned():
    """freeze_embeddings keeps the initial vectors; rpa moves them, the rows of frequent
    words more than those of words seen once."""
    frozen = train(embeddings="random:5", freeze_embeddings=True)
    learned = train(embeddings="random:5")
    t0, t1 = frozen.index.vectors.tables[EMB], learned.index.vectors.tables[EMB]
    assert t0.words == t1.words
    assert not np.array_equal(t0.matrix, t1.matrix)
    assert "moved" not in frozen.training["vectors"][EMB]
    moved = learned.training["vectors"][EMB]["moved"]
    assert moved["frequent_mean_moved"] > moved["rare_mean_moved"] > 0


def test_frozen_equals_pa_on_the_same_fixed_vectors(monkeypatch):
    """Frozen vectors read by row (the corpus keeps each token's row) give the model of
    the live path with lambda so large that the vectors cannot move, and the model of
    PA-II on the vectors' values written into the encoded corpus (how the learners that
    do not adapt vectors read %emb)."""
    frozen = train(embeddings="random:5", freeze_embeddings=True, averaged=False)
    assert "moved" not in frozen.training["vectors"][EMB]
    stiff = train(embeddings="random:5", lam=1e15, averaged=False)
    np.testing.assert_allclose(stiff.weights["W0"], frozen.weights["W0"], atol=1e-6)
    np.testing.assert_allclose(stiff.index.vectors.tables[EMB].matrix, frozen.index.vectors.tables[EMB].matrix,
                               atol=1e-6)
    monkeypatch.setattr(ReEmbeddingPA, "embeds", False)
    written = train(embeddings="random:5", freeze_embeddings=True, averaged=False)
    np.testing.assert_allclose(written.weights["W0"], frozen.weights["W0"], atol=1e-9)
    np.testing.assert_array_equal(written.index.vectors.tables[EMB].matrix, frozen.index.vectors.tables[EMB].matrix)
    assert written.tag_many(sentences()) == frozen.tag_many(sentences())


def test_cli_equals_api(tmp_path):
    template = tmp_path / "t.txt"
    template.write_text("\n".join(TEMPLATES) + "\n")
    path = tmp_path / "m.sbm"
    proc = subprocess.run([sys.executable, "-m", "seqbil", "train", "-q", "--train", str(TRAIN), "--template",
                           str(template), "--learner", "rpa", "--epochs", "3", "--embeddings", "random:5",
                           "--lambda", "2", "--inner", "2", "--model", str(path)], capture_output=True, text=True,
                          cwd=tmp_path)  # the installed package, not the source tree
    assert proc.returncode == 0, proc.stderr
    api = train(embeddings="random:5", lam=2.0, inner=2)
    cli = seqbil.load(path)
    np.testing.assert_array_equal(cli.index.vectors.tables[EMB].matrix, api.index.vectors.tables[EMB].matrix)
    assert cli.tag_many(sentences()) == api.tag_many(sentences())


@pytest.mark.parametrize("options, message", [
    ({}, "embeddings names no vectors"),
    ({"embeddings": "random:0"}, "random:K"),
    ({"embeddings": "/nonexistent/vectors.txt"}, "no such file"),
])
def test_bad_embeddings_are_config_errors(options, message):
    with pytest.raises(ConfigError, match=message):
        train(**options)


def test_other_learners_read_fixed_vectors():
    """%emb with a learner that does not adapt vectors: fixed features, as %vec."""
    model = seqbil.train(TRAIN, templates=TEMPLATES, learner="sp", epochs=2, embeddings="random:5")
    assert "moved" not in model.training["vectors"][EMB]
    assert len(model.tag_many(sentences())) == 40
