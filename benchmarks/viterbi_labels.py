"""First-order Viterbi per token against the number of labels: the full search
(chain.pxd: viterbi, S^2 per token) and the bounded search (bounded.pxd:
viterbi_bounded), on synthetic score tables.

    python benchmarks/viterbi_labels.py [--labels 4 8 16 44 100 176 300 1000] [--repeat 5]
                                        [--real MODEL CORPUS ...] [--out results/speed/viterbi_labels.json]

Sentences of 10 to 40 tokens (seed 0), as many as make about 3e8 label pairs per
search (at most 50,000 tokens, at least 400). Score distributions:

  trained    as a trained tagger's: at each token one label leads the others
             (normal scores, sd 1) by 3 + an exponential of mean 2, and 30% of the
             tokens have a second label within a normal's width of it; transitions
             normal (sd 0.5), half of them lowered by 1.5 (pairs rarely seen);
             pair zero at i > 0 (a model whose only 1st-order template is `B`).
  trained+pair  the same with a sparse pair part (1% of the cells normal, sd 0.5,
             the same table at every sentence): the bounded search reads the cells it
             examines and a bound per (position, label), computed once outside the
             timing (a kernel would sum its attributes' row maxima instead).
  ambiguous  two to four labels within a normal's width of each other at every
             token, 2 + an exponential of mean 1 ahead of the rest.
  uniform    the pessimistic case: unary and transition scores uniform on [0, 1),
             no label ahead of the others.
  ties       the worst case: scores of 0, 1 or 2 (most candidates tie, as under an
             untrained model's weights, and every scan runs to its end).

--real adds the score tables of a trained model (a .sbm file) on a labelled corpus
(CoNLL columns, read as the model reads them): the unary scores summed from its
0-order rows, its transitions and end scores; a model with 1st-order templates other
than `B` is refused (its pair part is left out here).

Each search runs REPEAT times over the same tables (alternating; the kernel alone,
the tables built beforehand, the full search reading a written zero pair table as
decoding does); the paths and scores of the two must be identical. Prints ns per
token (min / median / max) and the speed-up of the medians, and writes OUT (JSON) and
its table beside it (.md).
"""
import argparse
import time
from pathlib import Path

import numpy as np

from record import ROOT, header
from tables import publish
from seqbil._kernels.decode import viterbi_tables

KINDS = ("trained", "trained+pair", "ambiguous", "uniform", "ties")


def corpus(rng, S, kind):
    tokens = int(min(50_000, max(400, 3e8 / S ** 2)))
    lengths = []
    while sum(lengths) < tokens:
        lengths.append(int(rng.integers(10, 41)))
    seq_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    P, maxlen = int(seq_ptr[-1]), max(lengths)
    rows = np.arange(P)
    if kind in ("uniform", "ties"):
        unary = rng.random((P, S))
        trans, end = rng.random((S, S + 1)), rng.random(S)
        if kind == "ties":
            unary, trans, end = np.floor(3 * unary), np.floor(3 * trans), np.floor(3 * end)
        return seq_ptr, unary, trans, end, None
    unary = rng.normal(size=(P, S))
    top = rng.integers(0, S, size=P)
    if kind == "ambiguous":
        lead = 2.0 + rng.exponential(1.0, size=P)
        for j in range(4):
            if j >= 2:
                keep = rng.random(P) < 0.5
            else:
                keep = np.ones(P, bool)
            others = rng.integers(0, S, size=P)
            unary[rows[keep], others[keep]] = lead[keep] + rng.normal(size=int(keep.sum()))
    else:
        unary[rows, top] += 3.0 + rng.exponential(2.0, size=P)
        second = rng.random(P) < 0.3
        unary[rows[second], rng.integers(0, S, size=P)[second]] = unary[rows[second], top[second]] \
            - np.abs(rng.normal(size=int(second.sum())))
    trans = rng.normal(scale=0.5, size=(S, S + 1)) - 1.5 * (rng.random((S, S + 1)) < 0.5)
    end = rng.normal(scale=0.5, size=S)
    pair = None
    if kind == "trained+pair":
        pair = np.zeros((maxlen, S, S + 1))
        cells = rng.random(pair.shape) < 0.01
        pair[cells] = rng.normal(scale=0.5, size=int(cells.sum()))
    return seq_ptr, unary, trans, end, pair


def real_tables(model_path, corpus_path):
    """(seq_ptr, unary, trans, end, None) of a trained model on a corpus."""
    import scipy.sparse
    from seqbil.formats import read_corpus
    from seqbil.model.core import Model
    model = Model.load(model_path)
    store = model.decoding
    if store.w1.n_rows and store.w1.nnz:
        raise SystemExit(f"{model_path}: the model has 1st-order weights beyond B")
    data = model.encode(read_corpus(model.format, corpus_path))
    vals = np.ones(len(data.u_ids)) if data.u_vals is None else data.u_vals.astype(np.float64)
    X = scipy.sparse.csr_matrix((vals, data.u_ids, data.u_ptr), shape=(data.n_positions, store.w0.n_rows))
    unary = np.ascontiguousarray(X @ store.w0.to_dense(np.float64))
    return (np.asarray(data.seq_ptr, np.int64), unary, np.ascontiguousarray(store.trans, np.float64),
            np.ascontiguousarray(store.end, np.float64), None)


def run(S, kind, repeat, rng, tables=None):
    seq_ptr, unary, trans, end, pair = corpus(rng, S, kind) if tables is None else tables
    S = unary.shape[1]
    P, N = unary.shape[0], seq_ptr.shape[0] - 1
    times = {False: [], True: []}
    results = {}
    for r in range(repeat):
        for bounded in ((False, True) if r % 2 == 0 else (True, False)):
            out, scores = np.zeros(P, np.int32), np.zeros(N)
            t0 = time.perf_counter()
            viterbi_tables(unary, seq_ptr, trans, end, out, scores, bounded, pair)
            times[bounded].append((time.perf_counter() - t0) / P * 1e9)
            results[bounded] = out, scores
    full, fast = results[False], results[True]
    if not (np.array_equal(full[0], fast[0]) and np.array_equal(full[1], fast[1])):
        raise AssertionError(f"S={S} {kind}: the bounded search differs from the full one")
    summary = {"labels": S, "kind": kind, "tokens": P, "sentences": N}
    for name, bounded in (("full", False), ("fast", True)):
        t = np.array(times[bounded])
        summary[name] = {"min": float(t.min()), "median": float(np.median(t)), "max": float(t.max()),
                         "runs": [float(x) for x in t]}
    summary["speedup"] = summary["full"]["median"] / summary["fast"]["median"]
    return summary


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labels", type=int, nargs="+", default=[4, 8, 16, 44, 100, 176, 300, 1000])
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--real", nargs=2, action="append", default=[], metavar=("MODEL", "CORPUS"))
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "viterbi_labels.json"))
    args = ap.parse_args()
    rows = []
    head = f"{'kind':<20} {'L':>5} {'tokens':>7}   {'full ns/token min/med/max':>30}   " \
           f"{'fast ns/token min/med/max':>30}   {'speed-up':>8}"
    print(head)
    print("-" * len(head))
    runs = [(kind, S, None) for kind in args.kinds for S in args.labels]
    runs += [("real:" + Path(m).stem, None, (m, c)) for m, c in args.real]
    for kind, S, real in runs:
        s = run(S, kind, args.repeat, np.random.default_rng(0), None if real is None else real_tables(*real))
        s["kind"] = kind
        rows.append(s)
        f, b = s["full"], s["fast"]
        print(f"{kind:<20} {s['labels']:>5} {s['tokens']:>7}   "
              f"{f['min']:>9.0f} {f['median']:>9.0f} {f['max']:>10.0f}   "
              f"{b['min']:>9.0f} {b['median']:>9.0f} {b['max']:>10.0f}   {s['speedup']:>7.2f}x", flush=True)
    publish(args.out, {**header(), "benchmark": "viterbi_labels", "repeat": args.repeat, "rows": rows})
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
