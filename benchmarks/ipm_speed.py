"""Training by iterative parameter mixing (`seqbil train --shards K`) against training in
one process, on the SIGHAN 2005 pku training set, in one run.

    python benchmarks/ipm_speed.py [--data DIR] [--repeat 5] [--shards 2] [--learners sp bol]

For each learner, with configs/sighan2005.toml's templates and epochs and temperature 1
(a run on shards fits none: it has no held-out tenth): training in
one process and on K shards (a local Dask cluster of K workers, uniform mixing) run
REPEAT times each as whole processes, alternating: the command's wall time (raw file
in, model out, cluster start-up included) and the seconds of an epoch (from --log:
for the shards, the passes, the messages both ways and the mix). Once each: mixing by
mistakes, and one shard (the model of one process, made on a worker: the cost of the
machinery alone). Per epoch of the sharded runs (first run): the bytes the shards send
(the entries they changed), the bytes of the mix sent back to each shard, and where
the epoch's time goes (the slowest shard's pass, the rest of its work, the mix on the
driver; the remainder is the messages). Test F1 of every
setting (`seqbil eval`). Writes results/speed/ipm.json and ipm.md.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, eval_f1, find_corpus, header, run_measured, stats  # noqa: E402
from tables import publish  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]


def one_run(options, train, work):
    """(wall, [per-epoch log records], model path) of one training process."""
    model, log = work / "model.sbm", work / "log.jsonl"
    # temperature 1 in both: a run on shards fits none (it has no held-out tenth), so
    # one process does not either (the same work)
    wall, _, _ = run_measured(SEQBIL + ["train", "-q", "--config", "sighan2005", "--temperature", "1", *options,
                                        "--train", str(train), "--model", str(model), "--log", str(log)])
    return wall, [json.loads(line) for line in log.read_text().splitlines() if line.strip()], model


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with sighan2005/ (default: data/, else ../shared/data)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--shards", type=int, default=2)
    ap.add_argument("--learners", nargs="+", default=["sp", "bol"])
    ap.add_argument("--epochs", type=int, help="default: the config's")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "ipm.json"))
    args = ap.parse_args()
    train = find_corpus("sighan2005", "pku_training.approx.utf8", args.data)
    test = find_corpus("sighan2005", "pku_test_gold.utf8", args.data)
    K = args.shards
    record = {**header(), "benchmark": "ipm_speed", "repeat": args.repeat, "shards": K, "rows": []}
    epochs = ["--epochs", str(args.epochs)] if args.epochs else []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for learner in args.learners:
            base = ["--learner", learner, *epochs]
            timed = {"one process": base, f"{K} shards": base + ["--shards", str(K), "--workers", str(K)]}
            once = {f"{K} shards, mixing by mistakes": base + ["--shards", str(K), "--workers", str(K), "--mixing",
                                                               "mistakes"],
                    "1 shard": base + ["--shards", "1", "--workers", "1"]}
            runs, scores = {name: [] for name in (*timed, *once)}, {}
            for run in range(args.repeat):
                for name, options in timed.items():
                    print(f"ipm_speed: {learner}, {name}, run {run + 1} of {args.repeat}", file=sys.stderr)
                    wall, log, model = one_run(options, train, work)
                    runs[name].append((wall, log))
                    scores.setdefault(name, eval_f1(model, test))  # deterministic: the first run's
            for name, options in once.items():
                print(f"ipm_speed: {learner}, {name}", file=sys.stderr)
                wall, log, model = one_run(options, train, work)
                runs[name].append((wall, log))
                scores[name] = eval_f1(model, test)
            serial_epoch = None
            for name, measured in runs.items():
                walls = [m[0] for m in measured]
                epoch_s = [sum(r["seconds"] for r in m[1]) / len(m[1]) for m in measured]
                log = measured[0][1]
                row = {"learner": learner, "system": name, "runs": len(measured), "wall_s": stats(walls),
                       "epoch_s": stats(epoch_s), "epochs": len(log), "f1": scores[name],
                       "seconds_per_epoch": stats([r["seconds"] for r in log])}  # over the first run's epochs
                if "mixing" in log[0]:  # per epoch of the first run: what travels, and where the time goes
                    per = [r["mixing"] for r in log]
                    row.update({f"{key}_per_epoch": stats([p[key] for p in per])
                                for key in ("delta_bytes", "mixed_bytes", "entries_mixed", "pass_s", "shard_s",
                                            "mix_s", "epoch_s")})
                if name == "one process":
                    serial_epoch, serial_f1 = row["epoch_s"]["median"], row["f1"]
                row["epoch_vs_one_process"] = row["epoch_s"]["median"] / serial_epoch
                row["f1_vs_one_process"] = row["f1"] - serial_f1
                record["rows"].append(row)
    publish(args.out, record)


if __name__ == "__main__":
    main()
