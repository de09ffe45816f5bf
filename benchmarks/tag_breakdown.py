"""Where a token's tagging time goes, stage by stage, in the reference path (formats/,
features/ and Python strings: what `seqbil tag` ran before its compiled path, and still
runs for what the compiled path does not take) and in the compiled path of
`seqbil tag` (cython_ext/conll_block.pyx and the key hash tables), on the same block.

    python benchmarks/tag_breakdown.py [--data DIR] [--repeat 5] [--copies 10]
    python benchmarks/tag_breakdown.py --quick --out FILE    # the bundled samples, for a test

CoNLL-2000 test, COPIES times, as one block (as `seqbil tag` reads its input), an `sp`
model trained with CRF++'s chunking template (as tag_speed.py). Stages, each timed
REPEAT times in this process (median, min, max, in microseconds per token):

- reference: reading and splitting the lines into sentences (formats/conll.py);
  attribute strings built and looked up (Model.encode); scoring and Viterbi
  (Model.decode); output lines formatted and encoded (Format.write).
- compiled: lines split and the fields looked up in the words' hash tables
  (split_block); the attribute keys made and looked up (Index.encode_fields, hashed);
  scoring and Viterbi (Model.decode); output written from the input bytes and the
  labels (write_block).

Scoring and Viterbi are told apart by decoding the same sequences with no attributes
(Viterbi over zero scores: its cost does not depend on the scores); the rest of the
decode is the scoring. Both paths' whole block (BlockTagger) is timed too, and their
outputs must be the same bytes. Writes results/speed/tag_breakdown.json and .md.
"""
import argparse
import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, find_corpus, header, stats  # noqa: E402
from tables import publish  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
TEMPLATE = ROOT / "configs" / "crfpp_chunking.template"


def timed(fn, repeat):
    """(seconds of each of `repeat` calls, the last call's result)."""
    seconds, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        seconds.append(time.perf_counter() - start)
    return seconds, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with conll2000/ (default: data/, else ../shared/data)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--copies", type=int, default=10)
    ap.add_argument("--quick", action="store_true", help="the bundled CoNLL-2000 samples")
    ap.add_argument("--model", help="an sp model trained as above (default: train one)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "tag_breakdown.json"))
    args = ap.parse_args()
    import seqbil
    from seqbil import tagging
    from seqbil.features.dataset import Dataset
    from seqbil.tagging import BlockTagger, encode_text

    if args.quick:
        from seqbil.samples import sample_path
        train, test = sample_path("conll2000_train.txt"), sample_path("conll2000_test.txt")
    else:
        train, test = find_corpus("conll2000", "train.txt", args.data), find_corpus("conll2000", "test.txt", args.data)
    with tempfile.TemporaryDirectory() as tmp:
        model_path = Path(args.model or Path(tmp) / "chunk.sbm")
        if not args.model:
            subprocess.run(SEQBIL + ["train", "-q", "--config", "conll2000", "--template", str(TEMPLATE), "--learner",
                                     "sp", "--train", str(train), "--model", str(model_path)], check=True, cwd=tmp,
                           stderr=subprocess.DEVNULL)
        model = seqbil.load(str(model_path))
        from seqbil.formats.textio import open_binary
        stream, _, _ = open_binary(str(test))
        with stream:
            text = stream.read().decode("utf-8")
        if not text.endswith("\n\n"):
            text = text.rstrip("\n") + "\n\n"
        raw = (text * args.copies).encode("utf-8")

        fast = BlockTagger(model, "<input>", "utf-8", None, False)
        slow = BlockTagger(model, "<input>", "utf-8", None, False)
        slow.fast = None
        assert fast.fast == "columns", "the compiled path does not take this model"
        fast.warm()
        fmt = model.format
        stages = {}

        # --- the reference path, stage by stage ---
        t, sentences = timed(lambda: list(fmt.read(io.BytesIO(b"\n" + raw), labeled=False, encoding="utf-8",
                                                   keep_empty=True)), args.repeat)
        sentences = [s for s in sentences if len(s)]
        tokens = sum(len(s) for s in sentences)
        stages["reference", "read and split lines"] = t
        t, data = timed(lambda: model.encode(sentences), args.repeat)
        stages["reference", "attribute strings built and looked up"] = t
        t_decode, best = timed(lambda: model.decode(data), args.repeat)
        empty = Dataset(data.seq_ptr, data.labels, np.zeros(len(data.u_ptr), np.int64), np.zeros(0, np.int32),
                        np.zeros(len(data.b_ptr), np.int64) if data.b_ptr is not None else None,
                        np.zeros(0, np.int32))
        t_viterbi, _ = timed(lambda: model.decode(empty), args.repeat)
        labels = [model.labels[y] for y in best]
        cut = np.asarray(data.seq_ptr)
        tags = [labels[cut[j]:cut[j + 1]] for j in range(len(sentences))]
        t, _ = timed(lambda: encode_text("".join(fmt.write(s, y) for s, y in zip(sentences, tags)), "utf-8"),
                     args.repeat)
        stages["reference", "output lines formatted"] = t

        # --- the compiled path ---
        from seqbil._kernels.conll_block import split_block, write_block
        vocabs, columns, names, n_fields, label_at = fast._block[:5]
        index = model.index
        t, found = timed(lambda: split_block(raw, n_fields, label_at, index.K, vocabs, columns), args.repeat)
        stages["compiled", "read and split lines, fields looked up"] = t
        matrix, positions, seq_ptr, line_start, line_end, sep = found
        t, parts = timed(lambda: index.encode_fields(matrix, positions, hashed=True), args.repeat)
        stages["compiled", "attribute keys made and looked up"] = t
        data2 = Dataset(seq_ptr, np.full(len(positions), -1, dtype=np.int32), *parts)
        t_decode2, best2 = timed(lambda: model.decode(data2), args.repeat)
        t, out_fast = timed(lambda: write_block(raw, seq_ptr, line_start, line_end, sep, best2, names),
                            args.repeat)
        stages["compiled", "output written"] = t

        for path, td in (("reference", t_decode), ("compiled", t_decode2)):
            stages[path, "scoring"] = [max(d - v, 0.0) for d, v in zip(td, t_viterbi)]
            stages[path, "Viterbi"] = t_viterbi

        whole = {}
        for path, tagger in (("reference", slow), ("compiled", fast)):
            t, (out, _) = timed(lambda: tagger((raw, 1, 0)), args.repeat)
            whole[path] = (t, out)
        if whole["reference"][1] != whole["compiled"][1] or whole["compiled"][1] != out_fast:
            sys.exit("tag_breakdown: the two paths' outputs differ")
        if not np.array_equal(best, best2):
            sys.exit("tag_breakdown: the two paths' labels differ")

    order = {"reference": ["read and split lines", "attribute strings built and looked up", "scoring", "Viterbi",
                           "output lines formatted"],
             "compiled": ["read and split lines, fields looked up", "attribute keys made and looked up", "scoring",
                          "Viterbi", "output written"]}
    rows = []
    for path, names_ in order.items():
        for stage in names_:
            rows.append({"path": path, "stage": stage,
                         "us_per_token": stats([1e6 * s / tokens for s in stages[path, stage]])})
        rows.append({"path": path, "stage": "whole block (_Tagger)",
                     "us_per_token": stats([1e6 * s / tokens for s in whole[path][0]])})
    corpus = "the CoNLL-2000 test sample" if args.quick else "CoNLL-2000 test"
    record = {**header(), "benchmark": "tag_breakdown", "corpus": f"{corpus} x{args.copies}",
              "tokens": tokens, "repeat": args.repeat, "template": "configs/crfpp_chunking.template",
              "labels": len(model.labels), "rows": rows, "tagging_module": tagging.__name__}
    publish(Path(args.out), record)


if __name__ == "__main__":
    main()
