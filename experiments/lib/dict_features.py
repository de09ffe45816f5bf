"""Which dict features bol reads as 1st-order features, chosen on dev data: sklearn-
crfsuite's tutorial features (benchmarks/sklearn_speed.py: word2features) through
seqbil.sklearn.CRF on CoNLL-2000 split 90 / 10 (the dev part is the last tenth of the
training set; no test set is read), as chunking (word, POS -> chunk) and as POS tagging
(the same features less the POS keys). Run by experiments/dict_features.sh.

    python dict_features.py --out DIR --train FILE --dev FILE [--quick] [--command TEXT]

Candidates: bol with first_order None (no 1st-order attributes: it then trains as sp,
the label transitions alone being 1st-order), "all" (every attribute), and, to show
what a hand-picked set gives, the POS keys (chunking only); ap (seqbil's sp) and
lbfgs (c1 = c2 = 0.1, at most 100 iterations) beside them. Every learner 20 epochs
(--quick: 3; lbfgs 10 iterations), temperature 1 (nothing fitted). Writes
dict_features.csv, .json and .md: dev score, fit seconds (one run, a shared machine).
"""
import argparse
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "benchmarks"))
from report import write_csv, write_md  # noqa: E402
from sklearn_speed import read, word2features  # noqa: E402

POS_KEYS = ["postag", "postag[:2]", "-1:postag", "-1:postag[:2]", "+1:postag", "+1:postag[:2]"]


def candidates(task, quick):
    epochs = 3 if quick else 20
    out = [("bol, first_order=None", {"algorithm": "bol", "max_iterations": epochs}),
           ("bol, first_order='all'", {"algorithm": "bol", "max_iterations": epochs, "first_order": "all"})]
    if task == "chunking":
        out.append(("bol, first_order=POS keys", {"algorithm": "bol", "max_iterations": epochs,
                                                  "first_order": POS_KEYS}))
    out += [("ap", {"algorithm": "ap", "max_iterations": epochs}),
            ("lbfgs", {"algorithm": "lbfgs", "c1": 0.1, "c2": 0.1, "max_iterations": 10 if quick else 100})]
    return out


def features(sents, task):
    X = [[word2features(s, i) for i in range(len(s))] for s in sents]
    if task == "pos":  # the tag to predict is not a feature
        X = [[{k: v for k, v in f.items() if "postag" not in k} for f in x] for x in X]
    return X, [[t[2] if task == "chunking" else t[1] for t in s] for s in sents]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--train", required=True)
    ap.add_argument("--dev", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--command")
    args = ap.parse_args()
    from seqbil.sklearn import CRF, metrics
    train, dev = read(args.train), read(args.dev)
    rows, records = [], []
    for task in ("chunking", "pos"):
        X, y = features(train, task)
        Xd, yd = features(dev, task)
        for name, options in candidates(task, args.quick):
            crf = CRF(params={"temperature": 1.0}, **options)
            start = time.perf_counter()
            crf.fit(X, y)
            seconds = time.perf_counter() - start
            pred = [list(p) for p in crf.predict(Xd)]
            score = 100 * (metrics.chunk_f1_score(yd, pred) if task == "chunking" else
                           metrics.flat_accuracy_score(yd, pred))
            trained_as = crf.tagger_.model.training.get("learner")
            print(f"{task}: {name}: {score:.2f} ({seconds:.0f} s, trained as {trained_as})", flush=True)
            rows.append([task, name, trained_as, round(score, 4), round(seconds, 1)])
            records.append({"task": task, "candidate": name, "options": options, "trained_as": trained_as,
                            "score": score, "fit_seconds": seconds, "attributes": crf.num_attributes_})
    best = {}
    for task in ("chunking", "pos"):
        bol = {r["candidate"]: r["score"] for r in records if r["task"] == task and r["candidate"] in
               ("bol, first_order=None", "bol, first_order='all'")}
        best[task] = max(bol, key=bol.get)
    write_csv(args.out, "dict_features", ["task", "candidate", "trained_as", "dev_score", "fit_seconds"], rows,
              extra={"runs": records, "best_generic": best, "quick": args.quick})
    body = ["Dev scores (chunking: conlleval's F1; pos: token accuracy) of seqbil.sklearn.CRF on the tutorial's "
            "feature dicts, trained on the first 90% of CoNLL-2000's training sentences and scored on the last "
            "10%; temperature 1; fit seconds: one run on a shared machine (indicative).", "",
            "| task | candidate | trained as | dev score | fit (s) |", "| --- | --- | --- | --- | --- |"]
    body += [f"| {t} | {c} | {a} | {s:.2f} | {f:.0f} |" for t, c, a, s, f in rows]
    body += ["", "Of the generic choices for bol (none or every attribute 1st-order): " +
             "; ".join(f"{task}: {choice}" for task, choice in best.items()) + "."]
    print(f"wrote {write_md(args.out, 'dict_features', 'Dict features as 1st-order features of bol', body)}")


if __name__ == "__main__":
    main()
