"""Peak memory of the training process on shards (`seqbil train --shards 2`) against
training in one process, at the same commit, on the SIGHAN 2005 pku training set.

    python benchmarks/ipm_memory.py [--data DIR] [--repeat 3] [--learners sp bol]

Each run is a `seqbil train` process of its own with configs/sighan2005.toml and its
defaults (20 epochs, float32 model) at temperature 1 (a run on shards fits none: it has
no held-out tenth), raw file in and model out; its peak is its own
VmHWM, read as it exits (the workers of a local cluster are its children, whose
peaks GNU time would fold in). Runs: in one process; on 2 shards of a local cluster
(`--workers 2`: the training process starts a Dask scheduler and 2 workers, processes
of their own); on 2 shards of a cluster started apart (`dask scheduler` and 2 `dask
worker` processes, `--scheduler`). Where the
training process's memory goes is sampled once per learner on the local cluster: its
RSS at the end of each stage and its peak within it. Test F1 (pku test) of each model.
Writes results/speed/ipm_memory.json and .md.
"""
import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, byte_compile, eval_f1, find_corpus, header, stats  # noqa: E402
from tables import publish  # noqa: E402

# `seqbil ARGS` in a process that writes its own VmHWM (KiB) to PATH as it exits
HWM = ("import atexit, runpy, sys\n"
       "path = sys.argv.pop(1)\n"
       "def hwm():\n"
       "    with open('/proc/self/status') as f:\n"
       "        peak = next(line.split()[1] for line in f if line.startswith('VmHWM'))\n"
       "    with open(path, 'w') as f:\n"
       "        f.write(peak)\n"
       "atexit.register(hwm)\n"
       "sys.argv[0] = 'seqbil'\n"
       "runpy.run_module('seqbil', run_name='__main__')\n")
DASK = [sys.executable, "-m", "distributed.cli.dask_scheduler"], [sys.executable, "-m", "distributed.cli.dask_worker"]


def measured(args, work):
    """(wall seconds, peak RSS of the process in MiB, the shards made again and the
    messages that failed, from the run's log) of `seqbil ARGS`."""
    peak, log = work / "hwm.txt", work / "log.jsonl"
    peak.unlink(missing_ok=True)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-P", "-c", HWM, str(peak), *args, "--log", str(log)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"failed: seqbil {' '.join(args)}\n{proc.stderr}")
    wall = time.perf_counter() - start
    epochs = [json.loads(line).get("mixing", {}) for line in log.read_text().splitlines()]
    events = {"shards_made_again": sum(len(m.get("recovered", [])) for m in epochs),
              "message_errors": sum(len(m.get("message_errors", [])) for m in epochs)}
    return wall, int(peak.read_text()) / 1024, events


class Cluster:
    """A scheduler and N workers of one thread, each a process of its own."""

    def __init__(self, work, n):
        self.file = work / "scheduler.json"
        self.file.unlink(missing_ok=True)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True}
        self.procs = [subprocess.Popen(DASK[0] + ["--scheduler-file", str(self.file), "--port", "0",
                                                  "--no-dashboard"], **quiet)]
        while not self.file.exists():
            time.sleep(0.1)
        time.sleep(0.5)
        self.procs += [subprocess.Popen(DASK[1] + ["--scheduler-file", str(self.file), "--nthreads", "1",
                                                   "--no-dashboard"], **quiet) for _ in range(n)]
        from distributed import Client
        with Client(scheduler_file=str(self.file)) as client:
            client.wait_for_workers(n, timeout=60)
            self.address = client.scheduler.address

    def close(self):
        for p in self.procs:
            p.kill()
            p.wait()


def stages(learner, train_file, model):
    """[(stage, RSS at its end, peak within it)] of one training on the local cluster,
    from a sampler of /proc/self/statm in the training process."""
    code = f"""
import sys, threading, time
from seqbil import api, training as T
state = {{"stage": "start", "peak": 0.0}}
out = []
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096 / 2**20
def sample():
    while True:
        state["peak"] = max(state["peak"], rss())
        time.sleep(0.005)
def mark(name):
    out.append((state["stage"], rss(), max(state["peak"], rss())))
    state["stage"], state["peak"] = name, rss()
for name in ("prepare", "make_learner", "run_passes", "finish", "compact"):
    def wrap(*a, _f=getattr(T, name), _n=name, **k):
        mark(_n)
        r = _f(*a, **k)
        mark("after " + _n)
        return r
    setattr(T, name, wrap)
if __name__ == "__main__":
    threading.Thread(target=sample, daemon=True).start()
    api.train({str(train_file)!r}, config="sighan2005", learner={learner!r}, model={str(model)!r}, shards=2,
              workers=2, echo=lambda line: None)
    mark("end")
    for s, r, p in out:
        print(f"{{s}}\\t{{r:.1f}}\\t{{p:.1f}}")
"""
    script = Path(model).with_suffix(".stages.py")
    script.write_text(code)
    proc = subprocess.run([sys.executable, "-P", str(script)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"failed: the sampled run\n{proc.stderr}")
    rows = [line.split("\t") for line in proc.stdout.splitlines() if line.count("\t") == 2]
    return [{"stage": s, "rss_mib": float(r), "peak_mib": float(p)} for s, r, p in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with sighan2005/ (default: data/, else ../shared/data)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--learners", nargs="+", default=["sp", "bol"])
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "ipm_memory.json"))
    args = ap.parse_args()
    byte_compile()
    train_file = find_corpus("sighan2005", "pku_training.approx.utf8", args.data)
    test_file = find_corpus("sighan2005", "pku_test_gold.utf8", args.data)
    record = {**header(), "benchmark": "ipm_memory", "repeat": args.repeat, "shards": 2, "rows": [], "stages": {}}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        cluster = Cluster(work, 2)
        try:
            for learner in args.learners:
                model = work / f"{learner}.sbm"
                base = ["train", "-q", "--config", "sighan2005", "--temperature", "1", "--learner", learner,
                        "--train", str(train_file), "--model", str(model)]
                runs = {"one process": base, "2 shards, local cluster (--workers 2)": base + ["--shards", "2",
                                                                                               "--workers", "2"],
                        "2 shards, a cluster of its own (--scheduler)": base + ["--shards", "2", "--scheduler",
                                                                                 cluster.address]}
                for name, run in runs.items():
                    walls, peaks, events = [], [], []
                    for _ in range(args.repeat):
                        wall, peak, happened = measured(run, work)
                        walls.append(wall)
                        peaks.append(peak)
                        events.append(happened)
                    record["rows"].append({"learner": learner, "run": name, "peak_rss_mib": stats(peaks),
                                           "seconds": stats(walls), "test_f1": eval_f1(model, test_file),
                                           "events": events})
                    print(learner, name, stats(peaks), file=sys.stderr)
                record["stages"][learner] = stages(learner, train_file, work / "sampled.sbm")
                publish(Path(args.out), record)
        finally:
            cluster.close()
    publish(Path(args.out), record)


if __name__ == "__main__":
    main()
