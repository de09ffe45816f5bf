"""The online learners on threads: `seqbil train --jobs 2` against `--jobs 1`, the same
corpus, learner and settings (train_speed.py's: CoNLL-2000 with CRF++'s chunking
template, pku with the paper's setting), 20 epochs, the temperature given (1) so that
only the passes are compared.

Each run is its own process; the two alternate, REPEAT times (default 5). Per run: the
mean epoch (the per-epoch seconds of --log, the mix included), the training passes
(their sum), the whole process (end to end) and its peak RSS; the paired ratio of each
run's mean epoch with 2 threads to the one-thread run's beside it; test F1 (each
setting gives one model, so one score), and the one-thread run's test F1 at seeds
1 to SEEDS (default 3): the spread that the order of the sentences alone makes.
bcd makes its own passes (bcd_rounds x 2 x bcd_epochs, 20 by default), whatever
--epochs says. bol and bcd factor the 1st-order features: on CoNLL-2000 they read
the conll2000 config's own templates (CRF++'s chunking template has no 1st-order
ones).

Writes results/speed/train_jobs.json (the record) and train_jobs.md (its table).

    python benchmarks/train_jobs.py [--data DIR] [--repeat 5] [--seeds 3] [--corpora conll2000,pku]
                                    [--learners sp,pa,bol,arow,rpa,bcd]
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

from record import ROOT, byte_compile, eval_f1, find_corpus as find, header, run_measured, stats
from tables import publish
from train_speed import CORPORA, plain

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
JOBS = (1, 2)


# the bilinear learners factor the 1st-order features, which CRF++'s chunking template
# has none of (bol would train as sp, bcd refuses): on CoNLL-2000 they take the
# conll2000 config's own templates
BILINEAR = {"conll2000": ["--config", "conll2000"]}


def one_run(learner, jobs, corpus, train, work, epochs, seed=1):
    model, log = work / f"{learner}-{jobs}.sbm", work / f"{learner}-{jobs}.jsonl"
    options = BILINEAR.get(corpus, CORPORA[corpus][3]) if learner in ("bol", "bcd") else CORPORA[corpus][3]
    wall, peak, _ = run_measured(SEQBIL + ["train", *options, "--learner", learner, "--jobs", str(jobs),
                                           "--epochs", str(epochs), "--temperature", "1", "--train", str(train),
                                           "--seed", str(seed), "--model", str(model), "--log", str(log), "-q"])
    epochs_s = [json.loads(line)["seconds"] for line in log.read_text().splitlines()]
    return {"end_to_end_s": wall, "peak_rss_mib": peak, "passes_s": sum(epochs_s),
            "epoch_s": sum(epochs_s) / len(epochs_s)}, model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="corpora folder (default: data/, else ../shared/data)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--corpora", default="conll2000,pku")
    ap.add_argument("--learners", default="sp,pa,bol,arow,rpa,bcd")
    ap.add_argument("--seeds", type=int, default=3, help="the one-thread run's F1 at seeds 1 .. SEEDS")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed"))
    args = ap.parse_args()
    byte_compile()
    record = {**header(), "benchmark": "train_jobs", "epochs": args.epochs, "repeat": args.repeat, "corpora": {}}
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for corpus in args.corpora.split(","):
            folder, train_name, test_name, _, description = CORPORA[corpus]
            train, test = (plain(find(folder, name, args.data), work) for name in (train_name, test_name))
            rows = {}
            for learner in args.learners.split(","):
                runs, scores = {j: [] for j in JOBS}, {}
                for _ in range(args.repeat):
                    for jobs in JOBS:
                        measured, model = one_run(learner, jobs, corpus, train, work, args.epochs)
                        runs[jobs].append(measured)
                        scores.setdefault(jobs, eval_f1(model, test))
                row = {}
                for jobs in JOBS:
                    row[f"jobs{jobs}"] = {key: stats([r[key] for r in runs[jobs]]) for key in runs[jobs][0]}
                    row[f"jobs{jobs}"]["f1"] = scores[jobs]
                row["epoch_ratio"] = stats([b["epoch_s"] / a["epoch_s"] for a, b in zip(runs[1], runs[2])])
                row["seed_f1"] = [scores[1]] + [eval_f1(one_run(learner, 1, corpus, train, work, args.epochs,
                                                                seed)[1], test) for seed in range(2, args.seeds + 1)]
                rows[learner] = row
                print(f"{corpus} {learner}: epoch {row['jobs1']['epoch_s']['median']:.3f} s -> "
                      f"{row['jobs2']['epoch_s']['median']:.3f} s ({row['epoch_ratio']['median']:.2f}x), "
                      f"F1 {scores[1]:.2f} -> {scores[2]:.2f}", file=sys.stderr)
            record["corpora"][corpus] = {"description": description, "learners": rows}
    publish(out / "train_jobs.json", record)


if __name__ == "__main__":
    main()
