"""The learner and its settings for the shipped configs (conll2000, pos, ner, cws), chosen
again on dev data with the crf learner among the candidates, and python-crfsuite's L-BFGS
CRF against seqbil on the same rich word features. Run by experiments/config_choice.sh.

    python config_choice.py --out DIR --corpus "NAME|CONFIG|TRAIN|DEV"... [--quick] [--command TEXT]

Every candidate trains on TRAIN and is scored on DEV (never a test set): the config as
shipped (its learner) and the same templates with each learner of LEARNERS, all with
temperature 1 and otherwise the config's settings (a learner the config is not written for
gets its own defaults for the options the config sets: seqbil's rule). crf is given no c1
or c2, so it chooses c2 itself within TRAIN: on its last tenth, or by 10-fold
cross-validation for up to 25,000 tokens; what it chose is the model's training.selection,
read as `seqbil inspect --json` reads it (seqbil.info.model_info of the saved file). A
corpus of the pos or ner config also gets RICH, a template of the usual rich word features:
the config's learner, crf (c2 its own choice) and crf with CRFsuite's settings (PEER) on it,
and python-crfsuite's L-BFGS CRF (benchmarks/crfsuite_peer.py) with the same template and
PEER's settings. --quick: every seqbil run QUICK_EPOCHS epochs (crf: iterations), the peer
QUICK_PEER_ITERATIONS.

A run leaves OUT/runs/NAME.json (its dev score, seconds and what its model keeps) and
NAME.out (its messages), and is not run again while NAME.json is there; an interrupted run
leaves nothing. Then config_choice.csv, .json and .md (a row per
run) and config_choice_winners.csv and .json: per config, the candidate with the best mean
dev score over the config's corpora and its margin over the config as shipped.
"""
import argparse
import importlib.util
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import seqbil
from seqbil.evaluation import headline
from seqbil.formats import make_format, read_corpus
from seqbil.info import model_info
from seqbil.model import Model
from seqbil.params import AUTO, find_config, resolve

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "benchmarks"))
from record import write_record  # noqa: E402
from report import fmt, write_csv, write_md  # noqa: E402

CONFIGS = ["conll2000", "pos", "ner", "cws"]
LEARNERS = ["sp", "bol", "crf", "pa", "arow"]
# what the table shows of each learner's settings (as the model keeps them)
SETTINGS = {"sp": ("epochs", "averaged"), "bol": ("epochs", "C", "averaged", "power_steps"),
            "pa": ("epochs", "C", "pa_type", "averaged"), "arow": ("epochs", "arow_variance", "arow_gamma"),
            "crf": ("epochs", "c1", "c2")}
RICH_CONFIGS = ("pos", "ner")
# the usual rich features of a word (as in sklearn-crfsuite's tutorial, and more): the
# word, lower case, prefixes and suffixes of 1 to 3 characters, shape, title / upper /
# digit flags, each at -1, 0 and +1; a state feature each in CRFsuite, the label
# transitions (B) in both
FUNCTIONS = ["", "|lower", "|prefix:1", "|prefix:2", "|prefix:3", "|suffix:1", "|suffix:2", "|suffix:3", "|shape",
             "|istitle", "|isupper", "|isdigit"]
RICH = [f"U{k}{j:02d}:%x[{r},0]{f}" for k, r in enumerate((-1, 0, 1)) for j, f in enumerate(FUNCTIONS)] + ["B"]
PEER = {"c1": 0.1, "c2": 0.1, "iterations": 100}
QUICK_EPOCHS, QUICK_PEER_ITERATIONS = 3, 10
DESCRIPTIONS = {
    "chunking": "CoNLL-2000 training set (word POS chunk), chunk F1",
    "pos": "CoNLL-2000 training set, word and POS columns: POS tagging, token accuracy",
    "chunk-words": "CoNLL-2000 training set, word and chunk columns: chunking from the words alone (an NER "
                   "stand-in), chunk F1",
    "pku": "SIGHAN 2005 pku (the stand-in training set), word F1",
    "sxu": "SIGHAN 2008 SXU training set, word F1",
    "udc": "cws-more udc (UD Chinese GSD), its own train and dev sets, word F1",
    "wtb": "cws-more wtb (Weibo Treebank), its own train and dev sets, word F1",
    "zx": "cws-more zx (Zhuxian), its own train and dev sets, word F1",
    "sample": "the bundled pku sample, word F1",
}
# the rows that are not a learner of seqbil with its own choices
SYSTEMS = {"crf-peer-settings": "seqbil's crf with CRFsuite's settings (c1 = c2 = {c1:g}, at most {n} iterations)",
           "crfsuite": "python-crfsuite's L-BFGS CRF (benchmarks/crfsuite_peer.py), c1 = c2 = {c1:g}, at most {n} "
                       "iterations"}


class Corpus:
    def __init__(self, spec):
        parts = spec.split("|")
        if len(parts) != 4 or not all(parts):
            sys.exit(f"--corpus {spec!r}: give NAME|CONFIG|TRAIN|DEV")
        self.name, self.config, train, dev = parts
        self.train, self.dev = Path(train), Path(dev)
        for path in (self.train, self.dev):
            if not path.is_file():
                sys.exit(f"--corpus {spec!r}: {path} not found")
        self.settings = resolve(find_config(self.config))
        # (a config that chooses its learner, learner = auto, ships its first candidate, its own)
        self.shipped = self.settings.learner if self.settings.learner != AUTO else self.settings.candidates[0]

    def sizes(self):
        """{train, dev: {sentences, tokens}} (tokens: characters for segmentation)."""
        fmt_ = make_format(self.settings.format, None, self.settings.label_column)
        out = {}
        for part, path in (("train", self.train), ("dev", self.dev)):
            sentences = read_corpus(fmt_, str(path), self.settings.encoding)
            out[part] = {"sentences": len(sentences), "tokens": sum(map(len, sentences))}
        return out


def candidates(corpus, peer):
    """The runs of a corpus: (name, features, system, learner, options), the config as
    shipped first."""
    out = [("config", learner, learner, {}) for learner in dict.fromkeys([corpus.shipped, *LEARNERS])]
    if corpus.config in RICH_CONFIGS:
        out += [("rich", learner, learner, {}) for learner in dict.fromkeys([corpus.shipped, "crf"])]
        out.append(("rich", "crf-peer-settings", "crf", {"c1": PEER["c1"], "c2": PEER["c2"]}))
        if peer:
            out.append(("rich", "crfsuite", None, {}))
    return [(f"{corpus.name}__{features}__{system}", features, system, learner, options)
            for features, system, learner, options in out]


def run_seqbil(corpus, features, learner, options, base, rich_path, quick):
    """Train on the corpus's TRAIN, save, read back what `seqbil inspect --json` shows,
    score DEV. Seconds: the seqbil.train call (reading, encoding, crf's choice of c2, the
    passes, compaction)."""
    opts = {"config": corpus.config, "learner": learner, "temperature": 1.0,
            **({"template": str(rich_path)} if features == "rich" else {}),
            **({"epochs": QUICK_EPOCHS} if quick else {}), **options}
    if "c2" in options:  # CRFsuite's settings: its iteration cap too
        opts["epochs"] = QUICK_PEER_ITERATIONS if quick else PEER["iterations"]
    messages = []
    start, cpu = time.perf_counter(), time.process_time()
    model = seqbil.train(str(corpus.train), echo=messages.append, **opts)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    base.with_suffix(".out").write_text("\n".join(messages) + "\n", encoding="utf-8")
    path = base.with_suffix(".sbm")
    model.save(path)
    saved = Model.load(path)
    info = model_info(saved, path)  # what `seqbil inspect --json` prints
    result = seqbil.evaluate(saved, str(corpus.dev))
    del saved
    path.unlink()  # models are large; the size is kept
    metric, score = headline(result)
    trained_as = info["learner"]
    return {"options": {k: (Path(v).name if k == "template" else v) for k, v in opts.items()},
            "trained_as": trained_as, "metric": metric, "score": score,
            "scores": {k: v for k, v in result.items() if isinstance(v, (int, float))},
            "train_seconds": seconds, "cpu_seconds": cpu, "passes": info["training"]["passes_run"],
            "settings": {k: info["params"][k] for k in SETTINGS.get(trained_as, ("epochs",))},
            "selection": info["training"].get("selection") or None, "model_bytes": info["file"]["size_bytes"]}


def in_thread(fn, *args):
    """fn(*args) in a worker thread, so that an interrupt stops this process at once with
    nothing recorded: seqbil.train, in the main thread, would take the first Ctrl-C as "stop
    after this pass" and return a shortened run (or, while crf chooses c2, shorten one
    setting's run without a word), which would then be recorded as finished."""
    pool = ThreadPoolExecutor(1)
    try:
        result = pool.submit(fn, *args).result()
    except KeyboardInterrupt:
        print("config_choice: interrupted; the run under way is not recorded (run the script again to "
              "continue)", flush=True)
        os._exit(130)
    pool.shutdown()
    return result


def run_peer(corpus, rich_path, quick):
    """benchmarks/crfsuite_peer.py on the same template, TRAIN and DEV. Seconds: building
    its attribute strings in Python plus CRFsuite's training call."""
    iterations = QUICK_PEER_ITERATIONS if quick else PEER["iterations"]
    cmd = [sys.executable, str(ROOT / "benchmarks" / "crfsuite_peer.py"), "--config", corpus.config, "--template",
           str(rich_path), "--train", str(corpus.train), "--test", str(corpus.dev), "--algorithm", "lbfgs",
           "--c1", str(PEER["c1"]), "--c2", str(PEER["c2"]), "--iterations", str(iterations)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(cmd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        sys.exit(f"config_choice: failed: {' '.join(cmd)}\n{proc.stderr}")
    peer = json.loads(proc.stdout.strip().splitlines()[-1])
    return {"options": {"algorithm": "lbfgs", "c1": PEER["c1"], "c2": PEER["c2"], "max_iterations": iterations,
                        "template": rich_path.name},
            "trained_as": "crfsuite lbfgs", "metric": "F1" if peer["metric"] in ("chunk", "segment") else "acc",
            "score": peer["f1"], "train_seconds": peer["feature_seconds"] + peer["train_seconds"],
            "cpu_seconds": cpu,
            "crfsuite_train_seconds": peer["train_seconds"], "feature_seconds": peer["feature_seconds"],
            "passes": peer["iterations"], "settings": {"c1": PEER["c1"], "c2": PEER["c2"],
                                                       "max_iterations": iterations},
            "selection": None, "model_bytes": round(peer["model_mib"] * 2 ** 20)}


def run_all(corpora, runs, rich_path, quick, peer, skip=()):
    """Every candidate's run record (those already in runs/ are read, not run; those of
    skip, FEATURES:SYSTEM, neither)."""
    records = []
    for corpus in corpora:
        print(f"config_choice: {corpus.name} ({corpus.config}.toml)", flush=True)
        for name, features, system, learner, options in candidates(corpus, peer):
            if f"{features}:{system}" in skip:
                continue
            path = runs / f"{name}.json"
            if not path.exists():
                print(f"  {name}", flush=True)
                rec = run_peer(corpus, rich_path, quick) if system == "crfsuite" else \
                    in_thread(run_seqbil, corpus, features, learner, options, runs / name, rich_path, quick)
                write_record(path, {"run": name, "corpus": corpus.name, "config": corpus.config,
                                    "features": features, "system": system, "learner": learner, **rec})
            records.append(json.loads(path.read_text(encoding="utf-8")))
    return records


def chosen_c2(rec):
    sel = rec.get("selection") or {}
    return sel.get("chosen", {}).get("c2"), sel.get("on")


def settings_text(rec):
    return ", ".join(f"{k} {str(v).lower() if isinstance(v, bool) else f'{v:g}' if isinstance(v, float) else v}"
                     for k, v in rec["settings"].items())


def system_text(rec, shipped):
    if rec["system"] in SYSTEMS:
        return rec["system"]
    text = rec["system"] + (" (shipped)" if rec["features"] == "config" and rec["system"] == shipped else "")
    if rec["trained_as"] != rec["learner"]:
        text += f" (trained as {rec['trained_as']}: nothing to factor)"
    return text


def winners(corpora, records):
    """Per config: the candidate (config templates) with the best mean dev score over the
    config's corpora (ties: the shipped learner, then LEARNERS' order), against the shipped one."""
    by = {(r["corpus"], r["system"]): r for r in records if r["features"] == "config"}
    out = []
    for config in [c for c in CONFIGS if any(k.config == c for k in corpora)]:
        mine = [c for c in corpora if c.config == config]
        shipped = mine[0].shipped
        order = list(dict.fromkeys([shipped, *LEARNERS]))
        means = {s: statistics.fmean(by[c.name, s]["score"] for c in mine) for s in order
                 if all((c.name, s) in by for c in mine)}
        if shipped not in means:
            continue
        best = max(means, key=lambda s: means[s])  # the first of equals: the shipped learner
        won = [c.name for c in mine if max(order, key=lambda s: by[c.name, s]["score"]) == best]
        runner_up = max((s for s in means if s != best), key=lambda s: means[s], default=None)
        out.append({"config": config, "corpora": [c.name for c in mine], "metric": by[mine[0].name, shipped]["metric"],
                    "shipped": shipped, "shipped_score": means[shipped], "winner": best, "winner_score": means[best],
                    "margin": means[best] - means[shipped], "corpora_won": len(won), "runner_up": runner_up,
                    "cpu_ratio": sum(by[c.name, best]["cpu_seconds"] for c in mine) /
                    sum(by[c.name, shipped]["cpu_seconds"] for c in mine),
                    "runner_up_score": means.get(runner_up),
                    "winner_settings": {c.name: by[c.name, best]["settings"] for c in mine},
                    "crf_c2": {c.name: chosen_c2(by[c.name, "crf"])[0] for c in mine if (c.name, "crf") in by}})
    return out


def winner_line(w):
    unit = "F1" if w["metric"] == "F1" else "accuracy points"
    where = f" (means over {', '.join(w['corpora'])})" if len(w["corpora"]) > 1 else ""
    if w["winner"] == w["shipped"]:
        tail = (f"; the next best, {w['runner_up']}, {fmt(w['runner_up_score'])}, is "
                f"{fmt(w['winner_score'] - w['runner_up_score'])} {unit} behind") if w["runner_up"] else ""
        return (f"- **{w['config']}.toml**: the shipped learner, {w['shipped']}, stays ahead: {fmt(w['shipped_score'])}"
                f"{where}{tail}.")
    won = f", best on {w['corpora_won']} of {len(w['corpora'])}" if len(w["corpora"]) > 1 else ""
    c2 = (" (c2 chosen: " + ", ".join(f"{c} {v:g}" for c, v in w["crf_c2"].items() if v is not None) + ")"
          if w["winner"] == "crf" and w["crf_c2"] else "")
    return (f"- **{w['config']}.toml**: {w['winner']}{c2} {fmt(w['winner_score'])} against the shipped "
            f"{w['shipped']} {fmt(w['shipped_score'])}{where}: {w['margin']:+.2f} {unit}{won}.")


def report(out, corpora, records, sizes, peer, quick, skipped=()):
    shipped = {c.name: c.shipped for c in corpora}
    base = {r["corpus"]: r for r in records if r["features"] == "config" and r["system"] == shipped[r["corpus"]]}
    rows = []
    for r in records:
        c2, on = chosen_c2(r)
        rows.append([r["corpus"], r["config"], r["features"], r["system"], r["trained_as"],
                     "yes" if r["features"] == "config" and r["system"] == shipped[r["corpus"]] else "",
                     r["metric"], round(r["score"], 4), round(r["score"] - base[r["corpus"]]["score"], 4),
                     round(r["cpu_seconds"], 2), r["passes"], "" if c2 is None else c2, on or "",
                     settings_text(r)])
    header = ["corpus", "config", "features", "system", "trained_as", "shipped", "metric", "dev_score",
              "vs_shipped", "cpu_seconds", "passes", "c2_chosen", "c2_chosen_on", "settings"]
    won = winners(corpora, records)
    protocol = ("Each candidate trains on the corpus's training part and is scored on its dev part, never on a "
                "test set; temperature 1 (nothing fitted); otherwise the config's settings. crf is given no c1 or "
                "c2: it chooses c2 within the training part (its last tenth, or 10-fold cross-validation for up to "
                "25,000 tokens). CPU seconds: one run each, on a machine shared with other work (indicative "
                "only; CPU time, which other work on the machine does not lengthen).")
    if skipped:
        protocol += " Not run: " + "; ".join(skipped) + "."
    extra = {"quick": quick, "protocol": protocol, "rich_template": RICH, "peer": PEER,
             "corpora": {c.name: {"config": c.config, "train": c.train.name, "dev": c.dev.name, **sizes[c.name]}
                         for c in corpora},
             "winners": won, "runs": records}
    path = write_csv(out, "config_choice", header, rows, extra=extra)
    write_csv(out, "config_choice_winners",
              ["config", "corpora", "metric", "shipped", "shipped_score", "winner", "winner_score", "margin",
               "corpora_won"],
              [[w["config"], " ".join(w["corpora"]), w["metric"], w["shipped"], round(w["shipped_score"], 4),
                w["winner"], round(w["winner_score"], 4), round(w["margin"], 4), w["corpora_won"]] for w in won])
    body = [protocol, "", "### The choice per config", "",
            "| config | corpora | shipped | its dev score | winner | its dev score | margin | CPU time, winner / shipped |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    body += [f"| {w['config']}.toml | {', '.join(w['corpora'])} | {w['shipped']} | {fmt(w['shipped_score'])} | "
             f"{w['winner']} | {fmt(w['winner_score'])} | {w['margin']:+.2f} | {w['cpu_ratio']:.3g}× |" for w in won]
    body += ["", "Dev scores averaged over a config's corpora (F1; pos: token accuracy). The winner is named by the "
                 "dev score alone; the test sets are for a later run of the chosen setting. CPU time: the winner's "
                 "training runs over the config's corpora against the shipped learner's (summed CPU seconds).", ""]
    body += [winner_line(w) for w in won]
    body += ["", "### Every candidate", "",
             "| corpus | features | system | dev score | vs shipped | CPU (s) | passes | c2 chosen | settings |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in records:
        c2, on = chosen_c2(r)
        body.append(f"| {r['corpus']} ({r['config']}) | {r['features']} | {system_text(r, shipped[r['corpus']])} | "
                    f"{fmt(r['score'])} | {r['score'] - base[r['corpus']]['score']:+.2f} | "
                    f"{r['cpu_seconds']:.1f} | {r['passes']} | "
                    f"{'–' if c2 is None else f'{c2:g} ({on})'} | {settings_text(r)} |")
    body += ["", "features: config, the config's own templates; rich, the rich word features below. vs shipped: "
                 "against the config as shipped on the same corpus. CPU (s): of the whole training call, one run "
                 "(seqbil: reading, encoding, crf's choice of c2 and its passes; CRFsuite: its whole process, building "
                 "its attribute strings in Python, its training call and tagging the dev part). passes: epochs, or L-BFGS iterations of the final "
                 "model. c2 chosen: crf's own choice (`seqbil inspect --json`: training.selection) and where."]
    iterations = QUICK_PEER_ITERATIONS if quick else PEER["iterations"]
    body += [f"{name}: {text.format(c1=PEER['c1'], n=iterations)}." for name, text in SYSTEMS.items()
             if any(r["system"] == name for r in records)]
    rich = [r for r in records if r["features"] == "rich"]
    if rich or any(c.config in RICH_CONFIGS for c in corpora):
        body += ["", "### seqbil and CRFsuite on the same rich features", "",
                 "The template (seqbil's syntax; python-crfsuite gets each U template as a state feature, B as its "
                 "label transitions): `" + " ".join(RICH) + "`.", ""]
        for corpus in [c for c in corpora if c.config in RICH_CONFIGS]:
            mine = {r["system"]: r for r in rich if r["corpus"] == corpus.name}
            suite = mine.get("crfsuite")
            parts = []
            for system, r in mine.items():
                if system == "crfsuite":
                    continue
                c2, _ = chosen_c2(r)
                label = {"crf-peer-settings": "crf with CRFsuite's settings",
                         "crf": f"crf (c2 {c2:g} chosen)" if c2 is not None else "crf"}.get(system, system)
                parts.append(f"{label} {fmt(r['score'])}" + (f" ({r['score'] - suite['score']:+.2f})" if suite else ""))
            head = f"CRFsuite {fmt(suite['score'])}; seqbil " if suite else "seqbil "
            body.append(f"- {corpus.name}: {head}" + ", ".join(parts) + f"; the config's own templates with "
                        f"{corpus.shipped} {fmt(base[corpus.name]['score'])}.")
        if not peer:
            body.append("- python-crfsuite is not installed: no CRFsuite rows (pip install 'seqbil[bench]').")
    body += ["", "### Corpora", "", "| corpus | config | what | training part | dev part |",
             "| --- | --- | --- | --- | --- |"]
    for c in corpora:
        s = sizes[c.name]
        body.append(f"| {c.name} | {c.config}.toml | {DESCRIPTIONS.get(c.name, '')} | {s['train']['sentences']:,} "
                    f"sentences, {s['train']['tokens']:,} tokens | {s['dev']['sentences']:,} sentences, "
                    f"{s['dev']['tokens']:,} tokens |")
    body += ["", "CoNLL-2000, pku and SXU: the first 90% of the training sentences train, the last 10% are the dev "
                 "part (experiments/lib/subset.py --first 0.9); udc, wtb and zx: their own train and dev sets. "
                 "Tokens: characters for segmentation."]
    title = "The learner of each shipped config, chosen again on dev data" + (" (--quick)" if quick else "")
    md = write_md(out, "config_choice", title, body)
    print(f"wrote {path}\nwrote {md}")
    for w in won:
        print(winner_line(w)[2:].replace("**", ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--corpus", action="append", required=True, metavar="NAME|CONFIG|TRAIN|DEV",
                    help="a corpus: its name, the config that reads it, its training part and its dev part")
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_EPOCHS} epochs, {QUICK_PEER_ITERATIONS} CRFsuite "
                                                         "iterations")
    ap.add_argument("--command", help="the command line (meta.txt, written by the script, records it)")
    ap.add_argument("--skip-corpus", action="append", default=[], metavar="NAME",
                    help="leave out this corpus (a config's mean is then over the others)")
    ap.add_argument("--skip-run", action="append", default=[], metavar="FEATURES:SYSTEM",
                    help="leave out these candidates on every corpus, e.g. rich:crf")
    ap.add_argument("--why", default="", help="why corpora or runs are left out (in the report)")
    args = ap.parse_args()
    corpora = [Corpus(spec) for spec in args.corpus]
    unknown = set(args.skip_corpus) - {c.name for c in corpora}
    if unknown:
        sys.exit(f"config_choice: --skip-corpus {', '.join(sorted(unknown))}: no such corpus")
    corpora = [c for c in corpora if c.name not in args.skip_corpus]
    kinds = {f"{f}:{s}" for c in corpora for _, f, s, _, _ in candidates(c, True)}
    unknown = set(args.skip_run) - kinds
    if unknown:
        sys.exit(f"config_choice: --skip-run {', '.join(sorted(unknown))}: no such candidate "
                 f"(one of {', '.join(sorted(kinds))})")
    skipped = [f"the corpus {n}" for n in args.skip_corpus] + [f"the {k.replace(':', ' ')} runs" for k in args.skip_run]
    if skipped and args.why:
        skipped[-1] += f" ({args.why})"
    if len({c.name for c in corpora}) < len(corpora):
        sys.exit("config_choice: two corpora with one name")
    runs = args.out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    rich_path = runs / "rich.template"
    rich_path.write_text("\n".join(RICH) + "\n", encoding="utf-8")
    peer = importlib.util.find_spec("pycrfsuite") is not None
    start = time.perf_counter()
    records = run_all(corpora, runs, rich_path, args.quick, peer, set(args.skip_run))
    sizes = {c.name: c.sizes() for c in corpora}
    report(args.out, corpora, records, sizes, peer, args.quick, skipped)
    print(f"config_choice: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
