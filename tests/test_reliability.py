"""Interrupted and resumed training, and kills at random moments."""
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from seqbil.errors import ModelFileError
from seqbil.model import Model
import seqbil
from seqbil.samples import sample_path
from test_cli import ENV



def interrupt_after(passes):
    """An echo that sends this process SIGINT once the given number of passes is done."""
    done = []

    def echo(line):
        if line.startswith(("epoch ", "round ")):
            done.append(line)
            if len(done) == passes:
                os.kill(os.getpid(), signal.SIGINT)
    return echo


@pytest.mark.parametrize("learner, extra", [
    ("sp", {}), ("bol", {}), ("bol", {"rank1": "global", "averaged": True}), ("bcd", {"bcd_rounds": 1}),
])
def test_interrupted_and_resumed_run_gives_the_same_model_bytes(tmp_path, learner, extra):
    options = {"config": "sighan2005", "learner": learner, "epochs": 4, **extra}
    data = str(sample_path("pku_train.utf8"))
    whole = tmp_path / "whole.sbm"
    seqbil.train(data, model=str(whole), **options)
    part, ckpt = tmp_path / "part.sbm", tmp_path / "part.ckpt"
    seqbil.train(data, model=str(part), checkpoint_every=100, checkpoint=str(ckpt), echo=interrupt_after(2),
                 **options)
    assert Model.load(part).training["passes_run"] == 2
    seqbil.resume(str(ckpt), str(part))
    assert part.read_bytes() == whole.read_bytes()


def test_resume_can_extend_the_epochs(tmp_path):
    data = str(sample_path("pku_train.utf8"))
    seqbil.train(data, config="sighan2005", learner="sp", epochs=3, model=str(tmp_path / "whole.sbm"))
    seqbil.train(data, config="sighan2005", learner="sp", epochs=2, model=str(tmp_path / "part.sbm"),
                 checkpoint_every=1)
    seqbil.resume(str(tmp_path / "part.sbm.ckpt"), str(tmp_path / "part.sbm"), epochs=3)
    assert (tmp_path / "part.sbm").read_bytes() == (tmp_path / "whole.sbm").read_bytes()


def test_resume_refuses_other_data(tmp_path):
    src = tmp_path / "train.utf8"
    src.write_text(sample_path("pku_train.utf8").read_text(encoding="utf-8"), encoding="utf-8")
    seqbil.train(str(src), config="sighan2005", epochs=1, model=str(tmp_path / "m.sbm"), checkpoint_every=1)
    src.write_text("中国  人民\n", encoding="utf-8")
    with pytest.raises(seqbil.SeqbilError, match="differs from the data of checkpoint"):
        seqbil.resume(str(tmp_path / "m.sbm.ckpt"), str(tmp_path / "m.sbm"), epochs=2)


def start_training(tmp_path, model, epochs=200, extra=()):
    return subprocess.Popen([sys.executable, "-m", "seqbil", "train", "--config", "sighan2005", "--epochs",
                             str(epochs), "--model", str(model), *extra], cwd=tmp_path, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_for_line(proc, text, timeout=60):
    deadline = time.time() + timeout
    lines = []
    while time.time() < deadline:
        line = proc.stderr.readline()
        lines.append(line)
        if text in line:
            return lines
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"never saw {text!r}: {''.join(lines)}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_saves_the_last_epoch_and_says_where(tmp_path, sig):
    model = tmp_path / "m.sbm"
    proc = start_training(tmp_path, model, extra=["-q", "--checkpoint-every", "1000"])
    wait_for_line(proc, "epoch 2/200")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "interrupted: stopping after epoch" in err and f"model saved to {model}" in err
    assert f"checkpoint saved to {model}.ckpt" in err
    assert Model.load(model).training["passes_run"] >= 2


def test_kill_9_never_leaves_a_broken_model(tmp_path):
    """Kill a training run at random moments: the model file on disk is always the
    previous complete one or the new one."""
    model = tmp_path / "m.sbm"
    first = start_training(tmp_path, model, epochs=1)
    first.communicate(timeout=120)
    before = model.read_bytes()
    rng = np.random.default_rng(7)
    outcomes = set()
    for delay in rng.uniform(0.0, 2.5, size=8):
        proc = start_training(tmp_path, model, epochs=int(rng.integers(1, 4)))
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        try:
            Model.load(model)
        except ModelFileError as exc:
            raise AssertionError(f"model broken after kill at {delay:.2f} s: {exc}")
        outcomes.add("old" if model.read_bytes() == before else "new")
        before = model.read_bytes()
        leftovers = [p.name for p in tmp_path.iterdir() if ".tmp" in p.name]
        for name in leftovers:  # a killed writer may leave its temporary file, never the model
            os.unlink(tmp_path / name)
    assert outcomes  # at least one kill happened; which outcomes occur depends on timing
