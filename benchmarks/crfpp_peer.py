"""Train and score CRF++ (the CRF tool of Wu & Sun's Table 1) on the same corpus and
templates as seqbil.

Needs CRF++'s `crf_learn` and `crf_test` on the PATH (CRF++ itself, or
`pip install crfpy`, which ships both). seqbil's templates are CRF++ templates, so
CRF++ gets exactly the same features: U templates as state features, B templates
conjoined with the label pair, the bare B as label transitions. Field values are
folded as the config says (nfkc for sighan2005) before CRF++ sees them.

    python benchmarks/crfpp_peer.py --config conll2000 --template configs/crfpp_chunking.template \\
        --train train.txt --test test.txt                     # CRF++ defaults: CRF-L2, c = 1
    python benchmarks/crfpp_peer.py --config sighan2005 --train TRAIN --test TEST --algorithm CRF-L1

Prints one JSON line: algorithm, c, training seconds, iterations, test F1 (conlleval
for chunking, SIGHAN word F1 for segmentation), model size.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peer_corpus import PeerCorpus, add_arguments


def write_columns(path, sentences, fold, labeled):
    """CRF++'s input: one token per line, its fields (the label column kept in place as
    "_", so template column numbers stay the same; templates never read it) then its
    label, a blank line after each sentence."""
    with open(path, "w", encoding="utf-8") as f:
        for s in sentences:
            for i in range(len(s)):
                fields = ["_" if c is None else fold(c[i]) if fold else c[i] for c in s.columns]
                f.write(" ".join(fields + [s.labels[i] if labeled else "_"]) + "\n")
            f.write("\n")


def read_labels(path):
    """The last column of crf_test's output, per sentence."""
    with open(path, encoding="utf-8") as f:
        blocks = f.read().split("\n\n")
    return [[line.split()[-1] for line in b.splitlines() if line.strip()] for b in blocks if b.strip()]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(ap)
    ap.add_argument("--algorithm", default="CRF-L2", choices=["CRF-L2", "CRF-L1", "MIRA"])
    ap.add_argument("-c", "--c", type=float, default=1.0, help="CRF++'s -c (default 1.0, its own default)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--max-iterations", type=int, default=10000, help="CRF++'s -m (default: to convergence)")
    args = ap.parse_args()
    for tool in ("crf_learn", "crf_test"):
        if shutil.which(tool) is None:
            sys.exit(f"crfpp_peer: {tool} is not on the PATH (install CRF++, or `pip install crfpy`)")

    corpus = PeerCorpus(args)
    fold, texts, train, test = corpus.fold, corpus.texts, corpus.train, corpus.test
    with tempfile.TemporaryDirectory() as tmp:
        paths = {name: os.path.join(tmp, name) for name in ("template", "train", "test", "model", "out")}
        Path(paths["template"]).write_text("\n".join(texts) + "\n", encoding="utf-8")
        write_columns(paths["train"], train, fold, True)
        write_columns(paths["test"], test, fold, False)
        start = time.perf_counter()
        learn = subprocess.run(["crf_learn", "-a", args.algorithm, "-c", str(args.c), "-p", str(args.threads),
                                "-m", str(args.max_iterations), paths["template"], paths["train"], paths["model"]],
                               capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
        with open(paths["out"], "w") as out:
            subprocess.run(["crf_test", "-m", paths["model"], paths["test"]], stdout=out, check=True)
        pred = read_labels(paths["out"])
        size = os.path.getsize(paths["model"])
    if len(pred) != len(test) or any(len(p) != len(s) for p, s in zip(pred, test)):
        sys.exit("crfpp_peer: crf_test's output does not line up with the test corpus")
    result = corpus.score(pred)
    print(json.dumps({"algorithm": args.algorithm, "c": args.c, "train_seconds": seconds,
                      "iterations": len(re.findall(r"^iter=", learn.stdout, re.M)), "f1": result["f1"],
                      "model_mib": size / 2**20}))


if __name__ == "__main__":
    main()
