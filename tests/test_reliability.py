"""Interrupted and resumed training, and kills before, while and after the model is saved."""
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from seqbil.model import Model
import seqbil
from seqbil.samples import sample_path
from test_cli import ENV



def interrupt_after(passes):
    """An echo that sends this process SIGINT once the given number of passes is done."""
    done = []

    def echo(line):
        if line.startswith(("epoch ", "round ", "iteration ")):
            done.append(line)
            if len(done) == passes:
                os.kill(os.getpid(), signal.SIGINT)
    return echo


@pytest.mark.parametrize("learner, extra", [
    ("sp", {}), ("bol", {}), ("bol", {"rank1": "global", "averaged": True}), ("bcd", {"bcd_rounds": 1}),
    ("crf", {"c2": 0.5}), ("crf", {"c1": 0.2, "c2": 0.1}),
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


def test_resume_on_the_command_line_writes_the_runs_own_model(tmp_path, monkeypatch):
    """`seqbil train --resume M.sbm.ckpt` without --model finishes M.sbm, as the
    uninterrupted run would have, and writes no model.sbm."""
    from pathlib import Path
    from click.testing import CliRunner
    from seqbil.cli import main
    monkeypatch.chdir(tmp_path)
    data = str(sample_path("pku_train.utf8"))
    seqbil.train(data, config="sighan2005", learner="sp", epochs=3, model="whole.sbm")
    seqbil.train(data, config="sighan2005", learner="sp", epochs=2, model="part.sbm", checkpoint_every=1)
    r = CliRunner().invoke(main, ["train", "--resume", "part.sbm.ckpt", "--epochs", "3", "-q"])
    assert r.exit_code == 0, r.output
    assert Path("part.sbm").read_bytes() == Path("whole.sbm").read_bytes() and not Path("model.sbm").exists()


def test_resume_writes_its_checkpoints_where_it_is_told(tmp_path):
    """--resume X --checkpoint OTHER: the checkpoints of the continued run go to OTHER,
    and X stays as it was; the model is the uninterrupted run's."""
    from click.testing import CliRunner
    from seqbil.cli import main
    data = str(sample_path("pku_train.utf8"))
    seqbil.train(data, config="sighan2005", learner="sp", epochs=3, model=str(tmp_path / "whole.sbm"))
    seqbil.train(data, config="sighan2005", learner="sp", epochs=1, model=str(tmp_path / "part.sbm"),
                 checkpoint_every=1)
    first = tmp_path / "part.sbm.ckpt"
    before = first.read_bytes()
    r = CliRunner().invoke(main, ["train", "--resume", str(first), "--epochs", "3", "--model",
                                  str(tmp_path / "part.sbm"), "--checkpoint", str(tmp_path / "other.ckpt"), "-q"])
    assert r.exit_code == 0, r.output
    assert first.read_bytes() == before and (tmp_path / "other.ckpt").exists()
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
    wait_for_line(proc, "epoch 2/200: ")
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err  # saved, and told apart from a finished run
    stopped = re.findall(r"interrupted: stopping after epoch (\d+)/200", err)
    assert len(stopped) == 1 and f"model saved to {model}" in err, err
    assert f"checkpoint saved to {model}.ckpt" in err
    # the model saved is the one of the epoch the message names, the second or a later one
    assert Model.load(model).training["passes_run"] == int(stopped[0]) >= 2


def files(directory):
    """name: (inode, size, modification time) of each entry of a directory."""
    state = {}
    for entry in os.scandir(directory):
        try:
            st = entry.stat()
        except FileNotFoundError:  # renamed or removed meanwhile
            continue
        state[entry.name] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return state


def test_kill_9_never_leaves_a_broken_model(tmp_path):
    """SIGKILL training runs before, while and after they save the model: the file on
    disk is always, byte for byte, the previous complete model or the new complete one
    (what an uninterrupted run with the same options writes), never a truncated or mixed
    file, and never missing."""
    model, work = tmp_path / "m.sbm", tmp_path / "work"
    work.mkdir()
    complete = {}  # seed: the bytes a whole 2-epoch run writes; the two seeds give two models
    for seed in (1, 2):
        proc = start_training(tmp_path, work / "m.sbm", epochs=2, extra=["-q", "--seed", str(seed)])
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        complete[seed] = (work / "m.sbm").read_bytes()
    assert complete[1] != complete[2]
    model.write_bytes(complete[1])
    on_disk = 1
    # before: the first of 1000 epochs is done, and the model is saved after the last one.
    # writing: the last epoch is done, and the run has just started writing in the model's
    # directory (a temporary file, or the model itself), the kill coming DELAY s later
    # (the write and its fsync take some 10 to 20 ms).
    # after: the run has said it saved the model.
    plan = [("before", 0), ("writing", 0), ("writing", 0.003), ("after", 0), ("writing", 0.001),
            ("before", 0), ("writing", 0.006), ("writing", 0), ("writing", 0.012), ("after", 0)]
    seen = []
    for when, delay in plan:
        seed = 3 - on_disk  # the model this run would write differs from the one on disk
        state = files(tmp_path)
        proc = start_training(tmp_path, model, epochs=1000 if when == "before" else 2,
                              extra=["-q", "--seed", str(seed)])
        if when == "before":
            wait_for_line(proc, "epoch 1/1000: ")
        elif when == "writing":
            wait_for_line(proc, "epoch 2/2: ")
            while files(tmp_path) == state and proc.poll() is None:
                pass
            time.sleep(delay)
        else:
            wait_for_line(proc, f"model saved to {model}")
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        data = model.read_bytes()
        if data == complete[on_disk]:
            seen.append((when, delay, "old"))
        elif data == complete[seed]:
            seen.append((when, delay, "new"))
            on_disk = seed
        else:
            raise AssertionError(f"killed {when} ({delay} s), after {seen}: the model file is neither the "
                                 f"previous model nor the new one ({len(data)} bytes)")
        Model.load(model)
        for p in tmp_path.iterdir():  # a killed writer may leave its temporary file, never the model
            if p not in (model, work):
                assert ".tmp" in p.name, p.name
                p.unlink()
    outcomes = {when: {outcome for w, _, outcome in seen if w == when} for when, _ in plan}
    assert outcomes["before"] == {"old"} and outcomes["after"] == {"new"}, seen
