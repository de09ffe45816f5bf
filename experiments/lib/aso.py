"""Tables and figure of experiments/aso.sh, from the files its runs leave.

    python aso.py measure RECORD.json -- COMMAND...   run COMMAND, record its wall time and peak memory
    python aso.py choose OUT_DIR                      prints "SCALE WINDOW", the best on held-out data
    python aso.py epochs OUT_DIR --scale S --window=W --semi S --both S
                                                      prints the best held-out epochs of none, aso,
                                                      semi and both
    python aso.py report OUT_DIR [--title TEXT]

Runs (in OUT_DIR/runs/): SPLIT__COND__LEARNER__SEED with .eval.json, .jsonl (the
`seqbil train --log`), .time (wall seconds of the train command) and .size (model
bytes). SPLIT is held, conllN (the first N% of CoNLL-2000's training set), pku or sxu;
COND is none, aso (the word structure), semi (the semi-supervised one), both, or on
held-out data sSCALEwWINDOW (the word structure) and semi-sSCALE, both-sSCALE (with the
config's epochs), and COND-eEPOCHS (a structure at its chosen scale, that many epochs).
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import fmt, mean_sd, save_plot, write_csv, write_md  # noqa: E402

RUN = re.compile(r"(?P<split>[a-z0-9]+)__(?P<cond>[^_]+)__(?P<learner>\w+?)__(?P<seed>\d+)$")
HELD = re.compile(r"s(?P<scale>[0-9.]+)w(?P<window>[-0-9,]+)$")
HELD_OTHER = re.compile(r"(?P<kind>semi|both)-s(?P<scale>[0-9.]+)$")
HELD_EPOCHS = re.compile(r"(?P<kind>none|aso|semi|both)-e(?P<epochs>\d+)$")
# Ando & Zhang (2005), JMLR 6, section 7 (CoNLL-2000 chunking, F1 on the test set): their
# supervised baseline and the semi-supervised ASO model with 15 M words of unlabeled WSJ text
PAPER = {"supervised": 93.60, "ASO-semi": 94.39}
# the structures compared: problems that predict words; Ando & Zhang's semi-supervised
# problems (predict the chunk tag that taggers trained on the labelled part give); both
CONDS = {"aso": "words", "semi": "chunk tags", "both": "both"}


def measure(record, command):
    """Run the command and record its wall seconds and peak RSS (benchmarks/record.py:
    run_measured, GNU time when it is there); its messages are passed on."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    from record import run_measured, write_record
    seconds, peak, err = run_measured(command)
    sys.stderr.write(err)
    write_record(record, {"command": " ".join(command), "seconds": round(seconds, 2), "peak_rss_mib": round(peak, 1)})


def load(out):
    runs = []
    for path in sorted((out / "runs").glob("*.eval.json")):
        name = path.name[:-len(".eval.json")]
        m = RUN.match(name)
        if not m:
            continue
        base = out / "runs" / name
        log = [json.loads(line) for line in base.with_name(f"{name}.jsonl").read_text().splitlines() if line]
        score = json.loads(path.read_text())
        runs.append({"name": name, **m.groupdict(), "seed": int(m["seed"]), "f1": score["f1"],
                     "seconds": float(base.with_name(f"{name}.time").read_text()),
                     "passes_seconds": sum(r["seconds"] for r in log),
                     "epochs": max((r["pass"] for r in log if "pass" in r), default=0),
                     "mib": int(base.with_name(f"{name}.size").read_text()) / 2 ** 20})
    return runs


def held_table(runs):
    """[(scale, window, f1)] of the held-out runs; scale None: without the structure."""
    rows = []
    for r in runs:
        if r["split"] != "held":
            continue
        if r["cond"] == "none":
            rows.append((None, None, r["f1"]))
        elif m := HELD.match(r["cond"]):
            rows.append((float(m["scale"]), m["window"], r["f1"]))
    return sorted(rows, key=lambda t: (t[0] is not None, t[0] or 0, t[1] or ""))


def held_others(runs):
    """{kind: {scale: f1}} of the held-out runs of the other structures (semi, both)."""
    out = {}
    for r in runs:
        if r["split"] == "held" and (m := HELD_OTHER.match(r["cond"])):
            out.setdefault(m["kind"], {})[float(m["scale"])] = r["f1"]
    return out


def best_scale(runs, kind=None):
    """The best held-out (scale, window) of the word structure, or (kind semi or both)
    the best scale of that structure; ties go to the smaller scale; None without runs."""
    if kind:
        scores = held_others(runs).get(kind)
        return max(scores, key=lambda k: (scores[k], -k)) if scores else None
    rows = [r for r in held_table(runs) if r[0] is not None]
    return max(rows, key=lambda t: (t[2], -t[0]))[:2] if rows else None


def choose(out, kind=None):
    """Print best_scale's choice."""
    best = best_scale(load(out), kind)
    if best is None:
        sys.exit(f"no held-out runs of {kind or 'the word structure'}")
    print(f"{best:g}" if kind else f"{best[0]:g} {best[1]}")


def held_epochs(runs, chosen):
    """{kind: {epochs: f1}} on held-out data: the scale runs at the chosen (scale,
    window, semi scale, both scale) and the COND-eEPOCHS runs."""
    scale, window, semi, both = float(chosen[0]), chosen[1], float(chosen[2]), float(chosen[3])
    out = {}
    for r in runs:
        if r["split"] != "held":
            continue
        cond, kind = r["cond"], None
        if cond == "none":
            kind = "none"
        elif (m := HELD.match(cond)) and (float(m["scale"]), m["window"]) == (scale, window):
            kind = "aso"
        elif (m := HELD_OTHER.match(cond)) and float(m["scale"]) == {"semi": semi, "both": both}[m["kind"]]:
            kind = m["kind"]
        elif m := HELD_EPOCHS.match(cond):
            kind = m["kind"]
        if kind:
            out.setdefault(kind, {})[r["epochs"]] = r["f1"]
    return out


def epochs(out, chosen):
    """Print the epochs of none, aso, semi and both with the best held-out F1 (ties go
    to fewer)."""
    scores = held_epochs(load(out), chosen)
    picks = []
    for kind in ("none", "aso", "semi", "both"):
        s = scores.get(kind, {})
        if len(s) < 2:
            sys.exit(f"held-out runs of {kind} with two epoch counts are missing")
        picks.append(max(s, key=lambda n: (s[n], -n)))
    print(" ".join(map(str, picks)))



def report(out, title):
    runs = load(out)
    body = []
    # structures
    for lang, what in (("en", "English"), ("zh", "Chinese")):
        rec = out / "runs" / f"{lang}.aso.json"
        if rec.exists():
            m = json.loads(rec.read_text())
            body.append(f"- {what} structure: {m['seconds']:.0f} s wall, peak memory {m['peak_rss_mib']} MiB "
                        f"(`{m['command']}`).")
    def size_key(path):
        name = path.name[len("semi_"):-len(".aso.json")]
        return (not name.isdigit(), int(name) if name.isdigit() else 0)
    semi = sorted((out / "runs").glob("semi_*.aso.json"), key=size_key)
    if semi:
        parts = []
        for path in semi:
            m = json.loads(path.read_text())
            name = path.name[len("semi_"):-len(".aso.json")]
            parts.append(f"{'held-out' if name == 'held' else name + '%'} {m['seconds']:.0f} s, {m['peak_rss_mib']} MiB")
        body.append("- Semi-supervised structures (seqbil aso on the raw text tagged by the POS tagger and chunker of "
                    "each training part; the tagging not included): " + "; ".join(parts) + ".")
    held = held_table(runs)
    if held:
        rows = [["none" if s is None else f"{s:g}", w or "–", f"{f:.2f}"] for s, w, f in held]
        write_csv(out, "aso_held", ["scale", "window", "f1"], rows)
        base = next((f for s, _, f in held if s is None), None)
        body += ["", "## Scale and window (CoNLL-2000, bol, last 10% of the training set held out)", "",
                 "| scale | window | F1 | gain |", "|---|---|---|---|"]
        body += [f"| {a} | {b} | {c} | {'' if base is None or a == 'none' else f'{float(c) - base:+.2f}'} |"
                 for a, b, c in rows]
        others = held_others(runs)
        if others:
            body += ["", "At the chosen window, the semi-supervised structure (chunk tags) and both structures "
                     "together, by scale (the best is used below):", "", "| structure | " +
                     " | ".join(f"scale {k:g}" for k in sorted({k for v in others.values() for k in v})) + " |",
                     "|---|" + "---|" * len({k for v in others.values() for k in v})]
            scales = sorted({k for v in others.values() for k in v})
            for kind, scores in sorted(others.items(), reverse=True):
                body.append(f"| {CONDS[kind]} | " + " | ".join(
                    f"{scores[k]:.2f}" + (f" ({scores[k] - base:+.2f})" if base is not None else "")
                    if k in scores else "–" for k in scales) + " |")
        chosen = best_scale(runs), best_scale(runs, "semi"), best_scale(runs, "both")
        by_epochs = held_epochs(runs, (*chosen[0], chosen[1], chosen[2])) if None not in chosen else {}
        counts = sorted({n for v in by_epochs.values() for n in v})
        if len(counts) > 1:
            body += ["", "Epochs, each structure at its chosen scale (the best is used below; the dense features "
                     "slow the online learner's fit of the training data):", "",
                     "| structure | " + " | ".join(f"{n} epochs" for n in counts) + " |", "|---|" + "---|" * len(counts)]
            for kind in ("none", "aso", "semi", "both"):
                if kind in by_epochs:
                    body.append(f"| {CONDS.get(kind, 'none')} | " + " | ".join(
                        f"{by_epochs[kind][n]:.2f}" if n in by_epochs[kind] else "–" for n in counts) + " |")
    # learning curve and segmentation
    groups = {}
    for r in runs:
        if r["split"] == "held":
            continue
        groups.setdefault((r["split"], r["learner"], r["cond"]), []).append(r)
    rows, curve = [], {}
    splits = sorted({k[0] for k in groups}, key=lambda s: (not s.startswith("conll"),
                                                          int(s[5:]) if s[5:].isdigit() else 0, s))
    for split in splits:
        for learner in ("bol", "sp"):
            base = groups.get((split, learner, "none"), [])
            for cond in CONDS:
                runs_c = groups.get((split, learner, cond), [])
                if not runs_c:
                    continue
                gains = [a["f1"] - n["f1"] for n in base for a in runs_c if a["seed"] == n["seed"]]
                (mn, sn), (ma, sa), (mg, sg) = mean_sd([r["f1"] for r in base]), mean_sd([r["f1"] for r in runs_c]), \
                    mean_sd(gains)
                med = {c: statistics.median([r[key] for r in rs] or [float("nan")])
                       for c, rs in (("none", base), (cond, runs_c)) for key in ("seconds",)}
                mib = {c: statistics.median([r["mib"] for r in rs] or [float("nan")])
                       for c, rs in (("none", base), (cond, runs_c))}
                rows.append([split, learner, CONDS[cond], len(base), fmt(mn), fmt(sn), fmt(ma), fmt(sa), fmt(mg),
                             fmt(sg), sum(g > 0 for g in gains), fmt(med["none"], 1), fmt(med[cond], 1),
                             fmt(mib["none"], 1), fmt(mib[cond], 1)])
                if split.startswith("conll") and split[5:].isdigit():
                    pts = curve.setdefault(learner, {})
                    pts.setdefault("none", {})[int(split[5:])] = mn
                    pts.setdefault(cond, {})[int(split[5:])] = ma
    if rows:
        header = ["corpus", "learner", "structure", "seeds", "f1_without", "sd_without", "f1_with", "sd_with", "gain",
                  "sd_gain", "seeds_gaining", "train_s_without", "train_s_with", "model_mib_without",
                  "model_mib_with"]
        write_csv(out, "aso", header, rows)
        body += ["", "## Test F1 without and with a structure (mean ± sd over seeds; gain per seed)", "",
                 "Structures: words (problems that predict the words around a token from the other splits, "
                 "learned from the raw text alone); chunk tags (Ando & Zhang's semi-supervised problems: a POS "
                 "tagger and a chunker trained on the same labelled part tag the raw text, and the splits predict "
                 "its chunk and POS tags); both.", "",
                 "| corpus | learner | structure | without | with | gain | seeds gaining | train s, end to end, two "
                 "runs sharing the machine (without / with) | model MiB (without / with) |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            name = {"conll100": "CoNLL-2000, 100%"}.get(r[0], f"CoNLL-2000, first {r[0][5:]}%"
                                                        if r[0].startswith("conll") else r[0])
            body.append(f"| {name} | {r[1]} | {r[2]} | {r[4]} ± {r[5]} | {r[6]} ± {r[7]} | {r[8]} ± {r[9]} | "
                        f"{r[10]} of {r[3]} | {r[11]} / {r[12]} | {r[13]} / {r[14]} |")
        body += ["", f"Ando & Zhang (2005) on CoNLL-2000 with the whole training set: supervised "
                 f"{PAPER['supervised']:.2f}, ASO-semi {PAPER['ASO-semi']:.2f} (+"
                 f"{PAPER['ASO-semi'] - PAPER['supervised']:.2f}), with 15 M words of WSJ text."]
    if curve:
        def draw(plt):
            fig, ax = plt.subplots(figsize=(5.5, 3.8))
            styles = {"none": "o--", "aso": "s-", "semi": "^-", "both": "D-"}
            for learner, by_cond in sorted(curve.items()):
                for cond, pts in by_cond.items():
                    xs = sorted(pts)
                    label = learner if cond == "none" else f"{learner} + {CONDS[cond]}"
                    ax.plot(xs, [pts[x] for x in xs], styles[cond], label=label, lw=1, ms=4)
            ax.axhline(PAPER["ASO-semi"], color="grey", lw=0.8, ls=":")
            ax.text(10, PAPER["ASO-semi"] + 0.05, "Ando & Zhang ASO-semi (100%)", fontsize=7, color="grey")
            ax.set_xscale("log")
            sizes = sorted({x for by_cond in curve.values() for pts in by_cond.values() for x in pts})
            ax.set_xticks(sizes)
            ax.set_xticklabels([f"{x}%" for x in sizes])
            ax.set_xlabel("CoNLL-2000 training set used (first part)")
            ax.set_ylabel("chunk F1 (test)")
            ax.legend(fontsize=7, ncol=2)
            return fig
        if save_plot(out, "aso_curve", draw):
            body += ["", "![F1 against training size](aso_curve.png)"]
    write_md(out, "aso", title, body)
    print("\n".join(body))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "measure":
        if "--" not in sys.argv:
            sys.exit("measure RECORD -- COMMAND...")
        at = sys.argv.index("--")
        measure(sys.argv[2], sys.argv[at + 1:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["choose", "epochs", "report"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--title", default="Structure from unlabeled text")
    ap.add_argument("--kind", choices=["semi", "both"], help="choose: the scale of this structure")
    ap.add_argument("--scale", help="epochs: the word structure's chosen scale")
    ap.add_argument("--window", help="epochs: the chosen window (give it as --window=-1,0,1)")
    ap.add_argument("--semi", help="epochs: the semi-supervised structure's chosen scale")
    ap.add_argument("--both", help="epochs: the chosen scale of both structures")
    args = ap.parse_args()
    if args.what == "choose":
        choose(args.out, args.kind)
    elif args.what == "epochs":
        chosen = (args.scale, args.window, args.semi, args.both)
        if None in chosen:
            ap.error("epochs needs --scale, --window, --semi and --both")
        epochs(args.out, chosen)
    else:
        report(args.out, args.title)


if __name__ == "__main__":
    main()
