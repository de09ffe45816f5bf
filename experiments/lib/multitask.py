"""Tables and figure of experiments/multitask.sh, from the files its runs leave.

    python multitask.py choose OUT_DIR     prints the coupling b with the best mean dev F1
    python multitask.py report OUT_DIR [--title TEXT]

Runs (in OUT_DIR/runs/): SPLIT-CORPUS__single__LEARNER__SEED (one corpus: .eval.json)
and SPLIT__joint-bB__LEARNER__SEED (one model of several tasks: .TASK.eval.json per task),
each with .jsonl (the `seqbil train --log`), .time (wall seconds of the train command)
and .size (model bytes). SPLIT is dev, test, or extra[-CORPUS].
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import fmt, save_plot, write_csv, write_md  # noqa: E402

ORDER = ["pku", "sxu", "udc", "wtb", "zx", "words", "pairs"]
JOINT = re.compile(r"(?P<split>[a-z0-9-]+)__joint-b(?P<b>[0-9.]+)__(?P<learner>\w+)__(?P<seed>\d+)$")
SINGLE = re.compile(r"(?P<split>[a-z0-9]+)-(?P<corpus>\w+)__single__(?P<learner>\w+)__(?P<seed>\d+)$")


def load(out):
    """[{kind, split, b, learner, seed, scores: {task: eval json}, seconds, passes_seconds, mib, log}]."""
    runs = []
    for done in sorted((out / "runs").glob("*.done")):
        name = done.name[:-len(".done")]
        base = out / "runs" / name
        if m := JOINT.match(name):
            rec = {"kind": "joint", "split": m["split"], "b": float(m["b"])}
            scores = {p.name[len(name) + 1:-len(".eval.json")]: json.loads(p.read_text())
                      for p in sorted(out.joinpath("runs").glob(f"{name}.*.eval.json"))}
        elif m := SINGLE.match(name):
            rec = {"kind": "single", "split": m["split"]}
            scores = {m["corpus"]: json.loads(base.with_name(f"{name}.eval.json").read_text())}
        else:
            continue
        log = [json.loads(line) for line in base.with_name(f"{name}.jsonl").read_text().splitlines() if line]
        rec.update(name=name, learner=m["learner"], seed=int(m["seed"]), scores=scores, log=log,
                   seconds=float(base.with_name(f"{name}.time").read_text()),
                   passes_seconds=sum(r["seconds"] for r in log),
                   mib=int(base.with_name(f"{name}.size").read_text()) / 2 ** 20)
        runs.append(rec)
    return runs


def ordered(names):
    return sorted(names, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def dev_table(runs):
    """{learner: {"single": {task: f1}, b: {task: f1}}} of the dev runs."""
    table = {}
    for r in runs:
        if r["split"] != "dev":
            continue
        row = table.setdefault(r["learner"], {}).setdefault("single" if r["kind"] == "single" else r["b"], {})
        row.update({task: s["f1"] for task, s in r["scores"].items()})
    return table


def choose(out):
    """The b with the best mean dev F1 over tasks and learners (ties: the smaller b)."""
    table = dev_table(load(out))
    bs = sorted({b for rows in table.values() for b in rows if b != "single"})
    means = {b: statistics.fmean(f for rows in table.values() for f in rows[b].values()) for b in bs}
    return max(bs, key=lambda b: (round(means[b], 6), -b))


def mean_sd(values):
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def spread(values):
    v = sorted(values)
    return f"{fmt(v[0], 1)} / {fmt(statistics.median(v), 1)} / {fmt(v[-1], 1)}"


def report(out, title):
    runs = load(out)
    dev = dev_table(runs)
    b_chosen = choose(out)
    body, written = [], []

    # dev: the coupling
    bs = sorted({b for rows in dev.values() for b in rows if b != "single"})
    tasks = ordered({t for rows in dev.values() for row in rows.values() for t in row})
    rows = [[learner, key if key == "single" else f"b={key:g}", *[dev[learner][key].get(t) for t in tasks],
             statistics.fmean(dev[learner][key].values())]
            for learner in sorted(dev) for key in ["single", *bs] if key in dev[learner]]
    write_csv(out, "multitask_dev", ["learner", "model", *tasks, "mean"], rows)
    body += ["### The coupling b, chosen on dev sets", "",
             f"| learner | model | {' | '.join(tasks)} | mean |", "|---" * (len(tasks) + 3) + "|"]
    body += [f"| {r[0]} | {r[1]} | " + " | ".join(fmt(x) for x in r[2:]) + " |" for r in rows]
    body += ["", f"Dev F1. single: a model per corpus; b=B: one model of all the tasks with coupling B. "
             f"Chosen: **b = {b_chosen:g}** (best mean over tasks and learners).", ""]

    # test: single against joint, over seeds
    test = [r for r in runs if r["split"] == "test"]
    joint = [r for r in test if r["kind"] == "joint" and r["b"] == b_chosen]
    single = [r for r in test if r["kind"] == "single"]
    rows = []
    for learner in sorted({r["learner"] for r in joint}):
        gains = []
        for task in ordered({t for r in joint for t in r["scores"]}):
            s = {r["seed"]: r["scores"][task]["f1"] for r in single if r["learner"] == learner and task in r["scores"]}
            j = {r["seed"]: r["scores"][task]["f1"] for r in joint if r["learner"] == learner}
            seeds = sorted(set(s) & set(j))
            if not seeds:
                continue
            (sm, ss), (jm, js) = mean_sd([s[k] for k in seeds]), mean_sd([j[k] for k in seeds])
            wins = sum(j[k] >= s[k] for k in seeds)
            gains.append(jm - sm)
            rows.append([learner, task, len(seeds), sm, ss, jm, js, jm - sm, wins])
        if gains:
            rows.append([learner, "mean", None, None, None, None, None, statistics.fmean(gains), None])
    write_csv(out, "multitask", ["learner", "task", "seeds", "single_f1", "single_sd", "joint_f1", "joint_sd",
                                 "gain", "joint_ahead_at_seeds"], rows)
    body += ["### Single-corpus against joint models (test sets)", "",
             "| learner | corpus | single F1 | joint F1 | gain | joint ≥ single |", "|---|---|---|---|---|---|"]
    for r in rows:
        if r[1] == "mean":
            body.append(f"| {r[0]} | **mean gain** | | | **{r[7]:+.2f}** | |")
        else:
            verdict = "" if r[7] > 0 else " (no gain)"
            body.append(f"| {r[0]} | {r[1]} | {fmt(r[3])} ± {fmt(r[4])} | {fmt(r[5])} ± {fmt(r[6])} | "
                        f"{r[7]:+.2f}{verdict} | {r[8]} of {r[2]} seeds |")
    names = ordered({t for r in joint for t in r["scores"]})
    body += ["", f"configs/cws.toml ({len(joint[0]['log']) if joint else '–'} epochs, averaged) with the learner "
             f"named; joint: {', '.join(names)} as the tasks of one model, coupling b = {b_chosen:g}; mean ± sd "
             "over shuffling seeds; pku: the stand-in training set (see data_scripts/README.md).", ""]

    # cost: training time and model size
    rows = []
    for learner in sorted({r["learner"] for r in joint}):
        by_seed = {}
        for r in single:
            if r["learner"] == learner:
                by_seed.setdefault(r["seed"], []).append(r)
        seeds = sorted(k for k, v in by_seed.items() if len(v) == len(joint[0]["scores"]))
        mine = [r for r in joint if r["learner"] == learner and r["seed"] in seeds]
        if not seeds or not mine:
            continue
        rows.append([learner, "single models, all corpora", len(seeds),
                     *_costs([sum(r["seconds"] for r in by_seed[k]) for k in seeds],
                             [sum(r["passes_seconds"] for r in by_seed[k]) for k in seeds],
                             [sum(r["mib"] for r in by_seed[k]) for k in seeds])])
        rows.append([learner, "joint model", len(mine), *_costs([r["seconds"] for r in mine],
                                                                [r["passes_seconds"] for r in mine],
                                                                [r["mib"] for r in mine])])
    write_csv(out, "multitask_cost", ["learner", "models", "runs", "train_s_min", "train_s_median", "train_s_max",
                                      "passes_s_min", "passes_s_median", "passes_s_max", "model_mib"], rows)
    body += ["### Training time and model size", "",
             "| learner | models | runs | train, end to end (s) | training passes only (s) | model MiB |",
             "|---|---|---|---|---|---|"]
    body += [f"| {r[0]} | {r[1]} | {r[2]} | {fmt(r[3], 1)} / {fmt(r[4], 1)} / {fmt(r[5], 1)} | "
             f"{fmt(r[6], 1)} / {fmt(r[7], 1)} / {fmt(r[8], 1)} | {fmt(r[9], 1)} |" for r in rows]
    body += ["", "min / median / max over the seeds' runs, run one after another on one machine; single: the "
             "sum over the corpora. End to end: the `seqbil train` command (reading, features, "
             "training, saving); passes: the sum of the epochs' times in its log.", ""]

    # an extra corpus as a sixth task
    rows = []
    extra = sorted({r["split"][len("extra-"):] for r in runs if r["split"].startswith("extra-")})
    for c in extra:
        for learner in sorted({r["learner"] for r in runs if r["split"] == f"extra-{c}"}):
            j = {r["seed"]: r for r in runs if r["split"] == f"extra-{c}" and r["learner"] == learner}
            s = {r["seed"]: r["scores"][c]["f1"] for r in runs
                 if r["split"] == "extra" and c in r["scores"] and r["learner"] == learner}
            seeds = sorted(set(s) & set(j))
            if not seeds:
                continue
            (sm, ss), (jm, js) = mean_sd([s[k] for k in seeds]), mean_sd([j[k]["scores"][c]["f1"] for k in seeds])
            others = statistics.fmean(f["f1"] for k in seeds for t, f in j[k]["scores"].items() if t != c)
            five = [r for r in joint if r["learner"] == learner and r["seed"] in seeds]
            before = statistics.fmean(f["f1"] for r in five for f in r["scores"].values()) if five else None
            rows.append([c, learner, len(seeds), sm, ss, jm, js, jm - sm, sum(j[k]["scores"][c]["f1"] >= s[k]
                                                                             for k in seeds), before, others])
    if rows:
        write_csv(out, "multitask_extra", ["corpus", "learner", "seeds", "single_f1", "single_sd", "joint_f1",
                                           "joint_sd", "gain", "joint_ahead_at_seeds", "five_tasks_mean_f1_before",
                                           "five_tasks_mean_f1_after"], rows)
        body += ["### An extra corpus as a sixth task", "",
                 "| corpus | learner | single F1 | in the joint model | gain | joint ≥ single | "
                 "the other tasks' mean F1: without / with it |", "|---|---|---|---|---|---|---|"]
        body += [f"| {r[0]} | {r[1]} | {fmt(r[3])} ± {fmt(r[4])} | {fmt(r[5])} ± {fmt(r[6])} | {r[7]:+.2f} | "
                 f"{r[8]} of {r[2]} seeds | {fmt(r[9])} / {fmt(r[10])} |" for r in rows]
        body += ["", "as (traditional characters, Academia Sinica standard) and msr: corpora with no training "
                 "set at hand, so each is its SIGHAN 2005 test set split 80% / 20% (fixed seed) into training "
                 "and test parts: a check of a standard the configuration was not chosen on, not a bakeoff "
                 "score.", ""]

    # mistakes while learning: coupled against independent (b = 0)
    rows, curves = [], {}
    for learner in sorted({r["learner"] for r in test}):
        pair = {b: next((r for r in test if r["kind"] == "joint" and r["b"] == b and r["learner"] == learner
                         and r["seed"] == 1), None) for b in (0.0, b_chosen)}
        if None in pair.values():
            continue
        for b, r in pair.items():
            curves[(learner, b)] = _curve(r)
        for task in ordered(pair[0.0]["log"][0]["task_mistakes"]):
            first = [pair[b]["log"][0]["task_mistakes"][task] for b in (0.0, b_chosen)]
            total = [sum(rec["task_mistakes"][task] for rec in pair[b]["log"]) for b in (0.0, b_chosen)]
            rows.append([learner, task, *first, *total])
    if rows:
        write_csv(out, "multitask_mistakes", ["learner", "task", "first_pass_independent", "first_pass_coupled",
                                              "all_passes_independent", "all_passes_coupled"], rows)
        body += ["### Mistakes while learning", "",
                 f"| learner | task | first pass: b = 0 | b = {b_chosen:g} | all passes: b = 0 | b = {b_chosen:g} |",
                 "|---|---|---|---|---|---|"]
        body += [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} |" for r in rows]
        body += ["", "Training sequences decoded wrongly (each a perceptron update), seed 1. b = 0: the same joint "
                 "run with independent tasks, each learning alone; the first pass is the online setting of "
                 "Cavallanti et al., whose claim is about these counts.", ""]
        png = save_plot(out, "multitask_mistakes", lambda plt: _draw(plt, curves, b_chosen))
        if png:
            written.append(png)
            body += [f"![cumulative mistakes per task, first pass]({png.name})", ""]
    written.append(write_md(out, "multitask", title, body))
    return written


def _costs(seconds, passes, mib):
    return (min(seconds), statistics.median(seconds), max(seconds), min(passes), statistics.median(passes),
            max(passes), statistics.median(mib))


def _curve(run):
    """{task: (examples seen, cumulative mistakes)} over the first pass, chunk by chunk."""
    import numpy as np
    first = run["log"][0]
    seen = np.cumsum(first["task_sequences_per_chunk"], axis=0)
    wrong = np.cumsum(first["task_mistakes_per_chunk"], axis=0)
    return {task: (seen[:, i], wrong[:, i]) for i, task in enumerate(first["task_mistakes"])}


def _draw(plt, curves, b):
    """Per learner: cumulative mistakes per task, independent (dashed) and coupled
    (solid); below, their ratio."""
    learners = sorted({lr for lr, _ in curves})
    fig, axes = plt.subplots(2, len(learners), figsize=(6 * len(learners), 8), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2]})
    for col, learner in enumerate(learners):
        top, bottom = axes[0][col], axes[1][col]
        for i, task in enumerate(ordered(curves[(learner, b)])):
            color = f"C{i}"
            (x0, y0), (x1, y1) = curves[(learner, 0.0)][task], curves[(learner, b)][task]
            top.plot(x0, y0, "--", color=color, label=f"{task}, independent")
            top.plot(x1, y1, "-", color=color, label=f"{task}, b = {b:g}")
            seen = (x0 > 0) & (x1 == x0) & (y0 > 0)  # the same examples seen: chunk by chunk
            bottom.plot(x1[seen], y1[seen] / y0[seen], "-", color=color, label=task)
        top.set_xscale("log")
        top.set_yscale("log")
        top.set_ylabel("cumulative mistakes")
        top.set_title(f"{learner}: independent (dashed) against coupled (solid)")
        top.legend(fontsize=7, ncol=2)
        bottom.axhline(1.0, color="grey", lw=0.8)
        bottom.set_xscale("log")
        bottom.set_xlabel("training sequences of the task seen (first pass)")
        bottom.set_ylabel("coupled / independent")
        bottom.legend(fontsize=7, ncol=3)
    return fig


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["choose", "report"])
    ap.add_argument("out", type=Path)
    ap.add_argument("--title", default="Multi-task learning")
    args = ap.parse_args()
    if args.what == "choose":
        print(f"{choose(args.out):g}")
    else:
        for path in report(args.out, args.title):
            print(f"wrote {path}")


if __name__ == "__main__":
    main()
