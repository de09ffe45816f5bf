"""Files from strangers: a file whose checksums are right but whose contents are not is
refused with a clear error (exit status 2), never a signal or a write out of bounds."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import seqbil
from seqbil import checkpoint
from seqbil.modelfile import write_model

ENV = {**os.environ, "PYTHONPATH": str(Path(seqbil.__file__).resolve().parent.parent)}
# (the commands run as `python -P -m seqbil`: -P keeps the working directory, the
# repository root under CI, whose seqbil/ has no compiled kernels, off sys.path)


@pytest.fixture(scope="module")
def sp_checkpoint(tmp_path_factory):
    """A checkpoint of sp after one of two epochs on the bundled sample."""
    where = tmp_path_factory.mktemp("ckpt")
    seqbil.train(None, config="conll2000", learner="sp", epochs=1, model=str(where / "m.sbm"),
                 checkpoint_every=1, temperature=1.0)
    return where / "m.sbm.ckpt"


def tampered(path, out, arrays=None, scalars=None):
    """The checkpoint at path with some arrays or scalars replaced, written with valid
    checksums, as a hostile or buggy writer would."""
    run, kept_scalars, kept_arrays, rng_state, history = checkpoint.load(str(path))
    meta = {"format": checkpoint.FORMAT, "run": run, "scalars": {**kept_scalars, **(scalars or {})},
            "rng": rng_state, "history": history}
    write_model(str(out), meta, {**kept_arrays, **(arrays or {})})
    return out


def _slot_cases(slot, used):
    duplicated = slot.copy()
    held = np.flatnonzero(slot >= 0)
    duplicated[held[1]] = slot[held[0]]  # two attributes on one row
    past = slot.copy()
    past[held[0]] = used  # a row not handed out
    far = slot.copy()
    far[held[0]] = 2 ** 30  # far outside the pool: a write there crashes
    below = slot.copy()
    below[0] = -7
    return {"slot 2**30": ({"slot": far}, {}), "slot past used": ({"slot": past}, {}),
            "slot duplicated": ({"slot": duplicated}, {}), "slot below -1": ({"slot": below}, {}),
            "used 2**30": ({}, {"used": 2 ** 30}), "used past the pool": ({}, {"used": len(slot) + 1}),
            "used less than held": ({}, {"used": used - 1})}


def test_an_sp_checkpoint_whose_slots_leave_the_pool_is_refused(sp_checkpoint, tmp_path):
    """sp's kernel writes its 1st-order rows at slot[a] without a bounds check: every way
    of putting a slot or `used` out of range is a clear error of `--resume`, exit 2."""
    _, scalars, arrays, _, _ = checkpoint.load(str(sp_checkpoint))
    slot, used = arrays["slot"], scalars["used"]
    assert used > 2 and np.array_equal(np.sort(slot[slot >= 0]), np.arange(used))  # the invariant, as written
    for name, (new_arrays, new_scalars) in _slot_cases(slot, used).items():
        bad = tampered(sp_checkpoint, tmp_path / f"{name.replace(' ', '_')}.ckpt", new_arrays, new_scalars)
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--resume", str(bad), "--epochs", "2",
                               "--model", str(tmp_path / "out.sbm"), "-q"], env=ENV, capture_output=True, text=True)
        assert proc.returncode == 2, (name, proc.returncode, proc.stderr)
        assert "corrupt checkpoint" in proc.stderr and "Traceback" not in proc.stderr, (name, proc.stderr)
    # the untampered checkpoint, rewritten the same way, still resumes
    same = tampered(sp_checkpoint, tmp_path / "same.ckpt")
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--resume", str(same), "--epochs", "2",
                           "--model", str(tmp_path / "out.sbm"), "-q"], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_an_rpa_checkpoint_whose_vector_rows_leave_w0_is_refused(tmp_path):
    """rpa's kernel reads W0 at first[e] + j unchecked: a checkpoint whose `first` is not
    the run's own is refused; its own, rewritten, resumes."""
    from test_rpa_tagger import TEMPLATES, TRAIN
    rng = np.random.default_rng(0)
    words = sorted({line.split()[0] for line in TRAIN.read_text().splitlines() if line.strip()})[:300]
    vectors = tmp_path / "v.txt"
    vectors.write_text("".join(f"{w} " + " ".join(f"{x:.4f}" for x in rng.normal(size=4)) + "\n" for w in words))
    seqbil.train(str(TRAIN), templates=TEMPLATES, learner="rpa", epochs=1, embeddings=str(vectors),
                 model=str(tmp_path / "m.sbm"), checkpoint_every=1, temperature=1.0)
    ckpt = tmp_path / "m.sbm.ckpt"
    first = checkpoint.load(str(ckpt))[2]["first"]
    assert len(first) > 0
    for name, value in (("far", 2 ** 30), ("negative", -1), ("shifted", int(first[0]) + 1)):
        bad = first.copy()
        bad[0] = value
        out = tampered(ckpt, tmp_path / f"{name}.ckpt", {"first": bad})
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--resume", str(out), "--epochs", "2",
                               "--model", str(tmp_path / "out.sbm"), "-q"], env=ENV, capture_output=True, text=True)
        assert proc.returncode == 2 and "corrupt checkpoint" in proc.stderr, (name, proc.returncode, proc.stderr)
    same = tampered(ckpt, tmp_path / "same.ckpt")
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--resume", str(same), "--epochs", "2",
                           "--model", str(tmp_path / "out.sbm"), "-q"], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("depth", [200_000, 65])
def test_a_header_nested_too_deep_is_a_corrupt_header(tmp_path, depth):
    """A header of valid JSON and a right checksum, nested deeper than any seqbil writes:
    every command that reads the file says it is corrupt (a RecursionError escaped
    read_model at 200,000)."""
    import zlib
    from seqbil import modelfile
    hbytes = ('{"meta": {"x": ' + "[" * depth + "]" * depth + '}, "arrays": [], "payload_bytes": 0, '
              '"payload_crc32": 0}').encode()
    path = tmp_path / "deep.sbm"
    pad = modelfile._pad(modelfile._PREFIX.size + len(hbytes))
    path.write_bytes(modelfile._PREFIX.pack(modelfile.MAGIC, modelfile.VERSION, len(hbytes), zlib.crc32(hbytes), 0)
                     + hbytes + b"\0" * pad)
    with pytest.raises(seqbil.SeqbilError, match="corrupt header"):
        modelfile.read_model(str(path))
    for command in (["inspect", str(path)], ["tag", "-m", str(path)], ["train", "--resume", str(path)]):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command], env=ENV, capture_output=True, text=True,
                              input="a\n")
        assert proc.returncode == 2 and "corrupt header" in proc.stderr and "Traceback" not in proc.stderr, \
            (command, proc.returncode, proc.stderr[-500:])


@pytest.mark.parametrize("temperature", [1e-30, 5e-5, 2e4, float("inf")])
def test_a_temperature_outside_the_fitted_range_is_refused_given_or_in_a_file(tmp_path, temperature):
    """Scores divided by a temperature far below any fitted one leave float64's exact
    differences (the marginals of the best path printed 0 while its probability printed 1):
    a temperature is 0 (fitted) or within the range the fit searches, as an argument and
    as a model file's field."""
    from seqbil.calibration import T_MIN
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--learner", "sp", "--epochs", "1", "-q",
                           "--temperature", repr(temperature), "--model", str(tmp_path / "m.sbm")],
                          env=ENV, capture_output=True, text=True)
    assert proc.returncode == 2 and "temperature" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    model = seqbil.train(None, config="conll2000", learner="sp", epochs=1, temperature=T_MIN)
    assert model.temperature == T_MIN  # the ends of the range are allowed
    model.temperature = temperature  # (an attribute: a writer may put anything in the file)
    model.save(str(tmp_path / "bad.sbm"))
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(tmp_path / "bad.sbm"), "--marginals"],
                          env=ENV, capture_output=True, text=True, input="Confidence NN\n")
    assert proc.returncode == 2 and "temperature" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def _rewritten(src, out, change):
    """The model file src with change(arrays) applied to copies of its arrays, written with
    valid checksums."""
    from seqbil.modelfile import read_model
    meta, arrays = read_model(str(src))
    arrays = {name: np.array(value) for name, value in arrays.items()}
    change(arrays)
    write_model(str(out), meta, arrays)
    return out


def _set(name, index, value):
    def change(arrays):
        arrays[name][index] = value
    return change


def _precision(name, dtype):
    def change(arrays):
        arrays[name] = arrays[name].astype(dtype)
    return change


@pytest.fixture(scope="module")
def linear_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "m.sbm"
    seqbil.train(None, config="conll2000", learner="sp", epochs=1, temperature=1.0, model=str(path))
    return path


@pytest.mark.parametrize("case, change", [
    ("nan weight", _set("W0.val", 0, np.nan)), ("inf weight", _set("W1.val", -1, np.inf)),
    ("inf transition", _set("trans", (0, 0), -np.inf)), ("nan end", _set("end", 0, np.nan)),
    ("pointer going back", _set("W0.ptr", 1, 10 ** 6)), ("cell past its row", _set("W1.idx", 0, 10 ** 6)),
    ("negative cell", _set("W0.idx", 0, -1)), ("mixed precision", _precision("W1.val", np.float64))])
def test_weights_that_are_not_finite_or_not_consistent_are_refused(linear_model, tmp_path, case, change):
    """Weights a file holds are finite, of the one precision it names, and its sparse rows'
    pointers ascend and cells lie inside their rows: otherwise every command refuses the
    model (non-finite weights tagged with exit 0; mixed precisions failed in every decode;
    backward pointers were densified unchecked by convert)."""
    from seqbil.modelfile import read_model
    assert read_model(str(linear_model))[0]["weights"]["precision"] == "float32"
    bad = _rewritten(linear_model, tmp_path / "bad.sbm", change)
    for command in (["tag", "-m", str(bad)], ["inspect", str(bad)],
                    ["convert", str(bad), str(tmp_path / "out.sbm"), "--precision", "float64"]):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command], env=ENV, capture_output=True, text=True,
                              input="Confidence NN\n")
        assert proc.returncode == 2 and "inconsistent model contents" in proc.stderr and \
            "Traceback" not in proc.stderr, (case, command, proc.returncode, proc.stderr[-400:])


@pytest.mark.parametrize("weight", [float("nan"), float("inf"), 1e300])
def test_foreign_models_with_weights_that_are_not_finite_are_refused(tmp_path, weight):
    """A CRF++ text model or a CRFsuite model whose weights are not finite, or do not fit
    the precision kept (1e300 in float32), is refused at conversion: CRF++'s were
    converted and tagged with exit 0, CRFsuite's beyond float32's range became inf."""
    from test_foreign import random_crfpp, write_crfsuite, write_text
    crfpp = random_crfpp(np.random.default_rng(1))
    crfpp["alpha"] = np.array(crfpp["alpha"])
    crfpp["alpha"][min(i for key, i in crfpp["dic"].items() if key[0] == "U")] = weight  # (a state weight)
    write_text(crfpp, tmp_path / "model.txt")
    runs = [["--from", "crfpp", str(tmp_path / "model.txt")] + (["--precision", "float32"] if weight == 1e300 else [])]
    write_crfsuite(tmp_path / "model.crfsuite", ["A", "B"], ["x", "y"], [(0, 0, 0, 0.5), (0, 1, 1, weight),
                                                                        (1, 0, 1, 0.25)])
    runs.append(["--from", "crfsuite", str(tmp_path / "model.crfsuite")] +
                (["--precision", "float32"] if weight == 1e300 else []))
    for run in runs:
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", *run, str(tmp_path / "out.sbm")],
                              env=ENV, capture_output=True, text=True)
        assert proc.returncode == 2 and "not finite" in proc.stderr and "Traceback" not in proc.stderr, \
            (run, proc.returncode, proc.stderr[-400:])


def test_weights_beyond_float32_are_refused_when_a_model_is_made_float32(linear_model, tmp_path):
    """A float64 model holding a weight beyond float32's range: `convert --precision
    float32` refuses (it wrote a model that every later command refused); float64 keeps it."""
    def huge(arrays):
        arrays["W0.val"] = arrays["W0.val"].astype(np.float64)
        arrays["W1.val"] = arrays["W1.val"].astype(np.float64)
        arrays["W0.val"][0] = 1e300
    from seqbil.modelfile import read_model
    meta, arrays = read_model(str(linear_model))
    meta["weights"]["precision"] = "float64"
    path = tmp_path / "wide.sbm"
    write_model(str(path), meta, {name: np.array(value) for name, value in arrays.items()})
    path = _rewritten(path, tmp_path / "huge.sbm", huge)
    for precision, status in (("float32", 2), ("float64", 0)):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", str(path), str(tmp_path / "out.sbm"),
                               "--precision", precision], env=ENV, capture_output=True, text=True)
        assert proc.returncode == status and "Traceback" not in proc.stderr, (precision, proc.stderr[-400:])
    assert "not finite in float32" in subprocess.run(
        [sys.executable, "-P", "-m", "seqbil", "convert", str(path), str(tmp_path / "out.sbm"), "--precision", "float32"],
        env=ENV, capture_output=True, text=True).stderr


def _rewritten_meta(src, out, change):
    from seqbil.modelfile import read_model
    meta, arrays = read_model(str(src))
    change(meta)
    write_model(str(out), meta, {name: np.array(value) for name, value in arrays.items()})
    return out


@pytest.fixture(scope="module")
def segmenter(tmp_path_factory):
    path = tmp_path_factory.mktemp("segmenter") / "s.sbm"
    seqbil.train(str(Path(seqbil.__file__).parent / "samples" / "pku_train.utf8"), config="cws", learner="sp",
                 epochs=1, temperature=1.0, model=str(path))
    return path


def test_work_a_model_asks_for_is_bounded(linear_model, segmenter, tmp_path):
    """A template reading a row 2e9 away made every tag allocate 2e9 positions; a %dict
    cap of 1e7 made every tag build 4e7 strings: a model's templates read at most 1000
    rows away and 1000 columns, its cap is within the parameter table's range."""
    def far(meta):
        meta["templates"][0] = "U00:%x[-2000000000,0]"

    def wide(meta):
        meta["templates"][0] = "U00:%x[0,5000]"

    def capped(meta):
        meta["lexicons"]["length_cap"] = 10 ** 7
    for src, change, what in ((linear_model, far, "rows are read at most 1000 away"),
                              (linear_model, wide, "columns up to 1000"),
                              (segmenter, capped, "dict_length_cap")):
        bad = _rewritten_meta(src, tmp_path / "bad.sbm", change)
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(bad)], env=ENV, capture_output=True,
                              text=True, input="Confidence NN\n", timeout=60)
        assert proc.returncode == 2 and what in proc.stderr and "Traceback" not in proc.stderr, \
            (what, proc.returncode, proc.stderr[-400:])
    (tmp_path / "template").write_text("U00:%x[1001,0]\nB\n")
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--learner", "sp", "--epochs", "1", "-q",
                           "--template", str(tmp_path / "template"), "--model", str(tmp_path / "m.sbm")],
                          env=ENV, capture_output=True, text=True)
    assert proc.returncode == 2 and "rows are read at most 1000 away" in proc.stderr, proc.stderr


@pytest.mark.parametrize("encoding", ["unicode_escape", "raw_unicode_escape", "utf-7", "rot13", "base64", "nonesuch"])
def test_an_encoding_that_does_not_read_ascii_as_itself_is_refused(linear_model, tmp_path, encoding):
    """Text codecs that turn ASCII into something else (unicode_escape reads the two
    characters \\n as a line break: silently wrong output) and codecs that are not text
    codecs (rot13, base64: tracebacks) are refused wherever an encoding is given: training,
    tagging, scoring, and a model file's corpus record."""
    (tmp_path / "in.txt").write_text("Confidence NN B-NP\n\n")
    for command in (["train", "--learner", "sp", "--epochs", "1", "-q", "--train", str(tmp_path / "in.txt"),
                     "--model", str(tmp_path / "m.sbm")],
                    ["tag", "-m", str(linear_model), str(tmp_path / "in.txt")],
                    ["eval", "-m", str(linear_model), "--data", str(tmp_path / "in.txt")]):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command, "--encoding", encoding], env=ENV,
                              capture_output=True, text=True)
        assert proc.returncode == 2 and repr(encoding) in proc.stderr and "Traceback" not in proc.stderr, \
            (command, proc.returncode, proc.stderr[-400:])

    def recorded(meta):
        meta["corpus"]["encoding"] = encoding
    bad = _rewritten_meta(linear_model, tmp_path / "bad.sbm", recorded)
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(bad)], env=ENV, capture_output=True,
                          text=True, input="Confidence NN\n")
    assert proc.returncode == 2 and "corpus encoding" in proc.stderr, proc.stderr[-400:]


def test_the_encodings_corpora_come_in_are_accepted():
    from seqbil.formats.textio import encoding_problem
    for encoding in ("utf-8", "utf-8-sig", "latin-1", "cp1252", "euc-jp", "shift_jis", "gb18030", "big5", "utf-16",
                     "utf-32-le"):
        assert encoding_problem(encoding) is None, encoding


def test_labels_that_are_not_text_or_not_the_formats_are_refused(linear_model, segmenter, tmp_path):
    """A label holding a lone surrogate (valid JSON, not text: printing it raised), and a
    segmentation model whose labels are not B, I, E, S (--marginals raised KeyError)."""
    import zlib
    from seqbil import modelfile

    def surrogate(meta):  # a label of the length of its JSON escape, the escape put in below
        meta["labels"][0] = "B-SURROGATE"

    def relabelled(meta):
        meta["labels"][meta["labels"].index("E")] = "X"
    for src, change, what in ((linear_model, surrogate, "not text"), (segmenter, relabelled, "labels")):
        bad = _rewritten_meta(src, tmp_path / "bad.sbm", change)
        if change is surrogate:  # JSON may hold a lone surrogate; json.dumps of one fails in UTF-8
            data = bad.read_bytes()
            size = modelfile._PREFIX.size
            magic, version, hlen, _, rest = modelfile._PREFIX.unpack(data[:size])
            header = data[size:size + hlen].replace(b'"B-SURROGATE"', b'"B-\\udc80abc"')
            bad.write_bytes(modelfile._PREFIX.pack(magic, version, hlen, zlib.crc32(header), rest) + header +
                            data[size + hlen:])
        for command in (["tag", "-m", str(bad), "--marginals"], ["inspect", str(bad)]):
            proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command], env=ENV, capture_output=True,
                                  text=True, input="Confidence NN\n")
            assert proc.returncode == 2 and what in proc.stderr and "Traceback" not in proc.stderr, \
                (command, proc.returncode, proc.stderr[-400:])


def _limited(gib):
    """A preexec_fn that caps the child's address space."""
    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (gib << 30, gib << 30))
    return limit


def test_a_crfsuite_model_claiming_many_labels_is_refused_within_bounded_memory(tmp_path):
    """A CRFsuite file of about 1 MB naming 30,000 labels and 30,000 attributes made
    convert allocate 13 GiB of dense arrays. Its state weights are now read as the
    sparse rows they are, and a model of more labels than seqbil reads is refused, in a
    process limited to 4 GiB of address space; 30,000 attributes over 40 labels convert."""
    from test_foreign import write_crfsuite
    names = [f"a{i}" for i in range(30_000)]
    write_crfsuite(tmp_path / "many.crfsuite", [f"L{i}" for i in range(30_000)], names,
                   [(0, 5, 7, 1.0), (1, 0, 1, 0.5)])
    assert (tmp_path / "many.crfsuite").stat().st_size < 2 << 20
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", "--from", "crfsuite",
                           str(tmp_path / "many.crfsuite"), str(tmp_path / "out.sbm")], env=ENV, capture_output=True,
                          text=True, preexec_fn=_limited(4), timeout=120)
    assert proc.returncode == 2 and "at most 4096" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    write_crfsuite(tmp_path / "wide.crfsuite", [f"L{i}" for i in range(40)], names,
                   [(0, a, a % 40, 0.25) for a in range(0, 30_000, 7)] + [(1, 0, 1, 0.5)])
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", "--from", "crfsuite",
                           str(tmp_path / "wide.crfsuite"), str(tmp_path / "out.sbm")], env=ENV, capture_output=True,
                          text=True, preexec_fn=_limited(4), timeout=120)
    assert proc.returncode == 0, proc.stderr
    model = seqbil.load(str(tmp_path / "out.sbm"))
    assert model.store.w0.nnz == len(range(0, 30_000, 7))


@pytest.mark.parametrize("case", ["params", "learner", "history", "selection", "row", "value"])
def test_a_training_record_of_the_wrong_shape_is_a_clear_error(linear_model, tmp_path, case):
    """The training record is free JSON in the header: the fields inspect and --init-model
    read are of the types they read, a continued model's settings are held to the
    parameter table (a C of "big"), and inspect reports what it cannot read (a score that
    is a string) as an error, not a traceback."""
    def change(meta):
        t = meta["training"]
        if case == "params":
            t["params"] = 5
        elif case == "learner":
            t["learner"] = [1]
        elif case == "history":
            t["history"] = "x"
        elif case == "selection":
            t["selection"] = {"tried": 5}
        elif case == "row":
            t["selection"] = {"on": "held-out", "tried": [{"learner": "sp", "value": "x"}], "chosen": {"learner": "sp"}}
        else:
            t["params"]["C"] = "big"
    bad = _rewritten_meta(linear_model, tmp_path / "bad.sbm", change)
    train = str(Path(seqbil.__file__).parent / "samples" / "conll2000_test.txt")
    commands = {"inspect": ["inspect", str(bad)],
                "continue": ["train", "--init-model", str(bad), "--train", train, "--epochs", "1", "-q", "--model",
                             str(tmp_path / "out.sbm")]}
    failing = {"row": ["inspect"], "value": ["continue"]}.get(case, ["inspect", "continue"])
    for name in failing:
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *commands[name]], env=ENV, capture_output=True,
                              text=True)
        assert proc.returncode == 2 and str(bad) in proc.stderr and "Traceback" not in proc.stderr, \
            (case, name, proc.returncode, proc.stderr[-400:])


def test_a_corpus_that_never_ends_a_sentence_is_a_clear_error_when_memory_runs_out(linear_model, tmp_path):
    """A 5 MB gzip that expands to 418 MB of token lines with no blank line is one
    sentence; in a process given 768 MiB of address space, training and tagging it ran
    out of memory with a raw MemoryError. They now say so, exit 2."""
    import gzip
    line = b"x" * 200 + b" NN B-NP\n"
    with gzip.open(tmp_path / "endless.txt.gz", "wb", compresslevel=1) as f:
        block = line * 10_000
        for _ in range(200):
            f.write(block)
    for command in (["train", "--train", str(tmp_path / "endless.txt.gz"), "--learner", "sp", "--epochs", "1", "-q",
                     "--model", str(tmp_path / "m.sbm")],
                    ["tag", "-m", str(linear_model), str(tmp_path / "endless.txt.gz")]):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command], env=ENV, capture_output=True, text=True,
                              preexec_fn=_limited_mib(768), timeout=300)
        assert proc.returncode == 2 and "out of memory" in proc.stderr and "Traceback" not in proc.stderr, \
            (command[0], proc.returncode, proc.stderr[-400:])


def _limited_mib(mib):
    def limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    return limit


def test_a_crfpp_double_array_with_a_cycle_is_refused_at_once():
    """A binary CRF++ model whose double array loops (a node the child of its own child)
    sent every key below it around the cycle 65,536 times, keeping a row of every key's
    bytes per step: gigabytes for a large dictionary. The cycle is found before the walk."""
    import tracemalloc
    from seqbil.errors import ModelFileError
    from seqbil.foreign import crfpp
    from test_foreign import double_array
    letters = [bytes([c]) for c in range(97, 137)]
    keys = sorted(b"x" + a + b for a in letters for b in letters)
    base, check = double_array(keys, list(range(len(keys))))
    assert crfpp.double_array_keys(base, check)[0] == keys
    x = 1 + ord("x") + 1  # the root's child on x (the root's base is 1)
    y = base[x] + letters[0][0] + 1  # its child on the first letter
    assert check[x] == 1 and check[y] == base[x] and base[y] > 0
    check = check.copy()
    check[x] = base[y]  # x is now the child of its own child
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="a cycle"):
            crfpp.double_array_keys(base, check, broken=ModelFileError)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10 << 20, peak  # (the walk kept 65,536 rows of 1,600 bytes: 105 MB)


@pytest.mark.parametrize("case", ["scale text", "scale negative", "unknown number", "unknown other", "nan vector"])
def test_a_vector_models_fields_are_held_to_the_parameter_table(tmp_path, case):
    """A %vec model's scale and unknown-word rule come from its file: of the parameter
    table's types and ranges (a scale of "big" or an unknown rule of 5 gave tracebacks),
    and its vectors finite."""
    sample = Path(seqbil.__file__).parent / "samples" / "conll2000_train.txt"
    words = sorted({line.split()[0] for line in sample.read_text().splitlines() if line.strip()})[:200]
    rng = np.random.default_rng(0)
    (tmp_path / "v.txt").write_text("".join(f"{w} " + " ".join(f"{x:.3f}" for x in rng.normal(size=3)) + "\n"
                                            for w in words))
    good = tmp_path / "m.sbm"
    seqbil.train(str(sample), templates=["U00:%x[0,0]", "U30:%vec[0,0,emb]", "B"], learner="sp", epochs=1,
                 vectors=[f"emb={tmp_path / 'v.txt'}"], temperature=1.0, model=str(good))

    def change(meta):
        v = meta["vectors"]
        if case == "scale text":
            v["scale"] = "big"
        elif case == "scale negative":
            v["scale"] = -1.0
        elif case == "unknown number":
            v["unknown"] = 5
        elif case == "unknown other":
            v["unknown"] = "guess"
    if case == "nan vector":
        def poisoned(arrays):
            arrays["vectors:emb"][0, 0] = np.nan
        bad = _rewritten(good, tmp_path / "bad.sbm", poisoned)
    else:
        bad = _rewritten_meta(good, tmp_path / "bad.sbm", change)
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(bad)], env=ENV, capture_output=True,
                          text=True, input="Confidence NN\n")
    assert proc.returncode == 2 and "inconsistent model contents" in proc.stderr and \
        "Traceback" not in proc.stderr, (case, proc.returncode, proc.stderr[-400:])


@pytest.fixture(scope="module")
def item_and_task_models(tmp_path_factory):
    """A model of CRFsuite attributes (%attr) and a model of two segmentation tasks."""
    where = tmp_path_factory.mktemp("keys")
    samples = Path(seqbil.__file__).parent / "samples"
    lines = [line.strip() for line in (samples / "pku_train.utf8").read_text(encoding="utf-8").splitlines()
             if line.strip()][:60]
    (where / "a.utf8").write_text("\n".join(lines[:30]) + "\n", encoding="utf-8")
    (where / "b.utf8").write_text("\n".join(lines[30:]) + "\n", encoding="utf-8")
    seqbil.train(config="sighan2005", tasks=[f"a={where / 'a.utf8'}", f"b={where / 'b.utf8'}"], learner="sp",
                 epochs=1, temperature=1.0, model=str(where / "tasks.sbm"))
    seqbil.train(str(samples / "conll2000_train.crfsuite.gz"), config="crfsuite", learner="sp", epochs=1,
                 temperature=1.0, model=str(where / "items.sbm"))
    return where / "items.sbm", where / "tasks.sbm"


def _keys_of(arrays, order, t):
    return slice(int(arrays[f"table{order}_ptr"][t]), int(arrays[f"table{order}_ptr"][t + 1]))


@pytest.mark.parametrize("case", ["attribute id past the names", "negative attribute id", "keys out of order",
                                  "key past its fields", "task field empty", "task field renamed"])
def test_attribute_keys_and_task_values_must_fit_their_fields(item_and_task_models, tmp_path, case):
    """A template's keys ascend and lie in the range of what they read: %attr keys are
    ids of the attribute names (one past them made convert raise IndexError), column keys
    within their fields' values; a multi-task model's task field holds its tasks (an empty
    one passed tag and inspect). Every command refuses such a file."""
    items, tasks = item_and_task_models

    def change(arrays):
        if case == "attribute id past the names":
            arrays["table0"][_keys_of(arrays, 0, 0).stop - 1] = len(arrays["attributes_ptr"]) - 1
        elif case == "negative attribute id":
            arrays["table0"][0] = -1
        elif case == "keys out of order":
            arrays["table0"][[0, 1]] = arrays["table0"][[1, 0]]
        elif case == "key past its fields":
            arrays["table1"][_keys_of(arrays, 1, 0).stop - 1] = 2 ** 40
        elif case == "task field empty":
            arrays["field%task"] = np.zeros(0, np.uint8)
        else:
            arrays["field%task"] = np.frombuffer(b"a\nc", np.uint8)
    src = items if "attribute" in case or "order" in case else tasks
    bad = _rewritten(src, tmp_path / "bad.sbm", change)
    task = [] if src == items else ["--task", "a"]
    for command in (["tag", "-m", str(bad), *task], ["inspect", str(bad)],
                    ["convert", str(bad), str(tmp_path / "out.sbm")],
                    ["train", "--init-model", str(bad), "--train", str(bad.parent / "in.txt"), "--epochs", "1", "-q",
                     "--model", str(tmp_path / "out.sbm"), *task]):
        (bad.parent / "in.txt").write_text("x=1\ty=2\tB-NP\n\n" if src == items else "扬帆 远东\n", encoding="utf-8")
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command], env=ENV, capture_output=True,
                              text=True, input="x=1\n\n" if src == items else "扬帆远东\n")
        assert proc.returncode == 2 and "inconsistent model contents" in proc.stderr and \
            "Traceback" not in proc.stderr, (command, proc.returncode, proc.stderr[-400:])
    # the same files, rewritten unchanged, are read
    same = _rewritten(src, tmp_path / "same.sbm", lambda arrays: None)
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(same), *task], env=ENV,
                          capture_output=True, text=True, input="x=1\n\n" if src == items else "扬帆远东\n")
    assert proc.returncode == 0, proc.stderr[-400:]


@pytest.mark.parametrize("case", ["unigram past the weights", "transition past the weights", "xsize 5000",
                                  "xsize past the limit"])
def test_crfpp_text_models_are_converted_into_models_that_load_or_refused(tmp_path, case):
    """A CRF++ text model whose feature offsets run past its weights is refused at
    conversion (one offset below the end but not the last, or a transition block, made
    numpy's reshape fail with its own words); a model of 5,000 columns converts into one
    that tags 5,000-column lines (it converted into a file every later command refused)."""
    from test_foreign import random_crfpp, write_text
    crfpp = random_crfpp(np.random.default_rng(3))
    dic, end = dict(crfpp["dic"]), len(crfpp["alpha"])
    first_unigram = min(key for key in dic if key[0] == "U")
    if case == "unigram past the weights":
        dic[first_unigram] = end - 1
    elif case == "transition past the weights":
        dic["B"] = end - 3
    crfpp["dic"] = dic
    crfpp["xsize"] = {"xsize 5000": 5000, "xsize past the limit": 100_000}.get(case, crfpp["xsize"])
    write_text(crfpp, tmp_path / "model.txt")
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", "--from", "crfpp", str(tmp_path / "model.txt"),
                           str(tmp_path / "out.sbm")], env=ENV, capture_output=True, text=True)
    if case != "xsize 5000":
        assert proc.returncode == 2 and not (tmp_path / "out.sbm").exists() and "Traceback" not in proc.stderr
        assert ("outside the model's" if "past the weights" in case else "reads 1 to 99,999") in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0, proc.stderr
    line = " ".join(["x"] * 5000)
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(tmp_path / "out.sbm")], env=ENV,
                          capture_output=True, text=True, input=f"{line}\n{line}\n\n")
    assert proc.returncode == 0 and proc.stdout.splitlines()[0].startswith(line + " "), proc.stderr[-300:]


def test_a_corpus_of_more_columns_than_templates_read_trains_a_model_that_loads(tmp_path):
    """Training on 1,200 columns wrote a model whose corpus record the loader refused
    (at most 1,000 columns); a line may have up to 100,000 fields, and more is a clear
    error naming the line."""
    rng = np.random.default_rng(0)
    rows = [" ".join([f"w{rng.integers(3)}"] * 1200 + [str(rng.choice(["B-NP", "O"]))]) for _ in range(12)]
    (tmp_path / "wide.txt").write_text("\n".join(rows[:6]) + "\n\n" + "\n".join(rows[6:]) + "\n")
    (tmp_path / "wider.txt").write_text(" ".join(["w"] * 100_001) + " O\n\n")
    for corpus, status in (("wide.txt", 0), ("wider.txt", 2)):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--train", str(tmp_path / corpus), "--learner",
                               "sp", "--epochs", "1", "-q", "--model", str(tmp_path / "m.sbm"),
                               "--template", str(Path(__file__).resolve().parent.parent / "configs" /
                                                 "crfpp_chunking.template")],
                              env=ENV, capture_output=True, text=True)
        assert proc.returncode == status, proc.stderr[-300:]
    assert "wider.txt:1: 100002 fields" in proc.stderr
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(tmp_path / "m.sbm"),
                           str(tmp_path / "wide.txt")], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 0 and len(proc.stdout.split("\n\n")[0].splitlines()) == 6, proc.stderr[-300:]


def test_a_template_reading_a_column_the_format_lacks_is_named(item_and_task_models, tmp_path):
    """A model whose templates read a column its corpus format does not have is refused
    naming the template (the message named only the missing array, 'field3')."""
    items, tasks = item_and_task_models
    for src, task in ((items, []), (tasks, ["--task", "a"])):
        bad = _rewritten_meta(src, tmp_path / "bad.sbm", lambda meta: meta["templates"].insert(0, "U99:%x[0,3]"))
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(bad), *task], env=ENV,
                              capture_output=True, text=True, input="x\n\n")
        assert proc.returncode == 2 and "'U99:%x[0,3]'" in proc.stderr and "column 3" in proc.stderr, proc.stderr


def test_a_crfsuite_label_that_is_not_text_is_refused_at_conversion(tmp_path):
    """Attribute names may hold any bytes (they are matched as bytes); a label is printed,
    so one that is not UTF-8 is refused when the model is converted (it converted, and
    every later command refused the result)."""
    from test_foreign import write_crfsuite
    write_crfsuite(tmp_path / "m.crfsuite", ["A", "B"], ["x", "y"], [(0, 0, 0, 0.5), (0, 1, 1, 0.3), (1, 0, 1, 0.25)])
    good = (tmp_path / "m.crfsuite").read_bytes()
    for old, new, status in ((b"B\0", b"\xff\0", 2), (b"y\0", b"\xff\0", 0)):
        (tmp_path / "bad.crfsuite").write_bytes(good.replace(old, new))
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", "--from", "crfsuite",
                               str(tmp_path / "bad.crfsuite"), str(tmp_path / "out.sbm")], env=ENV,
                              capture_output=True, text=True)
        assert proc.returncode == status and "Traceback" not in proc.stderr, (old, proc.stderr)
        assert status == 0 or "a label that is not UTF-8" in proc.stderr, proc.stderr


@pytest.mark.parametrize("field, value", [("init_model", {"x": 1}), ("init_model", 1.5), ("sources", {"": "arguments"}),
                                          ("sources", {"epochs": 3}), ("selection", [])])
def test_a_checkpoints_run_record_of_the_wrong_types_is_refused(sp_checkpoint, tmp_path, field, value):
    """The run record a checkpoint carries is typed before a resumed run reads it (an
    init_model that was not a path reached os.stat; a source naming no setting raised
    KeyError)."""
    run, scalars, arrays, rng_state, history = checkpoint.load(str(sp_checkpoint))
    run[field] = value
    bad = tmp_path / "bad.ckpt"
    write_model(str(bad), {"format": checkpoint.FORMAT, "run": run, "scalars": scalars, "rng": rng_state,
                           "history": history}, dict(arrays))
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--resume", str(bad), "--epochs", "2",
                           "--model", str(tmp_path / "out.sbm"), "-q"], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 2 and f"corrupt checkpoint ({field})" in proc.stderr, proc.stderr[-400:]


@pytest.mark.parametrize("field, value", [("weights", []), ("weights", "sparse rows"), ("lexicons", 3),
                                          ("vectors", "x"), ("structure", 7)])
def test_a_header_record_of_the_wrong_type_is_an_inconsistent_model(linear_model, tmp_path, field, value):
    """The header's records are dicts before their fields are read (a list where the
    weights record belongs raised AttributeError in every command)."""
    bad = _rewritten_meta(linear_model, tmp_path / "bad.sbm", lambda meta: meta.update({field: value}))
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(bad)], env=ENV, capture_output=True,
                          text=True, input="Confidence NN\n")
    assert proc.returncode == 2 and "inconsistent model contents" in proc.stderr and "Traceback" not in proc.stderr, \
        proc.stderr[-400:]


def test_a_crfpp_feature_offset_past_any_integer_is_refused(tmp_path):
    """A text model's feature offset of 10**30 (an OverflowError in numpy) lies past the weights."""
    from test_foreign import random_crfpp, write_text
    crfpp = random_crfpp(np.random.default_rng(3))
    crfpp["dic"] = {**crfpp["dic"], min(crfpp["dic"]): 10 ** 30}
    write_text(crfpp, tmp_path / "model.txt")
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "convert", "--from", "crfpp", str(tmp_path / "model.txt"),
                           str(tmp_path / "out.sbm")], env=ENV, capture_output=True, text=True)
    assert proc.returncode == 2 and "outside the model's" in proc.stderr, proc.stderr[-400:]


def test_a_header_string_that_is_not_text_is_a_corrupt_header(linear_model, sp_checkpoint, tmp_path):
    """JSON escapes can spell a lone surrogate anywhere in a header (here in the training
    record, which nothing checked): `inspect --json`, `convert` and a resumed run raised
    UnicodeEncodeError when they wrote it out. The container refuses such a header."""
    from fuzz_harness import write_container
    from seqbil.modelfile import read_model
    meta, arrays = read_model(str(linear_model))
    meta["training"]["note"] = "\udc80"
    write_container(tmp_path / "bad.sbm", meta, {k: np.array(v) for k, v in arrays.items()})
    meta, arrays = read_model(str(sp_checkpoint))
    meta["history"].append({"note": "x\udcff"})
    write_container(tmp_path / "bad.ckpt", meta, {k: np.array(v) for k, v in arrays.items()})
    for command in (["inspect", "--json", str(tmp_path / "bad.sbm")],
                    ["convert", str(tmp_path / "bad.sbm"), str(tmp_path / "out.sbm")],
                    ["train", "--resume", str(tmp_path / "bad.ckpt"), "--epochs", "2", "-q", "--model",
                     str(tmp_path / "out.sbm")]):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command], env=ENV, capture_output=True, text=True)
        assert proc.returncode == 2 and "a lone surrogate" in proc.stderr, (command, proc.stderr[-400:])


@pytest.fixture(scope="module")
def bilinear_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("bilinear") / "b.sbm"
    seqbil.train(None, config="conll2000", learner="bol", epochs=1, temperature=1.0, model=str(path))
    return path


@pytest.mark.parametrize("array", ["AB.idx", "W0.idx"])
def test_a_bilinear_models_cell_of_minus_one_is_refused_not_moved_to_the_last_label(bilinear_model, tmp_path, array):
    """A cell index of -1 in a bilinear model's rows was moved to the row's last cell by
    convert (numpy's negative indexing), changing 1,439 of 5,116 output lines: every
    command refuses it, convert included."""
    bad = _rewritten(bilinear_model, tmp_path / "bad.sbm", _set(array, 0, -1))
    for command in (["convert", str(bad), str(tmp_path / "out.sbm")], ["tag", "-m", str(bad)]):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command], env=ENV, capture_output=True, text=True,
                              input="Confidence NN\n")
        assert proc.returncode == 2 and "inconsistent model contents" in proc.stderr and \
            not (tmp_path / "out.sbm").exists(), (command, proc.stderr[-400:])


def test_a_corpus_whose_label_comes_first_trains_tags_and_scores(tmp_path):
    """With --label-column 0 every sentence's first column is the label's, None once read:
    its length was taken from it (TypeError in training; found by the coverage-guided
    fuzzer through a checkpoint's settings). The result equals the same corpus with the
    label last."""
    sample = Path(seqbil.__file__).parent / "samples" / "conll2000_train.txt"
    lines = sample.read_text().splitlines()[:400]
    last = "\n".join(lines) + "\n"
    first = "\n".join(" ".join([*line.split()[-1:], *line.split()[:-1]]) if line.strip() else "" for line in lines) + "\n"
    (tmp_path / "last.txt").write_text(last)
    (tmp_path / "first.txt").write_text(first)
    outputs = []
    for corpus, label, w, p in (("last.txt", -1, 0, 1), ("first.txt", 0, 1, 2)):
        (tmp_path / "t.tmpl").write_text(f"U00:%x[0,{w}]\nU01:%x[0,{p}]\nU02:%x[-1,{p}]/%x[0,{p}]\nB\n")
        model = tmp_path / f"{label}.sbm"
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "train", "--train", str(tmp_path / corpus),
                               "--label-column", str(label), "--template", str(tmp_path / "t.tmpl"), "--learner", "sp",
                               "--epochs", "2", "--temperature", "1", "-q", "--model", str(model)],
                              env=ENV, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-400:]
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "eval", "-m", str(model), "--data",
                               str(tmp_path / corpus), "--json"], env=ENV, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-400:]
        outputs.append(proc.stdout)
    assert outputs[0] == outputs[1]


def test_a_gzip_file_whose_header_is_corrupt_is_a_clear_error(linear_model, tmp_path):
    """Reading a gzip stream's first bytes (to look for a UTF-16 byte-order mark) raised
    gzip.BadGzipFile past the reader's own handling (found by the coverage-guided fuzzer)."""
    import gzip
    data = bytearray(gzip.compress(b"Confidence NN B-NP\n\n"))
    data[2] = 9  # an unknown compression method
    (tmp_path / "bad.gz").write_bytes(bytes(data))
    for command in (["tag", "-m", str(linear_model), str(tmp_path / "bad.gz")],
                    ["eval", "-m", str(linear_model), "--data", str(tmp_path / "bad.gz")],
                    ["train", "--train", str(tmp_path / "bad.gz"), "--learner", "sp", "-q", "--model",
                     str(tmp_path / "m.sbm")]):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", *command], env=ENV, capture_output=True, text=True)
        assert proc.returncode == 2 and "bad.gz: corrupt gzip data" in proc.stderr, (command, proc.stderr[-400:])


def test_a_damaged_payload_is_said_to_be_damaged_before_its_contents_are_judged(linear_model, tmp_path):
    """The payload's checksum is computed beside the checks of its meaning: a file whose
    bytes were damaged (checksums not rewritten) is called corrupt, even where the damage
    also makes its contents inconsistent; rewritten with valid checksums, the same change
    is inconsistent contents."""
    import json
    from seqbil import modelfile
    data = bytearray(linear_model.read_bytes())
    size = modelfile._PREFIX.size
    hlen = modelfile._PREFIX.unpack(bytes(data[:size]))[2]
    header = json.loads(bytes(data[size:size + hlen]))
    spec = next(s for s in header["arrays"] if s["name"] == "W0.idx")
    at = size + hlen + (-(size + hlen)) % 8 + spec["offset"]
    data[at:at + 4] = (10 ** 6).to_bytes(4, "little")  # a cell far outside its row
    (tmp_path / "damaged.sbm").write_bytes(bytes(data))
    rewritten = _rewritten(linear_model, tmp_path / "bad.sbm", _set("W0.idx", 0, 10 ** 6))
    for path, message in ((tmp_path / "damaged.sbm", "payload checksum mismatch"),
                          (rewritten, "inconsistent model contents")):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "inspect", str(path)], env=ENV,
                              capture_output=True, text=True)
        assert proc.returncode == 2 and message in proc.stderr, (path, proc.stderr[-300:])
