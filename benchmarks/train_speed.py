"""Training and tagging speed, memory and model size: seqbil against python-crfsuite's
averaged perceptron on the same corpus and templates, in one run.

Every system runs as its own process, REPEAT times (default 5), and each figure is
reported as min / median / max:

- train, end to end: raw training file in, model file out (the whole process);
- training passes only: seqbil's per-epoch seconds summed (its --log); for crfsuite,
  its own training call alone; crfsuite's feature building (CRF++ attribute strings
  made in Python, then handed to the trainer) is reported apart;
- tagging, end to end: `seqbil tag` on the test text without labels, through the
  shell; crfsuite: attribute building plus tagging in Python (both apart);
- peak RSS of the training process, model file size, test score.

Writes results/speed/CORPUS.json (the record) and CORPUS.md (its table).

    python benchmarks/train_speed.py conll2000 [--data DIR] [--repeat 5] [--epochs 20]
    python benchmarks/train_speed.py pku [--data DIR]
    python benchmarks/train_speed.py macmorpho [--data DIR]
"""
import argparse
import gzip
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from record import find_corpus as find, ROOT, header, run_measured, stats, write_record
from tables import speed_table

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]  # -P: the installed seqbil, never the current directory's
CORPORA = {
    # name: (data folder, train file, test file, seqbil options, description)
    "conll2000": ("conll2000", "train.txt", "test.txt",
                  ["--config", "conll2000", "--template", str(ROOT / "configs" / "crfpp_chunking.template")],
                  "CoNLL-2000 chunking, CRF++'s chunking template (0-order features and label transitions), "
                  "averaged perceptrons on both sides"),
    "pku": ("sighan2005", "pku_training.approx.utf8", "pku_test_gold.utf8", ["--config", "sighan2005"],
            "SIGHAN 2005 pku (stand-in training set), the paper's setting (configs/sighan2005.toml: "
            "character templates as 1st-order features, no averaging); crfsuite's averaged perceptron "
            "with the templates as state features"),
    "macmorpho": ("pos-more/pt-macmorpho", "train.txt", "test.txt",
                  ["--config", "pos", "--template", str(ROOT / "benchmarks" / "templates" / "pos_window.template")],
                  "Mac-Morpho part-of-speech tagging (pt-macmorpho of the development suite, 44 tags), the word at "
                  "-2..2 and two word bigrams (benchmarks/templates/pos_window.template) with label transitions, "
                  "averaged perceptrons on both sides"),
}


def plain(path, work):
    """A decompressed copy (every system then reads the same raw text)."""
    out = work / Path(path).name.removesuffix(".gz")
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def without_labels(test, fmt, work):
    out = work / "test.input"
    lines = test.read_text(encoding="utf-8").splitlines()
    if fmt == "sighan":
        out.write_text("".join("".join(line.split()) + "\n" for line in lines), encoding="utf-8")
    else:
        out.write_text("".join(" ".join(line.split()[:-1]) + "\n" for line in lines), encoding="utf-8")
    return out


def bench_seqbil(learner, corpus, train, test, args, work):
    options = CORPORA[corpus][3]
    model, log = work / f"{learner}.sbm", work / f"{learner}.jsonl"
    e2e, passes, encode, rss = [], [], [], []
    for _ in range(args.repeat):
        wall, peak, err = run_measured(SEQBIL + ["train", *options, "--learner", learner, "--epochs",
                                                  str(args.epochs), "--train", str(train), "--model", str(model),
                                                  "--log", str(log), "-q"])
        e2e.append(wall)
        rss.append(peak)
        passes.append(sum(json.loads(line)["seconds"] for line in log.read_text().splitlines()))
        read_line = next(line for line in err.splitlines() if line.startswith("read "))
        encode.append(float(read_line.rsplit(" in ", 1)[1].split()[0]))
    fmt = "sighan" if corpus == "pku" else "conll"
    source = without_labels(test, fmt, work)
    tag_walls = []
    for _ in range(args.repeat):
        with open(source, "rb") as fin, open(work / "tagged.txt", "wb") as fout:
            wall, _, _ = run_measured(SEQBIL + ["tag", "-m", str(model)], stdin=fin, stdout=fout)
        tag_walls.append(wall)
    gold = test
    if fmt == "conll":  # seqbil tag appends its label to the input columns: score against the gold file
        scores = json.loads(run_json(SEQBIL + ["eval", "--gold", str(gold), "--pred", str(work / "tagged.txt"),
                                               "--json"]))
    else:
        scores = json.loads(run_json(SEQBIL + ["eval", "--format", "sighan", "--gold", str(gold), "--pred",
                                               str(work / "tagged.txt"), "--json"]))
    tokens = count_tokens(test, fmt)
    return {"system": f"seqbil {learner}", "train_end_to_end_s": stats(e2e), "train_passes_s": stats(passes),
            "read_and_encode_s": stats(encode), "train_peak_rss_mib": stats(rss),
            "model_mib": model.stat().st_size / 2 ** 20, "tag_end_to_end_s": stats(tag_walls),
            "tag_tokens_per_s": stats([tokens / w for w in tag_walls]), "test_tokens": tokens,
            "score": scores.get("f1", scores.get("accuracy")), "metric": scores["metric"]}


def run_json(cmd):
    import subprocess
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


def count_tokens(test, fmt):
    lines = test.read_text(encoding="utf-8").splitlines()
    if fmt == "sighan":
        return sum(len("".join(line.split())) for line in lines)
    return sum(1 for line in lines if line.strip())


def bench_crfsuite(corpus, train, test, args, work):
    try:
        import pycrfsuite  # noqa: F401
    except ImportError:
        return None
    e2e, rss, parts = [], [], []
    for _ in range(args.repeat):
        out = work / "crfsuite.json"
        with open(out, "w") as f:
            wall, peak, _ = run_measured([sys.executable, __file__, corpus, "--peer", "--files", str(train),
                                          str(test), "--epochs", str(args.epochs), "--work", str(work)], stdout=f)
        e2e.append(wall)
        rss.append(peak)
        parts.append(json.loads(out.read_text()))
    tokens = parts[0]["tokens"]
    return {"system": "crfsuite ap", "train_end_to_end_s": stats(e2e),
            "train_passes_s": stats([p["train_s"] for p in parts]),
            "peer_features_s": stats([p["features_s"] for p in parts]), "train_peak_rss_mib": stats(rss),
            "model_mib": parts[0]["model_bytes"] / 2 ** 20,
            "tag_features_s": stats([p["tag_features_s"] for p in parts]),
            "tag_s": stats([p["tag_s"] for p in parts]),
            "tag_tokens_per_s": stats([tokens / (p["tag_features_s"] + p["tag_s"]) for p in parts]),
            "test_tokens": tokens, "score": parts[0]["score"], "metric": parts[0]["metric"]}


def peer(corpus, train, test, epochs, work):
    """crfsuite's averaged perceptron, timed in parts (runs in its own process)."""
    import pycrfsuite
    from crfsuite_peer import attributes, peer_templates
    from peer_corpus import PeerCorpus

    args = argparse.Namespace(config=CORPORA[corpus][3][1], template=(CORPORA[corpus][3][3]
                              if "--template" in CORPORA[corpus][3] else None), train=train, test=test)
    t0 = time.perf_counter()
    pc = PeerCorpus(args)
    templates = peer_templates(pc.texts)
    trainer = pycrfsuite.Trainer(algorithm="ap", verbose=False)
    for s in pc.train:
        trainer.append(attributes(s, templates, pc.fold), s.labels)
    features_s = time.perf_counter() - t0
    trainer.set_params({"max_iterations": epochs, "epsilon": 0.0})
    model = str(Path(work) / "crfsuite.model")
    t0 = time.perf_counter()
    trainer.train(model)
    train_s = time.perf_counter() - t0
    tagger = pycrfsuite.Tagger()
    tagger.open(model)
    t0 = time.perf_counter()
    xs = [attributes(s, templates, pc.fold) for s in pc.test]
    tag_features_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    pred = [tagger.tag(x) for x in xs]
    tag_s = time.perf_counter() - t0
    result = pc.score(pred)
    print(json.dumps({"features_s": features_s, "train_s": train_s, "tag_features_s": tag_features_s,
                      "tag_s": tag_s, "model_bytes": Path(model).stat().st_size,
                      "score": result.get("f1", result.get("accuracy")), "metric": result["metric"], "tokens": sum(map(len, pc.test))}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpus", choices=sorted(CORPORA))
    ap.add_argument("--data", help="folder with the corpora as data_scripts/ installs them "
                    "(default: data/, else ../shared/data)")
    ap.add_argument("--repeat", type=int, default=5, help="runs of every measurement (default 5)")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--learners", help="seqbil learners (default: sp for conll2000 and macmorpho, whose templates have no "
                    "1st-order features; sp,bol for pku)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed"), help="where the record and table go")
    ap.add_argument("--peer", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--files", nargs=2, help=argparse.SUPPRESS)
    ap.add_argument("--work", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.peer:
        return peer(args.corpus, args.files[0], args.files[1], args.epochs, args.work)
    folder, train_name, test_name, _, description = CORPORA[args.corpus]
    record = header()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train = plain(find(folder, train_name, args.data), work)
        test = plain(find(folder, test_name, args.data), work)
        rows = []
        for learner in (args.learners or ("sp,bol" if args.corpus == "pku" else "sp")).split(","):
            print(f"seqbil {learner} ...", file=sys.stderr)
            rows.append(bench_seqbil(learner, args.corpus, train, test, args, work))
        print("crfsuite ap ...", file=sys.stderr)
        peer_row = bench_crfsuite(args.corpus, train, test, args, work)
        if peer_row is None:
            print("python-crfsuite is not installed (pip install '.[bench]'): no peer row", file=sys.stderr)
        else:
            rows.append(peer_row)
    record.update({"benchmark": "train_speed", "corpus": args.corpus, "description": description,
                   "epochs": args.epochs, "repeat": args.repeat, "train_file": train_name, "test_file": test_name,
                   "rows": rows})
    out = Path(args.out)
    write_record(out / f"{args.corpus}.json", record)
    (out / f"{args.corpus}.md").write_text(speed_table(record), encoding="utf-8")
    print(speed_table(record))


if __name__ == "__main__":
    main()
