"""learner = auto on small corpora: whether the candidate it chooses by 10-fold
cross-validation is the better model on a dev split, against the best candidate of the
other kind (the best CRF point where an online learner was chosen, the best online
learner where a CRF was).

Samples of the development suite's corpora (benchmarks/suite.py's; under --data):
sentences drawn at random (seed: the draw and the size) from the training split until
they hold --sizes tokens (characters for segmentation), so that learner = auto
cross-validates them (at most 5,000 tokens); each is trained with the suite's config
(pos for pos-more, conll2000 for CoNLL-2000, cws for segmentation) and no learner named:

    seqbil train --config C --train sample.txt --model default.sbm

and scored on the first 500 sentences of the dev split (CoNLL-2000: of its last tenth of
training sentences, the suite's dev split) by seqbil eval. The model keeps what was
tried (training.selection). Where a candidate of the other kind was scored too (not
stopped by the time budget), the best of them by the held-out score is trained as
named, with the settings it was tried with (`--learner L --epochs E` or `--learner crf
--c2 C`, --temperature 1), and scored the same way. No test split is read. The samples
run --jobs at a time; a model already in --work (each is written whole, under its
sample's folder) is not trained again, unless its run was interrupted.

Writes results/small_corpora/small_corpora.json (a row per sample: the candidates'
held-out scores, the choice, the other kind's best, their dev scores) and its table.

    python benchmarks/small_corpora.py [--data ../shared/data] [--sizes 2000,4500] [--draws 2]
        [--corpora hi-indian,...] [--out results/small_corpora] [--work DIR] [--jobs 1]
    python benchmarks/small_corpora.py --quick   # the bundled CoNLL-2000 and pku samples, 3 epochs
"""
import argparse
import gzip
import json
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, header, write_record  # noqa: E402
from tables import publish  # noqa: E402

POS = ["pt-macmorpho", "es-cast3lb", "eu-3lb", "en-masc", "en-npschat", "hi-indian", "bn-indian", "mr-indian",
       "te-indian"]
CWS = ["udc", "wtb", "zx"]
DEV_SENTENCES = 500


def sentences(path, segmented):
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    if segmented:
        return [line + "\n" for line in text.splitlines() if line.strip()]
    blocks = [b.strip("\n") for b in text.replace("\r\n", "\n").split("\n\n")]
    return [b + "\n\n" for b in blocks if b.strip()]


def tokens(sentence, segmented):
    return len("".join(sentence.split())) if segmented else sentence.strip("\n").count("\n") + 1


def corpus(name, data, quick):
    """(config, segmented, training sentences, dev sentences)."""
    if quick:
        from seqbil.samples import sample_path
        if name == "conll2000":
            return ("conll2000", False, sentences(sample_path("conll2000_train.txt"), False),
                    sentences(sample_path("conll2000_test.txt"), False))
        return "cws", True, sentences(sample_path("pku_train.utf8"), True), sentences(sample_path("pku_test.utf8"), True)
    if name == "conll2000":
        train = sentences(data / "conll2000" / "train.txt.gz", False)
        cut = len(train) - len(train) // 10
        return "conll2000", False, train[:cut], train[cut:]
    segmented = name in CWS
    folder = data / ("cws-more" if segmented else "pos-more") / name
    return ("cws" if segmented else "pos", segmented, sentences(folder / "train.txt.gz", segmented),
            sentences(folder / "dev.txt.gz", segmented))


def sample(train, size, draw, segmented):
    """Sentences drawn at random until they hold `size` tokens, in corpus order."""
    order = list(range(len(train)))
    random.Random(draw * 1_000_003 + size).shuffle(order)
    kept, n = [], 0
    for i in order:
        if n >= size:
            break
        kept.append(i)
        n += tokens(train[i], segmented)
    return [train[i] for i in sorted(kept)], n


def seqbil(*args):
    # (-P: a source tree in the working folder, without compiled kernels, must not hide
    # the installed seqbil)
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *map(str, args)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"seqbil {' '.join(map(str, args))} failed:\n{proc.stderr}")
    return proc.stdout


def dev_score(model, dev):
    result = json.loads(seqbil("eval", "-m", model, "--data", dev, "--json"))
    return result["f1"] if "f1" in result else result["accuracy"]


def other_kind(tried, chosen):
    """The best scored row of the other kind than the chosen learner (a CRF against an
    online learner): by the score, then a CRF's log-likelihood, then the earlier row;
    None when none was scored."""
    crf = chosen["learner"] == "crf"
    rows = [(i, r) for i, r in enumerate(tried) if "value" in r and (r["learner"] == "crf") != crf]
    if not rows:
        return None
    return max(rows, key=lambda ir: (ir[1]["value"], -ir[1].get("nll", 0.0), -ir[0]))[1]


def options(row):
    """The options that train a tried row's setting as named."""
    out = ["--learner", row["learner"]]
    for key in ("epochs", "c1", "c2"):
        if key in row:
            out += [f"--{key}", repr(row[key])]
    return out


def run_sample(job, extra):
    """A sample's row: learner = auto's model and choice, and the other kind's best."""
    from seqbil.model import Model
    here, config = job.pop("here"), job["config"]
    selection = Model.load(str(here / "default.sbm")).training.get("selection", {}) \
        if (here / "default.sbm").exists() else None
    if selection is None or "interrupted" in selection:  # (a run stopped by a signal saves what it had)
        seqbil("train", "--config", config, "--train", here / "train.txt", "--model", here / "default.sbm", "-q",
               *extra)
        selection = Model.load(str(here / "default.sbm")).training.get("selection", {})
    row = {**job, "selection": selection, "chosen": selection.get("chosen"),
           "dev": dev_score(here / "default.sbm", here / "dev.txt")}
    other = other_kind(selection.get("tried", []), row["chosen"]) if row["chosen"] else None
    if other is not None:
        row["other"] = {k: other[k] for k in ("learner", "epochs", "c1", "c2") if k in other}
        if not (here / "other.sbm").exists():
            seqbil("train", "--config", config, "--train", here / "train.txt", "--model", here / "other.sbm", "-q",
                   "--temperature", "1", *options(other))
        row["other_dev"] = dev_score(here / "other.sbm", here / "dev.txt")
    print(f"{row['corpus']} {row['size']} {row['draw']}: {row['chosen']} {row['dev']:.2f}"
          f" (other: {row.get('other')} {row.get('other_dev', float('nan')):.2f})", file=sys.stderr, flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    ap.add_argument("--corpora", default=",".join(POS + ["conll2000"] + CWS))
    ap.add_argument("--sizes", default="2000,4500")
    ap.add_argument("--draws", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "results" / "small_corpora"))
    ap.add_argument("--work", help="keep the samples and models here (default: a temporary folder)")
    ap.add_argument("--jobs", type=int, default=1, help="samples run at once")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    names = ["conll2000", "pku"] if args.quick else args.corpora.split(",")
    sizes = [600] if args.quick else [int(s) for s in args.sizes.split(",")]
    draws = 1 if args.quick else args.draws
    extra = ["--epochs", "3"] if args.quick else []
    record = {**header(), "benchmark": "small_corpora", "sizes": sizes, "draws": draws,
              "dev_sentences": DEV_SENTENCES, "quick": args.quick, "samples": []}
    out = Path(args.out)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        jobs = []
        for name in names:
            config, segmented, train, dev = corpus(name, Path(args.data), args.quick)
            for size in sizes:
                for draw in range(1, draws + 1):
                    part, n = sample(train, size, draw, segmented)
                    here = work / f"{name}-{size}-{draw}"
                    here.mkdir(parents=True, exist_ok=True)
                    (here / "train.txt").write_text("".join(part), encoding="utf-8")
                    (here / "dev.txt").write_text("".join(dev[:DEV_SENTENCES]), encoding="utf-8")
                    jobs.append({"corpus": name, "config": config, "size": size, "draw": draw,
                                 "sentences": len(part), "tokens": n, "here": here})
        with ThreadPoolExecutor(args.jobs) as pool:
            for row in pool.map(lambda job: run_sample(job, extra), jobs):
                record["samples"].append(row)
                write_record(out / "small_corpora.json", record)  # (a stopped run keeps its samples)
    publish(out / "small_corpora.json", record)


if __name__ == "__main__":
    main()
