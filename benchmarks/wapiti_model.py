"""A model trained by Wapiti, converted by `seqbil convert --from wapiti`, against
`wapiti label` itself on CoNLL-2000 test: the same labels, the same marginals, and the
tagging speed; and Wapiti's own pattern files (its dat/) trained by seqbil as given.

    python benchmarks/wapiti_model.py [--data DIR] [--repeat 5] [--copies 10] [--work DIR]

Wapiti 1.5.0 is built from its source tarball (../shared/peers/wapiti-src.tar.gz) with
its own `make` (benchmarks/peer_build.py). `wapiti train` trains on CoNLL-2000 train with
CRF++'s chunking template (configs/crfpp_chunking.template, which Wapiti reads as
patterns) and its defaults (a CRF by L-BFGS, rho1 = 0.5, rho2 = 0.0001, one thread); the
model is kept in --work with how it was made and reused while the build, the corpus and
the template are the same. Then:

- `seqbil convert --from wapiti`, the whole process, REPEAT runs;
- on the test set, `wapiti label` against `seqbil tag` (Viterbi): tokens whose label
  differs; `wapiti label -p -s` against `seqbil tag --posterior --marginals`: labels
  that differ and the largest difference of a token's marginal (Wapiti prints six
  decimals, so up to 5e-7 of it is rounding);
- `wapiti label -m MODEL` and `seqbil tag -m MODEL.sbm` (one process each) on the test
  set repeated COPIES times, end to end (start-up included, the same input file),
  alternating, REPEAT runs each: tokens per second and peak RSS, and the labels of the
  two outputs compared token by token.

Wapiti's dat/ pattern files (chpattern.txt on chtrain.txt / chtest.txt, nppattern.txt on
nptrain.txt / nptest.txt) are given to `seqbil train --template` as they are, with the
default learner and with `--learner crf --c1 0.5 --c2 0.00005` (Wapiti's objective),
and to `wapiti train -p` with its defaults: test F1 of each (conlleval's).

Writes results/foreign/wapiti.json and wapiti.md. --quick: the bundled CoNLL-2000
samples, Wapiti stopped after 5 iterations (-i 5), one run, one copy, no dat/ part (for
a test of this script).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from foreign_models import corpus_file, last_fields, plain_copy  # noqa: E402
from peer_build import build_wapiti, default_wapiti_dir, sha256  # noqa: E402
from record import ROOT, byte_compile, header, run_measured, stats  # noqa: E402
from tables import publish  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
TEMPLATE = ROOT / "configs" / "crfpp_chunking.template"
DAT = (("chunking", "chpattern.txt", "chtrain.txt", "chtest.txt"), ("base NP", "nppattern.txt", "nptrain.txt",
                                                                     "nptest.txt"))


def wapiti_model(program, train, template, work, flags):
    """(model path, how it was made): Wapiti's model, trained here unless the one in work
    was made from the same build, corpus, template and flags."""
    key = {"wapiti": sha256(program), "train": sha256(train), "template": sha256(template), "flags": flags}
    model, info = work / "chunking.wapiti", work / "chunking.wapiti.json"
    if model.exists() and info.exists():
        made = json.loads(info.read_text())
        if made["key"] == key and made["sha256"] == sha256(model):
            return model, made
    cmd = [str(program), "train", *flags, "-p", str(template), str(train), str(model)]
    print(f"training Wapiti: {' '.join(cmd)}", file=sys.stderr)
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        sys.exit(f"wapiti train failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    seconds = time.perf_counter() - start
    iterations = sum(line.lstrip().startswith("[") for line in proc.stderr.replace("\r", "\n").splitlines())
    made = {"key": key, "command": "wapiti train " + " ".join(flags + ["-p", "template", "train.txt", "model"]),
            "seconds": seconds, "iterations": iterations, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "sha256": sha256(model), "bytes": model.stat().st_size}
    info.write_text(json.dumps(made, indent=1))
    return model, made


HEADER = re.compile(r"# (\d+ )?[-+0-9.einfa]+")  # a sentence's line: Wapiti's "# 0 0.352856", seqbil's "# 0.35"


def label_pairs(text, sep):
    """(label, probability) of each token line of `wapiti label -p -s` output (sep: a
    tab) or of `seqbil tag --posterior --marginals` (a space): its last field (a token
    # is a token line, not a header)."""
    return [tuple(line.split(sep)[-1].rsplit("/", 1)) for line in text.splitlines()
            if line.strip() and not HEADER.fullmatch(line)]


def compare(program, model, sbm, test, work):
    """Labels and marginals of the converted model against wapiti label's on the test set."""
    subprocess.run([str(program), "label", "-m", str(model), str(test), str(work / "wapiti.viterbi")], check=True,
                   capture_output=True)
    ours = subprocess.run(SEQBIL + ["tag", "-m", str(sbm), str(test)], check=True, capture_output=True,
                          text=True).stdout
    viterbi = sum(a != b for a, b in zip(last_fields(work / "wapiti.viterbi"), [ln.split()[-1] for ln in
                                                                                 ours.splitlines() if ln.strip()]))
    subprocess.run([str(program), "label", "-m", str(model), "-p", "-s", str(test), str(work / "wapiti.post")],
                   check=True, capture_output=True)
    post = subprocess.run(SEQBIL + ["tag", "-m", str(sbm), "--posterior", "--marginals", str(test)], check=True,
                          capture_output=True, text=True).stdout
    theirs, mine = label_pairs((work / "wapiti.post").read_text(encoding="utf-8"), "\t"), label_pairs(post, " ")
    if len(theirs) != len(mine):
        sys.exit(f"wapiti_model: {len(theirs)} tokens from wapiti label -p -s, {len(mine)} from seqbil tag")
    return {"tokens": len(mine), "labels_differ": viterbi,
            "posterior_labels_differ": sum(a[0] != b[0] for a, b in zip(theirs, mine)),
            "max_token_marginal_diff": max(abs(float(a[1]) - float(b[1])) for a, b in zip(theirs, mine))}


def speed(program, model, sbm, test, work, args):
    """Tagging the test set COPIES times, end to end, alternating, REPEAT runs each."""
    big = work / "test.copies.txt"
    big.write_text(test.read_text(encoding="utf-8") * args.copies, encoding="utf-8")
    n_tokens = sum(1 for line in big.read_text(encoding="utf-8").splitlines() if line.strip())
    outs = {"wapiti label": work / "wapiti.out", "seqbil tag": work / "seqbil.out"}
    cmds = {"wapiti label": [program, "label", "-m", model, big, outs["wapiti label"]],
            "seqbil tag": SEQBIL + ["tag", "-m", sbm, big, "-o", outs["seqbil tag"]]}
    runs = {name: [] for name in cmds}
    for _ in range(args.repeat):
        for name, cmd in cmds.items():
            runs[name].append(run_measured(cmd)[:2])
    differ = sum(a != b for a, b in zip(last_fields(outs["wapiti label"]), last_fields(outs["seqbil tag"])))
    systems = {name: {"seconds": stats([w for w, _ in r]), "tokens_per_s": stats([n_tokens / w for w, _ in r]),
                      "rss_mib": stats([m for _, m in r])} for name, r in runs.items()}
    return {"copies": args.copies, "tokens": n_tokens, "systems": systems, "labels_differ": differ,
            "speedup": stats([w[0] / s[0] for w, s in zip(runs["wapiti label"], runs["seqbil tag"])])}


def dat_patterns(program, src, work):
    """Test F1 of seqbil and Wapiti trained on Wapiti's dat/ corpora with its pattern files."""
    from seqbil.evaluation import score
    with tarfile.open(src) as tar:
        members = [m for m in tar.getmembers() if m.name.startswith("wapiti/dat/")]
        tar.extractall(work, members=members, **({"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}))
    dat = work / "wapiti" / "dat"
    out = {}
    for name, patterns, train, test in DAT:
        gold = [line.split()[-1] for line in (dat / test).read_text(encoding="utf-8").splitlines() if line.strip()]

        def f1(lines):
            labels = [line.split()[-1] for line in lines if line.strip()]
            return score("chunk", [gold], [labels])["f1"]
        row = {}
        for label, extra in (("seqbil (default learner)", []),
                             ("seqbil crf, Wapiti's objective", ["--learner", "crf", "--c1", "0.5", "--c2", "0.00005"])):
            model = work / f"{patterns}.sbm"
            subprocess.run(SEQBIL + ["train", "-q", "--template", str(dat / patterns), "--train", str(dat / train),
                                     "--model", str(model), *extra], check=True, capture_output=True)
            tagged = subprocess.run(SEQBIL + ["tag", "-m", str(model), str(dat / test)], check=True,
                                    capture_output=True, text=True).stdout
            row[label] = f1(tagged.splitlines())
        model = work / f"{patterns}.wapiti"
        subprocess.run([str(program), "train", "-p", str(dat / patterns), str(dat / train), str(model)], check=True,
                       capture_output=True)
        subprocess.run([str(program), "label", "-m", str(model), str(dat / test), str(work / "dat.out")], check=True,
                       capture_output=True)
        row["Wapiti (defaults)"] = f1((work / "dat.out").read_text(encoding="utf-8").splitlines())
        out[name] = {"patterns": f"dat/{patterns}", "train": f"dat/{train}", "test": f"dat/{test}", "f1": row}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", help="folder with conll2000/train.txt(.gz) and test.txt(.gz)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--copies", type=int, default=10, help="how many times the test set is tagged in a run")
    ap.add_argument("--wapiti-src", default=str(ROOT.parent / "shared" / "peers" / "wapiti-src.tar.gz"))
    ap.add_argument("--work", default=str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") /
                                          "seqbil" / "wapiti_model"), help="where the Wapiti model is kept")
    ap.add_argument("--out", default=str(ROOT / "results" / "foreign"))
    ap.add_argument("--quick", action="store_true", help="the bundled samples, 5 iterations, one run")
    args = ap.parse_args()
    if args.quick:
        args.repeat, args.copies = 1, 1
    src = Path(args.wapiti_src)
    if not src.is_file():
        sys.exit(f"wapiti_model: {src} not found (Wapiti's source tarball; give --wapiti-src)")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    byte_compile()
    program = build_wapiti(src, default_wapiti_dir(src))
    version = subprocess.run([str(program), "--version"], capture_output=True, text=True)
    train = plain_copy(corpus_file("train", args), work / "train.txt")
    test = plain_copy(corpus_file("test", args), work / "test.txt")
    model, made = wapiti_model(program, train, TEMPLATE, work, ["-i", "5"] if args.quick else [])
    sbm = work / "chunking.sbm"
    convert = [run_measured(SEQBIL + ["convert", "--from", "wapiti", model, sbm])[:2] for _ in range(args.repeat)]
    rec = {"benchmark": "wapiti_model", **header(), "repeat": args.repeat,
           "corpus": "the bundled CoNLL-2000 samples" if args.quick else "CoNLL-2000 (train / test)",
           "wapiti": {"version": (version.stdout + version.stderr).strip().split("\n")[0], "source_sha256": sha256(src),
                      "build": "make"},
           "model": {"command": made["command"], "train_seconds": made["seconds"], "iterations": made["iterations"],
                     "trained": made["date"], "sha256": made["sha256"], "bytes": made["bytes"]},
           "converted": {"convert_seconds": stats([w for w, _ in convert]),
                         "convert_rss_mib": stats([r for _, r in convert]), "bytes": sbm.stat().st_size}}
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        rec["test"] = compare(program, model, sbm, test, Path(tmp))
        rec["speed"] = speed(program, model, sbm, test, Path(tmp), args)
        if not args.quick:
            rec["dat"] = dat_patterns(program, src, Path(tmp))
    publish(Path(args.out) / "wapiti.json", rec)
    print(json.dumps({k: rec[k] for k in ("test", "speed")}, indent=1))


if __name__ == "__main__":
    main()
