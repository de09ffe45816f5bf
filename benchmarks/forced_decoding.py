"""Forced decoding on CoNLL-2000 chunking: a fifth of the test tokens given their gold
label, the rest predicted under them (`seqbil tag --force`), against plain tagging of
the same input.

    python benchmarks/forced_decoding.py [--fraction 0.2] [--repeat 7] [--copies 10] [--data DIR]

A chunker is trained once (sp, configs/conll2000.toml, 10 epochs, temperature 1). The
test set keeps its gold label on a random FRACTION of the tokens (seed 0) and has `?`
on the others. Reported: that every given label is kept; the token accuracy and the
chunk F1 (conlleval's) on the tokens not given, and the chunk F1 of whole sentences,
plain and forced; and the time of `seqbil tag` and `seqbil tag --force` end to end on
the test set concatenated COPIES times (REPEAT runs each, alternating; the compiled
tagging path both ways). Writes results/speed/forced.json and forced.md.
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, byte_compile, find_corpus, header, run_measured, stats, write_record  # noqa: E402
from well_formed import SEQBIL, read_text, sentences  # noqa: E402


def labels_of(output):
    """The last field of every token line of `seqbil tag` output, per sentence."""
    return [[fields[-1] for fields in block] for block in sentences(output)]


def free_chunk_f1(gold, pred, given):
    """Chunk F1 (conlleval's reading of the tags) over the chunks, gold or predicted,
    that hold no given token: what forced decoding had to find."""
    from seqbil.evaluation.chunks import chunks
    tp = n_gold = n_pred = 0
    for g, p, k in zip(gold, pred, given):
        g_chunks = {c for c in chunks(g) if not k[c[1]:c[2] + 1].any()}
        p_chunks = {c for c in chunks(p) if not k[c[1]:c[2] + 1].any()}
        tp, n_gold, n_pred = tp + len(g_chunks & p_chunks), n_gold + len(g_chunks), n_pred + len(p_chunks)
    precision, recall = tp / max(n_pred, 1), tp / max(n_gold, 1)
    return 100.0 * 2 * precision * recall / max(precision + recall, 1e-12)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fraction", type=float, default=0.2)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "forced.json"))
    args = ap.parse_args()
    from seqbil.evaluation import score
    byte_compile()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        model = tmp / "chunker.sbm"
        subprocess.run(SEQBIL + ["train", "-q", "--config", "conll2000", "--learner", "sp", "--epochs", "10",
                                 "--temperature", "1", "--train", str(find_corpus("conll2000", "train.txt", args.data)),
                                 "--model", str(model)], check=True)
        gold = sentences(read_text(find_corpus("conll2000", "test.txt", args.data)))
        from seqbil import load
        model_labels = set(load(str(model)).labels)
        rng = np.random.default_rng(0)
        given = [rng.random(len(s)) < args.fraction for s in gold]
        text = "".join("".join(" ".join([*token[:-1], token[-1] if g else "?"]) + "\n" for token, g in zip(s, gs))
                       + "\n" for s, gs in zip(gold, given))
        source = tmp / "input.txt"
        source.write_text(text * args.copies, encoding="utf-8")
        one = tmp / "one.txt"
        one.write_text(text, encoding="utf-8")
        outputs = {}
        for name, flags in (("plain", []), ("forced", ["--force"])):
            outputs[name] = labels_of(subprocess.run(SEQBIL + ["tag", "-m", str(model), *flags, str(one)],
                                                     capture_output=True, text=True, check=True).stdout)
        times = {"plain": [], "forced": []}
        for _ in range(args.repeat):
            for name, flags in (("plain", []), ("forced", ["--force"])):
                with open(source, "rb") as fin, open(tmp / "out.txt", "wb") as fout:
                    times[name].append(run_measured(SEQBIL + ["tag", "-m", str(model), *flags], stdin=fin,
                                                    stdout=fout)[0])
    gold_labels = [[token[-1] for token in s] for s in gold]
    labels = model_labels
    # a given label the model does not have cannot be kept: it marks a token to predict
    kept = sum(p == g for s_p, s_g, gs in zip(outputs["forced"], gold_labels, given)
               for p, g, k in zip(s_p, s_g, gs) if k and g in labels)
    n_given = int(sum(g.sum() for g in given))
    n_known = sum(g in labels for s_g, gs in zip(gold_labels, given) for g, k in zip(s_g, gs) if k)
    free = {}
    for name, pred in outputs.items():
        pairs = [(p, g) for s_p, s_g, gs in zip(pred, gold_labels, given) for p, g, k in zip(s_p, s_g, gs) if not k]
        free[name] = {"token_accuracy": 100.0 * sum(p == g for p, g in pairs) / len(pairs),
                      "chunk_f1_not_given": free_chunk_f1(gold_labels, pred, given),
                      "chunk_f1": score("chunk", gold_labels, pred)["f1"]}
    tokens = sum(len(s) for s in gold) * args.copies
    record = {**header(), "fraction": args.fraction, "repeat": args.repeat, "copies": args.copies, "tokens": tokens,
              "given": n_given, "given_known_to_the_model": n_known, "given_kept": kept, "scores": free,
              "tag_s": {name: stats(v) for name, v in times.items()}}
    record["time_ratio"] = record["tag_s"]["forced"]["median"] / record["tag_s"]["plain"]["median"]
    write_record(args.out, record)
    Path(args.out).with_suffix(".md").write_text(table(record), encoding="utf-8")
    print(table(record))


def table(record):
    rows = ["| | plain | --force |", "| --- | --- | --- |"]
    s = record["scores"]
    for key, what in (("token_accuracy", "token accuracy on the tokens not given (%)"),
                      ("chunk_f1_not_given", "chunk F1 on the tokens not given"), ("chunk_f1", "chunk F1, whole")):
        rows.append(f"| {what} | {s['plain'][key]:.2f} | {s['forced'][key]:.2f} |")
    t = record["tag_s"]

    def cell(x):
        return f"{x['median']:.3f} ({x['min']:.3f}–{x['max']:.3f})"
    rows.append(f"| `seqbil tag`, test ×{record['copies']} ({record['tokens']:,} tokens), s | {cell(t['plain'])} | "
                f"{cell(t['forced'])} |")
    return "\n".join(rows + ["", f"{record['given_kept']:,} of the {record['given_known_to_the_model']:,} given labels "
                             f"that are the model's kept (of {record['given']:,} given); --force "
                             f"takes {record['time_ratio']:.3f}× plain tagging's time. A fraction of "
                             f"{record['fraction']:g} of the CoNLL-2000 test tokens given their gold label (seed 0). "
                             f"`{record['command']}` at commit {record['commit'][:12]}, {record['date']}, "
                             f"{record['machine']['cpu']} ({record['machine']['cores']} cores); {record['repeat']} "
                             f"runs each, alternating, median (min–max)."]) + "\n"


if __name__ == "__main__":
    main()
