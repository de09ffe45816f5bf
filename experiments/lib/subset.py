"""Write a fixed-seed random part of a corpus, for learning curves.

    python subset.py --format conll|sighan --fraction 0.3 --seed 1 IN OUT [REST]
    python subset.py --format conll|sighan --first 0.1 IN OUT [REST]

Sentences (CoNLL: blocks separated by blank lines; SIGHAN: non-empty lines) are
shuffled with the seed and the first fraction kept, in corpus order, so that the
part for a smaller fraction is contained in the part for a larger one. REST, if
given, gets the other sentences (a held-out split). --first keeps the first fraction
of the sentences as they come (CoNLL-2000's first 894 sentences are its 10%).
"""
import argparse
import gzip
import os

import numpy as np


def sentences(path, fmt):
    with open(path, "rb") as f:
        text = f.read()
    if text[:2] == b"\x1f\x8b":
        text = gzip.decompress(text)
    if fmt == "sighan":
        return [line + b"\n" for line in text.splitlines() if line.strip()]
    blocks, block = [], []
    for line in text.splitlines():
        if line.strip():
            block.append(line + b"\n")
        elif block:
            blocks.append(b"".join(block) + b"\n")
            block = []
    if block:
        blocks.append(b"".join(block) + b"\n")
    return blocks


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--format", choices=["conll", "sighan"], required=True)
    how = ap.add_mutually_exclusive_group(required=True)
    how.add_argument("--fraction", type=float, help="a random part of this size")
    how.add_argument("--first", type=float, help="the first part of this size, in corpus order")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("rest", nargs="?")
    args = ap.parse_args()
    items = sentences(args.input, args.format)
    if args.first is not None:
        order = np.arange(len(items))
        keep = order[:max(1, round(args.first * len(items)))]
    else:
        order = np.random.default_rng(args.seed).permutation(len(items))
        keep = np.sort(order[:max(1, round(args.fraction * len(items)))])
    write(args.output, (items[i] for i in keep))
    if args.rest:
        write(args.rest, (items[i] for i in np.sort(order[len(keep):])))


def write(path, items):
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.writelines(items)
    os.replace(tmp, path)

if __name__ == "__main__":
    main()
