"""Section 5 of Denis & Ralaivola (2017) on movie-review polarity: PA-II on fixed random
word vectors against RPA starting from them (k = 50 and 100), the same for word vectors
from files (`seqbil aso --vectors`), and PA-II on one-hot words. Run by
experiments/rpa_polarity.sh.

    python rpa_polarity.py --out DIR [--data DIR] [--vectors NAME=FILE]... [--quick] [--command TEXT]

Data: polarity/reviews.tsv(.gz) (Pang & Lee 2004, 2,000 reviews, one per line:
label TAB text), its standard 10-fold cross-validation by file-id blocks (line i is file
cv(i // 2); fold f holds cv(100 f) to cv(100 f + 99)).

Per outer fold: the vocabulary is the words occurring at least twice in the training
folds (the paper's non-hapax words); a document is its 0-1 bag of words, scaled to unit
L2 norm (the paper normalises the embedded sum instead, which would make the model
non-linear in Phi); the random vectors are uniform on (-1, 1) (section 5.3). The
hyper-parameters are chosen on one training fold held out as dev (the next fold), over
section 5.4's grid, then the learner is trained again on all nine training folds and
scored on the test fold: once with a single pass (the paper's Table 4) and once with the
number of passes also chosen from {1, 5, 10} (Table 3). Vectors from a file (word2vec
text) are looked up by the word as it is; words the file lacks start at zero, as in the
paper (section 5.3). They are centred: the mean of the training folds' word vectors,
each word weighted by the documents it occurs in, is subtracted from every vector (the
vectors seqbil aso learns share one direction, so that without it the documents' embedded
bags point the same way, cosine 0.98 to their mean, and PA predicts one class); then
scaled to the mean norm of the random vectors of their dimension (sqrt(k/3)), so that
one grid of C and lambda serves both.
"""
import argparse
import collections
import csv
import gzip
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from seqbil.classify import PA, RPA, Bags
from seqbil.formats.textio import sha256_file

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from record import find_corpus, header, write_record  # noqa: E402

GRID = {"C": [10.0 ** e for e in (-6, -4, -2, 0, 2, 4, 6)], "lam": [10.0 ** e for e in range(-3, 4)],
        "passes": [1, 5, 10]}
QUICK_GRID = {"C": [1e-2, 1.0], "lam": [1e-2, 1.0], "passes": [1, 5]}
# RPA only, lambda also below the grid's low edge (10^-3, chosen in most folds)
EXTENDED_LAM = [1e-5, 1e-4] + GRID["lam"]
SEED = 20170403


def load(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        lines = [line.rstrip("\n").split("\t", 1) for line in f if line.strip()]
    y = np.array([1 if label == "pos" else -1 for label, _ in lines])
    if not set(label for label, _ in lines) <= {"pos", "neg"}:
        sys.exit(f"{path}: labels other than pos and neg")
    return [text.split() for _, text in lines], y


def bags(tokens, train_rows):
    """0-1 bags over the words seen at least twice in train_rows, unit L2 norm, and those words."""
    counts = collections.Counter(w for i in train_rows for w in tokens[i])
    vocab = {w: j for j, w in enumerate(sorted(w for w, c in counts.items() if c >= 2))}
    lists = [sorted({vocab[w] for w in t if w in vocab}) for t in tokens]
    return Bags.from_lists(lists, n_words=len(vocab)).normalized(), list(vocab)


_FILES = {}


def read_vectors(path):
    """{word: vector} of a word2vec text file (cached per process: each worker reads it once)."""
    if path not in _FILES:
        with open(path, encoding="utf-8") as f:
            n, k = map(int, f.readline().split())
            table = {}
            for line in f:
                parts = line.rstrip("\n").split(" ")
                table[parts[0]] = np.array(parts[1:], dtype=float)
        if len(table) != n or any(len(v) != k for v in table.values()):
            sys.exit(f"{path}: not word2vec text ({n} rows of {k} announced)")
        _FILES[path] = table
    return _FILES[path]


def initial_vectors(source, fold, vocab, df):
    """Phi0 (k x words) of the fold's vocabulary, and the share of the words it has a vector
    for: source is ("rand", k) or ("file", path); df: each word's number of training
    documents."""
    kind, arg = source
    if kind == "rand":
        return np.random.default_rng([SEED, fold, arg]).uniform(-1, 1, (arg, len(vocab))), 1.0
    table = read_vectors(arg)
    k = len(next(iter(table.values())))
    Phi0 = np.zeros((k, len(vocab)))
    known = [j for j, w in enumerate(vocab) if w in table]
    for j in known:
        Phi0[:, j] = table[vocab[j]]
    Phi0[:, known] -= (Phi0[:, known] @ df[known] / df[known].sum())[:, None]
    norms = np.linalg.norm(Phi0[:, known], axis=0)
    Phi0 *= np.sqrt(k / 3) / norms.mean()  # the random vectors' mean norm
    return Phi0, len(known) / len(vocab)


def learner(method, C, lam):
    return RPA(C, lam, inner=50, anchored=True) if method == "rpa" else PA(C)


def sweep(method, Phi0, train, dev, grid):
    """Dev accuracy of every setting, each trained once and scored after each pass count."""
    (tr_docs, tr_y), (dev_docs, dev_y) = train, dev
    rows = []
    for C in grid["C"]:
        for lam in (grid["lam"] if method == "rpa" else [None]):
            model, done = None, 0
            for passes in grid["passes"]:
                if model is None:
                    model = learner(method, C, lam).fit(tr_docs, tr_y, Phi0, epochs=passes, seed=0)
                else:
                    model.partial_fit(tr_docs, tr_y, epochs=passes - done)
                done = passes
                rows.append({"C": C, "lam": lam, "passes": passes, "dev": model.score(dev_docs, dev_y)})
    return rows


def one_fold(job):
    """One outer fold for one method: choose on the dev fold, retrain, test."""
    method, name, source, fold, folds, tokens, y, grid = job
    start = time.perf_counter()
    test = np.where(folds == fold)[0]
    dev_fold = (fold + 1) % 10
    dev = np.where(folds == dev_fold)[0]
    train_all = np.where(folds != fold)[0]
    train = np.where((folds != fold) & (folds != dev_fold))[0]
    docs, vocab = bags(tokens, train_all)
    df = np.bincount(docs.subset(train_all).ids, minlength=docs.n_words)
    Phi0, covered = (None, 1.0) if source is None else initial_vectors(source, fold, vocab, df)
    rows = sweep(method, Phi0, (docs.subset(train), y[train]), (docs.subset(dev), y[dev]), grid)
    out = {"method": method, "vectors": name, "fold": fold, "n_words": docs.n_words, "covered": covered}
    for setting, pool in (("one pass", [r for r in rows if r["passes"] == 1]), ("passes chosen", rows)):
        best = max(pool, key=lambda r: r["dev"])  # ties: the first in grid order
        model = learner(method, best["C"], best["lam"]).fit(docs.subset(train_all), y[train_all], Phi0,
                                                             epochs=best["passes"], seed=0)
        out[setting] = {**best, "test": model.score(docs.subset(test), y[test])}
    out["seconds"] = time.perf_counter() - start
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--data", help="the directory holding polarity/reviews.tsv(.gz) (default: data/, "
                                   "then ../shared/data)")
    ap.add_argument("--quick", action="store_true", help="2 folds, 600 reviews, a small grid")
    ap.add_argument("--extended", action="store_true",
                    help=f"RPA only, with lambda in {EXTENDED_LAM}: writes rpa_polarity_extended.*")
    ap.add_argument("--vectors", action="append", default=[], metavar="NAME=FILE",
                    help="also PA and RPA from the word vectors of FILE (word2vec text), named NAME")
    ap.add_argument("--command")
    args = ap.parse_args()
    path = find_corpus("polarity", "reviews.tsv", args.data)
    tokens, y = load(path)
    folds = (np.arange(len(y)) // 2) // 100
    grid, test_folds = GRID, range(10)
    if args.quick:  # the reviews of files cv000-cv029 of each fold: 600 reviews
        keep = np.where((np.arange(len(y)) // 2) % 100 < 30)[0]
        tokens, y, folds = [tokens[i] for i in keep], y[keep], folds[keep]
        grid, test_folds = QUICK_GRID, range(2)
    sources = {f"rand{k}": ("rand", k) for k in (50, 100)}
    for spec in args.vectors:
        name, sep, file = spec.partition("=")
        if not sep or not Path(file).is_file():
            sys.exit(f"--vectors {spec}: give NAME=FILE with an existing file")
        sources[name] = ("file", str(Path(file).resolve()))
    methods = [("pa", "onehot")] + [(m, name) for name in sources for m in ("pa", "rpa")]
    stem = "rpa_polarity"
    if args.extended:
        grid, stem = {**grid, "lam": EXTENDED_LAM}, "rpa_polarity_extended"
        methods = [("rpa", name) for name in sources]
    jobs = [(m, name, sources.get(name), f, folds, tokens, y, grid) for f in test_folds for m, name in methods]
    # the long jobs first: RPA, then the larger k
    jobs.sort(key=lambda j: (j[0] != "rpa", -(0 if j[2] is None else 100 if j[2][0] == "file" else j[2][1])))
    record = header(args.command)  # the commit and date at the start: the code that runs
    print(f"rpa_polarity: {path}, {len(y)} reviews, folds {list(test_folds)}, {len(jobs)} jobs on 2 processes")
    start = time.perf_counter()
    with multiprocessing.Pool(min(2, multiprocessing.cpu_count())) as pool:
        results = []
        for r in pool.imap_unordered(one_fold, jobs):
            results.append(r)
            print(f"  fold {r['fold']} {r['method']} {r['vectors']}: one pass {r['one pass']['test']:.3f}, "
                  f"passes chosen {r['passes chosen']['test']:.3f} ({r['passes chosen']['passes']} passes, "
                  f"C={r['passes chosen']['C']:g}, lam={r['passes chosen']['lam']}) in {r['seconds']:.0f} s",
                  flush=True)
    seconds = time.perf_counter() - start
    table = []
    for m, vec in methods:
        name = f"{m}-{vec}"
        for setting in ("one pass", "passes chosen"):
            acc = [r[setting]["test"] for r in results if r["method"] == m and r["vectors"] == vec]
            table.append({"method": name, "setting": setting, "mean": statistics.fmean(acc),
                          "sd": statistics.stdev(acc) if len(acc) > 1 else 0.0, "folds": len(acc)})
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / f"{stem}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["method", "setting", "accuracy", "sd", "folds"])
        for t in table:
            w.writerow([t["method"], t["setting"], f"{t['mean']:.4f}", f"{t['sd']:.4f}", t["folds"]])
    write_record(args.out / f"{stem}.json", {
        **record, "data": str(path.name), "reviews": len(y), "grid": grid,
        "protocol": "10-fold CV by file-id blocks; per fold: vocabulary = words seen twice or more in the training "
                    "folds, 0-1 bags scaled to unit L2 norm, random vectors uniform on (-1, 1), vectors from a file "
                    "centred (their training-document-frequency-weighted mean removed) and scaled to the same mean "
                    "norm (words it lacks at zero); hyper-parameters "
                    "chosen on the next fold as dev (ties: first in grid order), then retrained on all training "
                    "folds; RPA anchored, inner loop up to 50, tol 1e-6; w0 = 0, no bias, last iterate",
        "vectors": {name: {"source": src[0], **({"k": src[1]} if src[0] == "rand" else {
            "file": Path(src[1]).name, "sha256": sha256_file(src[1]),
            "covered": statistics.fmean(r["covered"] for r in results if r["vectors"] == name)})}
            for name, src in sources.items() if any(m[1] == name for m in methods)},
        "seconds": round(seconds, 1), "table": table,
        "folds": sorted(results, key=lambda r: (r["fold"], r["method"], r["vectors"]))})
    print(f"{'method':<14} {'setting':<14} accuracy (mean ± sd over folds)")
    for t in table:
        print(f"{t['method']:<14} {t['setting']:<14} {t['mean']:.4f} ± {t['sd']:.4f}")
    print(f"rpa_polarity: {seconds:.0f} s; wrote {args.out}/{stem}.csv and .json")


if __name__ == "__main__":
    main()
