"""Table and figure of experiments/aso_rawtext.sh: the structure's gain by the raw text
it is learned from.

    python aso_rawtext.py texts RUNS_DIR            prints the sentences and tokens of each
                                                    RUNS_DIR/text.NAME as JSON
    python aso_rawtext.py report OUT_DIR [--title TEXT]

Runs (OUT_DIR/runs/, read by aso.py's load; CRFsuite's conll100__COND__crf__1.crf.json):
conll100__COND__LEARNER__SEED, COND none,
words-TEXT (the word structure from text.TEXT: N for every Nth raw sentence, wsj for the
training set's words) or semi-N (the semi-supervised structure from every Nth sentence
of the tagged raw text). RUNS_DIR/texts.json holds the texts' sizes, STRUCTURE.aso.json
the time and peak memory of learning each structure.
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from aso import PAPER, load  # noqa: E402
from report import fmt, mean_sd, save_plot, write_csv, write_md  # noqa: E402

KINDS = {"words": "words", "semi": "chunk tags"}


def texts(runs_dir):
    sizes = {}
    for path in sorted(runs_dir.glob("text.*")):
        lines = [line.split() for line in path.read_text(encoding="utf-8").splitlines()]
        lines = [line for line in lines if line]
        sizes[path.name[len("text."):]] = {"sentences": len(lines), "tokens": sum(map(len, lines))}
    print(json.dumps(sizes, indent=1))


def gains(runs, learner, cond):
    """(mean F1, sd, mean gain over none paired by seed, sd, seeds gaining, seeds) or None."""
    with_ = {r["seed"]: r["f1"] for r in runs if r["learner"] == learner and r["cond"] == cond}
    base = {r["seed"]: r["f1"] for r in runs if r["learner"] == learner and r["cond"] == "none"}
    if not with_:
        return None
    g = [with_[s] - base[s] for s in with_ if s in base]
    return (*mean_sd(list(with_.values())), *mean_sd(g), sum(x > 0 for x in g), len(with_))


def report(out, title):
    runs = [r for r in load(out) if r["split"] == "conll100"]
    crf = {}
    for path in sorted((out / "runs").glob("conll100__*__crf__1.crf.json")):  # the CRFsuite peer
        crf[path.name.split("__")[1]] = rec = json.loads(path.read_text())
        runs.append({"cond": path.name.split("__")[1], "learner": "crf", "seed": 1, "f1": rec["f1"]})
    sizes = json.loads((out / "runs" / "texts.json").read_text())
    learners = [x for x in ("bol", "sp", "crf") if any(r["learner"] == x for r in runs)]
    structure_cost = {}
    for path in (out / "runs").glob("*.aso.json"):
        m = json.loads(path.read_text())
        structure_cost[path.name[:-len(".aso.json")]] = (m["seconds"], m["peak_rss_mib"])

    def text_label(text):
        if text == "wsj":
            return "CoNLL-2000 training words (WSJ)"
        return "all the raw text" if text == "1" else f"1 raw sentence in {text}"

    rows, body = [], []
    for learner in learners:
        g = gains(runs, learner, "none")
        if g:
            rows.append(["none", "", 0, learner, fmt(g[0]), fmt(g[1]), "", "", "", g[5], "", ""])
    conds = sorted({r["cond"] for r in runs if r["cond"] != "none"},
                   key=lambda c: (c.split("-")[0] != "words", c.split("-")[1] in ("20", "wsj"),
                                  -int(c.split("-")[1]) if c.split("-")[1].isdigit() else 0))
    for cond in conds:
        kind, text = cond.split("-", 1)
        cost = structure_cost.get(f"{kind}.{text}", (None, None))
        for learner in learners:
            g = gains(runs, learner, cond)
            if g:
                rows.append([KINDS[kind], text, sizes[text]["tokens"], learner, fmt(g[0]), fmt(g[1]), fmt(g[2]),
                             fmt(g[3]), g[4], g[5], fmt(cost[0], 0), fmt(cost[1], 0)])
    header = ["structure", "text", "tokens", "learner", "f1", "sd", "gain", "sd_gain", "seeds_gaining", "seeds",
              "structure_s", "structure_peak_mib"]
    write_csv(out, "aso_rawtext", header, rows)
    body += ["Test F1 on CoNLL-2000, the whole training set, mean ± sd over seeds; the gain over no structure "
             "paired by seed. crf: python-crfsuite's L2 CRF (L-BFGS, c2 = 1, one run: it is deterministic) with the "
             "same templates and the same structure features. The structure's time and peak memory are of "
             "`seqbil aso --jobs 2` on this machine (one run; for the semi-supervised structure, the tagging of the "
             "raw text not included).", "",
             "| structure | raw text | tokens | learner | F1 | gain | seeds gaining | structure s | peak MiB |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r[0] == "none":
            body.append(f"| none | – | – | {r[3]} | {r[4]} ± {r[5]} | | | | |")
        else:
            body.append(f"| {r[0]} | {text_label(r[1])} | {r[2]:,} | {r[3]} | {r[4]} ± {r[5]} | {r[6]} ± {r[7]} | "
                        f"{r[8]} of {r[9]} | {r[10]} | {r[11]} |")
    if crf:
        body += ["", "CRFsuite's L-BFGS: " + "; ".join(
            f"{'none' if c == 'none' else KINDS[c.split('-')[0]]}: {r['iterations']} iterations, {r['train_seconds']:.0f} s"
            for c, r in crf.items()) + " (training alone; L-BFGS stops at convergence or at the script's cap, 1000)."]
    body += ["", f"Ando & Zhang (2005): supervised {PAPER['supervised']:.2f}, ASO-semi {PAPER['ASO-semi']:.2f} "
             f"(+{PAPER['ASO-semi'] - PAPER['supervised']:.2f}) with about 15 M words of WSJ text."]

    def draw(plt):
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        for kind, style in (("words", "s-"), ("semi", "^-")):
            for learner in learners:
                pts = sorted((r[2], float(r[6])) for r in rows
                             if r[0] == KINDS[kind] and r[3] == learner and r[1] not in ("wsj", "20"))
                if pts:
                    ax.plot(*zip(*pts), style, lw=1, ms=4, label=f"{learner} + {KINDS[kind]}")
        for text, marker in (("wsj", "*"), ("20", "x")):
            for learner in learners:
                pts = [(r[2], float(r[6])) for r in rows if r[0] == "words" and r[1] == text and r[3] == learner]
                if pts:
                    ax.plot(*zip(*pts), marker, ms=7, label=f"{learner} + words, {text_label(text)}")
        ax.axhline(PAPER["ASO-semi"] - PAPER["supervised"], color="grey", lw=0.8, ls=":")
        ax.set_xscale("log")
        ticks = [2e5, 5e5, 1e6, 2e6, 4e6]
        ax.set_xticks(ticks, [f"{t / 1e6:g} M" for t in ticks])
        ax.set_xticks([], minor=True)
        ax.set_xlabel("tokens of raw text")
        ax.set_ylabel("F1 gain over no structure (test)")
        ax.legend(fontsize=6, ncol=2)
        return fig
    if any(r[0] != "none" for r in rows) and save_plot(out, "aso_rawtext", draw):
        body += ["", "The dotted line is Ando & Zhang's gain.", "",
                 "![gain against raw text](aso_rawtext.png)"]
    write_md(out, "aso_rawtext", title, body)
    print("\n".join(body))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["texts", "report"])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--title", default="Structure from unlabeled text: how much raw text, and from where")
    args = ap.parse_args()
    if args.what == "texts":
        texts(args.dir)
    else:
        report(args.dir, args.title)


if __name__ == "__main__":
    main()
