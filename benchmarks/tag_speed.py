"""Tagging speed, end to end through the shell: `seqbil tag` against CRF++'s `crf_test`
on the same template, in one run, and what a model costs to start.

    python benchmarks/tag_speed.py [conll2000|pku|macmorpho ...] [--repeat 7] [--copies N] [--data DIR]

For each corpus: a seqbil sp model and a CRF++ model of the same templates are
trained once (CRF++ with a few L-BFGS iterations: its tagging cost depends on its
feature set and labels, not on how far it was trained); then the test set
concatenated COPIES times is tagged by `seqbil tag` (--jobs 1, and --jobs 2 with the
output checked to be byte-identical) and by `crf_test`, alternating, REPEAT times
each; wall time and peak RSS of each process. seqbil reads the raw text (tokens and
their columns, or unsegmented lines); crf_test gets its column format ready-made,
so its input conversion is not counted. Start-up: `seqbil tag` of one sentence
(whole process), and in one process the time to load the model and tag a first
sentence (seqbil.load + Model.tag).

conll2000: CRF++'s chunking template (configs/crfpp_chunking.template) with
configs/conll2000.toml; pku: the paper's templates (configs/sighan2005.toml); macmorpho:
word features with label transitions, configs/pos.toml's corpus settings.
CRF++ is built from its source tarball (../shared/peers/crfpp-src.tar.gz, or
--crfpp-src) with its own `./configure && make`, as benchmarks/crfpp_examples.py builds
it; without the tarball, crf_learn and crf_test on the PATH are used, and without
them only seqbil is measured. seqbil's modules are byte-compiled first, as `pip
install` leaves them. Writes results/speed/tag.json and tag.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from record import find_corpus as find, ROOT, byte_compile, header, run_measured, stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
CORPORA = {
    "conll2000": {"folder": "conll2000", "train": "train.txt", "test": "test.txt",
                  "options": ["--config", "conll2000", "--template", str(ROOT / "configs" / "crfpp_chunking.template")],
                  "description": "CoNLL-2000 chunking test set, CRF++'s chunking template", "copies": 10},
    "pku": {"folder": "sighan2005", "train": "pku_training.approx.utf8", "test": "pku_test_gold.utf8",
            "options": ["--config", "sighan2005"],
            "description": "SIGHAN 2005 pku test set, the paper's character templates (configs/sighan2005.toml)",
            "copies": 20},
    "macmorpho": {"folder": "pos-more/pt-macmorpho", "train": "train.txt", "test": "test.txt",
                  "options": ["--config", "pos", "--template",
                              str(ROOT / "benchmarks" / "templates" / "pos_window.template")],
                  "description": "Mac-Morpho part-of-speech test set (44 tags), the word at -2..2 and two word "
                  "bigrams with label transitions (benchmarks/templates/pos_window.template)", "copies": 4},
}


def prepare(corpus, args, work):
    """(seqbil input, crf_test input or None, tokens, seqbil model, crf++ model or None)."""
    spec = CORPORA[corpus]
    copies = args.copies or spec["copies"]
    train, test = find(spec["folder"], spec["train"], args.data), find(spec["folder"], spec["test"], args.data)
    model = work / f"{corpus}.sp.sbm"
    subprocess.run(SEQBIL + ["train", "-q", *spec["options"], "--learner", "sp", "--train", str(train),
                             "--model", str(model)], check=True, cwd=work)
    from crfpp_peer import write_columns
    from peer_corpus import PeerCorpus
    template = spec["options"][3] if "--template" in spec["options"] else None
    peer = PeerCorpus(argparse.Namespace(config=spec["options"][1], template=template, train=str(train),
                                         test=str(test)))
    raw, columns = work / f"{corpus}.input", work / f"{corpus}.crfpp.input"
    if peer.fmt.name == "sighan":
        text = "".join("".join(s.columns[0]) + "\n" for s in peer.test)
    else:
        text = "".join("".join(" ".join(c[i] for c in s.columns if c is not None) + "\n" for i in range(len(s)))
                       + "\n" for s in peer.test)
    raw.write_text(text * copies, encoding="utf-8")
    tokens = sum(len(s) for s in peer.test) * copies
    crfpp_model = None
    if args.crfpp:
        write_columns(work / "crfpp.test", peer.test, peer.fold, False)
        columns.write_text((work / "crfpp.test").read_text(encoding="utf-8") * copies, encoding="utf-8")
        write_columns(work / "crfpp.train", peer.train, peer.fold, True)
        (work / "crfpp.template").write_text("\n".join(peer.texts) + "\n", encoding="utf-8")
        crfpp_model = work / f"{corpus}.crfpp.model"
        subprocess.run([args.crfpp["crf_learn"], "-p", str(os.cpu_count() or 1), "-m", str(args.crfpp_iterations),
                        str(work / "crfpp.template"), str(work / "crfpp.train"), str(crfpp_model)],
                       check=True, stdout=subprocess.DEVNULL)
    return raw, (columns if crfpp_model else None), tokens, model, crfpp_model


def find_crfpp(src):
    """{crf_learn, crf_test, version, build}: CRF++ built from its source tarball, else the
    tools on the PATH; None without either."""
    if src.exists():
        from crfpp_examples import build_crfpp, default_crfpp_dir
        bin_dir = build_crfpp(src, default_crfpp_dir(src))
        tools = {"crf_learn": str(bin_dir / "crf_learn"), "crf_test": str(bin_dir / "crf_test"),
                 "build": f"from {src.name} with ./configure --prefix=DIR && make -j2 && make install"}
    elif shutil.which("crf_learn") and shutil.which("crf_test"):
        tools = {"crf_learn": shutil.which("crf_learn"), "crf_test": shutil.which("crf_test"), "build": "on the PATH"}
    else:
        return None
    tools["version"] = subprocess.run([tools["crf_test"], "--version"], capture_output=True,
                                      text=True).stdout.strip()
    return tools


def measure(cmd, source, out):
    with open(source, "rb") as fin, open(out, "wb") as fout:
        wall, rss, _ = run_measured(cmd, stdin=fin, stdout=fout)
    return wall, rss


def first_sentence(model, sentence):
    """Seconds to load the model and tag one sentence, in a fresh process (after imports)."""
    code = ("import json, sys, time\nimport seqbil\nload = seqbil.load  # (imports the API)\nt = time.perf_counter()\n"
            "m = load(sys.argv[1])\n"
            "m.tag(json.loads(sys.argv[2]))\nprint(time.perf_counter() - t)")
    return float(subprocess.run([sys.executable, "-P", "-c", code, str(model), json.dumps(sentence)],
                                capture_output=True, text=True, check=True).stdout)


def bench(corpus, args, work):
    raw, columns, tokens, model, crfpp_model = prepare(corpus, args, work)
    runs = {"seqbil sp": [], "seqbil sp --jobs 2": []}
    if crfpp_model:
        runs["crf_test"] = []
    outputs = {}
    for _ in range(args.repeat):
        for system in runs:
            out = work / f"out.{system.replace(' ', '_')}"
            if system == "crf_test":
                runs[system].append(measure([args.crfpp["crf_test"], "-m", str(crfpp_model)], columns, out))
            else:
                jobs = ["--jobs", "2"] if "jobs" in system else []
                runs[system].append(measure(SEQBIL + ["tag", "-m", str(model), *jobs], raw, out))
            outputs[system] = out
    if outputs["seqbil sp"].read_bytes() != outputs["seqbil sp --jobs 2"].read_bytes():
        sys.exit("tag_speed: --jobs 2 output differs from --jobs 1")
    one = work / "one.input"
    first = raw.read_text(encoding="utf-8").split("\n" if corpus == "pku" else "\n\n")[0]
    one.write_text(first + "\n", encoding="utf-8")
    sentence = list(first) if corpus == "pku" else [line.split() for line in first.splitlines()]
    startup = [measure(SEQBIL + ["tag", "-m", str(model)], one, work / "one.out")[0] for _ in range(args.repeat)]
    load = [first_sentence(model, sentence) for _ in range(args.repeat)]
    rows = []
    for system, values in runs.items():
        walls = [w for w, _ in values]
        rows.append({"system": system, "tag_s": stats(walls), "tokens_per_s": stats([tokens / w for w in walls]),
                     "peak_rss_mib": stats([r for _, r in values]),
                     "model_mib": (crfpp_model if system == "crf_test" else model).stat().st_size / 2 ** 20})
    medians = {r["system"]: r["tokens_per_s"]["median"] for r in rows}
    return {"description": CORPORA[corpus]["description"], "copies": args.copies or CORPORA[corpus]["copies"],
            "tokens": tokens,
            "crfpp_iterations": args.crfpp_iterations if crfpp_model else None, "rows": rows,
            "speedup_vs_crf_test": medians["seqbil sp"] / medians["crf_test"] if crfpp_model else None,
            "jobs2_vs_jobs1": medians["seqbil sp --jobs 2"] / medians["seqbil sp"],
            "startup_one_sentence_process_s": stats(startup), "load_and_first_sentence_s": stats(load)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="*", metavar="CORPUS", help=f"{' '.join(CORPORA)} (default: all)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--copies", type=int, help="times the test set is concatenated (default: conll2000 10, pku 20, "
                    "macmorpho 4)")
    ap.add_argument("--crfpp-iterations", type=int, default=20)
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "tag.json"))
    ap.add_argument("--crfpp-src", default=str(ROOT.parent / "shared" / "peers" / "crfpp-src.tar.gz"),
                    help="CRF++'s source tarball (default: ../shared/peers/crfpp-src.tar.gz)")
    args = ap.parse_args()
    args.crfpp = find_crfpp(Path(args.crfpp_src))
    byte_compile()
    for corpus in args.corpora:
        if corpus not in CORPORA:
            ap.error(f"unknown corpus {corpus!r} (choose from {', '.join(CORPORA)})")
    record = {**header(), "benchmark": "tag_speed", "repeat": args.repeat, "corpora": {},
              "crfpp": {k: v for k, v in (args.crfpp or {}).items() if k in ("version", "build")} or None}
    with tempfile.TemporaryDirectory() as tmp:
        for corpus in args.corpora or list(CORPORA):
            print(f"tag_speed: {corpus}", file=sys.stderr)
            record["corpora"][corpus] = bench(corpus, args, Path(tmp))
    from tables import publish
    publish(args.out, record)


if __name__ == "__main__":
    main()
