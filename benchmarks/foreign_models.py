"""Models trained by CRF++ and by python-crfsuite, converted by `seqbil convert --from`,
against the tools themselves on CoNLL-2000 test: the same labels, the same
probabilities, and the tagging speed.

    python benchmarks/foreign_models.py [--data DIR] [--repeat 5] [--copies 10] [--work DIR]

CRF++ is built from its source tarball (../shared/peers/crfpp-src.tar.gz) with its own
`./configure && make`. crf_learn trains on CoNLL-2000 train with its chunking example's
template and the flags of that example's exec.sh (`-c 4.0`, one thread: `-p 1`), a
binary model; the model is kept in --work with how it was made and reused while the
CRF++ build, the corpus, the template and the flags are the same. Then:

- `seqbil convert --from crfpp`, the whole process, REPEAT runs;
- `crf_test -v2` on the test set against the converted model's Model.predict_marginals:
  tokens whose label differs, the largest difference of a sequence probability and of a
  token marginal (crf_test prints six decimals, so up to 5e-7 of it is rounding);
- `crf_test -m MODEL` and `seqbil tag -m MODEL.sbm` (one process) on the test set
  repeated COPIES times, end to end through the shell (start-up included, the same
  input file), alternating, REPEAT runs each: tokens per second and peak RSS; the
  labels of the two outputs compared token by token.

python-crfsuite trains on CoNLL-2000 train with the feature dicts of sklearn-crfsuite's
tutorial (benchmarks/sklearn_speed.py), c1 = c2 = 0.1, at most 100 iterations, its
sentences appended one by one; seqbil.sklearn.CRF(model_filename=) opens the model file
itself. On the test set: labels that differ and the largest marginal difference against
python-crfsuite's Tagger; tagging time of each (the feature dicts built once, apart),
REPEAT runs each.

Writes results/foreign/foreign.json and foreign.md. --quick: the bundled CoNLL-2000
samples, crf_learn stopped after 5 iterations (-m 5), python-crfsuite after 5, one run,
one copy (for a test of this script).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from crfpp_examples import sha256
from record import ROOT, byte_compile, find_corpus, header, run_measured, stats
from tables import publish

sys.path.insert(0, str(Path(__file__).resolve().parent))
SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
CRFPP_FLAGS = ["-c", "4.0", "-p", "1"]
PYCRFSUITE = {"c1": 0.1, "c2": 0.1, "max_iterations": 100}


def plain_copy(path, out):
    """The corpus file uncompressed (crf_test reads plain text)."""
    import gzip
    raw = Path(path).read_bytes()
    Path(out).write_bytes(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return Path(out)


def crfpp_model(bin_dir, train, template, work, flags):
    """(model path, how it was made): crf_learn's model, trained here unless the one in
    work was made from the same CRF++ build, corpus, template and flags."""
    key = {"crf_learn": sha256(bin_dir / "crf_learn"), "libcrfpp": sha256(next((bin_dir.parent / "lib").glob(
        "libcrfpp.so.*.*.*"), bin_dir / "crf_learn")), "train": sha256(train), "template": sha256(template),
        "flags": flags}
    model, info = work / "chunking.crfpp", work / "chunking.crfpp.json"
    if model.exists() and info.exists():
        made = json.loads(info.read_text())
        if made["key"] == key and made["sha256"] == sha256(model):
            return model, made
    cmd = [str(bin_dir / "crf_learn"), *flags, str(template), str(train), str(model)]
    print(f"training CRF++: {' '.join(cmd)}", file=sys.stderr)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"crf_learn failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    seconds = time.perf_counter() - start
    iterations = sum(line.startswith("iter=") for line in proc.stdout.splitlines())
    made = {"key": key, "command": "crf_learn " + " ".join(flags) + " template train.txt model",
            "seconds": seconds, "iterations": iterations, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "sha256": sha256(model), "bytes": model.stat().st_size}
    info.write_text(json.dumps(made, indent=1))
    return model, made


def read_v2(path, n_labels):
    """crf_test -v2 output: per sentence (probability, labels, marginals [n, L])."""
    out, cur = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("# "):
                cur = (float(line[2:]), [], [])
                out.append(cur)
            elif line:
                fields = line.split("\t")
                cur[1].append(fields[-n_labels - 1].rsplit("/", 1)[0])
                cur[2].append([float(x.rsplit("/", 1)[1]) for x in fields[-n_labels:]])
    return out


def last_fields(path):
    with open(path, encoding="utf-8") as f:
        return [line.split()[-1] for line in f if line.strip()]


def corpus_file(part, args):
    if args.quick:
        from seqbil.samples import sample_path
        return Path(sample_path(f"conll2000_{part}.txt"))
    return find_corpus("conll2000", f"{part}.txt", args.data)


def bench_crfpp(args, work, rec):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from crfpp_examples import build_crfpp, default_crfpp_dir, extract_examples
    src = Path(args.crfpp_src)
    if not src.exists():
        sys.exit(f"foreign_models: {src} not found (CRF++'s source tarball; give --crfpp-src)")
    bin_dir = build_crfpp(src, default_crfpp_dir(src))
    version = subprocess.run([str(bin_dir / "crf_test"), "--version"], capture_output=True, text=True).stdout.strip()
    train = plain_copy(corpus_file("train", args), work / "train.txt")
    test = plain_copy(corpus_file("test", args), work / "test.txt")
    extract_examples(src, work / "examples", ["chunking"])
    template = work / "examples" / "chunking" / "template"
    model, made = crfpp_model(bin_dir, train, template, work, CRFPP_FLAGS + (["-m", "5"] if args.quick else []))
    sbm = work / "chunking.sbm"
    convert = [run_measured(SEQBIL + ["convert", "--from", "crfpp", model, sbm])[:2] for _ in range(args.repeat)]
    sbm_bytes = sbm.stat().st_size

    # labels and probabilities
    v2 = work / "crf_test.v2"
    with open(v2, "w") as out:
        subprocess.run([str(bin_dir / "crf_test"), "-v2", "-m", str(model), str(test)], stdout=out, check=True)
    from seqbil.model import Model
    m = Model.load(sbm)
    ref = read_v2(v2, len(m.labels))
    sentences = list(m.format.read(str(test), labeled=False))
    got = m.predict_marginals(sentences)
    order = [m.labels.index(y) for y in m.labels]  # crf_test's -v2 order is the model's label order
    tokens = sum(len(s) for s in sentences)
    differ = sum(a != b for (labels, _, _, _), (_, ref_labels, _) in zip(got, ref) for a, b in zip(labels, ref_labels))
    seq_diff = max(abs(p - rp) for (_, p, _, _), (rp, _, _) in zip(got, ref))
    tok_diff = max(float(np.abs(marg[:, order] - np.array(rm)).max()) for (_, _, marg, _), (_, _, rm) in zip(got, ref))

    # speed, end to end: the test set COPIES times
    big = work / "test.copies.txt"
    big.write_text(test.read_text(encoding="utf-8") * args.copies, encoding="utf-8")
    n_tokens = tokens * args.copies
    runs = {"crf_test": [], "seqbil tag": []}
    outs = {"crf_test": work / "crf_test.out", "seqbil tag": work / "seqbil.out"}
    cmds = {"crf_test": [bin_dir / "crf_test", "-m", model, big], "seqbil tag": SEQBIL + ["tag", "-m", sbm, big]}
    for _ in range(args.repeat):
        for name in runs:
            with open(outs[name], "w") as out:
                runs[name].append(run_measured(cmds[name], stdout=out)[:2])
    labels_cli = sum(a != b for a, b in zip(last_fields(outs["crf_test"]), last_fields(outs["seqbil tag"])))
    systems = {}
    for name, r in runs.items():
        systems[name] = {"seconds": stats([w for w, _ in r]), "tokens_per_s": stats([n_tokens / w for w, _ in r]),
                         "rss_mib": stats([m_ for _, m_ in r])}
    rec["crfpp"] = {
        "version": version, "source_sha256": sha256(src), "build": "./configure --prefix=DIR && make -j2 && make install",
        "model": {"command": made["command"], "train_seconds": made["seconds"], "iterations": made["iterations"],
                  "trained": made["date"], "sha256": made["sha256"], "bytes": made["bytes"]},
        "converted": {"convert_seconds": stats([w for w, _ in convert]), "convert_rss_mib": stats([r for _, r in convert]),
                      "bytes": sbm_bytes, "labels": len(m.labels)},
        "test": {"sentences": len(sentences), "tokens": tokens, "labels_differ": differ,
                 "max_sequence_probability_diff": seq_diff, "max_token_marginal_diff": tok_diff},
        "speed": {"copies": args.copies, "tokens": n_tokens, "systems": systems, "labels_differ": labels_cli,
                  "speedup": stats([c[0] / s[0] for c, s in zip(runs["crf_test"], runs["seqbil tag"])])}}


def bench_crfsuite(args, work, rec):
    from importlib import metadata

    import pycrfsuite
    from sklearn_speed import read, word2features
    from seqbil.sklearn import CRF
    train, test = read(corpus_file("train", args)), read(corpus_file("test", args))
    X = [[word2features(s, i) for i in range(len(s))] for s in train]
    y = [[t[-1] for t in s] for s in train]
    start = time.perf_counter()
    Xt = [[word2features(s, i) for i in range(len(s))] for s in test]
    dicts = time.perf_counter() - start
    path = work / "conll2000.crfsuite"
    trainer = pycrfsuite.Trainer(verbose=False)
    for xs, ys in zip(X, y):
        trainer.append(xs, ys)
    settings = dict(PYCRFSUITE, **({"max_iterations": 5} if args.quick else {}))
    trainer.set_params(settings)
    start = time.perf_counter()
    trainer.train(str(path))
    train_seconds = time.perf_counter() - start
    del X, y, trainer
    tagger = pycrfsuite.Tagger()
    tagger.open(str(path))
    crf = CRF(model_filename=str(path))
    ref_labels, ref_marg, peer_times, ours_times = [], [], [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        out = []
        for xs in Xt:
            tagger.set(xs)
            out.append(tagger.tag())
        peer_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        pred = crf.predict(Xt)
        ours_times.append(time.perf_counter() - start)
    labels = tagger.labels()
    for xs in Xt:
        tagger.set(xs)
        ref_labels.append(tagger.tag())
        ref_marg.append([[tagger.marginal(lab, i) for lab in labels] for i in range(len(xs))])
    marg = crf.predict_marginals(Xt)
    differ = sum(a != b for p, r in zip(pred, ref_labels) for a, b in zip(p, r))
    diff = max(abs(m[i][lab] - rm[i][j]) for m, rm in zip(marg, ref_marg) for i in range(len(rm))
               for j, lab in enumerate(labels))
    tokens = sum(len(s) for s in test)
    rec["crfsuite"] = {
        "python_crfsuite": metadata.version("python-crfsuite"),
        "settings": settings, "train_seconds": train_seconds, "model_bytes": path.stat().st_size,
        "test": {"sentences": len(test), "tokens": tokens, "labels_differ": differ, "max_token_marginal_diff": diff},
        "dict_seconds": dicts,
        "tagging": {"python-crfsuite Tagger (set + tag per sentence)": stats(peer_times),
                    "seqbil.sklearn.CRF.predict": stats(ours_times)},
        "speedup": stats([p / o for p, o in zip(peer_times, ours_times)])}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with conll2000/train.txt(.gz) and test.txt(.gz)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--copies", type=int, default=10, help="how many times the test set is tagged in a run")
    ap.add_argument("--crfpp-src", default=str(ROOT.parent / "shared" / "peers" / "crfpp-src.tar.gz"))
    ap.add_argument("--work", default=str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") /
                                          "seqbil" / "foreign_models"),
                    help="where the CRF++ model is kept between runs")
    ap.add_argument("--out", default=str(ROOT / "results" / "foreign"))
    ap.add_argument("--only", choices=["crfpp", "crfsuite"], help="one of the two parts (a record of that part)")
    ap.add_argument("--quick", action="store_true", help="the bundled samples, a few iterations, one run")
    args = ap.parse_args()
    if args.quick:
        args.repeat, args.copies = 1, 1
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    byte_compile()
    rec = {"benchmark": "foreign_models", **header(), "repeat": args.repeat,
           "corpus": "the bundled CoNLL-2000 samples" if args.quick else "CoNLL-2000 (train / test)"}
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        if args.only in (None, "crfpp"):
            bench_crfpp(args, work, rec)
        if args.only in (None, "crfsuite"):
            bench_crfsuite(args, Path(tmp), rec)
    publish(Path(args.out) / "foreign.json", rec)
    print(json.dumps({k: rec[k] for k in ("crfpp", "crfsuite") if k in rec}, indent=1))


if __name__ == "__main__":
    if not shutil.which("make"):
        print("note: building CRF++ needs make and g++", file=sys.stderr)
    main()
