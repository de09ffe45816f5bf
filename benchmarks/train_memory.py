"""Peak memory of training, every learner against python-crfsuite, in one run.

    python benchmarks/train_memory.py [conll2000|pku ...] [--repeat 3] [--data DIR]

Each system trains in a process of its own, raw files in and model out, and its peak
RSS is the whole process's (GNU time). seqbil: `seqbil train --learner L` with the
corpus's config and its defaults, 20 epochs (the CRF: c2 = 1 given, so that no c2 is
chosen, at most 100 iterations). The peer: python-crfsuite (benchmarks/crfsuite_peer.py)
with the same templates, its averaged perceptron (ap), 20 iterations, its default
feature set, the training file read a sentence at a time and each sentence's attribute
strings built and appended as it is read (`crfsuite_peer.py --stream`: no list of the
corpus's sentences), the test file read after training.

conll2000: CoNLL-2000 train, CRF++'s chunking template (configs/crfpp_chunking.template)
with configs/conll2000.toml; pku: the SIGHAN 2005 pku training set with
configs/sighan2005.toml. Writes results/speed/train_memory.json and .md.
"""
import argparse
import sys
import tempfile
from pathlib import Path

from record import ROOT, byte_compile, find_corpus, header, run_measured, stats
from tables import publish

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
CORPORA = {
    "conll2000": {"folder": "conll2000", "train": "train.txt", "test": "test.txt", "config": "conll2000",
                  "template": str(ROOT / "configs" / "crfpp_chunking.template"),
                  "description": "CoNLL-2000 train, CRF++'s chunking template"},
    "pku": {"folder": "sighan2005", "train": "pku_training.approx.utf8", "test": "pku_test_gold.utf8",
            "config": "sighan2005", "template": None,
            "description": "SIGHAN 2005 pku training set, configs/sighan2005.toml"},
}
LEARNERS = {"sp": ["--epochs", "20"], "bol": ["--epochs", "20"], "pa": ["--epochs", "20"],
            "arow": ["--epochs", "20"], "crf": ["--c2", "1", "--epochs", "100"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="*", metavar="CORPUS", help=f"{' '.join(CORPORA)} (default: all)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "train_memory.json"))
    args = ap.parse_args()
    byte_compile()
    record = {"benchmark": "train_memory", **header(), "repeat": args.repeat, "corpora": {}}
    for name in args.corpora or list(CORPORA):
        spec = CORPORA[name]
        train, test = find_corpus(spec["folder"], spec["train"], args.data), find_corpus(spec["folder"], spec["test"],
                                                                                         args.data)
        template = ["--template", spec["template"]] if spec["template"] else []
        systems = {}
        with tempfile.TemporaryDirectory() as tmp:
            cmds = {f"seqbil {learner}": SEQBIL + ["train", "-q", "--config", spec["config"], *template, "--learner",
                                                   learner, *extra, "--train", str(train), "--model",
                                                   str(Path(tmp) / "m.sbm")]
                    for learner, extra in LEARNERS.items()}
            cmds["python-crfsuite ap"] = [sys.executable, str(ROOT / "benchmarks" / "crfsuite_peer.py"), "--config",
                                          spec["config"], *template, "--train", str(train), "--test", str(test),
                                          "--algorithm", "ap", "--iterations", "20", "--stream"]
            runs = {system: [] for system in cmds}
            for _ in range(args.repeat):
                for system, cmd in cmds.items():
                    print(f"train_memory: {name}: {system}", file=sys.stderr)
                    runs[system].append(run_measured(cmd)[:2])
        for system, r in runs.items():
            systems[system] = {"rss_mib": stats([m for _, m in r]), "seconds": stats([w for w, _ in r])}
        peer = systems["python-crfsuite ap"]["rss_mib"]["median"]
        record["corpora"][name] = {"description": spec["description"], "systems": systems,
                                   "vs_peer": {s: v["rss_mib"]["median"] / peer for s, v in systems.items()}}
    publish(args.out, record)


if __name__ == "__main__":
    main()
