"""What fitting the temperature costs a run with a named online learner: `seqbil
train --learner LEARNER` as a user runs it (no dev set: the temperature fitted on the
last tenth of the training sentences by a held-out run) against the same run with
`--temperature 1` (no held-out run), on the corpora and configs of calibration.py
(CoNLL-2000 with configs/conll2000.toml, pku with configs/cws.toml), 20 epochs.

Each run is its own process; the two alternate, REPEAT times (default 5). Per run: wall
seconds of the whole process, its CPU seconds (user and system, all threads), its peak
RSS; the paired ratios of wall and CPU seconds (fitted over temperature 1, run by
run); the fitted run's temperature and test F1 (each setting gives one model).

Writes results/speed/calibration_cost.json (the record) and calibration_cost.md.

    python benchmarks/calibration_cost.py [--data DIR] [--repeat 5] [--corpora conll2000,pku] [--learners sp,bol]
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from calibration import CORPORA
from record import ROOT, byte_compile, eval_f1, find_corpus as find, header, run_measured, stats
from tables import publish
from train_speed import plain

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
MODES = ("fitted", "t1")


def one_run(learner, mode, config, train, work):
    model = work / f"{learner}-{mode}.sbm"
    wall, peak, _, cpu = run_measured(SEQBIL + ["train", "--config", config, "--learner", learner, "--train",
                                                str(train), "--model", str(model), "-q",
                                                *(["--temperature", "1"] if mode == "t1" else [])], cpu=True)
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": peak}, model


def temperature_of(model):
    out = subprocess.run(SEQBIL + ["inspect", str(model), "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["temperature"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="corpora folder (default: data/, else ../shared/data)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--corpora", default="conll2000,pku")
    ap.add_argument("--learners", default="sp,bol")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed"))
    args = ap.parse_args()
    byte_compile()
    record = {**header(), "benchmark": "calibration_cost", "repeat": args.repeat, "corpora": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for corpus in args.corpora.split(","):
            config, folder, train_name, test_name = CORPORA[corpus]
            train, test = (plain(find(folder, name, args.data), work) for name in (train_name, test_name))
            rows = {}
            for learner in args.learners.split(","):
                runs, row = {mode: [] for mode in MODES}, {}
                for _ in range(args.repeat):
                    for mode in MODES:
                        measured, model = one_run(learner, mode, config, train, work)
                        runs[mode].append(measured)
                        if mode not in row:
                            row[mode] = {"f1": eval_f1(model, test), "temperature": temperature_of(model)}
                for mode in MODES:
                    row[mode].update({key: stats([r[key] for r in runs[mode]]) for key in runs[mode][0]})
                for key in ("wall_s", "cpu_s"):
                    row[f"{key}_ratio"] = stats([a[key] / b[key] for a, b in zip(runs["fitted"], runs["t1"])])
                rows[learner] = row
                print(f"{corpus} {learner}: wall {row['wall_s_ratio']['median']:.2f}x, "
                      f"CPU {row['cpu_s_ratio']['median']:.2f}x, T {row['fitted']['temperature']:.4g}",
                      file=sys.stderr)
            record["corpora"][corpus] = {"config": config, "train_file": train_name, "test_file": test_name,
                                         "learners": rows}
    publish(Path(args.out) / "calibration_cost.json", record)


if __name__ == "__main__":
    main()
