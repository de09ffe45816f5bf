"""Smoke test: every experiment script runs with --quick on the bundled samples and
writes its tables with the run details."""
import csv
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from test_cli import ENV

EXPERIMENTS = Path(__file__).resolve().parent.parent / "experiments"
CRF = importlib.util.find_spec("pycrfsuite") is not None
PLOTS = importlib.util.find_spec("matplotlib") is not None
CRFPP = bool(shutil.which("crf_learn") and shutil.which("crf_test"))


def rows(path):
    with open(path) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


@pytest.mark.parametrize("script, stem, n_rows", [
    ("table1.sh", "table1", 6 + 2 * CRF + 2 * CRFPP),
    ("figure1.sh", "curve", 3 * 2),
    ("figure2.sh", "convergence", 2 * 3 + 2 * 5 * CRF),
    ("figure3.sh", "curve", 3 * 2),
    ("power_iteration.sh", "power_iteration", 2 * 2),
])
def test_experiment_script_quick(tmp_path, script, stem, n_rows):
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(EXPERIMENTS / script), "--quick", "--out", str(out)], cwd=tmp_path,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"results go to {out}" in proc.stdout and f"wrote {out / stem}.md" in proc.stdout
    table = rows(out / f"{stem}.csv")
    assert len(table) == n_rows
    values = [float(r.get("f1") or r.get("dev_f1") or r["label_error_percent"]) for r in table]
    assert all(0 < v < 100 for v in values)
    text = (out / f"{stem}.md").read_text()
    for key in ("command: ", "seqbil: ", "machine: ", "--quick"):
        assert key in text and key in (out / f"{stem}.csv").read_text()
    if stem in ("curve", "convergence"):
        assert (out / f"{stem}.png").exists() == PLOTS
        assert PLOTS or "pip install 'seqbil[plots]'" in proc.stdout
    # a second run keeps the finished runs and rebuilds the same table
    again = subprocess.run(["bash", str(EXPERIMENTS / script), "--quick", "--out", str(out)], cwd=tmp_path,
                           env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0 and not [line for line in again.stdout.splitlines() if line.startswith("  ")]
    assert rows(out / f"{stem}.csv") == table


def test_unknown_option_is_an_error(tmp_path):
    proc = subprocess.run(["bash", str(EXPERIMENTS / "table1.sh"), "--quik"], cwd=tmp_path,
                          env={**ENV, "PYTHON": sys.executable}, capture_output=True, text=True)
    assert proc.returncode == 2 and "unknown option --quik" in proc.stderr
