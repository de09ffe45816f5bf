"""Model files written by seqbil 0.1 (values-first field ids, `evaluation` instead of
`metric`) load and tag as they did."""
import seqbil
from seqbil.features import index as index_module
from seqbil.formats import read_corpus
from seqbil.model import Model
from seqbil.modelfile import read_model, write_model
from seqbil.samples import sample_path


def test_old_layout_and_old_header_load(tmp_path, monkeypatch):
    monkeypatch.setattr(index_module, "LAYOUT", "values-first")
    model = seqbil.train(str(sample_path("conll2000_train.txt")), config="conll2000", learner="bol", epochs=2,
                         model=str(tmp_path / "new.sbm"))
    assert model.index.layout == "values-first"
    meta, arrays = read_model(tmp_path / "new.sbm")
    assert "index_layout" not in meta  # as 0.1 wrote them
    corpus = dict(meta["corpus"])
    corpus["evaluation"] = corpus.pop("metric")
    corpus.pop("scheme")
    write_model(tmp_path / "old.sbm", {**meta, "corpus": corpus}, dict(arrays))
    monkeypatch.setattr(index_module, "LAYOUT", "boundaries-first")
    old = Model.load(tmp_path / "old.sbm")
    assert old.index.layout == "values-first" and old.corpus["metric"] == "chunk"
    test = read_corpus(old.format, sample_path("conll2000_test.txt"))
    assert old.predict(test) == model.predict(test)
    fresh = seqbil.train(str(sample_path("conll2000_train.txt")), config="conll2000", learner="bol", epochs=2)
    assert fresh.index.layout == "boundaries-first"
    assert fresh.predict(test) == model.predict(test)  # the numbering of ids changes no score
