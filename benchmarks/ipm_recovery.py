"""Training by iterative parameter mixing that loses a machine: `seqbil train --shards 3`
on the SIGHAN 2005 pku training set against a Dask cluster of a scheduler and three
workers (`dask scheduler`, `dask worker`, each worker with its nanny in a process group
of its own), one of which is killed, nanny and worker, with SIGKILL at a random moment.

    python benchmarks/ipm_recovery.py [--data DIR] [--moments 5] [--driver-moments 2] [--learners sp bol]
                                      [--seed 1]

For each learner: one undisturbed run, then MOMENTS runs each on a fresh cluster, with
the second worker killed after a random number of epochs (1 to epochs - 2, from
--log) plus a random part of a second: the run must finish, with the weights of the
undisturbed run (compared array by array), and say which shard it read again where.
The lost machine does not come back: the shards go on on two workers. Then
DRIVER_MOMENTS runs with a checkpoint every epoch whose own process (the driver) is
killed at a random moment, and `seqbil train --resume` goes on from the checkpoint on
the same cluster: the weights must be the undisturbed run's too. The peak RSS of the
training process (the driver: the workers are processes of their own) is measured by
GNU time, against training in one process without shards. Writes
results/reliability/ipm_recovery.json and .md.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, find_corpus, header, run_measured  # noqa: E402
from tables import publish  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
DASK = [sys.executable, "-m", "distributed.cli.dask_scheduler"], [sys.executable, "-m", "distributed.cli.dask_worker"]


class Cluster:
    """A scheduler and three workers, each a process group of its own."""

    def __init__(self, work):
        self.file = work / "scheduler.json"
        self.file.unlink(missing_ok=True)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
        self.scheduler = subprocess.Popen(DASK[0] + ["--scheduler-file", str(self.file), "--port", "0",
                                                     "--no-dashboard"], **quiet)
        while not self.file.exists():
            time.sleep(0.1)
        time.sleep(0.5)
        self.workers = [subprocess.Popen(DASK[1] + ["--scheduler-file", str(self.file), "--nthreads", "1",
                                                    "--no-dashboard"], **quiet) for _ in range(3)]
        from distributed import Client
        with Client(scheduler_file=str(self.file)) as client:
            client.wait_for_workers(3, timeout=60)
            self.address = client.scheduler.address

    def kill(self, k):
        os.killpg(self.workers[k].pid, signal.SIGKILL)

    def close(self):
        for p in self.workers + [self.scheduler]:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


def train(cluster, learner, train_file, work, kill_after=None, driver=False):
    """(wall seconds, stderr, log records, weights, peak RSS of the training process in
    MiB or None) of one `seqbil train --shards 3`;
    kill_after=(epochs, seconds): then a worker is killed, or with driver=True the
    training process itself, which `seqbil train --resume` then continues from the
    checkpoint of its last epoch."""
    model, log, ckpt = work / "model.sbm", work / "log.jsonl", work / "model.ckpt"
    for f in (model, log, ckpt):
        f.unlink(missing_ok=True)
    start = time.perf_counter()
    run = SEQBIL + ["train", "--config", "sighan2005", "--learner", learner, "--train", str(train_file), "--shards",
                    "3", "--scheduler", cluster.address, "--precision", "float64", "--model", str(model), "--log",
                    str(log)] + (["--checkpoint-every", "1", "--checkpoint", str(ckpt)] if driver else [])
    rss = work / "rss.txt"
    rss.unlink(missing_ok=True)
    if not driver and Path("/usr/bin/time").exists():  # this process's own peak (the workers are not its children)
        run = ["/usr/bin/time", "-f", "%M", "-o", str(rss)] + run
    proc = subprocess.Popen(run, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    if kill_after is not None:
        epochs, delay = kill_after
        while proc.poll() is None and (not log.exists() or len(log.read_text().splitlines()) < epochs):
            time.sleep(0.01)
        time.sleep(delay)
        proc.kill() if driver else cluster.kill(1)
    _, err = proc.communicate()
    if driver and proc.returncode != 0:
        proc = subprocess.run(SEQBIL + ["train", "--resume", str(ckpt), "--scheduler", cluster.address, "--model",
                                        str(model), "--log", str(log)], stderr=subprocess.PIPE,
                              stdout=subprocess.DEVNULL, text=True)
        err += proc.stderr
    wall = time.perf_counter() - start
    peak = int(rss.read_text().split()[-1]) / 1024 if rss.exists() else None
    if proc.returncode != 0:
        return wall, err, [], None, peak
    import seqbil
    m = seqbil.load(str(model))
    return wall, err, [json.loads(line) for line in log.read_text().splitlines()], \
        {k: np.asarray(v) for k, v in m.weights.items()}, peak


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with sighan2005/ (default: data/, else ../shared/data)")
    ap.add_argument("--moments", type=int, default=5)
    ap.add_argument("--driver-moments", type=int, default=2, help="runs whose driver is killed, then resumed")
    ap.add_argument("--learners", nargs="+", default=["sp", "bol"])
    ap.add_argument("--seed", type=int, default=1, help="of the random moments")
    ap.add_argument("--out", default=str(ROOT / "results" / "reliability" / "ipm_recovery.json"))
    args = ap.parse_args()
    train_file = find_corpus("sighan2005", "pku_training.approx.utf8", args.data)
    rng = np.random.default_rng(args.seed)
    record = {**header(), "benchmark": "ipm_recovery", "shards": 3, "workers": 3, "moments": args.moments,
              "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for learner in args.learners:
            wall, one_peak, _ = run_measured(SEQBIL + ["train", "-q", "--config", "sighan2005", "--temperature", "1",
                                                       "--learner", learner,
                                                       "--train", str(train_file), "--model", str(work / "one.sbm")])
            record["rows"].append({"learner": learner, "run": "one process (no shards)", "seconds": wall,
                                   "finished": True, "identical": None, "peak_rss_mib": one_peak})
            cluster = Cluster(work)
            try:
                wall, err, log, want, peak = train(cluster, learner, train_file, work)
            finally:
                cluster.close()
            if want is None:
                raise SystemExit(f"the undisturbed {learner} run failed:\n{err}")
            epochs = len(log)
            record["rows"].append({"learner": learner, "run": "undisturbed", "seconds": wall, "finished": True,
                                   "identical": True, "epochs": epochs, "peak_rss_mib": peak})
            for m in range(args.moments + args.driver_moments):
                driver = m >= args.moments
                moment = (int(rng.integers(1, epochs - 1)), float(rng.uniform(0, 1.0)))
                cluster = Cluster(work)
                try:
                    wall, err, log, got, peak = train(cluster, learner, train_file, work, moment, driver)
                finally:
                    cluster.close()
                same = got is not None and sorted(got) == sorted(want) and \
                    all(np.array_equal(got[k], want[k]) for k in want)
                lines = [line[line.index("shard "):] for line in err.replace("\r", "\n").splitlines()
                         if " lost with Dask worker " in line or " inputs lost on Dask worker " in line]
                recovered = [r for rec in log for r in rec.get("mixing", {}).get("recovered", [])]
                name = f"driver killed, resumed {m + 1 - args.moments}" if driver else f"worker killed {m + 1}"
                row = {"learner": learner, "run": name, "killed_after_epochs": moment[0],
                       "then_seconds": round(moment[1], 3), "seconds": wall, "finished": got is not None,
                       "peak_rss_mib": peak,
                       "identical": bool(same), "recoveries": recovered, "messages": lines,
                       "error": None if got is not None else err.strip().splitlines()[-1:]}
                record["rows"].append(row)
                print(f"{learner} {name} after {moment[0]} epochs + {moment[1]:.2f} s: finished {got is not None}, "
                      f"identical {same}; {'; '.join(lines)}", file=sys.stderr)
                publish(Path(args.out), record)
    publish(Path(args.out), record)


if __name__ == "__main__":
    main()
