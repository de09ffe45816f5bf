"""Continuing a saved model on new data (train --init-model): for the perceptron it
is the same online run as one learner that saw the first corpus and then the new
one, checked weight by weight through the attribute strings."""
import json
import subprocess
import sys

import numpy as np
import pytest

import seqbil
from seqbil.features.dataset import encode
from seqbil.features.templates import TemplateSet, parse_template
from seqbil.formats import ConllFormat
from seqbil.learners import LEARNERS
from seqbil.model import Model
from seqbil.params import Settings
from test_cli import ENV

TEMPLATES = ["U00:%x[0,0]", "U01:%x[-1,0]/%x[0,0]", "B02:%x[-1,0]", "B03:%x[0,0]", "B"]


def corpus(rng, n, words, labels):
    out = []
    for _ in range(n):
        length = int(rng.integers(1, 7))
        out.append([[str(rng.choice(words)), str(rng.choice(labels))] for _ in range(length)])
    return out


def write_config(path, learner="sp", averaged=False):
    path.write_text(f'[features]\ntemplates = {json.dumps(TEMPLATES)}\n[train]\nlearner = "{learner}"\n'
                    f'averaged = {str(averaged).lower()}\nseed = 3\n', encoding="utf-8")
    return path


def sentences(rows):
    fmt = ConllFormat(2, -1)
    return [fmt._sentence(r, i, 2, "<test>") for i, r in enumerate(rows, 1)]


def weights_by_position(model, sents):
    """Per position, the sums of the 0-order and of the 1st-order weight rows of the
    attributes there (by label name): what decoding adds up. A saved model keeps no
    attribute without weights, so rows are compared through their sums."""
    data = model.encode(sents)
    order = np.argsort(model.labels)
    prev = np.append(order, len(model.labels))
    S = len(model.labels)
    rows = []
    for p in range(data.n_positions):
        u = sum((model.weights["W0"][a][order] for a in data.u_ids[data.u_ptr[p]:data.u_ptr[p + 1]]), np.zeros(S))
        b = sum((model.weights["W1"][a][np.ix_(order, prev)] for a in data.b_ids[data.b_ptr[p]:data.b_ptr[p + 1]]),
                np.zeros((S, S + 1)))
        rows.append((u, b))
    return rows


@pytest.mark.parametrize("seed", range(3))
def test_perceptron_continued_equals_one_online_run(tmp_path, seed):
    rng = np.random.default_rng(seed)
    # the new corpus brings new words (a new label would change the first run's
    # decisions in the reference: see the next test)
    first = corpus(rng, 25, list("abcd"), ["A", "B", "C"])
    second = corpus(rng, 20, list("cdefg"), ["B", "C"])
    config = write_config(tmp_path / "c.toml")
    seqbil.train(first, config=config, epochs=2, model=str(tmp_path / "m1.sbm"))
    continued = seqbil.train(second, init_model=str(tmp_path / "m1.sbm"), epochs=1)
    assert continued.labels == ["A", "B", "C"]
    assert continued.training["init_model"]["path"] == str(tmp_path / "m1.sbm")
    assert continued.training["init_model"]["training"]["train"]["sentences"] == 25

    # reference: one learner over both corpora, fed the same sequence of sentences
    templates = TemplateSet(parse_template(t) for t in TEMPLATES)
    both = sentences(first) + sentences(second)
    labels = ["A", "B", "C"]
    data, index = encode(both, templates, None, labels)
    learner = LEARNERS["sp"](3, index.n_attributes(0), index.n_attributes(1),
                             Settings.of({"averaged": False, "seed": 3}), True)
    order_rng = np.random.default_rng(3)
    for _ in range(2):
        learner.train_chunk(data, order_rng.permutation(len(first)).astype(np.int64))
    order_rng = np.random.default_rng(3)
    learner.train_chunk(data, (len(first) + order_rng.permutation(len(second))).astype(np.int64))
    kind, weights = learner.parameters()
    reference = Model(kind, labels, index, {"format": "conll", "n_fields": 2, "metric": "accuracy"}, weights)

    got, want = weights_by_position(continued, both), weights_by_position(reference, both)
    assert len(got) == len(want) == sum(map(len, both))
    for (gu, gb), (wu, wb) in zip(got, want):
        np.testing.assert_array_equal(gu, wu)
        np.testing.assert_array_equal(gb, wb)
    np.testing.assert_array_equal(continued.weights["trans"], reference.weights["trans"])
    np.testing.assert_array_equal(continued.weights["end"], reference.weights["end"])
    assert any(np.any(w) for w in reference.weights.values())


@pytest.mark.parametrize("learner", ["sp", "bcd", "bol"])
def test_new_labels_and_attributes_start_at_zero(tmp_path, learner):
    """With a vanishing step the continued model is the old one, by attribute string
    and label name, with zeros for what is new."""
    rng = np.random.default_rng(4)
    first = corpus(rng, 25, list("abcd"), ["B", "C", "E"])
    second = corpus(rng, 20, list("cdefg"), ["A", "C", "D", "E"])
    config = write_config(tmp_path / "c.toml", learner, learner == "sp")
    old = seqbil.train(first, config=config, epochs=2, model=str(tmp_path / "m1.sbm"), precision="float64")
    new = seqbil.train(second, init_model=str(tmp_path / "m1.sbm"), epochs=1, C=1e-300, precision="float64")
    assert new.labels == ["B", "C", "E", "A", "D"]
    y = [new.labels.index(name) for name in old.labels]
    v = y + [len(new.labels)]
    probe = sentences(first + second)
    d_old, d_new = old.encode(probe), new.encode(probe)
    S_old, S_new = len(old.labels), len(new.labels)
    seen_new = set()
    for u_or_b in ("u", "b"):
        ptr_o, ids_o = getattr(d_old, f"{u_or_b}_ptr"), getattr(d_old, f"{u_or_b}_ids")
        ptr_n, ids_n = getattr(d_new, f"{u_or_b}_ptr"), getattr(d_new, f"{u_or_b}_ids")
        for p in range(d_new.n_positions):
            known, all_ = list(ids_o[ptr_o[p]:ptr_o[p + 1]]), list(ids_n[ptr_n[p]:ptr_n[p + 1]])
            if len(known) < len(all_):  # an attribute new in the second corpus
                seen_new.add(p)
            # the same sums of weights, the new labels' cells (nearly) zero
            for name, rows, cols in (("W0", y, None), ("W1", y, v), ("alpha", y, None), ("beta", v, None)):
                if name not in old.weights or (name == "W0") != (u_or_b == "u"):
                    continue
                if name in ("alpha", "beta"):  # the bilinear form: compare the products
                    if name == "beta":
                        continue
                    got = sum((np.outer(new.weights["alpha"][a], new.weights["beta"][a]) for a in all_),
                              np.zeros((S_new, S_new + 1)))
                    want = sum((np.outer(old.weights["alpha"][a], old.weights["beta"][a]) for a in known),
                               np.zeros((S_old, S_old + 1)))
                    rows, cols = y, v
                else:
                    shape = old.weights[name].shape[1:]
                    got = sum((new.weights[name][a] for a in all_), np.zeros(new.weights[name].shape[1:]))
                    want = sum((old.weights[name][a] for a in known), np.zeros(shape))
                picked = got[np.ix_(rows, cols)] if cols is not None else got[rows]
                # bol refreshes its factors from the float32 blocks alpha beta^T it starts from
                np.testing.assert_allclose(picked, want, rtol=1e-6 if name == "alpha" else 1e-7, atol=1e-250)
                rest = np.ones(got.shape, dtype=bool)
                rest[np.ix_(rows, cols) if cols is not None else rows] = False
                assert np.all(np.abs(got[rest]) < 1e-250)
    assert seen_new  # the probe reaches attributes of the second corpus
    np.testing.assert_allclose(new.weights["trans"][np.ix_(y, v)], old.weights["trans"], atol=1e-250)
    np.testing.assert_allclose(new.weights["end"][y], old.weights["end"], atol=1e-250)


def test_cli_init_model_and_inspect_lineage(tmp_path):
    rng = np.random.default_rng(9)
    for name, rows in (("a.txt", corpus(rng, 15, list("abc"), ["X", "Y"])),
                       ("b.txt", corpus(rng, 15, list("cde"), ["X", "Y"]))):
        (tmp_path / name).write_text("\n\n".join("\n".join(" ".join(r) for r in s) for s in rows) + "\n")
    config = write_config(tmp_path / "c.toml", "bol", True)

    def cli(*args):
        proc = subprocess.run([sys.executable, "-m", "seqbil", *args], cwd=tmp_path, env=ENV, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
        return proc
    cli("train", "-q", "--config", config, "--train", "a.txt", "--epochs", "2", "--model", "a.sbm")
    out = cli("train", "-q", "--init-model", "a.sbm", "--train", "b.txt", "--epochs", "1", "--model", "b.sbm")
    assert "starting from a.sbm" in out.stderr and "learner bol" in out.stderr
    info = json.loads(cli("inspect", "--json", "b.sbm").stdout)
    assert info["learner"] == "bol" and info["params"]["averaged"] is True
    lineage = info["training"]["init_model"]
    assert lineage["path"] == "a.sbm" and lineage["training"]["train"]["path"] == "a.txt"
    assert info["training"]["train"]["path"] == "b.txt"
    import hashlib
    assert lineage["sha256"] == hashlib.sha256((tmp_path / "a.sbm").read_bytes()).hexdigest()
    assert "continued from a.sbm" in cli("inspect", "b.sbm").stdout
