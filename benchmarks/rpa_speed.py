"""What re-embedding costs: an epoch of `rpa` with k-dimensional word vectors against an
epoch of `sp` on the same sparse templates, CoNLL-2000's training set, in one run.

    python benchmarks/rpa_speed.py [--data DIR] [--repeat 5] [--epochs 10] [--k 50]

The sparse templates are configs/conll2000.toml's; rpa adds %emb[-1,0], %emb[0,0] and
%emb[1,0] over random:K vectors, learned (rpa) or fixed (rpa --freeze-embeddings). Each
system trains REPEAT times as its own process (averaging on, as the config says): an
epoch's seconds (the learner's passes from --log, divided by the epochs), the whole
command (raw file in, model out), read + encode, peak RSS, model size, and the test F1
of the last run. Writes results/speed/rpa.json and rpa.md.
"""
import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, eval_f1, find_corpus, header, run_measured, stats  # noqa: E402
from tables import publish  # noqa: E402

sys.path.insert(0, str(ROOT / "experiments" / "lib"))
from rpa_tagging import write_templates  # noqa: E402  (the experiment's templates)

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]


def bench(name, options, train, test, args, work):
    model, log = work / "model.sbm", work / "log.jsonl"
    epoch, passes, e2e, encode, rss = [], [], [], [], []
    for run in range(args.repeat):
        print(f"rpa_speed: {name}, run {run + 1} of {args.repeat}", file=sys.stderr)
        wall, peak, err = run_measured(SEQBIL + ["train", "-q", "--config", "conll2000", *options, "--epochs",
                                                 str(args.epochs), "--train", str(train), "--model", str(model),
                                                 "--log", str(log)])
        seconds = [json.loads(line)["seconds"] for line in log.read_text().splitlines() if line.strip()]
        passes.append(sum(seconds))
        epoch.append(sum(seconds) / len(seconds))
        e2e.append(wall)
        rss.append(peak)
        encode.append(float(next(line for line in err.splitlines() if line.startswith("read ")).rsplit(" in ", 1)[1]
                            .split()[0]))
    return {"system": name, "options": options, "epoch_s": stats(epoch), "train_passes_s": stats(passes),
            "train_end_to_end_s": stats(e2e), "read_and_encode_s": stats(encode), "train_peak_rss_mib": stats(rss),
            "model_mib": model.stat().st_size / 2 ** 20, "score": eval_f1(model, test)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with conll2000/ (default: data/, else ../shared/data)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--k", type=int, default=50, help="dimension of the word vectors")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "rpa.json"))
    args = ap.parse_args()
    train, test = (find_corpus("conll2000", n, args.data) for n in ("train.txt", "test.txt"))
    record = {**header(), "benchmark": "rpa_speed", "repeat": args.repeat, "epochs": args.epochs, "k": args.k,
              "train_file": str(train.name), "rows": []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        write_templates("conll2000", "all", work / "sparse.template", work / "emb.template")
        template = str(work / "emb.template")
        emb = ["--template", template, "--embeddings", f"random:{args.k}"]
        for name, options in (("sp", ["--learner", "sp"]),
                              ("rpa", ["--learner", "rpa", *emb]),
                              ("rpa --freeze-embeddings", ["--learner", "rpa", *emb, "--freeze-embeddings"]),
                              ("rpa, sparse templates only", ["--learner", "rpa"])):
            record["rows"].append(bench(name, options, train, test, args, work))
    sp = record["rows"][0]["epoch_s"]["median"]
    for r in record["rows"]:
        r["epoch_vs_sp"] = r["epoch_s"]["median"] / sp
    publish(args.out, record)


if __name__ == "__main__":
    main()
