#!/usr/bin/env python3
"""Write the bundled samples in CRFsuite's attribute format from the bundled CoNLL-2000
samples, with the attributes of CRFsuite's own chunking example (example/chunking.py
and crfutils.py in CRFsuite's source): words at -2..2 and the word bigrams -1|0 and
0|1, POS at -2..2, POS bigrams and trigrams, named as CRFsuite names them (w[0]=He,
pos[-1]|pos[0]=PRP|VBD), __BOS__ and __EOS__ on the first and last token, ':' written
as __COLON__ as crfutils writes it.

    python3 data_scripts/crfsuite_sample.py [--sentences-train 200] [--sentences-test 100]

Writes seqbil/samples/conll2000_train.crfsuite.gz and conll2000_test.crfsuite.gz
(gzip with no time stamp: the same bytes each run).
"""
import argparse
import gzip
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent / "seqbil" / "samples"
TEMPLATES = ([(("w", k),) for k in (-2, -1, 0, 1, 2)] + [(("w", -1), ("w", 0)), (("w", 0), ("w", 1))] +
             [(("pos", k),) for k in (-2, -1, 0, 1, 2)] +
             [(("pos", k), ("pos", k + 1)) for k in (-2, -1, 0, 1)] +
             [(("pos", k), ("pos", k + 1), ("pos", k + 2)) for k in (-2, -1, 0)])


def attributes(rows):
    """The attribute lines of one sentence of (word, pos, chunk) rows."""
    fields = [{"w": w.replace(":", "__COLON__"), "pos": p.replace(":", "__COLON__")} for w, p, _ in rows]
    out = []
    for i, (_, _, chunk) in enumerate(rows):
        attrs = []
        for template in TEMPLATES:
            if all(0 <= i + k < len(rows) for _, k in template):
                name = "|".join(f"{f}[{k}]" for f, k in template)
                attrs.append(name + "=" + "|".join(fields[i + k][f] for f, k in template))
        if i == 0:
            attrs.append("__BOS__")
        if i == len(rows) - 1:
            attrs.append("__EOS__")
        out.append("\t".join([chunk] + attrs))
    return out


def convert(conll, out, n):
    blocks = conll.read_text(encoding="utf-8").strip().split("\n\n")[:n]
    lines = []
    for block in blocks:
        lines += attributes([line.split() for line in block.splitlines()]) + [""]
    with open(out, "wb") as f, gzip.GzipFile(fileobj=f, mode="wb", mtime=0, filename="") as z:
        z.write(("\n".join(lines) + "\n").encode("utf-8"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sentences-train", type=int, default=200)
    ap.add_argument("--sentences-test", type=int, default=100)
    args = ap.parse_args()
    for part, n in (("train", args.sentences_train), ("test", args.sentences_test)):
        convert(SAMPLES / f"conll2000_{part}.txt", SAMPLES / f"conll2000_{part}.crfsuite.gz", n)


if __name__ == "__main__":
    main()
