"""experiments/rpa_synthetic.sh --quick: the CSV, its run record and the plots."""
import csv
import importlib.util
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLOTS = importlib.util.find_spec("matplotlib") is not None


def test_rpa_synthetic_quick(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(ROOT / "experiments" / "rpa_synthetic.sh"), "--quick", "--noise", "0,6",
                           "--out", str(out)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "drawn uniformly with replacement" in proc.stdout
    lines = (out / "rpa_synthetic.csv").read_text().splitlines()
    assert lines[0] == "noise_variance,pa,rpa"
    rows = list(csv.DictReader(lines))
    assert [r["noise_variance"] for r in rows] == ["0", "6"]
    # without noise the embedding separates the classes: both learners are perfect
    assert float(rows[0]["pa"]) == 1.0 and float(rows[0]["rpa"]) == 1.0
    record = json.loads((out / "rpa_synthetic.json").read_text())
    assert record["command"].startswith("experiments/rpa_synthetic.sh --quick --noise 0,6 --out ")
    assert record["machine"]["cores"] >= 1 and record["machine"]["cpu"]
    for row, point in zip(rows, record["points"]):
        for m in ("pa", "rpa"):
            assert len(point[m]["accuracy"]) == 2 and len(point[m]["chosen"]) == 2
            assert abs(sum(point[m]["accuracy"]) / 2 - float(row[m])) < 1e-4
            assert all(c["C"] in record["grid"]["C"] for c in point[m]["chosen"])
    if PLOTS:
        assert (out / "rpa_synthetic.png").stat().st_size > 0 and (out / "rpa_figure2.png").stat().st_size > 0
