"""The CRF learner against python-crfsuite's L-BFGS CRF, on the same attributes and
objective, in one run: CoNLL-2000 with CRF++'s chunking template (or --corpus macmorpho:
Mac-Morpho with word features, 44 tags), c1 = 0, c2 = 1, at
most 100 iterations (CRFsuite's default feature set: the (attribute, label) pairs seen
in training, which is seqbil's default too).

Every system runs as its own process, REPEAT times (default 5); each figure is min /
median / max over the runs:

- seconds per L-BFGS iteration (the median of the run's iterations, one evaluation of
  the objective and gradient and the optimizer's step; seqbil's --log `seconds`,
  CRFsuite's own per-iteration time): seqbil with --jobs 1 and --jobs 2, CRFsuite;
- train end to end (raw files in, model out; the whole process); CRFsuite's attribute
  strings built in Python and appended sentence by sentence are reported apart;
- iterations run, test F1 (conlleval), peak RSS.

Writes results/speed/crf.json (the record) and crf.md (its table, benchmarks/tables.py);
with --corpus macmorpho, crf_macmorpho.json and .md.

--chosen instead trains once with neither --c1 nor --c2, as a user who sets neither: c2 is then
chosen on the last tenth of the training sentences (held-out), and the model trained
on all of them with it; writes results/speed/crf_chosen.json and .md (the settings
tried with their held-out scores, the c2 chosen, test F1, and the whole run's time).

    python benchmarks/crf_speed.py [--data DIR] [--repeat 5] [--iterations 100] [--c2 1.0] [--corpus macmorpho]
    python benchmarks/crf_speed.py --chosen [--data DIR] [--iterations 100]
"""
import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from record import ROOT, find_corpus, header, run_measured, stats
from tables import publish
from train_speed import plain

TEMPLATE = ROOT / "configs" / "crfpp_chunking.template"
SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
# name: (data folder, config, template, record name, description)
CORPORA = {
    "conll2000": ("conll2000", "conll2000", TEMPLATE, "crf", "CoNLL-2000, CRF++'s chunking template"),
    "macmorpho": ("pos-more/pt-macmorpho", "pos", ROOT / "benchmarks" / "templates" / "pos_window.template",
                  "crf_macmorpho", "Mac-Morpho (44 tags), the word at -2..2 and two word bigrams with label "
                  "transitions (benchmarks/templates/pos_window.template)"),
}


def seqbil_run(train, test, work, jobs, args, c2=True):
    _, config, template, _, _ = CORPORA[args.corpus]
    model, log = work / f"crf{jobs}.sbm", work / f"crf{jobs}.log"
    wall, rss, _ = run_measured([*SEQBIL, "train", "--config", config, "--template", template, "--train", train,
                                 "--learner", "crf", *(["--c1", "0", "--c2", str(args.c2)] if c2 else []),
                                 "--epochs", str(args.iterations), "--jobs", str(jobs), "--model", model, "--log",
                                 log, "-q"])
    passes = [json.loads(line) for line in log.read_text().splitlines()]
    with tempfile.TemporaryFile() as out:
        run_measured([*SEQBIL, "eval", "-m", model, "--data", test, "--json"], stdout=out)
        out.seek(0)
        scores = json.loads(out.read())
        f1 = scores.get("f1", scores["accuracy"])  # (token accuracy for part-of-speech tags)
    out = {"wall": wall, "rss_mib": rss, "iterations": len(passes), "f1": f1,
           "iteration_seconds": statistics.median(p["seconds"] for p in passes),
           "training_passes": sum(p["seconds"] for p in passes)}
    if not c2:  # what was chosen, as `seqbil inspect --json` shows it
        from seqbil.info import model_info
        from seqbil.model import Model
        out["selection"] = model_info(Model.load(model), model)["training"]["selection"]
    return out


def peer_run(train, test, args):
    _, config, template, _, _ = CORPORA[args.corpus]
    with tempfile.TemporaryFile() as out:
        wall, rss, _ = run_measured([sys.executable, ROOT / "benchmarks" / "crfsuite_peer.py", "--config",
                                     config, "--template", template, "--train", train, "--test", test,
                                     "--algorithm", "lbfgs", "--c1", "0", "--c2", str(args.c2), "--iterations",
                                     str(args.iterations)], stdout=out)
        out.seek(0)
        r = json.loads(out.read())
    return {"wall": wall, "rss_mib": rss, "iterations": r["iterations"], "f1": r["f1"],
            "iteration_seconds": statistics.median(r["iteration_seconds"]), "training_passes": r["train_seconds"],
            "feature_seconds": r["feature_seconds"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with conll2000/train.txt(.gz) and test.txt(.gz)")
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="conll2000",
                    help="conll2000 (writes crf.json) or macmorpho (crf_macmorpho.json)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--c2", type=float, default=1.0)
    ap.add_argument("--out", default=str(ROOT / "results" / "speed"))
    ap.add_argument("--chosen", action="store_true", help="one run with c2 chosen on held-out data (see above)")
    args = ap.parse_args()
    if args.chosen:
        return chosen(args)
    folder, _, _, name, description = CORPORA[args.corpus]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train = plain(find_corpus(folder, "train.txt", args.data), work)
        test = plain(find_corpus(folder, "test.txt", args.data), work)
        runs = {"seqbil crf --jobs 1": [], "seqbil crf --jobs 2": [], "crfsuite lbfgs": []}
        for r in range(args.repeat):  # the systems in turn, so a drift of the machine hits them alike
            runs["seqbil crf --jobs 1"].append(seqbil_run(train, test, work, 1, args))
            runs["seqbil crf --jobs 2"].append(seqbil_run(train, test, work, 2, args))
            runs["crfsuite lbfgs"].append(peer_run(train, test, args))
            print(f"run {r + 1}/{args.repeat}: " + ", ".join(f"{k} {v[-1]['iteration_seconds']:.3f} s/it, F1 "
                                                             f"{v[-1]['f1']:.2f}" for k, v in runs.items()),
                  file=sys.stderr)
    systems = {name: {key: stats([r[key] for r in rs]) for key in rs[0]} for name, rs in runs.items()}
    per = [[r["iteration_seconds"] for r in runs[k]] for k in runs]
    record = {"benchmark": "crf_speed", **header(), "repeat": args.repeat,
              "corpus": description, "c1": 0.0, "c2": args.c2,
              "max_iterations": args.iterations, "systems": systems,
              "ratios": {"jobs1_vs_crfsuite": statistics.median(a / c for a, c in zip(per[0], per[2])),
                         "jobs2_vs_crfsuite": statistics.median(b / c for b, c in zip(per[1], per[2])),
                         "jobs2_vs_jobs1": statistics.median(b / a for a, b in zip(per[0], per[1]))}}
    publish(Path(args.out) / f"{name}.json", record)


def chosen(args):
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train = plain(find_corpus("conll2000", "train.txt", args.data), work)
        test = plain(find_corpus("conll2000", "test.txt", args.data), work)
        run = seqbil_run(train, test, work, 1, args, c2=False)
    record = {"benchmark": "crf_chosen", **header(), "corpus": "CoNLL-2000, CRF++'s chunking template",
              "c1": 0.0, "max_iterations": args.iterations, "run": run}
    publish(Path(args.out) / "crf_chosen.json", record)


if __name__ == "__main__":
    main()
