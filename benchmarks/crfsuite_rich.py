"""python-crfsuite as its users commonly run it (the sklearn-crfsuite / python-crfsuite
tutorial's recipe): L-BFGS with c1 = c2 = 0.1 and 100 iterations, each sentence's
features built in Python as one dict per token and handed to CRFsuite with
Trainer.append, sentence by sentence as the file is read.

Input: CRF++-style column files (one token a line, fields split at spaces and tabs, the
label last, a blank line between sentences). Features of a token, from each token at
offsets -2..+2 (a missing one gives a BOS or EOS flag instead):

    --kind words: the word, its lower case, prefixes and suffixes of 1 to 4 characters,
                  its shape (runs of upper case X, lower case x, digits d; other
                  characters kept), is-title, is-upper and is-digit flags, and every
                  other input column (POS for CoNLL-2000), plus a bias;
    --kind chars: the character, and the character bigrams at -2/-1, -1/0, 0/1, 1/2.

    python benchmarks/crfsuite_rich.py train --kind words TRAIN MODEL [--iterations 100]
    python benchmarks/crfsuite_rich.py tag --kind words MODEL INPUT OUTPUT

train prints one JSON line: CPU and wall seconds of the Python loop that builds the
features and appends them (feature_cpu_s, feature_wall_s), of CRFsuite's training call
(crfsuite_train_cpu_s, crfsuite_train_wall_s), and its iterations. tag writes each
input line with the predicted label appended after a tab (as crf_test does) and prints
the same split for tagging.
"""
import argparse
import json
import re
import sys
import time

FIELDS = re.compile(r"[ \t]+")
OFFSETS = (-2, -1, 1, 2)


def sentences(path):
    """(lines, token field lists) of each sentence of a column file, read as it goes."""
    lines, rows = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\r\n")
            if not line.strip(" \t"):
                if rows:
                    yield lines, rows
                    lines, rows = [], []
                continue
            lines.append(line)
            rows.append(FIELDS.split(line.strip(" \t")))
    if rows:
        yield lines, rows


def shape(word):
    out = []
    for ch in word:
        c = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != c:
            out.append(c)
    return "".join(out)


def word_features(fields, prefix, out):
    w = fields[0]
    out[prefix + "w"] = w
    out[prefix + "lower"] = w.lower()
    for k in range(1, 5):
        out[f"{prefix}pre{k}"] = w[:k]
        out[f"{prefix}suf{k}"] = w[-k:]
    out[prefix + "shape"] = shape(w)
    out[prefix + "istitle"] = w.istitle()
    out[prefix + "isupper"] = w.isupper()
    out[prefix + "isdigit"] = w.isdigit()
    for c in range(1, len(fields)):
        out[f"{prefix}col{c}"] = fields[c]


def word_items(tokens):
    """One feature dict per token; tokens are the input fields without the label."""
    n, items = len(tokens), []
    for i in range(n):
        f = {"bias": 1.0}
        word_features(tokens[i], "", f)
        for off in OFFSETS:
            j = i + off
            if 0 <= j < n:
                word_features(tokens[j], f"{off:+d}:", f)
            else:
                f[f"{off:+d}:{'BOS' if j < 0 else 'EOS'}"] = 1.0
        items.append(f)
    return items


def char_items(tokens):
    chars = [t[0] for t in tokens]
    n = len(chars)

    def at(j):
        return chars[j] if 0 <= j < n else ("<s>" if j < 0 else "</s>")
    items = []
    for i in range(n):
        f = {"bias": 1.0}
        for off in range(-2, 3):
            f[f"c{off:+d}"] = at(i + off)
        for a in range(-2, 2):
            f[f"b{a:+d}"] = at(i + a) + at(i + a + 1)
        items.append(f)
    return items


ITEMS = {"words": word_items, "chars": char_items}


def train(args):
    import pycrfsuite
    build = ITEMS[args.kind]
    trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
    cpu, wall = time.process_time(), time.perf_counter()
    count = 0
    for _, rows in sentences(args.train):
        trainer.append(build([r[:-1] for r in rows]), [r[-1] for r in rows])
        count += 1
    feature_cpu, feature_wall = time.process_time() - cpu, time.perf_counter() - wall
    trainer.set_params({"c1": args.c1, "c2": args.c2, "max_iterations": args.iterations})
    cpu, wall = time.process_time(), time.perf_counter()
    trainer.train(args.model)
    print(json.dumps({"sentences": count, "feature_cpu_s": feature_cpu, "feature_wall_s": feature_wall,
                      "crfsuite_train_cpu_s": time.process_time() - cpu,
                      "crfsuite_train_wall_s": time.perf_counter() - wall,
                      "iterations": len(trainer.logparser.iterations), "c1": args.c1, "c2": args.c2,
                      "max_iterations": args.iterations}))


def tag(args):
    import pycrfsuite
    build = ITEMS[args.kind]
    tagger = pycrfsuite.Tagger()
    tagger.open(args.model)
    feature_cpu = tag_cpu = 0.0
    with open(args.output, "w", encoding="utf-8") as out:
        for lines, rows in sentences(args.input):
            c0 = time.process_time()
            # the test file may carry the gold label last, as the training file does: the
            # model's attributes come from the other fields
            items = build([r[:-1] for r in rows] if args.labeled else rows)
            c1 = time.process_time()
            labels = tagger.tag(items)
            tag_cpu += time.process_time() - c1
            feature_cpu += c1 - c0
            out.write("".join(f"{line}\t{y}\n" for line, y in zip(lines, labels)) + "\n")
    print(json.dumps({"feature_cpu_s": feature_cpu, "crfsuite_tag_cpu_s": tag_cpu}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    t = sub.add_parser("train")
    t.add_argument("train")
    t.add_argument("model")
    t.add_argument("--kind", choices=sorted(ITEMS), default="words")
    t.add_argument("--iterations", type=int, default=100)
    t.add_argument("--c1", type=float, default=0.1)
    t.add_argument("--c2", type=float, default=0.1)
    g = sub.add_parser("tag")
    g.add_argument("model")
    g.add_argument("input")
    g.add_argument("output")
    g.add_argument("--kind", choices=sorted(ITEMS), default="words")
    g.add_argument("--unlabeled", dest="labeled", action="store_false",
                   help="the input has no label column (default: its last field is the gold label)")
    args = ap.parse_args()
    (train if args.mode == "train" else tag)(args)


if __name__ == "__main__":
    sys.exit(main())
