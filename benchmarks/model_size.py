"""Model file sizes and what precision and pruning cost in test score.

    python benchmarks/model_size.py [conll2000|pku ...] [--prune 0.01,0.1,1] [--data DIR]

For each corpus and learner: one model trained with float64 weights (`--precision
float64`) and one with float32 (the default); the float32 model converted with
`seqbil convert --prune EPS` for each EPS; each scored on the test set with `seqbil
eval`. Sizes and scores are deterministic (same seed, same data), so each is measured
once. conll2000: CRF++'s chunking template with configs/conll2000.toml (sp);
pku: the paper's setting, configs/sighan2005.toml (sp and bol). Writes
results/speed/model_size.json and model_size.md.
"""
import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from record import find_corpus as find, ROOT, header

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
CORPORA = {
    "conll2000": {"folder": "conll2000", "train": "train.txt", "test": "test.txt", "learners": ["sp"],
                  "options": ["--config", "conll2000", "--template", str(ROOT / "configs" / "crfpp_chunking.template")],
                  "description": "CoNLL-2000 chunking, CRF++'s chunking template"},
    "pku": {"folder": "sighan2005", "train": "pku_training.approx.utf8", "test": "pku_test_gold.utf8",
            "learners": ["sp", "bol"], "options": ["--config", "sighan2005"],
            "description": "SIGHAN 2005 pku (stand-in training set), the paper's setting"},
}


def score(model, test):
    out = subprocess.run(SEQBIL + ["eval", "-m", str(model), "--data", str(test), "--json"], capture_output=True,
                         text=True, check=True).stdout
    result = json.loads(out)
    return result["f1"] if "f1" in result else result["accuracy"]


def info(model):
    out = json.loads(subprocess.run(SEQBIL + ["inspect", "--json", str(model)], capture_output=True, text=True,
                                    check=True).stdout)
    return {"attributes": sum(f["attributes"] for f in out["features"]),
            "nonzero_weights": sum(f["nonzero_weights"] for f in out["features"])}


def row(name, precision, prune, model, test):
    return {"model": name, "precision": precision, "prune": prune, "mib": model.stat().st_size / 2 ** 20,
            "score": score(model, test), **info(model)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="*", metavar="CORPUS", help=f"{' '.join(CORPORA)} (default: all)")
    ap.add_argument("--prune", default="0.01,0.1,1", help="EPS values for --prune (default 0.01,0.1,1)")
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "model_size.json"))
    args = ap.parse_args()
    for corpus in args.corpora:
        if corpus not in CORPORA:
            ap.error(f"unknown corpus {corpus!r} (choose from {', '.join(CORPORA)})")
    record = {**header(), "benchmark": "model_size", "repeat": 1, "corpora": {}}
    eps_values = [float(x) for x in args.prune.split(",") if x]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for corpus in args.corpora or list(CORPORA):
            spec = CORPORA[corpus]
            train = find(spec["folder"], spec["train"], args.data)
            test = find(spec["folder"], spec["test"], args.data)
            rows = []
            for learner in spec["learners"]:
                print(f"model_size: {corpus} {learner}", file=sys.stderr)
                for precision in ("float64", "float32"):
                    model = work / f"{learner}.{precision}.sbm"
                    subprocess.run(SEQBIL + ["train", "-q", *spec["options"], "--learner", learner, "--train",
                                             str(train), "--precision", precision, "--model", str(model)],
                                   check=True, cwd=work, stderr=subprocess.DEVNULL)
                    rows.append(row(learner, precision, 0.0, model, test))
                for eps in eps_values:
                    pruned = work / f"{learner}.prune{eps}.sbm"
                    subprocess.run(SEQBIL + ["convert", "--prune", str(eps), str(work / f"{learner}.float32.sbm"),
                                             str(pruned)], check=True, capture_output=True)
                    rows.append(row(learner, "float32", eps, pruned, test))
            record["corpora"][corpus] = {"description": spec["description"], "rows": rows}
    from tables import publish
    publish(args.out, record)


if __name__ == "__main__":
    main()
