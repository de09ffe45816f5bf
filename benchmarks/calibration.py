"""How well the token marginals of seqbil's models are calibrated: the expected
calibration error (ECE: 15 equal-width bins of the Viterbi label's marginal against
whether that label is right; Guo et al. 2017, eq. 3) on CoNLL-2000 test and on pku
test, for `crf`, `bol` and `sp`, with the probabilities at temperature 1 (the scores
taken as log-potentials) and at the model's fitted temperature.

Each model trains as a user trains it, without a dev set: the temperature (and the
CRF's c2) is chosen on the last tenth of the training sentences, then the model
trains on all of them. CoNLL-2000 uses configs/conll2000.toml, pku configs/cws.toml,
each with --learner as the row says; the CRF gets at most ITERATIONS (100) L-BFGS
iterations. The record is written after every row; --resume keeps the rows of a
stopped run of the same command at the same commit. --replace keeps every row of the
record but the ones this run measures (each row names the commit and date it was
measured at), to measure again only what a change touched.

Writes results/calibration/calibration.json (the record) and calibration.md.

    python benchmarks/calibration.py [--data DIR] [--learners crf,bol,sp] [--corpora conll2000,pku]
                                     [--resume | --replace]
    python benchmarks/calibration.py --quick --out DIR    # the bundled samples, for a test
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from record import ROOT, find_corpus, header

import seqbil
from seqbil.calibration import expected_calibration_error, token_nll
from seqbil.formats import make_format, read_corpus
from seqbil.samples import sample_path

BINS = 15
CORPORA = {"conll2000": ("conll2000", "conll2000", "train.txt", "test.txt"),
           "pku": ("cws", "sighan2005", "pku_training.approx.utf8", "pku_test_gold.utf8")}
SAMPLES = {"conll2000": ("conll2000_train.txt", "conll2000_test.txt"), "pku": ("pku_train.utf8", "pku_test.utf8")}


def calibration(model, test):
    """ECE, token accuracy and token NLL of the model's marginals on the test
    sentences, at temperature 1 and at the model's own."""
    data = model.encode(test)
    gold = data.labels
    out = {}
    fitted = model.temperature
    for name, t in (("t1", 1.0), ("fitted", fitted)):
        model.temperature = t
        best, _, marginals, _ = model.decode_marginals(data)
        confidence = marginals[np.arange(len(best)), best]
        correct = best == gold
        nll, n = token_nll(model, data, t)
        out[name] = {"ece": expected_calibration_error(confidence, correct, BINS), "nll": nll / n,
                     "mean_confidence": float(confidence.mean()), "accuracy": float(correct.mean())}
    model.temperature = fitted
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="corpus folder (default: data/, else ../shared/data)")
    ap.add_argument("--learners", default="crf,bol,sp")
    ap.add_argument("--corpora", default="conll2000,pku")
    ap.add_argument("--iterations", type=int, default=100, help="L-BFGS iterations at most for crf (100, as the "
                    "sklearn-crfsuite tutorial and the speed benchmark)")
    ap.add_argument("--resume", action="store_true", help="keep the rows of a stopped run of the same command")
    ap.add_argument("--replace", action="store_true", help="keep the record's other rows, measure these again")
    ap.add_argument("--quick", action="store_true", help="the bundled samples, few passes")
    ap.add_argument("--out", default=str(ROOT / "results" / "calibration"))
    args = ap.parse_args()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tables import publish
    path = Path(args.out) / "calibration.json"
    record = {"benchmark": "calibration", **header(), "bins": BINS, "quick": args.quick,
              "iterations": args.iterations, "rows": []}
    if args.resume and path.exists():  # the rows of a stopped run of the same command at the same commit
        old = json.loads(path.read_text(encoding="utf-8"))
        if (old["command"], old["commit"]) == (record["command"], record["commit"]):
            record["rows"] = old["rows"]
    if args.replace and path.exists():
        runs = {(c, learner) for c in args.corpora.split(",") for learner in args.learners.split(",")}
        old = json.loads(path.read_text(encoding="utf-8"))
        record["rows"] = [{"commit": old["commit"], "date": old["date"], **r} for r in old["rows"]
                          if (r["corpus"], r["learner"]) not in runs]
    for corpus in args.corpora.split(","):
        config, folder, train_name, test_name = CORPORA[corpus]
        if args.quick:
            train, test = (str(sample_path(n)) for n in SAMPLES[corpus])
        else:
            train, test = (str(find_corpus(folder, n, args.data)) for n in (train_name, test_name))
        settings = seqbil.params.resolve(seqbil.params.find_config(config), {})
        fmt = make_format(settings.format, None, settings.label_column)
        test_sentences = read_corpus(fmt, test, settings.encoding)
        for learner in args.learners.split(","):
            if any(r["corpus"] == corpus and r["learner"] == learner for r in record["rows"]):
                continue
            options = {"epochs": 3 if args.quick else args.iterations} if learner == "crf" else \
                {"epochs": 3} if args.quick else {}
            start = time.perf_counter()
            model = seqbil.train(train, config=config, learner=learner, verbose=True, **options)
            seconds = time.perf_counter() - start
            result = calibration(model, test_sentences)
            chosen = model.training.get("selection", {}).get("chosen", {})
            f1 = seqbil.evaluate(model, test)
            row = {"corpus": corpus, "config": config, "learner": learner, "temperature": model.temperature,
                   **{f"{k}_{v}": result[k][v] for k in result for v in result[k]},
                   "chosen": chosen, "passes": model.training["passes_run"],
                   "f1": f1.get("f1"), "train_seconds_one_run": seconds,
                   "commit": record["commit"], "date": record["date"]}
            record["rows"].append(row)
            order = {(c, learner): k for k, (c, learner) in enumerate(
                (c, learner) for c in CORPORA for learner in ("crf", "bol", "sp", *args.learners.split(",")))}
            record["rows"].sort(key=lambda r: order.get((r["corpus"], r["learner"]), len(order)))
            print(f"{corpus} {learner}: T {model.temperature:.4g}, ECE {row['t1_ece']:.4f} -> "
                  f"{row['fitted_ece']:.4f}, F1 {row['f1']:.2f}", file=sys.stderr)
            publish(path, record)  # after every row: a stopped run keeps what it measured


if __name__ == "__main__":
    main()
