"""Training from partial labels on CoNLL-2000 chunking: what a model learns when part of
its training labels is unknown, against the same model trained on all of them.

    python benchmarks/partial_labels.py [--learners crf,sp] [--iterations 100] [--seed 1]
        [--data DIR] [--out results/speed/partial.json]

Two ways of losing labels, each drawn once (seeded) from CoNLL-2000's training set:

    tokens   half of the tokens' labels, at random, are unknown (?)
    chunks   30% of the chunks, at random, are unannotated: their tokens' labels are
             unknown (?). The usual workaround labels them O instead (as a dictionary
             match that finds some names and not others leaves the rest as O)

Each learner trains on the full labels, on each partial corpus with --partial and, for
chunks, on the O workaround; every model tags the test set, scored by conlleval's chunk
F1. The chunks scenario's "recovered" is the share of the F1 the workaround loses that
training from the partial labels wins back: (partial - O) / (full - O).

crf: configs/conll2000.toml's templates, c2 = 1 (CRFsuite's default), at most ITERATIONS
L-BFGS iterations; the online learners with the config's settings (20 averaged epochs).
Writes results/speed/partial.json and .md. --quick: the bundled CoNLL-2000 samples,
crf at most 10 iterations and the online learners 2 epochs (for a test of this script;
its figures mean nothing).
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, byte_compile, find_corpus, header, write_record  # noqa: E402
from well_formed import SEQBIL, read_text, sentences  # noqa: E402


def write(path, corpus):
    path.write_text("".join("".join(" ".join(t) + "\n" for t in s) + "\n" for s in corpus), encoding="utf-8")


def unknown_tokens(corpus, fraction, rng):
    """Each token's label replaced by ? with probability fraction."""
    return [[t[:-1] + ["?"] if rng.random() < fraction else t for t in s] for s in corpus]


def unannotated_chunks(corpus, fraction, rng, fill):
    """Each chunk's tokens relabelled `fill` with probability fraction."""
    from seqbil.evaluation.chunks import chunks
    out = []
    for s in corpus:
        hide = set()
        for _, a, b in chunks([t[-1] for t in s], "iob2"):
            if rng.random() < fraction:
                hide.update(range(a, b + 1))
        out.append([t[:-1] + [fill] if i in hide else t for i, t in enumerate(s)])
    return out


def train_and_score(learner, train, test, gold, partial, iterations, tmp, quick=False):
    from seqbil.evaluation import score
    model = Path(tmp) / "m.sbm"
    options = ["--learner", learner, "--temperature", "1"]
    options += ["--c2", "1", "--epochs", str(iterations)] if learner == "crf" else ["--epochs", "2"] if quick else []
    subprocess.run(SEQBIL + ["train", "-q", "--config", "conll2000", *options, *(["--partial"] if partial else []),
                             "--train", str(train), "--model", str(model)], check=True, capture_output=True)
    out = subprocess.run(SEQBIL + ["tag", "-m", str(model), str(test)], capture_output=True, text=True,
                         check=True).stdout
    pred = [[t[-1] for t in s] for s in sentences(out)]
    return score("chunk", gold, pred, scheme="iob2")["f1"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--learners", default="crf,sp")
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "partial.json"))
    ap.add_argument("--quick", action="store_true", help="the bundled samples, a few iterations: a test")
    args = ap.parse_args()
    byte_compile()
    if args.quick:
        from seqbil.samples import sample_path
        args.iterations = 10
        train_path, test = sample_path("conll2000_train.txt"), sample_path("conll2000_test.txt")
    else:
        train_path, test = (find_corpus("conll2000", f"{part}.txt", args.data) for part in ("train", "test"))
    train = sentences(read_text(train_path))
    gold = [[t[-1] for t in s] for s in sentences(read_text(test))]
    rng = np.random.default_rng(args.seed)
    corpora = {"full": (train, False), "tokens: partial": (unknown_tokens(train, 0.5, rng), True)}
    state = rng.bit_generator.state  # the O workaround hides the same chunks
    corpora["chunks: partial"] = (unannotated_chunks(train, 0.3, rng, "?"), True)
    rng.bit_generator.state = state
    corpora["chunks: O"] = (unannotated_chunks(train, 0.3, rng, "O"), False)
    known = {name: sum(t[-1] != "?" for s in c for t in s) for name, (c, _) in corpora.items()}
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (corpus, partial) in corpora.items():
            path = Path(tmp) / "train.txt"
            write(path, corpus)
            for learner in args.learners.split(","):
                f1 = train_and_score(learner, path, test, gold, partial, args.iterations, tmp, args.quick)
                rows.setdefault(learner, {})[name] = f1
                print(f"{learner} {name}: {f1:.2f}", file=sys.stderr)
    for r in rows.values():
        r["recovered"] = (r["chunks: partial"] - r["chunks: O"]) / (r["full"] - r["chunks: O"])
    record = {**header(), "quick": args.quick, "iterations": args.iterations, "seed": args.seed,
              "tokens": sum(map(len, train)),
              "known_tokens": known, "f1": rows}
    write_record(args.out, record)
    Path(args.out).with_suffix(".md").write_text(table(record), encoding="utf-8")
    print(table(record))


def table(record):
    names = ["full", "tokens: partial", "chunks: O", "chunks: partial"]
    lines = ["| learner | full labels | half the tokens unknown, --partial | 30% of chunks as O | "
             "30% of chunks unknown, --partial | recovered |", "| --- | --- | --- | --- | --- | --- |"]
    for learner, r in record["f1"].items():
        lines.append(f"| {learner} | " + " | ".join(f"{r[n]:.2f}" for n in names) + f" | {100 * r['recovered']:.0f}% |")
    known = record["known_tokens"]
    return "\n".join(lines + [
        "", f"Chunk F1 on the CoNLL-2000 test set. Training tokens with a known label: "
        f"{known['tokens: partial']:,} of {record['tokens']:,} (tokens), {known['chunks: partial']:,} (chunks). "
        f"crf: c2 = 1, at most {record['iterations']} L-BFGS iterations; the online learners: "
        f"configs/conll2000.toml. Recovered: (partial - O) / (full - O). `{record['command']}` at commit "
        f"{record['commit'][:12]}, {record['date']}, {record['machine']['cpu']} ({record['machine']['cores']} cores)."
    ]) + "\n"


if __name__ == "__main__":
    main()
