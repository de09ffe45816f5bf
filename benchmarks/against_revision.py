"""Model loading and `seqbil tag` end to end, this checkout against an earlier revision
of seqbil, in one run: what a change costs where every user pays it.

    python benchmarks/against_revision.py REV [--repeat 7] [--copies 10] [--data DIR]

REV is checked out in a temporary git worktree (its kernels copied from this checkout
when cython_ext/ and setup.py are the same, else built there). Two models are made by
this checkout: a CoNLL-2000 chunker (sp, CRF++'s chunking template, 3 epochs) and a
pku segmenter (sp, the paper's templates, 3 epochs). Then, REPEAT times, alternating
the two trees: loading each model in a fresh process (the median of 41 loads, after
imports: seqbil.load, with its checks), and tagging the CoNLL-2000 test set concatenated
COPIES times through the shell (wall time of the whole process, output compared).
Writes results/speed/against_REV.json and .md.
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, byte_compile, find_corpus, header, run_measured, stats, write_record  # noqa: E402

LOAD = ("import statistics, sys, time\nimport seqbil\nload = seqbil.load\ntimes = []\nfor _ in range(41):\n"
        "    t = time.perf_counter()\n    load(sys.argv[1])\n    times.append(time.perf_counter() - t)\n"
        "print(statistics.median(times))")


def worktree(rev, where):
    """A checkout of rev at `where` with its compiled kernels."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(where), rev], check=True,
                   capture_output=True)
    same = subprocess.run(["git", "-C", str(ROOT), "diff", "--quiet", rev, "HEAD", "--", "cython_ext", "setup.py"])
    kernels = sorted((ROOT / "seqbil" / "_kernels").glob("*.so"))
    if same.returncode == 0 and kernels:
        for k in kernels:
            shutil.copy2(k, where / "seqbil" / "_kernels" / k.name)
    else:
        subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-q"], cwd=where, check=True,
                       capture_output=True)
    return where


def python_of(tree):
    """The command line of a Python that imports seqbil from `tree`."""
    return [sys.executable, "-P", "-c", f"import sys; sys.path.insert(0, {str(tree)!r}); "
                                        "import runpy; runpy.run_module('seqbil', run_name='__main__')"]


def load_seconds(tree, model):
    code = f"import sys; sys.path.insert(0, {str(tree)!r})\n" + LOAD
    return float(subprocess.run([sys.executable, "-P", "-c", code, str(model)], capture_output=True, text=True,
                                check=True).stdout)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rev", help="the earlier revision (a commit, tag or branch)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", help="default: results/speed/against_REV.json")
    args = ap.parse_args()
    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short=12", args.rev], capture_output=True, text=True,
                         check=True).stdout.strip()
    out = Path(args.out) if args.out else ROOT / "results" / "speed" / f"against_{rev[:7]}.json"
    byte_compile()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        trees = {"this checkout": ROOT, rev: worktree(rev, tmp / "earlier")}
        try:
            import compileall
            compileall.compile_dir(str(trees[rev] / "seqbil"), quiet=1)
            models = {}
            for name, folder, train, config in (("conll2000", "conll2000", "train.txt", ["--config", "conll2000",
                                                 "--template", str(ROOT / "configs" / "crfpp_chunking.template")]),
                                                ("pku", "sighan2005", "pku_training.approx.utf8",
                                                 ["--config", "sighan2005"])):
                models[name] = tmp / f"{name}.sbm"
                subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "-q", *config, "--learner", "sp",
                                "--epochs", "3", "--temperature", "1", "--train",
                                str(find_corpus(folder, train, args.data)), "--model", str(models[name])],
                               check=True, capture_output=True)
            test = tmp / "test.txt"
            import gzip
            source = find_corpus("conll2000", "test.txt", args.data)
            text = (gzip.open(source, "rt", encoding="utf-8") if source.suffix == ".gz" else
                    open(source, encoding="utf-8")).read()
            test.write_text(text * args.copies, encoding="utf-8")
            tokens = sum(1 for line in text.splitlines() if line.strip()) * args.copies
            loads = {t: {m: [] for m in models} for t in trees}
            tags = {t: [] for t in trees}
            for _ in range(args.repeat):
                for t, tree in trees.items():
                    for m, path in models.items():
                        loads[t][m].append(load_seconds(tree, path))
                    with open(test, "rb") as fin, open(tmp / "out.txt", "wb") as fout:
                        tags[t].append(run_measured(python_of(tree) + ["tag", "-m", str(models["conll2000"])],
                                                    stdin=fin, stdout=fout)[0])
            same_output = _outputs_agree(trees, models["conll2000"], test, tmp)
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(trees[rev])],
                           capture_output=True)
    record = {**header(), "against": rev, "repeat": args.repeat, "copies": args.copies, "tokens": tokens,
              "same_output": same_output,
              "load_s": {t: {m: stats(v) for m, v in per.items()} for t, per in loads.items()},
              "tag_s": {t: stats(v) for t, v in tags.items()}}
    medians = {t: {m: s["median"] for m, s in per.items()} for t, per in record["load_s"].items()}
    record["ratios"] = {"tag": record["tag_s"]["this checkout"]["median"] / record["tag_s"][rev]["median"],
                        **{f"load {m}": medians["this checkout"][m] / medians[rev][m] for m in models}}
    write_record(out, record)
    out.with_suffix(".md").write_text(table(record), encoding="utf-8")
    print(table(record))


def _outputs_agree(trees, model, test, tmp):
    """Whether both trees tag the test set the same, byte for byte."""
    got = []
    for t, tree in trees.items():
        with open(test, "rb") as fin:
            got.append(subprocess.run(python_of(tree) + ["tag", "-m", str(model)], stdin=fin, capture_output=True,
                                      check=True).stdout)
    return got[0] == got[1]


def table(record):
    rev = record["against"]

    def cell(s, digits=3):
        return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}–{s['max']:.{digits}f})"
    rows = [f"| `seqbil tag`, CoNLL-2000 test ×{record['copies']} ({record['tokens']:,} tokens), s | "
            f"{cell(record['tag_s'][rev])} | {cell(record['tag_s']['this checkout'])} | {record['ratios']['tag']:.3f} |"]
    def ms(s):
        return {k: v * 1e3 for k, v in s.items() if k != "runs"}
    for m in record["load_s"][rev]:
        rows.append(f"| loading the {m} model (sp), ms | {cell(ms(record['load_s'][rev][m]), 2)} | "
                    f"{cell(ms(record['load_s']['this checkout'][m]), 2)} | {record['ratios'][f'load {m}']:.3f} |")
    return "\n".join([f"| | {rev[:7]} | {record['commit'][:7]} | ratio |", "| --- | --- | --- | --- |", *rows, "",
                      f"Same output: {'yes' if record['same_output'] else 'NO'}. `{record['command']}` at commit "
                      f"{record['commit'][:12]}, {record['date']}, {record['machine']['cpu']} "
                      f"({record['machine']['cores']} cores); {record['repeat']} runs each, alternating, median "
                      f"(min–max); a load is the median of 41 in one process."]) + "\n"


if __name__ == "__main__":
    main()
