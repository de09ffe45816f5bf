"""Section 4 of Denis & Ralaivola (2017): PA-II and RPA on the synthetic two-concept task
(Figure 1), and the picture of Figure 2. Run by experiments/rpa_synthetic.sh.

    python rpa_synthetic.py --out DIR [--quick] [--noise 0,1,...] [--draws 10] [--command TEXT]

The task: n documents of one word each, p words; the first n/2 documents are labelled +1
and each holds a word drawn uniformly, with replacement, from the first p/2 words, the
others -1 with a word from the last p/2. The hidden embedding Phi (2 x p) maps the
first half of the words to concept (1, 0) and the rest to (0, 1); learners see only
Phi~ = Phi + E, E_ij ~ N(0, s), s the noise variance (the x-axis of Figure 1).
80/10/10 train/dev/test split; hyper-parameters chosen on dev over footnote 1's grid;
each point the mean test accuracy over independent draws (documents, split and E).

Writes DIR/rpa_synthetic.csv (noise_variance,pa,rpa), DIR/rpa_synthetic.json (the run
record: command, commit, machine, chosen hyper-parameters and spread per point),
DIR/rpa_synthetic.png and DIR/rpa_figure2.png when matplotlib is installed; and, when
RPA's chosen C or lambda sits at the grid's low edge in most runs, the same with the
grid extended below it (rpa_synthetic_extended.*).
"""
import argparse
import csv
import multiprocessing
import statistics
import sys
import time
from pathlib import Path

import numpy as np

from seqbil.classify import PA, RPA, Bags

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
from record import header, write_record  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import pyplot  # noqa: E402

SAMPLING = ("each document one word, drawn uniformly with replacement from its class's half of the vocabulary "
            "(test words may occur in training)")
# footnote 1: passes over the training set, C, and lambda = 10^k
PAPER_GRID = {"iterations": [1, 5, 10, 50], "C": [0.1, 0.5, 1.0, 2.0, 10.0], "lam": [0.01, 0.1, 1.0, 10.0, 100.0]}
EXTENDED_GRID = {"iterations": PAPER_GRID["iterations"], "C": [0.001, 0.01, 0.05] + PAPER_GRID["C"],
                 "lam": [0.0001, 0.001] + PAPER_GRID["lam"]}
SEED = 20170403


def task(n, p, variance, draw):
    """(docs, y, Phi~, split) of one draw: documents and split depend on the draw only,
    E on the draw and the noise level."""
    rng = np.random.default_rng([SEED, draw])
    half = n // 2
    words = np.concatenate([rng.integers(0, p // 2, half), rng.integers(p // 2, p, n - half)])
    y = np.where(np.arange(n) < half, 1, -1)
    perm = rng.permutation(n)
    n_train, n_dev = int(0.8 * n), int(0.1 * n)
    split = perm[:n_train], perm[n_train:n_train + n_dev], perm[n_train + n_dev:]
    Phi = np.zeros((2, p))
    Phi[0, :p // 2] = Phi[1, p // 2:] = 1
    noise = np.random.default_rng([SEED, draw, int(round(variance * 1000))])
    Phi_noisy = Phi + noise.normal(0.0, np.sqrt(variance), (2, p))
    docs = Bags(np.arange(n + 1), words, None, p)
    return docs, y, words, Phi_noisy, split


def evaluate(model, docs, y):
    """Accuracy and mean hinge loss."""
    s = model.decision_function(docs)
    return float(np.mean(np.where(s > 0, 1, -1) == y)), float(np.mean(np.maximum(0, 1 - y * s)))


def grid_run(make, fit_args, parts, iterations):
    """Train once per setting, scoring after each pass count of the grid (the model after
    5 passes is the 5-pass model: the passes and their orders are the same)."""
    (tr_docs, tr_y), (dev_docs, dev_y), tests = parts
    rows, done = [], 0
    model = None
    for it in iterations:
        if model is None:
            model = make().fit(tr_docs, tr_y, *fit_args, epochs=it, seed=0)
        else:
            model.partial_fit(tr_docs, tr_y, epochs=it - done)
        done = it
        dev_acc, dev_hinge = evaluate(model, dev_docs, dev_y)
        test = {name: (evaluate(model, d, t)[0] if len(t) else None) for name, (d, t) in tests.items()}
        rows.append({"iterations": it, "dev": dev_acc, "dev_hinge": dev_hinge, **test})
    return rows


def choose(runs):
    """The best dev accuracy; ties (dev has 50 documents) go to the lower dev hinge loss."""
    return max(runs, key=lambda r: (r["dev"], -r["dev_hinge"]))


def one_point(job):
    """PA and RPA at one noise variance and draw, over a grid: the chosen settings and
    their test accuracies (all, and on test documents whose word was / was not seen in
    training)."""
    variance, draw, grid, n, p, anchored = job
    docs, y, words, Phi_noisy, (tr, dev, te) = task(n, p, variance, draw)
    seen = np.isin(words[te], words[tr])
    parts = ((docs.subset(tr), y[tr]), (docs.subset(dev), y[dev]),
             {"test": (docs.subset(te), y[te]), "test_seen": (docs.subset(te[seen]), y[te[seen]]),
              "test_unseen": (docs.subset(te[~seen]), y[te[~seen]])})
    pa_runs = [{"C": C, **r} for C in grid["C"]
               for r in grid_run(lambda: PA(C), (Phi_noisy,), parts, grid["iterations"])]
    rpa_runs = [{"C": C, "lam": lam, **r} for C in grid["C"] for lam in grid["lam"]
                for r in grid_run(lambda: RPA(C, lam, inner=50, anchored=anchored), (Phi_noisy,), parts,
                                  grid["iterations"])]
    return {"noise_variance": variance, "draw": draw, "pa": choose(pa_runs), "rpa": choose(rpa_runs),
            "test_seen_share": float(seen.mean())}


def run_grid(noise, draws, grid, n, p, anchored, pool):
    jobs = [(v, d, grid, n, p, anchored) for v in noise for d in range(draws)]
    results = pool.map(one_point, jobs) if pool else list(map(one_point, jobs))
    points = []
    for v in noise:
        at = [r for r in results if r["noise_variance"] == v]
        point = {"noise_variance": v}
        for m in ("pa", "rpa"):
            acc = [r[m]["test"] for r in at]
            point[m] = {"mean": statistics.fmean(acc), "sd": statistics.stdev(acc) if len(acc) > 1 else 0.0,
                        "accuracy": acc, "chosen": [{key: r[m][key] for key in ("C", "lam", "iterations")
                                                     if key in r[m]} for r in at],
                        **{f"mean_{s}": _mean([r[m][s] for r in at]) for s in ("test_seen", "test_unseen")}}
        point["test_seen_share"] = statistics.fmean(r["test_seen_share"] for r in at)
        points.append(point)
    return points


def _mean(values):
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def edge_share(points, grid, method, key):
    """Share of the runs whose chosen `key` is the grid's lowest value."""
    chosen = [c[key] for pt in points for c in pt[method]["chosen"]]
    return sum(c == min(grid[key]) for c in chosen) / len(chosen)


def band(points, lo=4, hi=10):
    """Mean accuracy over the noise variances lo..hi (the readings' summary figure)."""
    sel = [pt for pt in points if lo <= pt["noise_variance"] <= hi]
    return {m: (statistics.fmean(pt[m]["mean"] for pt in sel) if sel else None) for m in ("pa", "rpa")}


def write_outputs(out, stem, points, grid, record, title):
    with open(out / f"{stem}.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["noise_variance", "pa", "rpa"])
        for pt in points:
            w.writerow([f"{pt['noise_variance']:g}", f"{pt['pa']['mean']:.4f}", f"{pt['rpa']['mean']:.4f}"])
    edges = {f"{m}_{k}_at_low_edge": edge_share(points, grid, m, k) for m, k in (("pa", "C"), ("rpa", "C"),
                                                                                   ("rpa", "lam"))}
    write_record(out / f"{stem}.json", {**record, "grid": grid, "low_edge_share": edges,
                                        "mean_over_variance_4_to_10": band(points), "points": points})
    plt = pyplot()
    if plt is not None:
        fig, ax = plt.subplots(figsize=(6, 4))
        x = [pt["noise_variance"] for pt in points]
        for m, style in (("pa", "o-"), ("rpa", "s-")):
            ax.errorbar(x, [pt[m]["mean"] for pt in points], yerr=[pt[m]["sd"] for pt in points], fmt=style,
                        capsize=3, label=m.upper())
        ax.axhline(0.5, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("noise variance σ²")
        ax.set_ylabel("test accuracy (mean ± sd over draws)")
        ax.set_ylim(0.3, 1.02)
        ax.set_title(title, fontsize=9)
        ax.legend()
        fig.savefig(out / f"{stem}.png", dpi=120, bbox_inches="tight")
        plt.close(fig)
    return edges


def figure2(out, anchored, epochs=10):
    """Figure 2: n = 200, p = 500, sigma = 2 (variance 4), C = 100, lambda = 0.5. Left,
    PA's hyperplane over the documents' fixed points Phi~ x; right, RPA's hyperplane
    over the points it learned, Phi x. Train: circles, test: plus marks; colour: the
    hidden concept. The paper does not give the passes or the split: here `epochs`
    passes and an 80/20 train/test split of the same draw."""
    plt = pyplot()
    if plt is None:
        return None
    docs, y, words, Phi_noisy, (tr, dev, te) = task(200, 500, 4.0, 0)
    te = np.concatenate([dev, te])
    pa = PA(100.0).fit(docs.subset(tr), y[tr], Phi_noisy, epochs=epochs, seed=0)
    rpa = RPA(100.0, 0.5, inner=50, anchored=anchored).fit(docs.subset(tr), y[tr], Phi_noisy, epochs=epochs, seed=0)
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    for ax, model, name in ((axes[0], pa, "PA on X Φ̃ᵀ"), (axes[1], rpa, "RPA: learned Φ x")):
        Z = model.embed(docs)
        for rows, marker in ((tr, "o"), (te, "+")):
            for label, colour in ((1, "gold"), (-1, "green")):
                sel = rows[y[rows] == label]
                paint = {"facecolors": "none", "edgecolors": colour} if marker == "o" else {"c": colour}
                ax.scatter(Z[sel, 0], Z[sel, 1], marker=marker, s=28, linewidths=1, **paint,
                           label=f"{'train' if marker == 'o' else 'test'}, concept {1 if label == 1 else 2}")
        lim = np.abs(Z).max() * 1.1
        w = model.w_
        t = np.linspace(-lim, lim, 2)
        for level, style in ((0, "-"), (1, "--"), (-1, "--")):  # <w, z> = level
            if abs(w[1]) > abs(w[0]):
                ax.plot(t, (level - w[0] * t) / w[1], "k" + style, lw=1)
            else:
                ax.plot((level - w[1] * t) / w[0], t, "k" + style, lw=1)
        ax.set_xlim(-lim, lim)
        ax.set_ylim(-lim, lim)
        ax.set_aspect("equal")
        ax.set_title(f"{name}: accuracy train {model.score(docs.subset(tr), y[tr]):.2f}, "
                     f"test {model.score(docs.subset(te), y[te]):.2f}", fontsize=10)
    axes[1].legend(fontsize=7, loc="lower left")
    fig.suptitle(f"Figure 2: n = 200, p = 500, σ² = 4, C = 100, λ = 0.5, {epochs} passes "
                 f"(hyperplane and ±1 margins)", fontsize=10)
    path = out / "rpa_figure2.png"
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def summary_lines(points, title):
    lines = [title, f"{'variance':>8}  {'PA':>13}  {'RPA':>13}  RPA chosen (C, lambda, passes) per draw"]
    for pt in points:
        chosen = " ".join(f"({c['C']:g},{c['lam']:g},{c['iterations']})" for c in pt["rpa"]["chosen"])
        lines.append(f"{pt['noise_variance']:>8g}  {pt['pa']['mean']:.3f} ± {pt['pa']['sd']:.3f}  "
                     f"{pt['rpa']['mean']:.3f} ± {pt['rpa']['sd']:.3f}  {chosen}")
    b = band(points)
    if b["pa"] is not None:
        lines.append(f"mean over variances 4..10: PA {b['pa']:.3f}, RPA {b['rpa']:.3f}")
    noisy = [pt for pt in points if pt["noise_variance"] > 0]
    if noisy:  # RPA re-embeds only words it trained on: its gain should sit on the seen ones
        share = statistics.fmean(pt["test_seen_share"] for pt in noisy)
        seen = {m: _mean([pt[m]["mean_test_seen"] for pt in noisy]) for m in ("pa", "rpa")}
        unseen = {m: _mean([pt[m]["mean_test_unseen"] for pt in noisy]) for m in ("pa", "rpa")}
        lines.append(f"noise > 0, test documents whose word occurs in training ({share:.0%}): PA {seen['pa']:.3f}, "
                     f"RPA {seen['rpa']:.3f}; the others: PA {unseen['pa']:.3f}, RPA {unseen['rpa']:.3f}")
    return lines


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--quick", action="store_true", help="3 noise levels, 2 draws")
    ap.add_argument("--noise", help="comma-separated noise variances (default 0,1,...,10)")
    ap.add_argument("--draws", type=int, help="draws per noise level (default 10; --quick 2)")
    ap.add_argument("--written", action="store_true",
                    help="Algorithm 1 as written (each inner step from the current iterate) instead of the "
                         "anchored block-coordinate descent on problem (5)")
    ap.add_argument("--command", help="the command line to record")
    args = ap.parse_args()
    noise = [float(v) for v in args.noise.split(",")] if args.noise else (
        [0.0, 4.0, 10.0] if args.quick else [float(v) for v in range(11)])
    draws = args.draws or (2 if args.quick else 10)
    n, p = 500, 1000
    anchored = not args.written
    grid = PAPER_GRID
    args.out.mkdir(parents=True, exist_ok=True)
    reading = ("every inner step anchored at (w_t, Phi_t) (block-coordinate descent on problem (5))" if anchored
               else "Algorithm 1 as written (each inner step anchored at the current inner iterate)")
    print(f"rpa_synthetic: n = {n}, p = {p}, {draws} draws per noise variance, sampling: {SAMPLING}")
    print(f"rpa_synthetic: RPA reading: {reading}; inner loop up to 50 steps, stop at |dQ| <= 1e-6")
    record = {**header(args.command), "task": {"n": n, "p": p, "k": 2, "split": "80/10/10 train/dev/test",
                                                "draws": draws, "sampling": SAMPLING, "noise": "E_ij ~ N(0, variance)",
                                                "draw_seeds": f"documents and split: ({SEED}, draw); E: ({SEED}, "
                                                              "draw, round(1000 variance))"},
              "rpa": {"reading": reading, "anchored": anchored, "inner": 50, "tol": 1e-6},
              "selection": "best dev accuracy, ties to the lower dev hinge loss; w0 = 0, no bias, last iterate"}
    start = time.perf_counter()
    pool = multiprocessing.Pool(min(2, multiprocessing.cpu_count())) if len(noise) * draws > 4 else None
    try:
        points = run_grid(noise, draws, grid, n, p, anchored, pool)
        seconds = time.perf_counter() - start
        title = f"Denis & Ralaivola (2017) Figure 1: n = {n}, p = {p}, {draws} draws, grid of footnote 1"
        edges = write_outputs(args.out, "rpa_synthetic", points, grid, {**record, "seconds": round(seconds, 1)},
                              title)
        print("\n".join(summary_lines(points, title)))
        print(f"share of runs at the grid's low edge: {edges}  ({seconds:.1f} s)")
        if max(edges["rpa_C_at_low_edge"], edges["rpa_lam_at_low_edge"], edges["pa_C_at_low_edge"]) >= 0.5:
            wide = EXTENDED_GRID
            print(f"rpa_synthetic: the low edge binds in half the runs or more: again with C in {wide['C']}, "
                  f"lambda in {wide['lam']}")
            start = time.perf_counter()
            points = run_grid(noise, draws, wide, n, p, anchored, pool)
            seconds = time.perf_counter() - start
            title = f"Figure 1, grid extended below footnote 1's: n = {n}, p = {p}, {draws} draws"
            edges = write_outputs(args.out, "rpa_synthetic_extended", points, wide,
                                  {**record, "seconds": round(seconds, 1)}, title)
            print("\n".join(summary_lines(points, title)))
            print(f"share of runs at the extended grid's low edge: {edges}  ({seconds:.1f} s)")
    finally:
        if pool:
            pool.close()
            pool.join()
    fig = figure2(args.out, anchored)
    print(f"rpa_synthetic: wrote {args.out}/rpa_synthetic.csv, .json" + (f", .png, {fig.name}" if fig else
                                                                        " (no plots: matplotlib is not installed)"))


if __name__ == "__main__":
    main()
