"""The bytes of a fixed set of models, trained and converted from the bundled samples.

A change to the code that should not change what seqbil computes (a restructuring)
must leave every one of these files the same, byte for byte: run this script before
and after, and compare the digests it prints (or the files, with `cmp`).

    python benchmarks/model_bytes.py --out /tmp/before
    ... change the code ...
    python benchmarks/model_bytes.py --out /tmp/after --compare /tmp/before/digests.json

Every learner on the CoNLL sample (with a dev set, so that the dev scores and the
choice of a CRF's c2 on held-out data are part of it), a multi-task model, a general
interaction matrix, a segmentation model with a dictionary, a structure from
unlabeled text and a model that reads it, a continued model, a converted and a pruned
one, and where the peers are at hand a CRF++ model (crf_learn built from
../shared/peers) and a CRFsuite model (python-crfsuite) converted; the labels and
probabilities `seqbil tag` writes with several of them.
"""
import argparse
import gzip
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "seqbil" / "samples"
# every file is named relative to the working folder, into which the samples are copied:
# a model's training record names its corpora as they were given
TRAIN, TEST, PKU_TRAIN, PKU_TEST = (Path(n) for n in ("conll2000_train.txt", "conll2000_test.txt", "pku_train.utf8",
                                                      "pku_test.utf8"))


def seqbil(*args, cwd, stdin=None):
    proc = subprocess.run([sys.executable, "-m", "seqbil", *map(str, args)], cwd=cwd, capture_output=True,
                          input=stdin, text=True)
    if proc.returncode:
        sys.exit(f"seqbil {' '.join(map(str, args))} failed:\n{proc.stdout}{proc.stderr}")
    return proc.stdout


def cut(work, path, out, sentences):
    """The first `sentences` sentences of a CoNLL file (the multi-task corpora)."""
    blocks = (work / path).read_text(encoding="utf-8").strip().split("\n\n")[:sentences]
    (work / out).write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return out


def conll_models(work):
    train = ["train", "--train", TRAIN, "--dev", TEST, "-q"]
    for learner, extra in [("sp", []), ("bol", []), ("bol", ["--rank1", "global"]), ("bcd", []),
                           ("rpa", ["--embeddings", "random:4", "--template", "emb.template"]),
                           ("pa", []), ("arow", []), ("crf", []), ("crf", ["--c1", "0.1", "--c2", "0.5"]),
                           ("l2sgd", ["--c2", "1"])]:
        name = "-".join([learner] + [x.lstrip("-").replace(":", "") for x in extra if "." not in x])
        epochs = ["--epochs", "6" if learner == "crf" else "2"]
        yield name + ".sbm", [*train, "--learner", learner, *epochs, *extra, "--model", f"{name}.sbm"]
    yield "sp-shuffled-dev-none.sbm", ["train", "--train", TRAIN, "-q", "--learner", "sp", "--epochs", "2",
                                       "--seed", "7", "--model", "sp-shuffled-dev-none.sbm"]
    yield "crfpp-template.sbm", [*train, "--template", "crfpp_chunking.template", "--learner",
                                 "crf", "--epochs", "4", "--c2", "1", "--model", "crfpp-template.sbm"]
    yield "continued.sbm", ["train", "--train", TEST, "-q", "--init-model", "sp.sbm", "--epochs", "1", "--model",
                            "continued.sbm"]
    yield "pruned.sbm", ["convert", "--prune", "0.05", "--precision", "float64", "bol.sbm", "pruned.sbm"]


def task_models(work):
    a, b = cut(work, TRAIN, "a.txt", 120), cut(work, TEST, "b.txt", 120)
    tasks = ["--task", f"a={a}", "--task", f"b={b}"]
    yield "tasks.sbm", ["train", *tasks, "--learner", "sp", "--epochs", "2", "-q", "--model", "tasks.sbm"]
    (work / "A.txt").write_text("2 1\n1 2\n", encoding="utf-8")
    yield "interaction.sbm", ["train", *tasks, "--interaction", "A.txt", "--learner", "bol", "--epochs", "2", "-q",
                              "--model", "interaction.sbm"]
    yield "task-a.sbm", ["convert", "--task", "a", "tasks.sbm", "task-a.sbm"]


def segmentation_models(work):
    yield "cws.sbm", ["train", "--config", "sighan2005", "--train", PKU_TRAIN, "--dev", PKU_TEST, "--epochs", "2",
                      "-q", "--model", "cws.sbm"]
    templates = ["U00:%x[-1,0]", "U01:%x[0,0]", "U02:%x[1,0]", "U03:%dict[words]", "U04:%dict[words,begin]",
                 "U05:%dict[-1,words,end]/%dict[1,words,begin]", "B"]
    (work / "dict.template").write_text("\n".join(templates) + "\n", encoding="utf-8")
    yield "cws-dict.sbm", ["train", "--config", "sighan2005", "--train", PKU_TRAIN, "--template", "dict.template",
                           "--dictionary", "words=train", "--learner", "sp", "--epochs", "2",
                           "-q", "--model", "cws-dict.sbm"]


def structure_models(work):
    text = "text.txt"
    words = [line.split()[0] for line in (work / TRAIN).read_text(encoding="utf-8").splitlines() if line.strip()]
    (work / text).write_text("\n".join(" ".join(words[i:i + 20]) for i in range(0, len(words), 20)) + "\n", encoding="utf-8")
    yield "structure.sbs", ["aso", "--unlabeled", text, "--out", "structure.sbs", "--dim", "4", "--aux-epochs", "1",
                            "--targets", "40", "-q"]
    yield "structure-reader.sbm", ["train", "--config", "conll2000", "--train", TRAIN, "--epochs", "2",
                                   "--structure", "structure.sbs", "-q", "--model", "structure-reader.sbm"]


def crfpp_model(work):
    """crf_learn's binary and text models, built from CRF++'s own source, converted."""
    src = ROOT.parent / "shared" / "peers" / "crfpp-src.tar.gz"
    if not src.exists():
        print("(no CRF++ source beside the repository: its conversions are left out)")
        return
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from crfpp_examples import build_crfpp, default_crfpp_dir
    bin_dir = build_crfpp(src, default_crfpp_dir(src))
    template = "crfpp_chunking.template"
    for name, flags in (("crfpp-binary", []), ("crfpp-text", ["-t"])):
        subprocess.run([str(bin_dir / "crf_learn"), *flags, "-m", "5", "-p", "1", template, str(TRAIN),
                        name], cwd=work, check=True, capture_output=True)
        yield f"{name}.sbm", ["convert", "--from", "crfpp", name, f"{name}.sbm"]


def crfsuite_model(work):
    """A python-crfsuite model of the bundled attribute files, converted."""
    try:
        import pycrfsuite
    except ImportError:
        print("(python-crfsuite is not installed: its conversion is left out)")
        return
    trainer = pycrfsuite.Trainer(verbose=False)
    with gzip.open(SAMPLES / "conll2000_train.crfsuite.gz", "rt", encoding="utf-8") as f:
        xs, ys = [], []
        for line in f.read().split("\n") + [""]:
            if not line.strip():
                if xs:
                    trainer.append(xs, ys)
                xs, ys = [], []
                continue
            label, *attrs = line.split("\t")
            xs.append([a.replace("\\:", "_") for a in attrs])
            ys.append(label)
    trainer.set_params({"max_iterations": 10, "c2": 1.0})
    trainer.train(str(work / "model.crfsuite"))
    yield "crfsuite.sbm", ["convert", "--from", "crfsuite", "model.crfsuite", "crfsuite.sbm"]


def tag_outputs():
    for model, extra in [("bol.sbm", []), ("crf.sbm", ["--marginals"]), ("crfpp-template.sbm", ["--nbest", "3"]),
                         ("tasks.sbm", ["--task", "b"]), ("crfpp-binary.sbm", ["--marginals"])]:
        yield model, f"tag-{Path(model).stem}{'-'.join([''] + [e.lstrip('-') for e in extra])}.txt", extra
    yield "cws.sbm", "tag-cws.txt", []


def untimed(meta):
    """A header without what differs from run to run by design: the seconds a stage
    took, and the absolute paths a structure records with their files' sha256 (that of
    a structure file covers its seconds)."""
    if isinstance(meta, dict):
        return {k: untimed(v) for k, v in meta.items() if k != "seconds" and not (k in ("path", "sha256") and
                                                                                   "sha256" in meta)}
    return [untimed(v) for v in meta] if isinstance(meta, list) else meta


def digest(path):
    """sha256 of a file's bytes; of a structure from unlabeled text, and of a model
    that carries one, of its arrays and its header without timings instead."""
    data = path.read_bytes()
    if path.suffix not in (".sbs", ".sbm") or b'"seconds"' not in data[:1 << 20] or b"structure" not in data[:1 << 20]:
        return hashlib.sha256(data).hexdigest()
    from seqbil.modelfile import read_model
    meta, arrays = read_model(path)
    h = hashlib.sha256(json.dumps(untimed(meta), sort_keys=True).encode("utf-8"))
    for name in sorted(arrays):
        h.update(name.encode("utf-8") + str(arrays[name].dtype).encode() + arrays[name].tobytes())
    return "arrays+header " + h.hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for the files and digests.json")
    ap.add_argument("--compare", type=Path, help="a digests.json of an earlier run: exit 1 when any file differs")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    digests = {}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for path in [*SAMPLES.glob("*.txt"), *SAMPLES.glob("*.utf8"), ROOT / "configs" / "crfpp_chunking.template"]:
            shutil.copy(path, work / path.name)
        (work / "emb.template").write_text("U00:%x[0,0]\nU01:%emb[0,0]\nU02:%x[0,1]\nB\n", encoding="utf-8")
        for group in (conll_models, task_models, segmentation_models, structure_models, crfpp_model,
                      crfsuite_model):
            for name, args_ in group(work):
                seqbil(*args_, cwd=work)
                shutil.copy(work / name, args.out / name)
                print(name, flush=True)
        for model, name, extra in tag_outputs():
            if not (work / model).exists():
                continue
            data = PKU_TEST if model == "cws.sbm" else TEST  # (relative to the working folder)
            out = seqbil("tag", "-m", model, *extra, data, cwd=work)
            (args.out / name).write_text(out, encoding="utf-8")
            print(name, flush=True)
    for path in sorted(args.out.iterdir()):
        if path.name != "digests.json":
            digests[path.name] = digest(path)
    (args.out / "digests.json").write_text(json.dumps(digests, indent=1) + "\n", encoding="utf-8")
    if args.compare:
        before = json.loads(args.compare.read_text(encoding="utf-8"))
        differ = sorted(k for k in before.keys() | digests.keys() if before.get(k) != digests.get(k))
        print("the same bytes: " + ", ".join(sorted(before.keys() & digests.keys() - set(differ))))
        if differ:
            sys.exit("differ or missing: " + ", ".join(differ))
        print(f"all {len(digests)} files are the same bytes")


if __name__ == "__main__":
    main()
