"""seqbil's `sp` against python-crfsuite's averaged perceptron on CoNLL-2000.

Both train the same linear-chain model: CRF++'s standard chunking template (the U
templates as state features, plus label transitions), T epochs, averaging. Each
system runs in its own subprocess so that peak RSS is its own. Prints seconds per
epoch, tagging tokens per second (seqbil: `seqbil tag` end to end through the
CLI; crfsuite: attribute extraction plus tagging in Python), peak RSS, model file
size and test F1 (conlleval's).

    python benchmarks/conll2000_sp_vs_crfsuite.py [--data DIR] [--epochs 20]

DIR holds train.txt and test.txt (or .gz); by default data/conll2000 (see
data_scripts/get_conll2000.sh) or ../shared/data/conll2000.
"""
import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "configs" / "crfpp_chunking.template"


def find_data(arg):
    candidates = [Path(arg)] if arg else [ROOT / "data" / "conll2000", ROOT.parent / "shared" / "data" / "conll2000"]
    for d in candidates:
        for ext in ("", ".gz"):
            if (d / f"train.txt{ext}").exists() and (d / f"test.txt{ext}").exists():
                return d / f"train.txt{ext}", d / f"test.txt{ext}"
    sys.exit(f"CoNLL-2000 not found in {', '.join(map(str, candidates))}: run data_scripts/get_conll2000.sh "
             f"or give --data DIR")


def read_text(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.read()


def sentences(text):
    return [[line.split() for line in block.splitlines()] for block in text.strip().split("\n\n")]


def run_measured(cmd, stdin=None, stdout=None):
    """(wall seconds, peak RSS in MiB) of a subprocess."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=stdin, stdout=stdout or subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    err = proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{err}")
    return wall, usage.ru_maxrss / 1024


# --- seqbil -------------------------------------------------------------------------
def bench_seqbil(train, test, epochs, work):
    seqbil = [sys.executable, "-P", "-m", "seqbil"]  # -P: the installed seqbil, never the current directory's
    model, log = work / "sp.sbm", work / "sp.jsonl"
    _, rss = run_measured(seqbil + ["train", "--config", "conll2000", "--template", str(TEMPLATE),
                                    "--learner", "sp", "--averaged", "--epochs", str(epochs), "--train", str(train),
                                    "--model", str(model), "--log", str(log), "-q"])
    per_epoch = [json.loads(line)["seconds"] for line in log.read_text().splitlines()]
    unlabeled = work / "test.nolabel"
    unlabeled.write_text("".join(" ".join(f[:-1]) + "\n" if f else "\n"
                                 for s in sentences(read_text(test)) for f in s + [[]]))
    tokens = sum(len(s) for s in sentences(read_text(test)))
    with open(unlabeled) as fin, open(work / "tagged.txt", "w") as fout:
        tag_wall, _ = run_measured(seqbil + ["tag", "--model", str(model)], stdin=fin, stdout=fout)
    plain_test = work / "test.txt"
    plain_test.write_text(read_text(test))
    scores = json.loads(subprocess.run(seqbil + ["eval", "--model", str(model), "--data", str(plain_test), "--json"],
                                       capture_output=True, text=True, check=True).stdout)
    return {"system": "seqbil sp (averaged)", "epoch_s": sum(per_epoch) / len(per_epoch),
            "tag_tok_s": tokens / tag_wall, "rss_mib": rss, "model_mib": model.stat().st_size / 2**20,
            "f1": scores["f1"]}


# --- python-crfsuite (runs in a child process: `--peer`) ------------------------------
def crfpp_attributes(sent, templates):
    """CRF++ attribute strings of every token (U templates only), boundaries included."""
    n = len(sent)

    def field(i, r, c):
        j = i + r
        return f"_B{j}" if j < 0 else f"_B+{j - n + 1}" if j >= n else sent[j][c]
    out = []
    for i in range(n):
        out.append([re.sub(r"%x\[(-?\d+),(\d+)\]", lambda m: field(i, int(m[1]), int(m[2])), t) for t in templates])
    return out


def peer_crfsuite(train, test, epochs, work):
    import pycrfsuite
    from seqbil.evaluation.chunks import chunk_scores

    templates = [t for t in TEMPLATE.read_text().splitlines() if t.startswith("U")]
    trainer = pycrfsuite.Trainer(algorithm="ap", verbose=False)
    for s in sentences(read_text(train)):
        trainer.append(crfpp_attributes(s, templates), [f[-1] for f in s])
    trainer.set_params({"max_iterations": epochs, "epsilon": 0.0})
    model = str(work / "crfsuite.model")
    start = time.perf_counter()
    trainer.train(model)
    train_s = time.perf_counter() - start
    tagger = pycrfsuite.Tagger()
    tagger.open(model)
    test_sents = sentences(read_text(test))
    start = time.perf_counter()
    pred = [tagger.tag(crfpp_attributes([f[:-1] for f in s], templates)) for s in test_sents]
    tag_s = time.perf_counter() - start
    tokens = sum(len(s) for s in test_sents)
    f1 = chunk_scores([[f[-1] for f in s] for s in test_sents], pred)["f1"]
    iterations = len(trainer.logparser.iterations) or epochs
    print(json.dumps({"system": "crfsuite ap (averaged)", "epoch_s": train_s / iterations,
                      "tag_tok_s": tokens / tag_s, "model_mib": os.path.getsize(model) / 2**20, "f1": f1}))


def bench_crfsuite(train, test, epochs, work):
    try:
        import pycrfsuite  # noqa: F401
    except ImportError:
        return None
    out = work / "crfsuite.json"
    with open(out, "w") as f:
        _, rss = run_measured([sys.executable, __file__, "--peer", "--data-files", str(train), str(test),
                               "--epochs", str(epochs), "--work", str(work)], stdout=f)
    result = json.loads(out.read_text())
    result["rss_mib"] = rss
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="directory with train.txt and test.txt (or .gz)")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--data-files", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        return peer_crfsuite(Path(args.data_files[0]), Path(args.data_files[1]), args.epochs, Path(args.work))
    train, test = find_data(args.data)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        rows = [bench_seqbil(train, test, args.epochs, work), bench_crfsuite(train, test, args.epochs, work)]
    print(f"CoNLL-2000, CRF++ chunking template, {args.epochs} epochs, averaged perceptron")
    print(f"{'system':26} {'s/epoch':>8} {'tag tok/s':>10} {'peak RSS MiB':>13} {'model MiB':>10} {'test F1':>8}")
    for r in rows:
        if r is None:
            print("crfsuite: not installed (pip install '.[bench]')")
            continue
        print(f"{r['system']:26} {r['epoch_s']:8.3f} {r['tag_tok_s']:10.0f} {r['rss_mib']:13.0f} "
              f"{r['model_mib']:10.1f} {r['f1']:8.2f}")


if __name__ == "__main__":
    main()
