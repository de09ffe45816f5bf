"""`seqbil aso --shards 2` on a local Dask cluster of two workers against `seqbil aso`
in one process, on the same raw text: peak memory of the driver and of each worker,
how far apart the two structures are (principal angles between each split's
subspaces) and what each gives a chunker.

    python benchmarks/aso_shards.py [--unlabeled DIR] [--data DIR]

The English text of UNLABELED/en (default: data/unlabeled, then ../shared/data/
unlabeled) with the default splits; one process with --jobs 2, the shards with one
thread per worker. Downstream: CoNLL-2000's training set cut as experiments/aso.sh cuts
it (the first 90% to train, the last 10% held out), learner bol, with each structure
at the scale and window experiments/aso.sh chose on that held-out part, and without
one; and as experiments/aso.sh scores a structure, test F1 of bol trained on the whole
training set, seeds 1 to 3. One run each: this is a memory benchmark (benchmarks/aso_speed.py times seqbil
aso). Writes results/speed/aso_shards.json and .md.
"""
import argparse
import logging
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aso_speed import unlabeled_dir  # noqa: E402
from record import ROOT, eval_f1, find_corpus, header, run_measured  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
SCALE, WINDOW = "0.1", "-1,0,1"  # results/aso: experiments/aso.sh's choice on the held-out tenth
SEEDS = (1, 2, 3)


def angles(a, b):
    """Principal angles (degrees) between the column spaces of a and b."""
    qa, _ = np.linalg.qr(np.asarray(a, np.float64))
    qb, _ = np.linalg.qr(np.asarray(b, np.float64))
    s = np.linalg.svd(qa.T @ qb, compute_uv=False)
    return np.degrees(np.arccos(np.clip(s, -1.0, 1.0)))


def f1(work, train, test, structure, seed=1):
    """Chunk F1 on test of bol trained on train (with the structure, at SCALE and WINDOW)."""
    model = work / "m.sbm"
    extra = ["--structure", str(structure), "--structure-scale", SCALE, f"--structure-window={WINDOW}"] \
        if structure else []
    subprocess.run(SEQBIL + ["train", "-q", "--temperature", "1", "--config", "conll2000", "--learner", "bol",
                             "--seed", str(seed), "--train", str(train), "--model", str(model), *extra], check=True,
                   capture_output=True)
    return eval_f1(model, test)


def main():
    import distributed

    from seqbil.features.structure import Structure
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--unlabeled", help="directory with en/ raw text")
    ap.add_argument("--data", help="folder with conll2000/ (default: data/, else ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "aso_shards.json"))
    args = ap.parse_args()
    files = sorted((unlabeled_dir(args.unlabeled) / "en").glob("*.txt*"))
    conll = find_corpus("conll2000", "train.txt.gz", args.data)
    test = find_corpus("conll2000", "test.txt.gz", args.data)
    record = {**header(), "benchmark": "aso_shards", "files": [f.name for f in files], "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        text = ["--unlabeled", *map(str, files)]
        one, two = work / "one.sbs", work / "two.sbs"
        print("aso_shards: one process", file=sys.stderr)
        _, peak, _ = run_measured(SEQBIL + ["aso", "-q", "--jobs", "2", *text, "--out", str(one)])
        record["rows"].append({"system": "one process, --jobs 2", "driver_peak_mib": peak,
                               "worker_peaks_mib": []})
        print("aso_shards: 2 shards", file=sys.stderr)
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                      silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
            _, peak, _ = run_measured(SEQBIL + ["aso", "-q", "--shards", "2", "--scheduler",
                                                   cluster.scheduler_address, *text, "--out", str(two)])
            workers = client.run(lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        record["rows"].append({"system": "--shards 2 (2 workers)", "driver_peak_mib": peak,
                               "worker_peaks_mib": sorted(workers.values())})
        a, b = Structure.load(one), Structure.load(two)
        record["splits"] = []
        for x, y in zip(a.splits, b.splits):
            t = angles(x.theta, y.theta)
            record["splits"].append({"name": x.name, "same_index": bool(np.array_equal(x.index.tables[0][0],
                                                                                      y.index.tables[0][0])),
                                     "angles_deg": {"max": float(t.max()), "median": float(np.median(t)),
                                                    "mean": float(t.mean())},
                                     "method": b.provenance["splits"][len(record["splits"])]["method"]})
        train, held = work / "train90", work / "held10"
        subprocess.run([sys.executable, str(ROOT / "experiments" / "lib" / "subset.py"), "--format", "conll",
                        "--first", "0.9", str(conll), str(train), str(held)], check=True)
        print("aso_shards: downstream", file=sys.stderr)
        structures = {"none": None, "one process": one, "--shards 2": two}
        record["held_out_f1"] = {k: f1(work, train, held, v) for k, v in structures.items()}
        record["test_f1"] = {k: [f1(work, conll, test, v, seed) for seed in SEEDS] for k, v in structures.items()}
        record["scale"], record["window"], record["seeds"] = SCALE, WINDOW, list(SEEDS)
    from tables import publish
    publish(args.out, record)


if __name__ == "__main__":
    main()
