"""`seqbil tag` as a stream: --jobs gives the bytes of one process, --output replaces its
file only when everything is tagged, --encoding reads and writes, and the API function
seqbil.tag_file gives what the command line gives."""
import io
import multiprocessing
import os
import random
import signal
import subprocess
import sys
import time

import pytest

import seqbil
import seqbil.tagging
from seqbil.samples import sample_path
from test_cli import ENV

SAMPLES = {"chunker": "conll2000_test.txt", "segmenter": "pku_test.utf8"}
MODES = {"plain": [], "nbest": ["--nbest", "3"], "confidence": ["--confidence"]}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """Model paths, and the sample inputs repeated so that they make several blocks."""
    folder = tmp_path_factory.mktemp("tag_jobs")
    seqbil.train(config="conll2000", learner="sp", epochs=2).save(folder / "chunker.sbm")
    seqbil.train(config="sighan2005", learner="sp", epochs=1).save(folder / "segmenter.sbm")
    for name, sample in SAMPLES.items():
        (folder / f"{name}.txt").write_bytes(sample_path(sample).read_bytes() * 8)
    return folder


def tag(*args, cwd, input=None, check=True):
    proc = subprocess.run([sys.executable, "-m", "seqbil", "tag", *map(str, args)], cwd=cwd, env=ENV, input=input,
                          capture_output=True)
    if check:
        assert proc.returncode == 0, proc.stderr.decode()
    return proc


def leftovers(folder, keep):
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", SAMPLES)
def test_jobs_write_the_bytes_of_one_process(models, tmp_path, kind, mode):
    model, text = models / f"{kind}.sbm", models / f"{kind}.txt"
    one = tag("-m", model, *MODES[mode], text, cwd=tmp_path).stdout
    assert len(one) > text.stat().st_size  # every line comes back, with more on it
    for jobs in (2, 3):
        assert tag("-m", model, *MODES[mode], "--jobs", jobs, text, cwd=tmp_path).stdout == one
        assert tag("-m", model, *MODES[mode], "-j", jobs, "-i", text, "-o", tmp_path / "out.txt",
                   cwd=tmp_path).stdout == b""
        assert (tmp_path / "out.txt").read_bytes() == one
    assert leftovers(tmp_path, {"out.txt"}) == []


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("kind", SAMPLES)
def test_small_blocks_in_any_order_give_the_same_bytes(models, monkeypatch, kind, mode):
    """Many small blocks, finished out of order by three workers, and the sentence by
    sentence output of the Model API."""
    model = seqbil.load(models / f"{kind}.sbm")
    text = sample_path(SAMPLES[kind]).read_bytes()
    options = {"plain": {}, "nbest": {"nbest": 3}, "confidence": {"confidence": True}}[mode]
    whole = io.BytesIO()
    assert seqbil.tag_file(model, io.BytesIO(text), whole, **options) == 200
    monkeypatch.setattr(seqbil.tagging.reader, "BLOCK_BYTES", 3000)
    for jobs in (1, 3):
        out = io.BytesIO()
        seqbil.tag_file(model, io.BytesIO(text), out, jobs=jobs, **options)
        assert out.getvalue() == whole.getvalue()
    if mode == "plain" and kind == "chunker":  # the labels Model.tag gives sentence by sentence
        sentences = [[row.split()[:2] for row in block.splitlines()] for block in text.decode().strip().split("\n\n")]
        labels = [line.split()[-1] for line in whole.getvalue().decode().splitlines() if line]
        assert labels == [y for s in sentences for y in model.tag(s)]
    assert multiprocessing.active_children() == []


def test_the_api_gives_the_bytes_of_the_command_line(models, tmp_path):
    model, text = models / "chunker.sbm", models / "chunker.txt"
    cli = tag("-m", model, "--confidence", text, cwd=tmp_path).stdout
    assert seqbil.tag_file(str(model), str(text), str(tmp_path / "api.txt"), confidence=True) == 8 * 200
    assert (tmp_path / "api.txt").read_bytes() == cli
    out = io.BytesIO()
    seqbil.tag_file(seqbil.load(model), text, out, jobs=2, confidence=True)
    assert out.getvalue() == cli
    text_out = io.StringIO()  # a text stream gets text
    seqbil.tag_file(seqbil.load(model), text, text_out, confidence=True)
    assert text_out.getvalue() == cli.decode("utf-8")
    with pytest.raises(seqbil.SeqbilError, match="different layouts"):
        seqbil.tag_file(str(model), text, io.BytesIO(), nbest=2, confidence=True)
    with pytest.raises(seqbil.SeqbilError, match="jobs"):
        seqbil.tag_file(str(model), text, io.BytesIO(), jobs=-1)


@pytest.mark.parametrize("jobs", [1, 2])
def test_output_keeps_the_old_file_when_tagging_fails(models, tmp_path, jobs):
    model = models / "chunker.sbm"
    good = sample_path("conll2000_test.txt").read_bytes() * 8
    bad = tmp_path / "bad.txt"
    bad.write_bytes(good + b"one two three four\n")  # the last line: too many fields
    out = tmp_path / "out.txt"
    out.write_bytes(b"old contents\n")
    lines = good.count(b"\n") + 1
    proc = tag("-m", model, "--jobs", jobs, "--output", out, bad, cwd=tmp_path, check=False)
    assert proc.returncode == 2 and out.read_bytes() == b"old contents\n"
    message = proc.stderr.decode()
    assert message == f"seqbil: error: {bad}:{lines}: expected 2 or 3 fields, found 4\n"
    assert leftovers(tmp_path, {"bad.txt", "out.txt"}) == []
    # to standard output: everything before the bad block, as with one process
    one = tag("-m", model, bad, cwd=tmp_path, check=False)
    many = tag("-m", model, "--jobs", jobs, bad, cwd=tmp_path, check=False)
    assert many.stdout == one.stdout and many.stderr == one.stderr and many.returncode == 2
    # a success replaces the file: an ordinary file, as the umask says
    tag("-m", model, "-j", jobs, "-o", out, "-i", sample_path("conll2000_test.txt"), cwd=tmp_path)
    assert out.read_bytes() == tag("-m", model, sample_path("conll2000_test.txt"), cwd=tmp_path).stdout
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    assert leftovers(tmp_path, {"bad.txt", "out.txt"}) == []


@pytest.mark.parametrize("jobs", [1, 3])
def test_undecodable_input_names_file_line_and_byte(models, tmp_path, jobs):
    text = sample_path("pku_test.utf8").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    data = "".join(lines[:150]).encode("utf-8") + "扬帆远东".encode("gbk") + b"\n" + "".join(lines[150:]).encode()
    (tmp_path / "mixed.txt").write_bytes(data)
    offset = len("".join(lines[:150]).encode("utf-8"))
    proc = tag("-m", models / "segmenter.sbm", "-j", jobs, "-o", tmp_path / "out.txt", tmp_path / "mixed.txt",
               cwd=tmp_path, check=False)
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert proc.stderr.decode() == (f"seqbil: error: {tmp_path / 'mixed.txt'}:151: invalid utf-8 at byte offset "
                                    f"{offset} (byte 0x{'扬'.encode('gbk')[0]:02x}); give the right --encoding\n")
    assert leftovers(tmp_path, {"mixed.txt"}) == []
    (tmp_path / "nul.txt").write_bytes(b"He PRP\n\nran\0 VBD\n")
    proc = tag("-m", models / "chunker.sbm", "-j", jobs, tmp_path / "nul.txt", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "nul.txt:3: NUL byte at byte offset 11" in proc.stderr.decode()


@pytest.mark.parametrize("jobs", [1, 2])
def test_encoding_applies_to_input_and_output(models, tmp_path, jobs):
    for kind, encoding in (("chunker", "latin-1"), ("segmenter", "gbk")):
        text = sample_path(SAMPLES[kind]).read_text(encoding="utf-8")
        if kind == "chunker":
            text = text.replace("the DT", "café DT")  # a word latin-1 writes in its own way
        (tmp_path / "in.utf8").write_text(text, encoding="utf-8")
        (tmp_path / "in.other").write_bytes(text.encode(encoding))
        expected = tag("-m", models / f"{kind}.sbm", tmp_path / "in.utf8", cwd=tmp_path).stdout.decode("utf-8")
        proc = tag("-m", models / f"{kind}.sbm", "--encoding", encoding, "-j", jobs, "-o", tmp_path / "out",
                   tmp_path / "in.other", cwd=tmp_path)
        assert (tmp_path / "out").read_bytes() == expected.encode(encoding) and proc.stdout == b""
        assert expected.encode(encoding) != expected.encode("utf-8")
        api = io.BytesIO()
        seqbil.tag_file(models / f"{kind}.sbm", tmp_path / "in.other", api, encoding=encoding, jobs=jobs)
        assert api.getvalue() == expected.encode(encoding)
    proc = tag("-m", models / "chunker.sbm", "--encoding", "no-such-code", tmp_path / "in.utf8", cwd=tmp_path,
               check=False)
    assert proc.returncode == 2 and proc.stderr.decode() == "seqbil: error: unknown encoding 'no-such-code'\n"


def test_input_option_and_input_argument(models, tmp_path):
    model, text = models / "chunker.sbm", sample_path("conll2000_test.txt")
    by_argument = tag("-m", model, text, cwd=tmp_path).stdout
    assert tag("-m", model, "--input", text, cwd=tmp_path).stdout == by_argument
    assert tag("-m", model, "--input", "-", cwd=tmp_path, input=text.read_bytes()).stdout == by_argument
    assert tag("-m", model, "-o", "-", cwd=tmp_path, input=text.read_bytes()).stdout == by_argument
    proc = tag("-m", model, "--input", text, text, cwd=tmp_path, check=False)
    assert proc.returncode == 2 and b"give the input as INPUT or as --input, not both" in proc.stderr
    proc = tag("-m", model, text, "-o", tmp_path, cwd=tmp_path, check=False)
    assert proc.returncode == 2 and b"is a directory" in proc.stderr and b"Traceback" not in proc.stderr


def test_help_documents_every_option_with_its_default(models):
    from click.testing import CliRunner
    from seqbil.cli import main
    text = " ".join(CliRunner().invoke(main, ["tag", "--help"]).output.split())
    for option in ("--input FILE", "--output FILE", "--encoding", "--jobs N", "--dict", "--nbest K", "--confidence"):
        assert option in text
    assert "[default: 1" in text and "[default: off]" in text and "[default: standard output]" in text and "[default: standard input]" in text
    assert "[default: the model's" in text and "0: one per CPU core" in text


def test_a_failing_worker_is_an_error_and_leaves_no_process(models, monkeypatch):
    def fail(self, sentences):
        if any(s.rows == rows for s in sentences):
            raise RuntimeError("out of luck")
        return original(self, sentences)
    original = seqbil.tagging.BlockTagger._text
    text = sample_path("conll2000_test.txt").read_bytes()
    rows = [line.split() for line in text.decode().split("\n\n")[100].splitlines()]  # sentence 101 fails
    monkeypatch.setattr(seqbil.tagging.BlockTagger, "_text", fail)
    monkeypatch.setattr(seqbil.tagging.tagger, "_fast_applies", lambda *args: False)  # the path through _text
    monkeypatch.setattr(seqbil.tagging.reader, "BLOCK_BYTES", 2000)
    out = io.BytesIO()
    with pytest.raises(seqbil.SeqbilError, match="tagging failed in a worker process: RuntimeError: out of luck"):
        seqbil.tag_file(models / "chunker.sbm", io.BytesIO(text), out, jobs=2)
    assert out.getvalue().startswith(text.split(b"\n")[0])  # the blocks before the failing one were written
    assert multiprocessing.active_children() == []


def test_a_worker_that_dies_is_an_error(models, monkeypatch):
    def die(self, sentences):
        os.kill(os.getpid(), signal.SIGKILL)
    monkeypatch.setattr(seqbil.tagging.BlockTagger, "_text", die)
    monkeypatch.setattr(seqbil.tagging.tagger, "_fast_applies", lambda *args: False)  # the path through _text
    with pytest.raises(seqbil.SeqbilError, match="worker process stopped unexpectedly .killed by signal 9"):
        seqbil.tag_file(models / "chunker.sbm", sample_path("conll2000_test.txt"), io.BytesIO(), jobs=2)
    assert multiprocessing.active_children() == []


@pytest.mark.parametrize("how, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_an_interrupted_run_keeps_the_old_file_and_stops_its_workers(models, tmp_path, how, status):
    out = tmp_path / "out.txt"
    out.write_bytes(b"old contents\n")
    # SIGINT as a terminal delivers it: a test run started in the background (`cmd &`)
    # ignores SIGINT, and a child would inherit that and never see the signal
    proc = subprocess.Popen([sys.executable, "-m", "seqbil", "tag", "-m", str(models / "segmenter.sbm"), "-j", "2",
                             "-o", str(out)], cwd=tmp_path, env=ENV, stdin=subprocess.PIPE, stderr=subprocess.PIPE,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        proc.stdin.write("扬帆远东做与中国合作的先行\n".encode() * 100)
        proc.stdin.flush()
        deadline = time.time() + 60
        while len(os.listdir(tmp_path)) < 2 and time.time() < deadline:  # the temporary file is there
            time.sleep(0.05)
        workers = _children(proc.pid)
        time.sleep(0.5)
        proc.send_signal(how)
        proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.stdin.close()
    assert proc.returncode == status and b"Traceback" not in proc.stderr.read()
    assert out.read_bytes() == b"old contents\n" and leftovers(tmp_path, {"out.txt"}) == []
    deadline = time.time() + 10
    while any(os.path.exists(f"/proc/{pid}") for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(os.path.exists(f"/proc/{pid}") for pid in workers)


def _children(pid):
    """Process ids of the children of pid (Linux), or none where /proc cannot tell."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def test_a_pipe_gets_output_before_the_input_ends_with_jobs(models, tmp_path):
    import select
    proc = subprocess.Popen([sys.executable, "-m", "seqbil", "tag", "-m", str(models / "chunker.sbm"), "--jobs", "2"],
                            cwd=tmp_path, env=ENV, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        for sentence in (b"He PRP\nran VBD\n\n", b"OK UH\n\n"):
            proc.stdin.write(sentence)
            proc.stdin.flush()
            got = b""
            while got.count(b"\n") < sentence.count(b"\n"):
                ready, _, _ = select.select([proc.stdout], [], [], 60)
                assert ready, "no output while the input stays open"
                got += os.read(proc.stdout.fileno(), 1 << 16)
            assert [line.split()[:2] for line in got.splitlines()] == [line.split() for line in sentence.splitlines()]
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert proc.returncode == 0


@pytest.mark.parametrize("kind", SAMPLES)
def test_blocks_end_at_sentence_ends_however_the_input_comes(models, kind):
    """Input in pieces of any size, pausing anywhere: blocks of whole sentences with
    their first line and byte offset, and the output of the whole."""
    rng = random.Random(7)
    text = sample_path(SAMPLES[kind]).read_bytes()
    if kind == "chunker":  # blank lines of other kinds, and line ends with \r
        text = text.replace(b"\n\n", b"\n \t\n", 20).replace(b"\n", b"\r\n", 300)
    model = seqbil.load(models / f"{kind}.sbm")
    tagger = seqbil.tagging.BlockTagger(model, "x", "utf-8", None, False)
    whole = tagger((text, 1, 0))[0]

    class Trickle(io.RawIOBase):
        def __init__(self):
            self.at = 0

        def read(self, n):
            piece = text[self.at:self.at + min(n, rng.choice((1, 7, 300, 5000)))]
            self.at += len(piece)
            return piece

    for size in (1, 500, 20000):
        reader = seqbil.tagging.BlockReader(Trickle(), "x", kind == "segmenter", size)
        reader.pause_fd = -1
        reader._input_waiting = lambda: rng.random() < 0.8
        blocks = [b for b in reader if b is not None]
        assert b"".join(raw for raw, _, _ in blocks) == text and len(blocks) > 1
        for raw, line, offset in blocks:
            assert text[offset:offset + len(raw)] == raw and line == text[:offset].count(b"\n") + 1
            last_line = raw[:-1].rsplit(b"\n", 1)[-1]  # blank, for a CoNLL block before the last
            assert raw.endswith(b"\n") and (kind == "segmenter" or not last_line.strip() or raw is blocks[-1][0])
        assert b"".join(tagger(block)[0] for block in blocks) == whole
