"""Coverage-guided fuzzing of seqbil's readers with atheris (libFuzzer for Python), for
long runs outside CI:

    pip install atheris
    python tests/fuzz_atheris.py model tests/fuzz_corpus/model -max_total_time=3600 -rss_limit_mb=4096

Targets: model (seqbil's container, checksums put right before reading, so that the
fuzzer's byte changes reach the meaning of the header and arrays), checkpoint,
structure, crfpp, crfsuite, conll, sighan, crfsuite-data. Each input is written to a
file and read as a user's command would read it, then the model is used; anything
but seqbil's documented error (SeqbilError) is a finding. The corpus of every target
is kept in tests/fuzz_corpus/TARGET (seed files, and what a run found worth keeping:
libFuzzer adds to the directory it is given).

    python tests/fuzz_atheris.py --replay            # every kept input, every target, no atheris
    python tests/fuzz_atheris.py --make-corpus       # write the seed files again
"""
import json
import os
import struct
import sys
import tempfile
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "fuzz_corpus"
TARGETS = ("model", "checkpoint", "structure", "crfpp", "crfsuite", "conll", "sighan", "crfsuite-data")
_PREFIX = struct.Struct("<8sIIII")


def with_checksums(data, edit=None):
    """The container `data` with its header's payload checksum and its header checksum
    recomputed (what a writer who means harm would do), and edit(header) applied;
    other bytes as they are."""
    if len(data) < _PREFIX.size:
        return data
    magic, version, hlen, _, reserved = _PREFIX.unpack_from(data)
    header = data[_PREFIX.size:_PREFIX.size + hlen]
    start = _PREFIX.size + hlen + (-(_PREFIX.size + hlen)) % 8
    payload = data[start:]
    try:
        parsed = json.loads(header.decode("utf-8"))
        if isinstance(parsed, dict):
            parsed["payload_crc32"] = zlib.crc32(payload)
            parsed["payload_bytes"] = len(payload)
            if edit is not None:
                edit(parsed)
            header = json.dumps(parsed, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        pass
    return (_PREFIX.pack(magic, version, len(header), zlib.crc32(header), reserved) + header
            + b"\0" * ((-(_PREFIX.size + len(header))) % 8) + payload)


class Reader:
    """Runs one target on an input; the seed files the target's corpus starts from."""

    def __init__(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="seqbil-fuzz-"))

    def path(self, data, name="input"):
        p = self.tmp / name
        p.write_bytes(data)
        return str(p)

    def run(self, target, data):
        """Whether the input was read (False: refused with seqbil's documented error)."""
        from seqbil.errors import SeqbilError
        try:
            getattr(self, "_" + target.replace("-", "_"))(data)
        except SeqbilError:
            return False
        return True

    def _model(self, data):
        import seqbil
        model = seqbil.load(self.path(with_checksums(data), "m.sbm"))
        _use(model)

    def _checkpoint(self, data):
        import seqbil
        train = self.path(_seed_corpus(), "train.txt")

        def here(header):  # the run's corpus, where this process keeps the same bytes
            run = header.get("meta", {}).get("run") if isinstance(header.get("meta"), dict) else None
            if isinstance(run, dict) and isinstance(run.get("train"), str):
                run["train"] = train
        seqbil.resume(self.path(with_checksums(data, here), "c.ckpt"), epochs=3)

    def _structure(self, data):
        from seqbil.features.structure import Structure
        s = Structure.load(self.path(with_checksums(data), "s.sbs"))
        from seqbil.formats import ConllFormat
        sentences = list(ConllFormat(3, -1).read(self.path(b"The DT\ncat NN\n\n", "t.txt"), labeled=False))
        s.vectors(sentences)

    def _crfpp(self, data):
        from seqbil import foreign
        _use(foreign.load(self.path(data, "crfpp.model"), "crfpp"))

    def _crfsuite(self, data):
        from seqbil import foreign
        _use(foreign.load(self.path(data, "model.crfsuite"), "crfsuite"))

    def _conll(self, data):
        from seqbil.formats import ConllFormat
        list(ConllFormat().read(self.path(data, "c.txt")))
        list(ConllFormat(3, -1).read(self.path(data, "c.txt"), labeled=False, keep_empty=True))

    def _sighan(self, data):
        from seqbil.formats import SighanFormat
        list(SighanFormat().read(self.path(data, "s.txt")))
        list(SighanFormat().read(self.path(data, "s.txt"), labeled=False, keep_empty=True))

    def _crfsuite_data(self, data):
        from seqbil.formats import make_format
        list(make_format("crfsuite").read(self.path(data, "d.txt")))


def _seed_corpus():
    """The corpus the checkpoints of the kept corpus were made on: the bundled sample's
    first three sentences."""
    from fuzz_harness import _head_conll, _sample
    return _head_conll(_sample("conll2000_train.txt"), 3).encode("utf-8")


def _use(model):
    """Tag and score a little with a loaded model, in its format's way."""
    name = model.format.name
    if model.tasks:
        model = model.for_task(model.tasks[0])
    if name == "sighan":
        model.segment("扬帆远东做")
        model.marginals(list("扬帆"))
    elif name == "conll":
        width = model.format.n_fields - 1
        tokens = [["a"] * width, ["b"] * width]
        model.tag(tokens)
        model.marginals(tokens)
        model.nbest(tokens, 2)
    else:
        model.tag([{"a": 1.0}, {"b": 2.0}])


def make_corpus():
    """Small seed files of every target under tests/fuzz_corpus (libFuzzer works best on
    inputs of a few kilobytes: tiny corpora, few templates)."""
    import numpy as np
    import seqbil
    from fuzz_harness import _sample
    from test_foreign import random_crfpp, write_binary, write_crfsuite, write_text
    seeds = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        conll, sighan = tmp / "train.txt", tmp / "train.utf8"
        conll.write_bytes(_seed_corpus())
        lines = [line for line in _sample("pku_train.utf8").read_text(encoding="utf-8").splitlines() if line.strip()]
        sighan.write_text("\n".join(line[:30] for line in lines[:4]) + "\n", encoding="utf-8")
        other = tmp / "other.utf8"
        other.write_text("\n".join(line[:30] for line in lines[4:8]) + "\n", encoding="utf-8")
        small = {"templates": ["U00:%x[0,0]", "U01:%x[-1,1]/%x[0,1]", "B"], "epochs": 1, "temperature": 1.0}

        def train(name, *args, **kwargs):
            seqbil.train(*args, model=str(tmp / f"{name}.sbm"), **kwargs)
            seeds[("model", name)] = tmp / f"{name}.sbm"
        train("linear", str(conll), learner="sp", **small)
        train("bilinear", str(conll), learner="bol", **{**small, "templates": ["U00:%x[0,0]", "B01:%x[0,1]", "B"]})
        train("segmenter", str(sighan), config="sighan2005", learner="sp",
              **{**small, "templates": ["U00:%x[0,0]", "B01:%x[-1,0]", "B"]})
        train("tasks", config="sighan2005", tasks=[f"a={sighan}", f"b={other}"], learner="sp",
              **{**small, "templates": ["U00:%x[0,0]", "B"]})
        items = tmp / "items.txt"
        items.write_text("B-NP\tw=the\tpos=DT\nI-NP\tw=cat:2.5\nO\tw=.\n\nO\tw=a\n\n", encoding="utf-8")
        train("attributes", str(items), config="crfsuite", learner="sp", epochs=1, temperature=1.0)
        for learner in ("sp", "bol", "crf", "pa"):
            path = tmp / f"ckpt-{learner}.sbm"
            seqbil.train(str(conll), learner=learner, model=str(path), checkpoint_every=1,
                         **{**small, "epochs": 2, "templates": ["U00:%x[0,0]", "B01:%x[0,1]", "B"]
                            if learner == "bol" else small["templates"]})
            seeds[("checkpoint", learner)] = Path(str(path) + ".ckpt")
        unlabeled = tmp / "unlabeled.txt"
        unlabeled.write_text("".join(" ".join(line.split()[0] for line in s.splitlines() if line.strip()) + "\n"
                                     for s in _sample("conll2000_train.txt").read_text().split("\n\n")[:40]))
        seqbil.learn_structure([str(unlabeled)], str(tmp / "s.sbs"), targets=4, dim=2, aux_epochs=1)
        seeds[("structure", "aso")] = tmp / "s.sbs"
        crfpp = random_crfpp(np.random.default_rng(1))
        write_text(crfpp, tmp / "crfpp.txt")
        write_binary(crfpp, tmp / "crfpp.bin")
        seeds[("crfpp", "text")], seeds[("crfpp", "binary")] = tmp / "crfpp.txt", tmp / "crfpp.bin"
        write_crfsuite(tmp / "m.crfsuite", ["B", "I", "O"], ["w=a", "w=b", "bias"],
                       [(0, a, y, 0.5 * a - y) for a in range(3) for y in range(3)] + [(1, 0, 1, 1.5), (1, 2, 0, -1.0)])
        seeds[("crfsuite", "model")] = tmp / "m.crfsuite"
        seeds[("conll", "sample")], seeds[("sighan", "sample")] = conll, sighan
        seeds[("crfsuite-data", "sample")] = items
        for (target, name), path in seeds.items():
            (CORPUS / target).mkdir(parents=True, exist_ok=True)
            (CORPUS / target / f"seed-{name}").write_bytes(Path(path).read_bytes())


def replay(targets=TARGETS):
    """Every kept input of the targets through its reader: {target: {file name: read}}
    (False: refused with seqbil's documented error; anything else raises)."""
    reader = Reader()
    return {target: {f.name: reader.run(target, f.read_bytes()) for f in sorted((CORPUS / target).glob("*"))}
            for target in targets}


def main(argv):
    sys.path.insert(0, str(HERE))
    if argv[1:2] == ["--replay"]:
        print(json.dumps(replay(argv[2:] or TARGETS)))
        return
    if argv[1:2] == ["--make-corpus"]:
        make_corpus()
        return
    if len(argv) < 2 or argv[1] not in TARGETS:
        sys.exit(f"usage: {argv[0]} TARGET [CORPUS_DIR] [libFuzzer options]  (targets: {', '.join(TARGETS)})")
    import atheris
    target = argv[1]
    with atheris.instrument_imports(include=["seqbil"]):  # every module the readers may reach
        import importlib
        import pkgutil
        import seqbil
        for module in pkgutil.walk_packages(seqbil.__path__, "seqbil."):
            if not module.name.startswith(("seqbil.dask", "seqbil.sklearn", "seqbil._kernels", "seqbil.__main__")):
                importlib.import_module(module.name)
    reader = Reader()
    atheris.Setup([argv[0]] + argv[2:], lambda data: reader.run(target, data))
    atheris.Fuzz()


if __name__ == "__main__":
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    main(sys.argv)
