"""Choices and tables of experiments/rpa_tagging.sh, from the files its runs leave.

    python rpa_tagging.py templates CONFIG all|nowords SPARSE EMB
                                                  writes a bundled config's templates (nowords:
                                                  but those that read column 0), and the same
                                                  with the %emb rows, as template files
    python rpa_tagging.py choose OUT_DIR SPLIT    prints "METHOD EPOCHS OPTIONS..." per method,
                                                  the best on held-out data for the training
                                                  set SPLIT (conll10, conllpos25, ...; conll,
                                                  conllpos or pku: the whole set)
    python rpa_tagging.py report OUT_DIR [--title TEXT]

Runs (in OUT_DIR/runs/): SPLIT__METHOD__SEED with .eval.json, .jsonl (`seqbil train
--log`), .time (wall seconds of the train command) and .size (model bytes). SPLIT is
heldSPLIT (the last 10% of the whole training set held out and scored after every epoch,
training on the training set SPLIT, or for CORPUS alone on the other 90%),
conllN (the first N% of CoNLL-2000's training set), conllposN (the same with the sparse
templates that read the words left out) or pku. METHOD is one of
METHODS, on held-out data followed by its setting: -C0.1 (the C of PA-II), -lambda0.1.
"""
import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from report import mean_sd, write_csv, write_md  # noqa: E402

METHODS = {
    "sp": "sp, the averaged structured perceptron",
    "pa": "rpa on the sparse templates alone: structured PA-II",
    "frozen-rand": "rpa --freeze-embeddings, random vectors: PA-II on fixed vectors",
    "rpa-rand": "rpa, random vectors re-embedded",
    "frozen-aso": "rpa --freeze-embeddings, vectors from seqbil aso",
    "rpa-aso": "rpa, vectors from seqbil aso re-embedded",
}
EMB_ROWS = ["U90:%emb[-1,0]", "U91:%emb[0,0]", "U92:%emb[1,0]"]
SETTING = re.compile(r"^(?P<method>.+?)(?:-(?P<option>C|lambda)(?P<value>[0-9.e+-]+))?$")
CORPORA = ["conll", "conllpos", "pku"]
SPLITS = [f"{c}{n}" for c in CORPORA[:2] for n in (10, 25, 50, 100)] + ["pku"]


def templates(config, words=True):
    """(sparse, with the %emb rows): a bundled config's templates, without those that read
    the words (column 0) unless words, each list ending with the label transitions B."""
    from seqbil.params import bundled_config, load_config
    sparse = [t for t in load_config(bundled_config(config + ".toml"))["templates"]
              if t != "B" and (words or ",0]" not in t)]
    return sparse + ["B"], sparse + EMB_ROWS + ["B"]


def write_templates(config, which, sparse_path, emb_path):
    for path, lines in zip((sparse_path, emb_path), templates(config, which == "all")):
        Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def dev_f1(record):
    dev = record["dev"]
    return dev["f1"] if "f1" in dev else dev["accuracy"]


def load(out):
    runs = []
    for path in sorted((out / "runs").glob("*.eval.json")):
        name = path.name[:-len(".eval.json")]
        split, cond, seed = name.split("__")
        m = SETTING.match(cond)
        if m is None or m["method"] not in METHODS:
            continue
        base = out / "runs" / name
        log = [json.loads(line) for line in base.with_name(f"{name}.jsonl").read_text().splitlines() if line]
        score = json.loads(path.read_text())
        epochs = max((r["pass"] for r in log if "pass" in r), default=0)
        runs.append({"split": split, "method": m["method"],
                     "option": m["option"] and f"{'-C' if m['option'] == 'C' else '--lambda'} {m['value']}",
                     "seed": int(seed), "f1": score["f1"] if "f1" in score else score["accuracy"],
                     "curve": [dev_f1(r) for r in log if "dev" in r], "epochs": epochs,
                     "seconds": float(base.with_name(f"{name}.time").read_text()),
                     "epoch_seconds": sum(r["seconds"] for r in log) / max(epochs, 1),
                     "mib": int(base.with_name(f"{name}.size").read_text()) / 2 ** 20})
    return runs


def choices(runs, split):
    """{method: (held-out F1, epochs, option, every setting's (option, best F1, epochs))}:
    the best epoch of each setting's held-out curve, then the best setting (ties: the
    fewer epochs, then the first setting)."""
    out = {}
    for method in METHODS:
        settings = []
        for r in runs:
            if r["split"] == f"held{split}" and r["method"] == method and r["curve"]:
                best = max(range(len(r["curve"])), key=lambda i: (r["curve"][i], -i))
                settings.append((r["option"] or "", r["curve"][best], best + 1))
        if settings:
            option, f1, epochs = max(settings, key=lambda s: (s[1], -s[2]))
            out[method] = (f1, epochs, option, sorted(settings))
    return out


def choose(out, split):
    for method, (_, epochs, option, _) in choices(load(out), split).items():
        print(method, epochs, option)



def report(out, title):
    runs = load(out)
    body = []
    for lang, what in (("en", "English words (CoNLL-2000)"), ("zh", "Chinese characters (pku)")):
        log = out / "runs" / f"{lang}.aso.out"
        if log.exists():
            wrote = [line for line in log.read_text().splitlines() if line.startswith("wrote") and "vectors" in line]
            body.append(f"- Vectors for {what}: {wrote[-1].split(': ', 1)[1] if wrote else '?'}, seqbil aso's "
                        "current-word split on the raw text.")
    # held-out choices
    held_rows = []
    for split in SPLITS:
        held = split.removesuffix("100")
        for method, (f1, epochs, option, settings) in choices(runs, held).items():
            for opt, f, e in settings:
                held_rows.append([split, method, opt or "–", e, f"{f:.2f}", "yes" if opt == option else ""])
    if held_rows:
        write_csv(out, "rpa_tagging_held", ["split", "method", "setting", "best_epoch", "held_f1", "chosen"],
                  held_rows)
        body += ["", "## Choices on held-out data (the last 10% of the whole training set; a model trained on the "
                 "training set, the whole set's on the other 90%; best epoch of each setting)", "",
                 "| training set | method | setting | best epoch | held-out F1 | chosen |", "|---|---|---|---|---|---|"]
        body += ["| " + " | ".join(map(str, r)) + " |" for r in held_rows]
    # test runs
    rows, groups = [], {}
    for r in runs:
        if not r["split"].startswith("held"):
            groups.setdefault((r["split"], r["method"]), []).append(r)
    splits = [s for s in SPLITS if any(k[0] == s for k in groups)]
    for split in splits:
        for method in METHODS:
            g = sorted(groups.get((split, method), []), key=lambda r: r["seed"])
            if not g:
                continue
            mean, sd = mean_sd([r["f1"] for r in g])
            rows.append([split, method, f"{mean:.2f}", f"{sd:.2f}", len(g), g[0]["epochs"],
                         f"{statistics.median(r['seconds'] for r in g):.1f}",
                         f"{statistics.median(r['epoch_seconds'] for r in g):.2f}", f"{g[0]['mib']:.1f}"])
    header = ["split", "method", "f1", "sd", "seeds", "epochs", "train_s", "epoch_s", "model_mib"]
    path = write_csv(out, "rpa_tagging", header, rows)
    body += ["", "## Test F1 (mean and sd over seeds)", "",
             "Train seconds: the whole `seqbil train` command, median over seeds, two runs sharing the machine "
             "(benchmarks/rpa_speed.py times an epoch alone). Epoch seconds: the learner's passes.", "",
             "| split | " + " | ".join(header[1:]) + " |", "|---" * len(header) + "|"]
    body += ["| " + " | ".join(map(str, r)) + " |" for r in rows]
    # the comparisons
    body += ["", "## rpa against the same learner on fixed vectors, and against sp", ""]
    for split in splits:
        parts = []
        for vec in ("rand", "aso"):
            a, b = groups.get((split, f"rpa-{vec}"), []), groups.get((split, f"frozen-{vec}"), [])
            pairs = {r["seed"]: r["f1"] for r in b}
            diffs = [r["f1"] - pairs[r["seed"]] for r in a if r["seed"] in pairs]
            if diffs:
                mean, sd = mean_sd(diffs)
                parts.append(f"{vec} vectors {mean:+.2f} ± {sd:.2f} over frozen (ahead at "
                             f"{sum(d > 0 for d in diffs)} of {len(diffs)} seeds)")
        sp = groups.get((split, "sp"))
        best = max((m for m in ("rpa-rand", "rpa-aso") if (split, m) in groups),
                   key=lambda m: statistics.fmean(r["f1"] for r in groups[(split, m)]), default=None)
        if sp and best:
            gap = statistics.fmean(r["f1"] for r in groups[(split, best)]) - statistics.fmean(r["f1"] for r in sp)
            parts.append(f"{best} {gap:+.2f} against sp")
        if parts:
            body.append(f"- {split}: " + "; ".join(parts) + ".")
    body += ["", "Methods:", ""] + [f"- {m}: {d}" for m, d in METHODS.items()]
    body += ["", "conllposN: CoNLL-2000 with the sparse templates that read the words left out (the POS "
             "templates and the label transitions): the words reach the model only through their vectors."]
    write_md(out, "rpa_tagging", title, body)
    print(f"wrote {path} and {out / 'rpa_tagging.md'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    t = sub.add_parser("templates")
    t.add_argument("config")
    t.add_argument("which", choices=("all", "nowords"))
    t.add_argument("sparse")
    t.add_argument("emb")
    c = sub.add_parser("choose")
    c.add_argument("out", type=Path)
    c.add_argument("split", help="a training set: conll10, conllpos25, ...; conll, conllpos, pku")
    r = sub.add_parser("report")
    r.add_argument("out", type=Path)
    r.add_argument("--title", default="rpa in sequence labelling")
    args = ap.parse_args()
    if args.command == "templates":
        write_templates(args.config, args.which, args.sparse, args.emb)
    elif args.command == "choose":
        choose(args.out, args.split)
    else:
        report(args.out, args.title)


if __name__ == "__main__":
    main()
