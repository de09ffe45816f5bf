import pickle

import numpy as np
import pytest

from seqbil.errors import ModelFileError
from seqbil.model import Model
from seqbil.modelfile import read_model, write_model
import seqbil
from seqbil.formats import read_corpus


@pytest.fixture(scope="module")
def trained(tmp_path_factory, ):
    from seqbil.samples import sample_path
    path = tmp_path_factory.mktemp("m") / "m.sbm"
    model = seqbil.train(sample_path("conll2000_train.txt"), config="conll2000", epochs=2, model=str(path))
    return model, path


def test_save_load_predicts_identically(trained):
    from seqbil.samples import sample_path
    model, path = trained
    sentences = read_corpus(model.format, sample_path("conll2000_test.txt"), "utf-8")
    loaded = Model.load(path)
    assert loaded.labels == model.labels and loaded.kind == model.kind
    for name, array in model.weights.items():
        np.testing.assert_array_equal(loaded.weights[name], array)
    assert loaded.predict(sentences) == model.predict(sentences)


def test_arrays_and_meta_round_trip(tmp_path):
    arrays = {"a": np.arange(5, dtype=np.int32), "b": np.ones((2, 3)), "empty": np.zeros(0, np.uint8)}
    write_model(tmp_path / "x.sbm", {"k": "v", "ü": [1, 2]}, arrays)
    meta, back = read_model(tmp_path / "x.sbm")
    assert meta == {"k": "v", "ü": [1, 2]}
    for name in arrays:
        np.testing.assert_array_equal(back[name], arrays[name])
        assert back[name].dtype == arrays[name].dtype


def damaged(path, tmp_path, how):
    data = bytearray(path.read_bytes())
    out = tmp_path / f"bad-{how}.sbm"
    if how == "truncated":
        data = data[: len(data) // 2]
    elif how == "flipped":
        data[len(data) - 100] ^= 0x40
    elif how == "header":
        data[30] ^= 0x01
    elif how == "newer":
        data[8] = 99
    elif how == "pickle":
        data = pickle.dumps({"weights": [1, 2, 3]})
    elif how == "empty":
        data = b""
    elif how == "text":
        data = b"He PRP B-NP\n"
    out.write_bytes(bytes(data))
    return out


@pytest.mark.parametrize("how, message", [
    ("truncated", "truncated or corrupt"), ("flipped", "checksum"), ("header", "checksum"),
    ("newer", "newer than this seqbil"), ("pickle", "pickle"), ("empty", "empty file"), ("text", "not a seqbil model"),
])
def test_damaged_files_give_clear_errors(trained, tmp_path, how, message):
    _, path = trained
    with pytest.raises(ModelFileError, match=message):
        Model.load(damaged(path, tmp_path, how))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(ModelFileError, match="cannot read"):
        Model.load(tmp_path / "nope.sbm")
    with pytest.raises(ModelFileError, match="directory"):
        Model.load(tmp_path)


def test_failed_write_keeps_the_previous_file(trained, tmp_path):
    model, path = trained
    target = tmp_path / "keep.sbm"
    target.write_bytes(path.read_bytes())
    bad = {"x": np.zeros(3, dtype=np.float32)}  # unsupported dtype: fails before the rename
    with pytest.raises(ValueError):
        write_model(target, {}, bad)
    assert target.read_bytes() == path.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["keep.sbm"]
