"""Sparse model weights (seqbil/storage.py): the rows hold exactly the non-zero cells,
decoding them gives brute force's paths at either precision, compacting a model takes
out only attributes without weights, and a model file maps instead of copying."""
import mmap
import subprocess
import sys

import numpy as np
import pytest

import seqbil
from seqbil.errors import ModelFileError
from seqbil.formats import read_corpus
from seqbil.model import KINDS, Model
from seqbil.modelfile import read_model, write_model
from seqbil.samples import sample_path
from seqbil.storage import Rows, dense_store, dense_weights, sparse_weights
from seqbil._kernels.decode import decode_corpus
from test_cli import ENV
from test_decode import brute_force, random_dataset, tables


def sparse_random(rng, shape, density=0.3):
    return rng.normal(size=shape) * (rng.random(shape) < density)


def test_rows_hold_exactly_the_cells_above_the_threshold(rng):
    for _ in range(20):
        dense = sparse_random(rng, (int(rng.integers(0, 9)), int(rng.integers(1, 7))))
        prune = float(rng.choice([0.0, 0.5]))
        rows = Rows.from_dense(dense, "float64", prune)
        kept = np.where(np.abs(dense) > prune, dense, 0.0)
        assert np.array_equal(rows.to_dense(), kept)
        assert rows.nnz == np.count_nonzero(kept)
        for a in range(dense.shape[0]):  # cells ascend within a row
            cells = rows.idx[rows.ptr[a]:rows.ptr[a + 1]]
            assert list(cells) == sorted(cells) == list(np.flatnonzero(kept[a]))
        keep = rng.random(dense.shape[0]) < 0.5
        assert np.array_equal(rows.take(keep).to_dense(), kept[keep])


def test_float32_rows_keep_the_rounded_values(rng):
    dense = sparse_random(rng, (6, 5)) * 1e-3
    dense[0, 0] = 1e-50  # rounds to zero in float32: not a cell
    rows = Rows.from_dense(dense, "float32")
    assert rows.val.dtype == np.float32
    assert np.array_equal(rows.to_dense(), dense.astype(np.float32).astype(np.float64))
    assert rows.to_dense()[0, 0] == 0 and rows.nnz == np.count_nonzero(dense.astype(np.float32))


def test_bilinear_rows_hold_the_factors_of_non_zero_products(rng):
    S, A1 = 3, 12
    alpha, beta = sparse_random(rng, (A1, S), 0.5), sparse_random(rng, (A1, S + 1), 0.5)
    weights = {"W0": np.zeros((2, S)), "alpha": alpha, "beta": beta, "trans": np.zeros((S, S + 1)),
               "end": np.zeros(S)}
    store = sparse_weights("bilinear", weights, S, "float64")
    back = dense_weights("bilinear", store, S)
    product = alpha[:, :, None] * beta[:, None, :]
    assert np.array_equal(back["alpha"][:, :, None] * back["beta"][:, None, :], product)
    empty = ~(alpha.any(1) & beta.any(1))
    assert np.array_equal(store.w1.nonempty(), ~empty)  # a zero factor takes the other with it


def random_weights(rng, form, S, A0, A1):
    """Dense weights of a linear or bilinear model, most cells zero."""
    weights = {"W0": sparse_random(rng, (A0, S)), "trans": rng.normal(size=(S, S + 1)), "end": rng.normal(size=S)}
    if form == "linear":
        weights["W1"] = sparse_random(rng, (A1, S, S + 1))
    else:
        weights["alpha"], weights["beta"] = sparse_random(rng, (A1, S), 0.6), sparse_random(rng, (A1, S + 1), 0.6)
    return weights


def in_layout(rows, layout):
    """rows as (cell, value) pairs or dense, whichever compact_layout would choose."""
    if layout == "dense":
        return Rows(None, None, rows.to_dense().astype(rows.val.dtype), rows.width)
    return Rows.from_dense(rows.to_dense(), rows.val.dtype.name)


@pytest.mark.parametrize("layout", ["pairs", "dense"])
@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("form", ["linear", "bilinear"])
@pytest.mark.parametrize("S", [2, 4, 5])
def test_sparse_decoding_equals_brute_force(rng, form, S, precision, layout):
    """Kernels read the rows as stored; brute force sums the dense weights the rows
    stand for (rounded to the precision)."""
    A0, A1 = 9, 7
    data = random_dataset(rng, 15, S, A0, A1)
    weights = random_weights(rng, form, S, A0, A1)
    store = sparse_weights(form, weights, S, precision)
    store = store.with_blocks(in_layout(store.w0, layout), in_layout(store.w1, layout))
    for block in (store.w0, store.w1):
        assert block.dense == (layout == "dense")
    dense = dense_weights(form, store, S)
    W1 = dense["W1"] if form == "linear" else dense["alpha"][:, :, None] * dense["beta"][:, None, :]
    out = np.full(data.n_positions, -1, dtype=np.int32)
    decode_corpus(data, store, out)
    for j in range(data.n_sequences):
        unary, pair = tables(data, j, dense["W0"], W1)
        assert tuple(out[data.seq_ptr[j]:data.seq_ptr[j + 1]]) == brute_force(unary, pair, dense["trans"],
                                                                               dense["end"])[1]


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("form", ["linear", "bilinear"])
def test_dense_store_holds_the_weights_of_the_sparse_one(rng, form, precision):
    """dense_store (the held-out decode's) keeps every cell of the blocks, rounded to the
    precision as sparse_weights rounds the cells it keeps: the same dense weights, and
    the decode brute force gives."""
    S, A0, A1 = 4, 9, 7
    data = random_dataset(rng, 15, S, A0, A1)
    weights = random_weights(rng, form, S, A0, A1)
    dense, sparse = dense_store(form, weights, S, precision), sparse_weights(form, weights, S, precision)
    assert dense.w0.dense and dense.w1.dense and dense.w0.val.dtype == np.dtype(precision)
    for name, block in dense_weights(form, dense, S).items():
        assert np.array_equal(block, dense_weights(form, sparse, S)[name]), name
    expected = dense_weights(form, sparse, S)
    W1 = expected["W1"] if form == "linear" else expected["alpha"][:, :, None] * expected["beta"][:, None, :]
    out = np.full(data.n_positions, -1, dtype=np.int32)
    decode_corpus(data, dense, out)
    for j in range(data.n_sequences):
        unary, pair = tables(data, j, expected["W0"], W1)
        assert tuple(out[data.seq_ptr[j]:data.seq_ptr[j + 1]]) == brute_force(unary, pair, expected["trans"],
                                                                               expected["end"])[1]


@pytest.mark.parametrize("form", ["linear", "bilinear"])
def test_damaged_rows_are_skipped_not_read_outside_the_arrays(rng, form):
    S, A0, A1 = 3, 6, 5
    data = random_dataset(rng, 20, S, A0, A1)
    weights = {"W0": rng.normal(size=(A0, S)), "trans": rng.normal(size=(S, S + 1)), "end": rng.normal(size=S)}
    if form == "linear":
        weights["W1"] = rng.normal(size=(A1, S, S + 1))
    else:
        weights["alpha"], weights["beta"] = rng.normal(size=(A1, S)), rng.normal(size=(A1, S + 1))
    store = sparse_weights(form, weights, S, "float32")
    dense = dense_weights(form, store, S)
    flat = dense["W1"].reshape(A1, -1) if form == "linear" else np.hstack([dense["alpha"], dense["beta"]])
    store = store.with_blocks(store.w0, Rows.from_dense(flat, "float32"))  # (cell, value) pairs, whatever is smaller
    for damage in range(4):
        rows = store.w1
        ptr, idx = rows.ptr.copy(), rows.idx.copy()
        if damage == 0:
            ptr[2] = 10 ** 9                      # a row that ends past the cells
        elif damage == 1:
            ptr[1], ptr[2] = ptr[2], ptr[1]       # rows out of order
        elif damage == 2:
            idx[::3] = 10 ** 6                    # cells outside the row
        else:
            idx[::2] = -7
        broken = store.with_blocks(store.w0, Rows(ptr, idx, rows.val, rows.width))
        out = np.full(data.n_positions, -1, dtype=np.int32)
        decode_corpus(data, broken, out)          # no crash; labels are in range
        assert ((out >= 0) & (out < S)).all()


def test_rows_from_slots_are_the_rows_of_the_scattered_array(rng):
    """Rows.from_slots: the rows of the array whose row attrs[s] is rows[s], other
    rows zero, without making it (sp's final W1)."""
    for _ in range(30):
        n, width = int(rng.integers(1, 40)), int(rng.integers(1, 7))
        attrs = rng.permutation(n)[:int(rng.integers(0, n + 1))].astype(np.int32)
        rows = sparse_random(rng, (len(attrs), width))
        dense = np.zeros((n, width))
        dense[attrs] = rows
        precision, prune = str(rng.choice(["float32", "float64"])), float(rng.choice([0.0, 0.5]))
        got, want = Rows.from_slots(rows, attrs, n, precision, prune, chunk=7), Rows.from_dense(dense, precision,
                                                                                                  prune)
        for name in ("ptr", "idx", "val"):
            assert np.array_equal(getattr(got, name), getattr(want, name)) and \
                getattr(got, name).dtype == getattr(want, name).dtype
        # pruned(): as from_dense of the dense form, in either layout
        again = float(rng.choice([0.0, 0.3, 1.0]))
        held = got.to_dense(got.val.dtype)
        for layout in (got, Rows(None, None, held, width)):
            p = layout.pruned("float32", again)
            q = Rows.from_dense(held, "float32", again)
            assert np.array_equal(p.to_dense(), q.to_dense()) and p.nnz == q.nnz and p.val.dtype == np.float32
            if not p.dense:
                assert np.array_equal(p.ptr, q.ptr) and np.array_equal(p.idx, q.idx)


@pytest.mark.parametrize("prune", [0.0, 0.05])
def test_a_model_made_sparse_compacts_as_the_dense_one(chunker, prune):
    """A linear model whose weights are sparse already (as sp's training or a model
    file leaves them) compacts without a dense copy, to the same store, tables and
    report as the same model held dense."""
    dense = {k: np.array(v) for k, v in chunker.weights.items()}
    held = Model(chunker.kind, chunker.labels, _copy_index(chunker.index), chunker.corpus, dense)
    S = len(chunker.labels)
    sparse = Model(chunker.kind, chunker.labels, _copy_index(chunker.index), chunker.corpus,
                   {**dense, "W1": Rows.from_dense(dense["W1"].reshape(len(dense["W1"]), S * (S + 1)), "float32")})
    assert sparse._weights is None
    assert sparse.compact(prune) == held.compact(prune)
    for order in (0, 1):
        for a, b in zip(sparse.index.tables[order], held.index.tables[order]):
            assert np.array_equal(a, b)
    for name in ("w0", "w1", "trans", "end"):
        value, other = getattr(held.store, name), getattr(sparse.store, name)
        if isinstance(value, Rows):
            assert value.dense == other.dense
            for part in ("ptr", "idx", "val"):
                assert np.array_equal(getattr(value, part), getattr(other, part))
        else:
            assert np.array_equal(value, other)


@pytest.fixture(scope="module")
def chunker():
    return seqbil.train(str(sample_path("conll2000_train.txt")), config="conll2000", epochs=3, learner="sp")


def test_compacting_takes_out_only_attributes_without_weights(monkeypatch):
    test = read_corpus(seqbil.formats.make_format("conll"), sample_path("conll2000_test.txt"))
    with monkeypatch.context() as m:  # the model as training leaves it, before compact()
        m.setattr(Model, "compact", lambda self, prune=0.0, precision=None: {o: {"attributes": [0, 0], "weights": [
            0, 0]} for o in (0, 1)})
        full = seqbil.train(str(sample_path("conll2000_train.txt")), config="conll2000", epochs=3, learner="sp")
    dense = full.weights
    before = [(t.copy(), p.copy()) for t, p in full.index.tables]
    expected = full.predict(test)
    kept = full.compact()
    assert full.predict(test) == expected
    zero_rows = ~dense["W0"][:len(before[0][0])].any(axis=1)
    assert zero_rows.any() and kept[0]["attributes"] == [len(before[0][0]), int((~zero_rows).sum())]
    table, ptr = full.index.tables[0]
    old_table, old_ptr = before[0]
    for t in range(len(ptr) - 1):  # each template keeps its keys with weights, sorted
        old = old_table[old_ptr[t]:old_ptr[t + 1]]
        assert np.array_equal(table[ptr[t]:ptr[t + 1]], old[~zero_rows[old_ptr[t]:old_ptr[t + 1]]])
    assert np.array_equal(full.store.w0.to_dense(), dense["W0"][~zero_rows].astype(np.float32))


def test_compact_prune_equals_decoding_with_the_small_weights_zeroed(chunker, tmp_path):
    test = read_corpus(chunker.format, sample_path("conll2000_test.txt"))
    dense = {k: np.array(v) for k, v in chunker.weights.items()}
    eps = float(np.quantile(np.abs(dense["W0"][dense["W0"] != 0]), 0.5))
    zeroed = {k: (np.where(np.abs(v) > eps, v, 0.0) if k in ("W0", "W1") else v) for k, v in dense.items()}
    reference = Model(chunker.kind, chunker.labels, chunker.index, chunker.corpus, zeroed, precision="float64")
    expected = reference.predict(test)
    pruned = Model(chunker.kind, chunker.labels, _copy_index(chunker.index), chunker.corpus, dense,
                   precision="float64")
    kept = pruned.compact(prune=eps)
    assert kept[0]["weights"][1] == np.count_nonzero(zeroed["W0"])
    assert kept[0]["attributes"][1] == np.count_nonzero(zeroed["W0"].any(axis=1))
    assert pruned.predict(test) == expected
    pruned.save(tmp_path / "p.sbm")
    assert Model.load(tmp_path / "p.sbm").predict(test) == expected


def _copy_index(index):
    import copy
    out = copy.copy(index)
    out.tables = [(t.copy(), p.copy()) for t, p in index.tables]
    return out


@pytest.mark.parametrize("config,data,learner", [("conll2000", "conll2000_test.txt", "sp"),
                                                 ("conll2000", "conll2000_test.txt", "bol"),
                                                 ("sighan2005", "pku_test.utf8", "sp"),
                                                 ("sighan2005", "pku_test.utf8", "bol")])
def test_float32_weights_give_the_float64_scores_on_the_samples(tmp_path, config, data, learner):
    scores = {}
    for precision in ("float32", "float64"):
        model = seqbil.train(config=config, learner=learner, epochs=3, precision=precision,
                             model=str(tmp_path / f"{precision}.sbm"))
        assert model.precision == precision
        scores[precision] = seqbil.evaluate(seqbil.load(tmp_path / f"{precision}.sbm"), str(sample_path(data)))
    assert scores["float32"]["f1"] == scores["float64"]["f1"]
    sizes = {p: (tmp_path / f"{p}.sbm").stat().st_size for p in scores}
    assert sizes["float32"] < sizes["float64"]


def test_a_model_file_is_mapped_not_copied(chunker, tmp_path):
    path = tmp_path / "m.sbm"
    chunker.save(path)
    _, arrays = read_model(path)
    for name, array in arrays.items():
        assert not array.flags.writeable, name
        root = array
        while isinstance(root, np.ndarray):
            root = root.base
        assert isinstance(root, memoryview) and isinstance(root.obj, mmap.mmap), name


def test_verify_false_skips_the_payload_checksum_and_still_cannot_crash(chunker, tmp_path):
    path = tmp_path / "m.sbm"
    chunker.save(path)
    raw = bytearray(path.read_bytes())
    _, arrays = read_model(path)
    for k in range(1, 200):  # damage the payload's last bytes (weights and tables)
        raw[-k] ^= 0x5A
    path.write_bytes(bytes(raw))
    with pytest.raises(ModelFileError, match="payload checksum mismatch"):
        Model.load(path)
    try:
        model = seqbil.load(path, verify=False)
    except ModelFileError as exc:  # the damage made the contents inconsistent: said so
        assert "inconsistent model contents" in str(exc)
    else:
        model.tag_many([["He", "PRP"], ["ran", "VBD"]] for _ in range(3))


def test_files_with_dense_weights_load_and_convert(chunker, tmp_path):
    """A model file as seqbil 0.2 wrote it (version 1, dense float64 blocks) tags as
    before; `seqbil convert` writes it sparse, smaller, with the same labels."""
    test = read_corpus(chunker.format, sample_path("conll2000_test.txt"))
    chunker.save(tmp_path / "new.sbm")
    meta, arrays = read_model(tmp_path / "new.sbm")
    dense = dense_weights(chunker.kind, chunker.store, len(chunker.labels))
    old = {k: v for k, v in arrays.items() if not k.startswith(("W0.", "W1.", "AB."))}
    old.update({k: dense[k] for k in KINDS[chunker.kind]})
    meta = {k: v for k, v in meta.items() if k != "weights"}
    import seqbil.modelfile as modelfile
    version = modelfile.VERSION
    modelfile.VERSION = 1
    try:
        write_model(tmp_path / "old.sbm", meta, old)
    finally:
        modelfile.VERSION = version
    assert modelfile.file_version(tmp_path / "old.sbm") == 1
    assert Model.load(tmp_path / "old.sbm").predict(test) == chunker.predict(test)
    proc = subprocess.run([sys.executable, "-m", "seqbil", "convert", str(tmp_path / "old.sbm"),
                           str(tmp_path / "conv.sbm"), "--precision", "float64"], cwd=tmp_path, env=ENV,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "non-zero weights kept, as float64" in proc.stderr
    converted = Model.load(tmp_path / "conv.sbm")
    assert modelfile.file_version(tmp_path / "conv.sbm") == modelfile.VERSION
    assert converted.predict(test) == chunker.predict(test)
    assert (tmp_path / "conv.sbm").stat().st_size < (tmp_path / "old.sbm").stat().st_size
    assert converted.training["conversions"][-1]["precision"] == "float64"


def test_convert_refuses_what_is_not_a_model(tmp_path):
    (tmp_path / "x.sbm").write_text("not a model")
    proc = subprocess.run([sys.executable, "-m", "seqbil", "convert", str(tmp_path / "x.sbm"), str(tmp_path / "y")],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True)
    assert proc.returncode != 0 and "not a seqbil model file" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "y").exists()
