"""Constrained decoding on CoNLL-2000 chunking, as given (IOB2) and converted to IOBES:
`seqbil tag --well-formed` against plain tagging with the same model.

    python benchmarks/well_formed.py [--repeat 5] [--data DIR]

For each scheme a chunker is trained once (sp, configs/conll2000.toml, 10 epochs,
temperature 1) and the test set tagged plain and with --well-formed. Reported: the
sentences whose labels are not well formed in the scheme (a labelling is well formed
when its chunks, read as conlleval reads them, written back in the scheme give it
back), the chunk F1 (conlleval's), and the tagging time end to end (REPEAT runs each,
alternating). Writes results/speed/well_formed.json and .md.
"""
import argparse
import gzip
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, byte_compile, find_corpus, header, run_measured, stats, write_record  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]


def read_text(path):
    return (gzip.open(path, "rt", encoding="utf-8") if str(path).endswith(".gz") else
            open(path, encoding="utf-8")).read()


def sentences(text):
    return [[line.split() for line in block.splitlines() if line.strip()] for block in text.split("\n\n")
            if block.strip()]


def chunks_of(tags, scheme):
    from seqbil.evaluation.chunks import chunks
    return chunks(tags, scheme if scheme == "iobes" else None)


def written(chunks, n, scheme):
    """The tags of n tokens holding chunks [(type, first, last)] in scheme (iob2, iobes)."""
    tags = ["O"] * n
    for t, a, b in chunks:
        if scheme == "iob2":
            tags[a:b + 1] = [f"B-{t}"] + [f"I-{t}"] * (b - a)
        else:
            tags[a:b + 1] = [f"S-{t}"] if a == b else [f"B-{t}"] + [f"I-{t}"] * (b - a - 1) + [f"E-{t}"]
    return tags


def well_formed(tags, scheme):
    return written(chunks_of(tags, scheme), len(tags), scheme) == list(tags)


def converted(text, scheme):
    """A CoNLL-2000 file's text with its labels in scheme."""
    out = []
    for s in sentences(text):
        tags = written(chunks_of([t[-1] for t in s], None), len(s), scheme)
        out.append("".join(" ".join([*t[:-1], y]) + "\n" for t, y in zip(s, tags)))
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "well_formed.json"))
    args = ap.parse_args()
    from seqbil.evaluation import score
    byte_compile()
    train_text = read_text(find_corpus("conll2000", "train.txt", args.data))
    test_text = read_text(find_corpus("conll2000", "test.txt", args.data))
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for scheme in ("iob2", "iobes"):
            train, test = tmp / f"train.{scheme}", tmp / f"test.{scheme}"
            train.write_text(converted(train_text, scheme), encoding="utf-8")
            test.write_text(converted(test_text, scheme), encoding="utf-8")
            model = tmp / f"{scheme}.sbm"
            subprocess.run(SEQBIL + ["train", "-q", "--config", "conll2000", "--learner", "sp", "--epochs", "10",
                                     "--temperature", "1", "--train", str(train), "--model", str(model)], check=True)
            gold = [[t[-1] for t in s] for s in sentences(test.read_text(encoding="utf-8"))]
            runs = {"plain": [], "--well-formed": []}
            found = {}
            for _ in range(args.repeat):
                for name in runs:
                    flags = ["--well-formed"] if name != "plain" else []
                    out = tmp / "out.txt"
                    with open(test, "rb") as fin, open(out, "wb") as fout:
                        runs[name].append(run_measured(SEQBIL + ["tag", "-m", str(model), *flags], stdin=fin,
                                                       stdout=fout)[0])
                    found[name] = [[t[-1] for t in s] for s in sentences(out.read_text(encoding="utf-8"))]
            rows[scheme] = {name: {"ill_formed": sum(not well_formed(p, scheme) for p in pred),
                                   "chunk_f1": score("chunk", gold, pred, scheme=scheme)["f1"],
                                   "tag_s": stats(runs[name])} for name, pred in found.items()}
            rows[scheme]["sentences"] = len(gold)
    record = {**header(), "repeat": args.repeat, "schemes": rows}
    write_record(args.out, record)
    Path(args.out).with_suffix(".md").write_text(table(record), encoding="utf-8")
    print(table(record))


def table(record):
    lines = ["| scheme | decoding | ill-formed sentences | chunk F1 | `seqbil tag` (s) |", "| --- | --- | --- | --- | --- |"]
    for scheme, rows in record["schemes"].items():
        for name in ("plain", "--well-formed"):
            r = rows[name]
            t = r["tag_s"]
            lines.append(f"| {scheme.upper()} | {name} | {r['ill_formed']} of {rows['sentences']:,} | {r['chunk_f1']:.2f} "
                         f"| {t['median']:.3f} ({t['min']:.3f}–{t['max']:.3f}) |")
    return "\n".join(lines + ["", f"CoNLL-2000 chunking test set; sp, configs/conll2000.toml, 10 epochs. "
                              f"`{record['command']}` at commit {record['commit'][:12]}, {record['date']}, "
                              f"{record['machine']['cpu']} ({record['machine']['cores']} cores); {record['repeat']} "
                              f"runs each, alternating, median (min–max)."]) + "\n"


if __name__ == "__main__":
    main()
