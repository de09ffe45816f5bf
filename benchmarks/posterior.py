"""Posterior decoding on CoNLL-2000 chunking with a CRF: `seqbil tag --posterior`, alone
and with --well-formed, against Viterbi (plain tagging) with the same model.

    python benchmarks/posterior.py [--iterations 100] [--data DIR]

A CRF is trained once (crf, configs/conll2000.toml, c2 = 1 as CRFsuite's default, at
most ITERATIONS L-BFGS iterations, its own probabilities: temperature 1). Reported for
each decoding: the chunk F1 (conlleval's) and the sentences whose labels are not well
formed in IOB2 (benchmarks/well_formed.py's reading).
Writes results/speed/posterior.json and .md.
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, byte_compile, find_corpus, header, write_record  # noqa: E402
from well_formed import SEQBIL, read_text, sentences, well_formed  # noqa: E402

DECODINGS = {"Viterbi": [], "--posterior": ["--posterior"], "--posterior --well-formed": ["--posterior", "--well-formed"],
             "--well-formed": ["--well-formed"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--iterations", type=int, default=100)
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "posterior.json"))
    args = ap.parse_args()
    from seqbil.evaluation import score
    byte_compile()
    test = find_corpus("conll2000", "test.txt", args.data)
    gold = [[t[-1] for t in s] for s in sentences(read_text(test))]
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "crf.sbm"
        subprocess.run(SEQBIL + ["train", "-q", "--config", "conll2000", "--learner", "crf", "--temperature", "1",
                                 "--c2", "1", "--epochs", str(args.iterations),
                                 "--train", str(find_corpus("conll2000", "train.txt", args.data)), "--model", str(model)],
                       check=True)
        for name, flags in DECODINGS.items():
            out = subprocess.run(SEQBIL + ["tag", "-m", str(model), *flags, str(test)], capture_output=True, text=True,
                                 check=True).stdout
            pred = [[t[-1] for t in s] for s in sentences(out)]
            rows[name] = {"chunk_f1": score("chunk", gold, pred, scheme="iob2")["f1"],
                          "ill_formed": sum(not well_formed(p, "iob2") for p in pred)}
    record = {**header(), "iterations": args.iterations, "sentences": len(gold), "decodings": rows}
    write_record(args.out, record)
    Path(args.out).with_suffix(".md").write_text(table(record), encoding="utf-8")
    print(table(record))


def table(record):
    lines = ["| decoding | chunk F1 | ill-formed sentences |", "| --- | --- | --- |"]
    for name, r in record["decodings"].items():
        lines.append(f"| {name} | {r['chunk_f1']:.2f} | {r['ill_formed']} of {record['sentences']:,} |")
    return "\n".join(lines + ["", f"CoNLL-2000 chunking test set; crf, configs/conll2000.toml, at most "
                              f"{record['iterations']} L-BFGS iterations. `{record['command']}` at commit "
                              f"{record['commit'][:12]}, {record['date']}, {record['machine']['cpu']} "
                              f"({record['machine']['cores']} cores)."]) + "\n"


if __name__ == "__main__":
    main()
