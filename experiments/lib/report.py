"""Tables and plots of the experiment scripts, from the files their runs leave.

    python report.py table1|curve|convergence|power OUT_DIR [--title TEXT]

OUT_DIR/runs/ holds, for a run NAME: NAME.jsonl (the `seqbil train --log`), NAME.eval.json
(`seqbil eval --json`), NAME.size (model bytes), or NAME.crf.json and NAME.crf.jsonl
(benchmarks/crfsuite_peer.py). Run names are fields joined by "__", e.g.
pku__bol__100. OUT_DIR/meta.txt (version, command line, machine) heads every
output. Writes CSV and Markdown, and a PNG when matplotlib is installed.
"""
import argparse
import csv
import json
import math
import statistics
import sys
from pathlib import Path

# one writer of records for the benchmarks and the experiments: atomic, paths portable
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from record import write_record  # noqa: E402

# Wu & Sun (ICML 2015), Table 1: F1 per corpus, and training time on `as` in 10^3 s.
PAPER_TABLE1 = {
    "bol": {"pku": 94.6, "msr": 96.5, "cityu": 94.0, "as": 94.3, "time": 2.4},
    "bcd": {"pku": 94.4, "msr": 96.3, "cityu": 93.9, "as": 94.2, "time": 2.4},
    "sp": {"pku": 94.3, "msr": 96.7, "cityu": 94.1, "as": 94.2, "time": 1.5},
    "crf2": {"pku": 93.3, "msr": 96.5, "cityu": 94.2, "as": 94.6, "time": 9.8},
    "crf1": {"pku": 92.5, "msr": 96.1, "cityu": 93.5, "as": 95.0, "time": 8.3},
}
# the paper's CRF rows come from CRF++: our CRF++ rows sit beside the same figures
PAPER_TABLE1["crfpp-l2"], PAPER_TABLE1["crfpp-l1"] = PAPER_TABLE1["crf2"], PAPER_TABLE1["crf1"]


def _method_order():
    """Learners in the registry's order (a new learner's runs need no change here),
    then the experiments' variants and the CRF peers."""
    from seqbil.learners import LEARNERS
    order = []
    for name in LEARNERS:
        order += [name, f"{name}-global"] if name == "bol" else [name]
    return order + [f"{name}+0" for name in ("sp", "bol")] + ["crf2", "crf1", "crfpp-l2", "crfpp-l1"]


METHOD_ORDER = _method_order()
CORPUS_ORDER = ["pku", "msr", "cityu", "as", "sxu", "sample", "conll2000"]


def load_runs(out):
    """{name: record} with f1, passes, model_mib and the per-pass log. Run times are not
    kept: one run is no timing (benchmarks/ measure speed, five runs against a peer)."""
    runs = {}
    for path in sorted((out / "runs").glob("*.jsonl")):
        name = path.name[:-len(".jsonl")]
        crf = name.endswith(".crf")
        name = name[:-len(".crf")] if crf else name
        log = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        result = out / "runs" / (f"{name}.crf.json" if crf else f"{name}.eval.json")
        if not result.exists():
            continue  # an interrupted run: no score yet
        scores = json.loads(result.read_text())
        # the headline score: F1 (chunks, words), or token accuracy for other tags
        headline = scores["f1"] if "f1" in scores else scores["accuracy"]
        rec = {"name": name, "log": log, "passes": len(log), "f1": headline}
        if crf:
            rec["model_mib"] = scores["model_mib"]
        else:
            size = out / "runs" / f"{name}.size"
            rec["model_mib"] = int(size.read_text()) / 2 ** 20 if size.exists() else math.nan
        runs[name] = rec
    for path in sorted((out / "runs").glob("*.crf.json")):  # CRF runs without a per-iteration log
        name = path.name[:-len(".crf.json")]
        if name not in runs:
            scores = json.loads(path.read_text())
            runs[name] = {"name": name, "log": [], "passes": scores["iterations"], "f1": scores["f1"],
                          "model_mib": scores["model_mib"]}
    return runs


def fields(name):
    return name.split("__")


def meta(out):
    path = out / "meta.txt"
    return path.read_text().strip().splitlines() if path.exists() else []


def write_csv(out, stem, header, rows, extra=None):
    """The table as CSV (headed by the run details) and as a JSON record beside it
    (with the entries of `extra`, if given)."""
    path = out / f"{stem}.csv"
    with open(path, "w", newline="") as f:
        for line in meta(out):
            f.write(f"# {line}\n")
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    details = dict(line.split(": ", 1) for line in meta(out) if ": " in line)
    record = {**details, "table": stem, "columns": list(header), "rows": [list(r) for r in rows], **(extra or {})}
    write_record(out / f"{stem}.json", record)
    return path


def write_md(out, stem, title, body):
    path = out / f"{stem}.md"
    lines = [f"# {title}", "", *body, "", "Run details:", "", *[f"    {line}" for line in meta(out)], ""]
    path.write_text("\n".join(lines))
    return path


def mean_sd(values):
    """(mean, sample sd) of a list, sd 0 for one value; (None, None) for none."""
    return (statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0) if values else (None, None)


def fmt(x, digits=2):
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def ordered(values, order):
    return sorted(values, key=lambda v: (order.index(v) if v in order else len(order), v))


def pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        return None


def save_plot(out, stem, draw):
    plt = pyplot()
    if plt is None:
        print(f"no plot: matplotlib is not installed (pip install 'seqbil[plots]'); CSV and Markdown are in {out}")
        return None
    fig = draw(plt)
    path = out / f"{stem}.png"
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return path


# --- Table 1 -------------------------------------------------------------------------

def table1(out, title):
    runs = load_runs(out)
    corpora = ordered({fields(n)[0] for n in runs}, CORPUS_ORDER)
    methods = ordered({fields(n)[1] for n in runs}, METHOD_ORDER)
    rows = [[fields(n)[0], fields(n)[1], r["f1"], r["passes"], r["model_mib"]] for n, r in runs.items()]
    write_csv(out, "table1", ["corpus", "method", "f1", "passes", "model_mib"], rows)
    shown = corpora + [c for c in ("pku", "msr", "cityu", "as") if c not in corpora]
    head = "| method | " + " | ".join(f"{c} F1 (ours / paper)" for c in shown) + " |"
    body = [head, "|" + "---|" * (len(shown) + 1)]
    for m in methods + [m for m in PAPER_TABLE1 if m not in methods and not m.startswith("crfpp")]:
        cells = []
        for c in shown:
            r = runs.get(f"{c}__{m}")
            cells.append(f"{fmt(r['f1']) if r else '–'} / {fmt(PAPER_TABLE1.get(m, {}).get(c), 1)}")
        body.append(f"| {m} | " + " | ".join(cells) + " |")
    body += ["", "F1 as the SIGHAN 2005 scorer computes it (word spans); '–': no run (no training set "
             "for that corpus here) or no figure in the paper. Training times are measured apart, five "
             "runs each against a peer in the same run, by benchmarks/train_speed.py (results/speed/)."]
    if any(m.endswith("+0") for m in methods):
        body += ["", "bol+0, sp+0: the same character templates also as 0-order features (the paper's "
                 "section 4.3 extension; configs/sighan2005_0order.toml)."]
    if any(m.startswith("crf") for m in methods):
        body += ["", "crf2, crf1: python-crfsuite (L-BFGS with c2 = 1 or c1 = 1), each template a state "
                 "feature. crfpp-l2, crfpp-l1: CRF++ (the paper's CRF tool) to convergence with its "
                 "defaults (c = 1), B templates conjoined with the label pair as in the other models."]
    return [write_md(out, "table1", title, body)]


# --- learning curves (Figures 1 and 3) ------------------------------------------------

def is_peer(method):
    return method.startswith("crf")


def curve(out, title, offset):
    """F1 against the share of the training set; the offset from the mean is taken over
    seqbil's learners only (the peers, run on the whole set, are listed apart)."""
    runs = load_runs(out)
    rows = sorted(((*fields(n)[:2], int(fields(n)[2]), r["f1"]) for n, r in runs.items()),
                  key=lambda x: (CORPUS_ORDER.index(x[0]) if x[0] in CORPUS_ORDER else 99, x[0], x[2], x[1]))
    peers = [r for r in rows if is_peer(r[1])]
    rows = [r for r in rows if not is_peer(r[1])]
    mean = {}
    for c, m, p, f1 in rows:
        mean.setdefault((c, p), []).append(f1)
    table = [[c, m, p, f1, f1 - sum(mean[c, p]) / len(mean[c, p])] for c, m, p, f1 in rows]
    write_csv(out, "curve", ["corpus", "method", "percent", "f1", "offset_from_mean"],
              table + [[c, m, p, f1, None] for c, m, p, f1 in peers])
    corpora = ordered({r[0] for r in rows}, CORPUS_ORDER)
    methods = ordered({r[1] for r in rows}, METHOD_ORDER)
    body = []
    for c in corpora:
        pcts = sorted({r[2] for r in rows if r[0] == c})
        body += [f"## {c}: F1 (offset from the mean of the methods)", "",
                 "| method | " + " | ".join(f"{p}%" for p in pcts) + " |", "|" + "---|" * (len(pcts) + 1)]
        for m in methods:
            got = {r[2]: r for r in table if r[0] == c and r[1] == m}
            body.append(f"| {m} | " + " | ".join(f"{fmt(got[p][3])} ({got[p][4]:+.2f})" if p in got else "–"
                                                  for p in pcts) + " |")
        wins, ties = dict.fromkeys(methods, 0), 0
        for p in pcts:
            at = [r for r in table if r[0] == c and r[2] == p]
            best = [r[1] for r in at if r[3] == max(x[3] for x in at)]
            if len(best) == 1:
                wins[best[0]] += 1
            else:
                ties += 1
        body += ["", "Best method at how many proportions: " + ", ".join(f"{m} {n}" for m, n in wins.items())
                 + (f" (ties: {ties})" if ties else ""), ""]
        mine = [r for r in peers if r[0] == c]
        if mine:
            body += ["CRF peers on the same data and split (test F1):", "", "| peer | % | F1 |", "|---|---|---|"]
            body += [f"| {m} | {p}% | {fmt(f1)} |" for _, m, p, f1 in mine] + [""]

    def draw(plt):
        fig, axes = plt.subplots(1, len(corpora), figsize=(4.5 * len(corpora), 3.6), squeeze=False)
        for ax, c in zip(axes[0], corpora):
            for m in methods:
                pts = sorted((r[2], r[4] if offset else r[3]) for r in table if r[0] == c and r[1] == m)
                ax.plot([p for p, _ in pts], [y for _, y in pts], marker="o", label=m)
            if offset:
                ax.axhline(0, color="gray", lw=0.8)
            ax.set_title(c)
            ax.set_xlabel("% of the training set")
            ax.legend()
        axes[0][0].set_ylabel("F1 - mean F1 of the methods" if offset else "F1")
        fig.tight_layout()
        return fig
    return [write_md(out, "curve", title, body), save_plot(out, "curve", draw)]


# --- Figure 2: convergence ---------------------------------------------------------------

def convergence(out, title):
    runs = load_runs(out)
    rows = []
    for n, r in runs.items():
        for rec in r["log"]:
            # CRFsuite's holdout evaluation, or seqbil's per-pass dev score
            err = rec["label_error"] if "label_error" in rec else 100 - rec["dev"]["accuracy"]
            rows.append([fields(n)[1], rec["pass"], err])
    write_csv(out, "convergence", ["method", "iteration", "label_error_percent"], rows)
    methods = ordered({r[0] for r in rows}, METHOD_ORDER)
    body = ["| method | iterations | label error after 1 / 5 / 10 / 20 / last iteration (%) | test F1 |",
            "|---|---|---|---|"]
    for m in methods:
        mine = [r for r in rows if r[0] == m]
        at = {r[1]: r[2] for r in mine}
        picks = " / ".join(fmt(at.get(k)) for k in (1, 5, 10, 20)) + f" / {fmt(mine[-1][2])}"
        f1 = next(r["f1"] for n, r in runs.items() if fields(n)[1] == m)
        body.append(f"| {m} | {len(mine)} | {picks} | {fmt(f1)} |")

    def draw(plt):
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for m in methods:
            mine = [r for r in rows if r[0] == m]
            ax.plot([r[1] for r in mine], [r[2] for r in mine], label=m)
        ax.set_xlabel("iteration")
        ax.set_ylabel("label error rate on held-out data (%)")
        ax.set_xscale("log")
        ax.legend()
        fig.tight_layout()
        return fig
    return [write_md(out, "convergence", title, body), save_plot(out, "convergence", draw)]


# --- power iteration ---------------------------------------------------------------------

def power(out, title):
    runs = load_runs(out)
    rows = []
    for n, r in runs.items():
        mode, R = fields(n)[1], int(fields(n)[2])
        diag = [rec for rec in r["log"] if "angle_mean" in rec]
        mean = (lambda key: sum(d[key] for d in diag) / len(diag)) if diag else (lambda key: math.nan)
        last = diag[-1] if diag else {}
        rows.append([mode, R, r["f1"],
                     mean("angle_mean"), last.get("angle_mean", math.nan), mean("value_ratio_mean"),
                     last.get("gapped_share", math.nan)])
    rows.sort()
    write_csv(out, "power_iteration", ["mode", "R", "dev_f1",
                                       "angle_mean_over_passes_deg", "angle_last_pass_deg",
                                       "value_ratio_mean_over_passes", "gapped_share_last_pass"], rows)
    body = ["| mode | R | dev F1 | angle to the exact pair (deg): mean over passes "
            "| after the last pass | u'Θv / σ1 | blocks with a gap |", "|---|---|---|---|---|---|---|"]
    body += [f"| {m} | {R} | {fmt(f)} | {fmt(a, 3)} | {fmt(al, 3)} | {fmt(v, 5)} "
             f"| {fmt(100 * g, 0)}% |" for m, R, f, a, al, v, g in rows]
    body += ["", "Measured after every pass with a dense SVD of every Theta block (`seqbil train --diagnose`). "
             "Angle: the larger of the angles of alpha_a and beta_a to the exact top singular vectors of "
             "Theta_a, averaged over the blocks with a gap (sigma_2 <= 0.9 sigma_1, where the top pair is "
             "well defined; their share after the last pass in the last column); in global mode, of the "
             "global alpha and beta to the top pair of the whole block-diagonal Theta. u'Θv / σ1: the "
             "singular value the R-step pair achieves, as a share of the exact one, averaged over all blocks "
             "(1 for an exact top pair, ties included)."]
    return [write_md(out, "power_iteration", title, body)]


# --- shuffling seeds ---------------------------------------------------------------------

def seeds(out, title):
    """Mean, spread and head-to-head wins over shuffling seeds (runs CORPUS__METHOD__SEED)."""
    import statistics
    runs = load_runs(out)
    by = {}
    for n, r in runs.items():
        c, m, seed = fields(n)
        by.setdefault((c, m), {})[int(seed)] = r["f1"]
    rows = [[c, m, len(f), statistics.fmean(f.values()), statistics.stdev(f.values()) if len(f) > 1 else 0.0,
             min(f.values()), max(f.values())] for (c, m), f in by.items()]
    rows.sort(key=lambda r: (CORPUS_ORDER.index(r[0]) if r[0] in CORPUS_ORDER else 99,
                             r[1].removesuffix("-avg"), r[1].endswith("-avg")))
    write_csv(out, "seeds", ["corpus", "method", "seeds", "mean_f1", "sd_f1", "min_f1", "max_f1"], rows)
    write_csv(out, "seed_runs", ["corpus", "method", "seed", "f1"],
              sorted([c, m, seed, f1] for (c, m), f in by.items() for seed, f1 in f.items()))
    body = ["| corpus | method | seeds | F1 mean ± sd | min – max |", "|---|---|---|---|---|"]
    body += [f"| {c} | {m} | {k} | {fmt(mu)} ± {fmt(sd)} | {fmt(lo)} – {fmt(hi)} |" for c, m, k, mu, sd, lo, hi in rows]
    heads = []
    for (c, m), f in sorted(by.items()):
        if m.startswith("bol"):
            rival = by.get((c, "sp" + m[3:]))
            if rival:
                common = sorted(set(f) & set(rival))
                ahead = sum(f[s] > rival[s] for s in common)
                heads.append(f"- {c}: {m} ahead of sp{m[3:]} at {ahead} of {len(common)} seeds")
    body += ["", "Same configuration and data, only the shuffling seed (`--seed`) changes; test F1."
             " -avg: with averaging (`--averaged`); +0: configs/sighan2005_0order.toml.", "", *heads]
    return [write_md(out, "seeds", title, body)]


# --- segmentation features ---------------------------------------------------------------

CWS_VARIANTS = ["paper+0", "+types", "+dict-all", "+dict", "cws"]


def cws(out, title):
    """F1 (and OOV / IV recall) per corpus split, feature variant and learner."""
    runs = load_runs(out)
    rows = []
    for n, r in runs.items():
        split, variant, learner = fields(n)
        scores = json.loads((out / "runs" / f"{n}.eval.json").read_text())
        rows.append([split, variant, learner, r["f1"], scores.get("oov_recall"), scores.get("iv_recall"),
                     r["model_mib"]])
    rows.sort(key=lambda r: (r[0], CWS_VARIANTS.index(r[1]) if r[1] in CWS_VARIANTS else 99, r[2]))
    write_csv(out, "cws_features", ["split", "variant", "learner", "f1", "oov_recall", "iv_recall", "model_mib"],
              rows)
    body = ["| split | features | learner | F1 | OOV recall | IV recall | model MiB |", "|---|---|---|---|---|---|---|"]
    body += [f"| {s} | {v} | {m} | {fmt(f)} | {fmt(o)} | {fmt(i)} | {fmt(mb, 1)} |"
             for s, v, m, f, o, i, mb in rows]
    body += ["", "CORPUS-dev: trained on 90% of the training set, scored on the other 10% (fixed seed); "
             "CORPUS-test: trained on the whole training set, scored on the official test set. paper+0: the "
             "character templates of Wu & Sun with the 0-order extension, averaged; +types: with the character "
             "types of the token and its neighbours; +dict: with the dictionary features (%dict: position and "
             "length of the longest covering word, lengths of the longest words starting and ending here), "
             "the dictionary built from the training words and jackknifed over 5 folds; +dict-all: the same "
             "dictionary without jackknifing (training sentences see their own words); cws: configs/cws.toml "
             "(+types and +dict)."]
    return [write_md(out, "cws_features", title, body)]


# --- taggers with feature functions against CRFsuite -----------------------------------------

def taggers(out, title):
    """Score per task, split and system (runs TASK-SPLIT__SYSTEM)."""
    runs = load_runs(out)
    rows = []
    for n, r in runs.items():
        split, system = fields(n)
        task, _, where = split.rpartition("-")
        best = max(((rec["dev"].get("f1", rec["dev"].get("accuracy")), rec["pass"]) for rec in r["log"]
                    if "dev" in rec), default=(None, None))
        rows.append([task, where, system, r["f1"], r["passes"], best[1], r["model_mib"]])
    rows.sort(key=lambda r: (r[0], r[1] != "dev", r[2].startswith("crf"), r[2]))
    write_csv(out, "taggers", ["task", "split", "system", "score", "passes", "best_dev_pass", "model_mib"], rows)
    body = ["| task | split | system | score | passes | best pass on dev | model MiB |",
            "|---|---|---|---|---|---|---|"]
    body += [f"| {t} | {w} | {s} | {fmt(f)} | {p} | {b if b is not None else '–'} | {fmt(m, 1)} |"
             for t, w, s, f, p, b, m in rows]
    body += ["", "pos: CoNLL-2000 words and POS tags (token accuracy, configs/pos.toml); chunk: CoNLL-2000 "
             "words and chunk tags without the POS column (conlleval F1, configs/ner.toml, whose features are "
             "those of the word alone). dev: trained on 90% of the training set, scored on the other 10% (fixed "
             "seed), where the configs were chosen; test: trained on the whole training set, scored on the test "
             "set. seqbil-LEARNER: the config with that learner; seqbil: the config as shipped; crf-lbfgs: python-crfsuite's L2 CRF (c2 = 1, "
             "L-BFGS to convergence) with the same templates as state features."]
    return [write_md(out, "taggers", title, body)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["table1", "curve", "offset-curve", "convergence", "power", "seeds", "cws", "taggers"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    if args.what == "table1":
        written = table1(args.out, args.title)
    elif args.what in ("curve", "offset-curve"):
        written = curve(args.out, args.title, args.what == "offset-curve")
    elif args.what == "convergence":
        written = convergence(args.out, args.title)
    elif args.what == "seeds":
        written = seeds(args.out, args.title)
    elif args.what == "cws":
        written = cws(args.out, args.title)
    elif args.what == "taggers":
        written = taggers(args.out, args.title)
    else:
        written = power(args.out, args.title)
    for path in [p for p in written if p] + sorted(args.out.glob("*.csv")):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
