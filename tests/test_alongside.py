"""The held-out run of a named online learner's temperature, on a second thread beside
the final run: the same model as the two runs one after the other."""
import numpy as np
import pytest

import seqbil
from seqbil import params, training
from seqbil.errors import InputError
from seqbil.training import alongside
from test_selection import conll_rows


def _train(rows, free_cores, monkeypatch, **options):
    monkeypatch.setattr(training.selection, "CV_TOKENS", 0)  # a held-out tenth, not cross-validation
    monkeypatch.setattr(alongside, "cores", lambda: free_cores)
    lines = []
    model = seqbil.train(rows, config="conll2000", epochs=3, echo=lines.append, **options)
    return model, lines


@pytest.mark.parametrize("learner", ["sp", "bol", "pa"])
def test_the_temperature_beside_the_run_is_the_one_after_it(learner, monkeypatch):
    rows = conll_rows(60)
    after, said_after = _train(rows, 1, monkeypatch, learner=learner)
    beside, said_beside = _train(rows, 2, monkeypatch, learner=learner)
    assert not any("second thread" in line for line in said_after)
    assert said_beside[0] == "choosing the temperature on a held-out tenth beside the run, on a second thread"
    assert beside.temperature == after.temperature != 1.0
    assert beside.training["selection"] == after.training["selection"]
    assert set(beside.weights) == set(after.weights)
    for name, w in after.weights.items():
        np.testing.assert_array_equal(np.asarray(beside.weights[name]), np.asarray(w))
    # what the held-out run says comes in one piece, before the model is saved
    fitted = [i for i, line in enumerate(said_beside) if line.startswith("temperature ")]
    choosing = [i for i, line in enumerate(said_beside) if line.startswith("choosing the temperature on the last")]
    assert len(fitted) == len(choosing) == 1 and fitted[0] == choosing[0] + 1


def test_what_goes_beside_the_run(monkeypatch):
    monkeypatch.setattr(alongside, "cores", lambda: 2)

    def fits(dev=None, **options):
        return alongside.fits_alongside(params.Settings.of(params.resolve(params.find_config("conll2000"),
                                                                          options)), dev)
    assert fits(learner="sp") and fits(learner="bol") and fits(learner="arow")
    assert not fits(learner="crf")  # a CRF's probabilities need no temperature
    assert not fits(learner="auto")  # the learner is chosen there too: before the run
    assert not fits(learner="sp", temperature=2.0)
    assert not fits(learner="sp", dev="dev.txt")  # fitted on the dev set after the run
    assert not fits(learner="sp", jobs=2) and not fits(learner="sp", jobs=0)  # no core left
    assert not fits(learner="bol", jobs=2) and not fits(learner="bcd", jobs=2)
    monkeypatch.setattr(alongside, "cores", lambda: 1)
    assert not fits(learner="sp")


def test_an_error_of_the_held_out_run_is_the_runs(monkeypatch):
    def fails(*args, **kwargs):
        raise InputError("train.txt", 3, "a bad line")
    monkeypatch.setattr(alongside, "select", fails)
    with pytest.raises(InputError, match="a bad line"):
        _train(conll_rows(30), 2, monkeypatch, learner="sp")


def test_a_held_out_run_stopped_leaves_temperature_1(monkeypatch):
    monkeypatch.setattr(alongside, "select", lambda settings, *args, **kwargs: (settings, ("stopped",), {}))
    model, lines = _train(conll_rows(30), 2, monkeypatch, learner="sp")
    assert model.temperature == 1.0 and "selection" not in model.training
    assert "temperature 1: the held-out run beside the run was interrupted" in lines


@pytest.mark.parametrize("free_cores", [1, 2])
def test_a_run_stopped_and_resumed_fits_the_temperature_of_the_whole_run(free_cores, monkeypatch, tmp_path):
    """A Ctrl-C stops the held-out run beside the final one too: the checkpoint has no
    temperature, and the resumed run fits it, as the run never stopped does."""
    from test_reliability import interrupt_after
    from seqbil.samples import sample_path
    monkeypatch.setattr(alongside, "cores", lambda: free_cores)
    options = {"config": "sighan2005", "learner": "sp", "epochs": 4}
    data = str(sample_path("pku_train.utf8"))
    whole, part, ckpt = tmp_path / "whole.sbm", tmp_path / "part.sbm", tmp_path / "part.ckpt"
    seqbil.train(data, model=str(whole), **options)
    seqbil.train(data, model=str(part), checkpoint_every=100, checkpoint=str(ckpt), echo=interrupt_after(2),
                 **options)
    seqbil.resume(str(ckpt), str(part))
    assert part.read_bytes() == whole.read_bytes()
    assert seqbil.load(str(whole)).temperature != 1.0
