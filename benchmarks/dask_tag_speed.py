"""Tagging many files on a Dask cluster: `seqbil tag --output-dir` with 1 and 2 local
workers against `seqbil tag` in one process on the concatenation, in one run.

    python benchmarks/dask_tag_speed.py [--data DIR] [--repeat 5] [--chars 50000000] [--files 5]

The input is the SIGHAN 2005 pku test text (unsegmented lines) repeated to at least
CHARS characters, as FILES plain files; the model is sp on the pku training set with
the paper's templates (configs/sighan2005.toml), as in tag_speed.py. Each system runs
REPEAT times as a whole process, alternating (wall time, input characters per second);
every Dask run's outputs, joined in input order, are checked to be byte-identical to
`seqbil tag` of the joined inputs. Then, once each and untimed: the peak RSS of every
worker of a 2-worker cluster tagging one file of CHARS / FILES characters and one of
CHARS (a worker's memory should not grow with the file); the seconds a run of
`--output-dir` costs on a one-line input (cluster start-up and shut-down); and the
rate at which the driver joins part files (the one serial step). Writes
results/speed/dask_tag.json and dask_tag.md.
"""
import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, find_corpus, header, run_measured, stats  # noqa: E402
from tables import publish  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]


def raw_text(test):
    """The test set's lines with the spaces between words taken out."""
    from seqbil.formats.textio import read_lines
    return "".join("".join(line.split()) + "\n" for _, line in read_lines(test)).encode("utf-8")


def digest(paths):
    h = hashlib.sha256()
    for path in paths:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def worker_peaks(model, path, out):
    """Peak RSS (MiB) of each worker of a 2-worker LocalCluster that tagged path."""
    import logging
    import resource

    import distributed

    import seqbil.dask
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        seqbil.dask.tag_files(model, [path], out, client=client, overwrite=True)
        peaks = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    return sorted(peaks.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with sighan2005/ (default: data/, else ../shared/data)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--chars", type=int, default=50_000_000, help="characters of input, at least")
    ap.add_argument("--files", type=int, default=5, help="input files")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "dask_tag.json"))
    args = ap.parse_args()
    train = find_corpus("sighan2005", "pku_training.approx.utf8", args.data)
    test = find_corpus("sighan2005", "pku_test_gold.utf8", args.data)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        model = work / "pku.sp.sbm"
        run_measured(SEQBIL + ["train", "-q", "--config", "sighan2005", "--learner", "sp", "--train", str(train),
                               "--model", str(model)])
        text = raw_text(test)
        copy_chars = len(text.decode("utf-8"))
        per_file = -(-args.chars // (copy_chars * args.files))  # copies of the test text per file
        (work / "in").mkdir()
        inputs = [work / "in" / f"part{i}.txt" for i in range(args.files)]
        for path in inputs:
            path.write_bytes(text * per_file)
        joined = work / "joined.txt"
        with open(joined, "wb") as f:
            for path in inputs:
                f.write(path.read_bytes())
        chars, size = copy_chars * per_file * args.files, joined.stat().st_size
        systems = {"seqbil tag, one process, the joined input": SEQBIL + ["tag", "-m", model, joined, "-o",
                                                                           work / "one.txt"]}
        for w in (1, 2):
            systems[f"seqbil tag --output-dir --workers {w}"] = SEQBIL + [
                "tag", "-m", model, "-i", str(work / "in" / "*.txt"), "--output-dir", work / f"out{w}", "--workers",
                str(w), "--overwrite", "-q"]
        walls = {name: [] for name in systems}
        expected = None
        for run in range(args.repeat):
            for name, cmd in systems.items():
                print(f"dask_tag_speed: {name}, run {run + 1} of {args.repeat}", file=sys.stderr)
                walls[name].append(run_measured(cmd)[0])
                if "--output-dir" in cmd:
                    got = digest(cmd[cmd.index("--output-dir") + 1] / p.name for p in inputs)
                    if got != expected:
                        sys.exit(f"{name}: the outputs differ from seqbil tag of the joined input")
                else:
                    expected = digest([work / "one.txt"])
        rows = [{"system": name, "wall_s": stats(w), "chars_per_s": stats([chars / s for s in w])}
                for name, w in walls.items()]
        one = rows[1]["chars_per_s"]["median"]
        for r in rows:
            r["vs_one_worker"] = r["chars_per_s"]["median"] / one
        # untimed probes
        print("dask_tag_speed: worker memory, start-up, joining", file=sys.stderr)
        memory = [{"chars": copy_chars * per_file, "bytes": inputs[0].stat().st_size,
                   "worker_peak_rss_mib": worker_peaks(model, inputs[0], work / "mem")},
                  {"chars": chars, "bytes": size, "worker_peak_rss_mib": worker_peaks(model, joined, work / "mem")}]
        (work / "tiny").mkdir()
        (work / "tiny" / "one.txt").write_bytes(text.split(b"\n", 1)[0] + b"\n")
        startup = [run_measured(SEQBIL + ["tag", "-m", model, "-i", work / "tiny" / "one.txt", "--output-dir",
                                          work / "tiny_out", "--workers", "2", "--overwrite", "-q"])[0]
                   for _ in range(args.repeat)]
        join = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            with open(work / "joined_again.txt", "wb") as out:
                for path in inputs:
                    with open(work / "out2" / path.name, "rb") as part:
                        shutil.copyfileobj(part, out, 1 << 20)
                out.flush()
                os.fsync(out.fileno())
            join.append((work / "joined_again.txt").stat().st_size / (time.perf_counter() - start) / 2 ** 20)
    record = {**header(), "benchmark": "dask_tag_speed", "repeat": args.repeat, "files": args.files, "chars": chars,
              "bytes": size, "partition_mib": 8, "rows": rows, "memory": memory, "startup_s": stats(startup),
              "join_mib_per_s": stats(join)}
    publish(args.out, record)


if __name__ == "__main__":
    main()
