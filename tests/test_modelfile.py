import errno
import os
import pickle
import re

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
    ("truncated", r"file is \d+ bytes, the header says \d+ \(truncated or corrupt\)"),
    ("flipped", "payload checksum mismatch"), ("header", "header checksum mismatch"),
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


class DiskFullAfter:
    """A file object that takes `limit` bytes in all, then fails as a full disk does."""

    def __init__(self, f, limit, on_full):
        self.f, self.room, self.on_full = f, limit, on_full

    def write(self, data):
        data = memoryview(data).cast("B")
        if len(data) > self.room:
            self.f.write(data[:self.room])
            self.f.flush()
            self.on_full()
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        return self.f.write(data)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self.f.__exit__(*exc)

    def __getattr__(self, name):
        return getattr(self.f, name)


def test_failed_write_keeps_the_previous_file(trained, tmp_path, monkeypatch):
    """The disk fills up halfway through saving over a model: the previous file stays as
    it was, the half-written temporary file is removed, and that half-written file, had it
    been left under the model's name, would be refused as truncated."""
    model, path = trained
    good = path.read_bytes()
    target = tmp_path / "keep.sbm"
    target.write_bytes(good)
    at_failure = {}

    def on_full():  # the directory as the failed write sees it
        at_failure.update({p.name: p.read_bytes() for p in tmp_path.iterdir()})

    fdopen = os.fdopen
    monkeypatch.setattr(os, "fdopen", lambda *a, **k: DiskFullAfter(fdopen(*a, **k), len(good) // 2, on_full))
    with pytest.raises(OSError, match=os.strerror(errno.ENOSPC)):
        model.save(target)
    monkeypatch.undo()
    assert at_failure.pop("keep.sbm") == good  # written beside the model, never over it
    [(name, half)] = at_failure.items()
    assert ".tmp" in name and half == good[:len(good) // 2]  # the same model, cut short
    assert target.read_bytes() == good
    assert [p.name for p in tmp_path.iterdir()] == ["keep.sbm"]
    Model.load(target)
    (tmp_path / "half.sbm").write_bytes(half)
    with pytest.raises(ModelFileError, match=re.escape(f"half.sbm: file is {len(good) // 2} bytes, the header "
                                                       f"says {len(good)} (truncated or corrupt)")):
        Model.load(tmp_path / "half.sbm")


def test_unsupported_dtype_is_refused_before_anything_is_written(trained, tmp_path):
    _, path = trained
    target = tmp_path / "keep.sbm"
    target.write_bytes(path.read_bytes())
    with pytest.raises(ValueError, match="array x: unsupported dtype <f2"):
        write_model(target, {}, {"x": np.zeros(3, dtype=np.float16)})
    assert target.read_bytes() == path.read_bytes()
    assert [p.name for p in tmp_path.iterdir()] == ["keep.sbm"]
