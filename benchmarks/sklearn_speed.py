"""seqbil.sklearn.CRF against sklearn-crfsuite's CRF on CoNLL-2000 chunking, with the
feature dicts of sklearn-crfsuite's tutorial (word2features: the word in lower case,
its last 3 and 2 characters, upper / title / digit flags, the POS tag and its first
two characters, the same of the words at -1 and +1, BOS / EOS), as their users run
them: the dicts built in Python (timed apart), then fit (features in, model out) and
predict.

Systems (each run its own process, the systems in turn, REPEAT times; figures are
min / median / max):
- sklearn-crfsuite lbfgs and seqbil lbfgs: c1 = C1, c2 = C2 (default 0.1 and 0.1, the
  tutorial's), at most 100 iterations, CRFsuite's default feature set in both;
- seqbil ap (the averaged perceptron) and bol, 20 epochs, with their defaults otherwise
  (the temperature of their probabilities fitted on a held-out tenth, which is part of
  fit; bol's default first_order, none, makes it learn what ap learns:
  results/dict_features).

Test F1 is conlleval's (seqbil.sklearn.metrics.chunk_f1_score x 100). Writes
results/speed/sklearn.json and .md.

    python benchmarks/sklearn_speed.py [--data DIR] [--repeat 5] [--c1 0.1] [--c2 0.1]
"""
import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from record import ROOT, find_corpus, header, run_measured, stats
from tables import publish

SYSTEMS = {
    "sklearn-crfsuite lbfgs": ("sklearn_crfsuite", {"algorithm": "lbfgs", "max_iterations": 100}, True),
    "seqbil lbfgs": ("seqbil", {"algorithm": "lbfgs", "max_iterations": 100}, True),
    "seqbil ap": ("seqbil", {"algorithm": "ap", "max_iterations": 20}, False),
    "seqbil bol": ("seqbil", {"algorithm": "bol", "max_iterations": 20}, False),
}


def read(path):
    import gzip
    raw = Path(path).read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    return [[tuple(line.split()) for line in block.splitlines()] for block in text.strip().split("\n\n")]


def word2features(sent, i):
    word, postag = sent[i][0], sent[i][1]
    features = {"bias": 1.0, "word.lower()": word.lower(), "word[-3:]": word[-3:], "word[-2:]": word[-2:],
                "word.isupper()": word.isupper(), "word.istitle()": word.istitle(), "word.isdigit()": word.isdigit(),
                "postag": postag, "postag[:2]": postag[:2]}
    if i > 0:
        word1, postag1 = sent[i - 1][0], sent[i - 1][1]
        features.update({"-1:word.lower()": word1.lower(), "-1:word.istitle()": word1.istitle(),
                         "-1:word.isupper()": word1.isupper(), "-1:postag": postag1, "-1:postag[:2]": postag1[:2]})
    else:
        features["BOS"] = True
    if i < len(sent) - 1:
        word1, postag1 = sent[i + 1][0], sent[i + 1][1]
        features.update({"+1:word.lower()": word1.lower(), "+1:word.istitle()": word1.istitle(),
                         "+1:word.isupper()": word1.isupper(), "+1:postag": postag1, "+1:postag[:2]": postag1[:2]})
    else:
        features["EOS"] = True
    return features


def worker(args):
    """One system's run in this process: prints its figures as JSON."""
    module, kwargs, regularised = SYSTEMS[args.worker]
    start = time.perf_counter()
    train, test = read(args.train), read(args.test)
    X = [[word2features(s, i) for i in range(len(s))] for s in train]
    y = [[t[-1] for t in s] for s in train]
    Xt = [[word2features(s, i) for i in range(len(s))] for s in test]
    yt = [[t[-1] for t in s] for s in test]
    dicts = time.perf_counter() - start
    if module == "sklearn_crfsuite":
        from sklearn_crfsuite import CRF
    else:
        from seqbil.sklearn import CRF
    options = dict(kwargs, **({"c1": args.c1, "c2": args.c2} if regularised else {}))
    with tempfile.TemporaryDirectory() as tmp:
        crf = CRF(model_filename=str(Path(tmp) / "model"), **options)
        start = time.perf_counter()
        crf.fit(X, y)
        fit = time.perf_counter() - start
        start = time.perf_counter()
        pred = crf.predict(Xt)
        predict = time.perf_counter() - start
        size = crf.size_
    from seqbil.sklearn.metrics import chunk_f1_score
    print(json.dumps({"dict_seconds": dicts, "fit_seconds": fit, "predict_seconds": predict,
                      "f1": 100 * chunk_f1_score(yt, [list(p) for p in pred]), "model_bytes": size,
                      "options": options}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with conll2000/train.txt(.gz) and test.txt(.gz)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--c1", type=float, default=0.1)
    ap.add_argument("--c2", type=float, default=0.1)
    ap.add_argument("--out", default=str(ROOT / "results" / "speed"))
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--train", help=argparse.SUPPRESS)
    ap.add_argument("--test", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    train = find_corpus("conll2000", "train.txt", args.data)
    test = find_corpus("conll2000", "test.txt", args.data)
    runs = {name: [] for name in SYSTEMS}
    for r in range(args.repeat):  # the systems in turn, so that a drift of the machine hits them alike
        for name in SYSTEMS:
            with tempfile.TemporaryFile() as out:
                wall, rss, _ = run_measured([sys.executable, __file__, "--worker", name, "--train", train, "--test",
                                             test, "--c1", str(args.c1), "--c2", str(args.c2)], stdout=out)
                out.seek(0)
                result = json.loads(out.read().decode().strip().splitlines()[-1])
            result.update(wall=wall, rss_mib=rss)
            runs[name].append(result)
        print(f"run {r + 1}/{args.repeat}: " + ", ".join(f"{k} fit {v[-1]['fit_seconds']:.1f} s, F1 {v[-1]['f1']:.2f}"
                                                         for k, v in runs.items()), file=sys.stderr)
    systems = {name: {**{key: stats([r[key] for r in rs]) for key in ("dict_seconds", "fit_seconds",
                                                                       "predict_seconds", "f1", "wall", "rss_mib",
                                                                       "model_bytes")},
                      "options": rs[0]["options"]} for name, rs in runs.items()}
    peer = runs["sklearn-crfsuite lbfgs"]
    ratios = {name: stats([a["fit_seconds"] / b["fit_seconds"] for a, b in zip(rs, peer)])
              for name, rs in runs.items() if name != "sklearn-crfsuite lbfgs"}
    record = {"benchmark": "sklearn_speed", **header(), "repeat": args.repeat,
              "corpus": "CoNLL-2000 (train / test), sklearn-crfsuite's tutorial features", "c1": args.c1,
              "c2": args.c2, "systems": systems, "fit_vs_sklearn_crfsuite_lbfgs": ratios}
    publish(Path(args.out) / "sklearn.json", record)


if __name__ == "__main__":
    main()
