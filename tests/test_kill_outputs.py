"""SIGKILL of the commands that write files other than a trained model in one process
(`convert`, `tag --output`, `tag --output-dir` on a local Dask cluster, `aso --out
--vectors`, and training on shards, `train --shards` on a local Dask cluster), at
moments spread over their run: every output on disk is, byte for byte, what a complete
run wrote before or what the killed run would have written, never a truncated or
mixed file. Only hidden or temporary files may be left beside them."""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import seqbil
from seqbil.samples import sample_path
from test_cli import ENV

FRACTIONS = (0.05, 0.3, 0.55, 0.8, 0.95, 1.5)  # of a whole run's duration


def run_to_end(cmd, cwd):
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    return time.perf_counter() - start


def kill_at(cmd, cwd, delay):
    """Start cmd in a session of its own and SIGKILL the whole session after delay
    seconds (the workers of a local cluster too, as when the machine goes)."""
    proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait(timeout=60)


def snapshot(paths):
    """What each output holds: its bytes; for a seqbil container (.sbs, .sbm), its checked
    arrays and header less the seconds the run took (which two runs never share)."""
    return {p.name: (content(p) if p.suffix in (".sbs", ".sbm") else p.read_bytes()) if p.exists() else None
            for p in paths}


def content(path):
    from seqbil.modelfile import read_model

    def timeless(x):
        if isinstance(x, dict):
            return {k: timeless(v) for k, v in x.items() if k != "seconds"}
        return [timeless(v) for v in x] if isinstance(x, list) else x
    meta, arrays = read_model(path)  # (the checksums too: a torn file fails here)
    return json.dumps(timeless(meta), sort_keys=True).encode() + b"".join(
        name.encode() + a.tobytes() for name, a in sorted(arrays.items()))


def check_kills(tmp_path, commands, outputs):
    """commands[v]: the command that writes variant v (1 or 2) of the outputs. Each
    output, after every kill, holds one of the two complete variants (None: absent).
    Returns what the kills left: "old" (the previous output) and "new" (the killed
    run's, complete)."""
    complete = {}
    durations = []
    for v in (2, 1):  # variant 1 last: it is on disk when the kills begin
        durations.append(run_to_end(commands[v], tmp_path))
        complete[v] = snapshot(outputs)
    assert complete[1] != complete[2] and all(x is not None for x in complete[1].values())
    inputs = {p for p in tmp_path.rglob("*") if p.is_file()}
    on_disk = dict(complete[1])
    seen = set()
    for k, fraction in enumerate(FRACTIONS):
        v = 2 if k % 2 == 0 else 1
        kill_at(commands[v], tmp_path, fraction * max(durations))
        now = snapshot(outputs)
        for name, data in now.items():
            allowed = {on_disk[name], complete[v][name]}
            assert data in allowed, f"{name} after a kill at {fraction} of a run: neither output"
            seen.add("new" if data == complete[v][name] != on_disk[name] else "old")
        on_disk = now
        for p in tmp_path.rglob("*"):  # what a killed writer may leave: its hidden or temporary files
            if p.is_file() and p not in inputs:
                assert p.name.startswith(".") or ".tmp" in p.name or ".part" in p.name, p.name
    return seen


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("kill_models")
    for seed in (1, 2):
        seqbil.train(config="conll2000", learner="sp", epochs=2, seed=seed).save(folder / f"m{seed}.sbm")
    return folder


def seqbil_cmd(*args):
    return [sys.executable, "-m", "seqbil", *map(str, args)]


def test_convert_killed(models, tmp_path):
    out = tmp_path / "out.sbm"
    commands = {v: seqbil_cmd("convert", models / f"m{v}.sbm", out, "--precision", "float64") for v in (1, 2)}
    assert check_kills(tmp_path, commands, [out]) >= {"old"}


def test_tag_output_killed(models, tmp_path):
    text = tmp_path / "in.txt"
    text.write_bytes(sample_path("conll2000_test.txt").read_bytes() * 20)
    out = tmp_path / "out.txt"
    commands = {v: seqbil_cmd("tag", "-m", models / f"m{v}.sbm", text, "-o", out) for v in (1, 2)}
    assert check_kills(tmp_path, commands, [out]) >= {"old"}


def test_tag_output_dir_killed(models, tmp_path):
    pytest.importorskip("distributed")
    data = sample_path("conll2000_test.txt").read_bytes()
    for name in ("one.txt", "two.txt"):
        (tmp_path / name).write_bytes(data * 3)
    out = tmp_path / "out"
    commands = {v: seqbil_cmd("tag", "-m", models / f"m{v}.sbm", "--output-dir", out, "--workers", "2",
                              "--partition-mb", "0.05", "--overwrite", "one.txt", "two.txt") for v in (1, 2)}
    assert check_kills(tmp_path, commands, [out / "one.txt", out / "two.txt"]) >= {"old"}


def test_aso_killed(tmp_path):
    text = tmp_path / "raw.txt"
    words = [line.split()[0] for line in sample_path("conll2000_train.txt").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    text.write_text("\n".join(" ".join(words[i:i + 20]) for i in range(0, len(words), 20)) + "\n", encoding="utf-8")
    out, vec = tmp_path / "s.sbs", tmp_path / "s.vec"
    commands = {v: seqbil_cmd("aso", "--unlabeled", text, "--out", out, "--vectors", vec, "--targets", "40",
                              "--dim", str(3 + v), "--aux-epochs", "2", "-q") for v in (1, 2)}
    assert check_kills(tmp_path, commands, [out, vec]) >= {"old"}


def test_train_on_shards_killed(tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "m.sbm"
    commands = {v: seqbil_cmd("train", "--learner", "sp", "--epochs", "4", "--seed", v, "--shards", "2",
                              "--workers", "2", "--model", out, "-q") for v in (1, 2)}
    assert check_kills(tmp_path, commands, [out]) >= {"old"}
