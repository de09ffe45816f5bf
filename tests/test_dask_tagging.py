"""Tagging many files on a Dask cluster (seqbil.dask, `seqbil tag --output-dir`): the
partition boundaries against a brute-force search, the output against seqbil.tag_file
on every file whatever the partitions, errors with the line of the whole file, resume,
and nothing partial left behind."""
import gzip
import io
import os
import random
import subprocess
import sys

import pytest

import seqbil
import seqbil.dask.tagging as dt
from seqbil.formats.conll import split_fields
from seqbil.samples import sample_path
from test_cli import ENV

distributed = pytest.importorskip("distributed")

def brute_boundary(data, x, one_per_line):
    """The first sentence boundary at or after x, by trying every position: for CoNLL
    models, the end of a line that the reader takes for blank (no field once the CRs
    of its line end are dropped) after a line end at or after x - 1."""
    if x <= 0:
        return 0
    for s in range(x - 1, len(data)):
        if data[s:s + 1] != b"\n":
            continue
        if one_per_line:
            return s + 1
        end = data.find(b"\n", s + 1)
        if end >= 0 and not split_fields(data[s + 1:end].decode("utf-8").rstrip("\r")):
            return end + 1
    return len(data)


def random_text(rng, one_per_line):
    pieces = []
    for _ in range(rng.randrange(0, 30)):
        if one_per_line:
            pieces.append(rng.choice([b"", b"ab", b"c d", b" ", b"xyz" * rng.randrange(1, 9)]) + b"\n")
        else:
            pieces.append(rng.choice([b"w t\n", b"x y\n", b"\n", b" \n", b"\t \n", b"long " * 7 + b"\n", b"\r\n",
                                      b" \t\r\r\n", b"\r \n", b"\x0c\n", b"\xe3\x80\x80\n", b"\xc2\xa0 \n"]))
    text = b"".join(pieces)
    return text[:-1] if text and rng.random() < 0.3 else text  # without a last line end too


@pytest.mark.parametrize("one_per_line", [True, False])
def test_boundaries_are_the_brute_force_ones_and_partitions_meet(tmp_path, monkeypatch, one_per_line):
    rng = random.Random(7)
    path = tmp_path / "t"
    for trial in range(300):
        data = random_text(rng, one_per_line)
        path.write_bytes(data)
        monkeypatch.setattr(dt, "_WINDOW", rng.choice([1, 2, 5, 1 << 16]))  # windows that must grow
        with open(path, "rb") as f:
            cuts = [dt.sentence_boundary(f, x, len(data), one_per_line) for x in range(len(data) + 2)]
        assert cuts == [brute_boundary(data, x, one_per_line) for x in range(len(data) + 2)], (trial, data)
        assert cuts == sorted(cuts)  # partitions [b(x), b(y)) for x < y never overlap


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dask_models")
    seqbil.train(config="conll2000", learner="sp", epochs=1).save(folder / "chunker.sbm")
    seqbil.train(config="sighan2005", learner="sp", epochs=1).save(folder / "segmenter.sbm")
    return folder


def reference(model, path, **options):
    out = io.BytesIO()
    seqbil.tag_file(str(model), str(path), out, **options)
    return out.getvalue()


def read(path):
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


@pytest.mark.parametrize("kind,sample", [("chunker", "conll2000_test.txt"), ("segmenter", "pku_test.utf8")])
def test_every_file_as_tag_file_writes_it_whatever_the_partitions(client, models, tmp_path, kind, sample):
    rng = random.Random(3)
    text = sample_path(sample).read_bytes()
    if kind == "chunker":
        text = b"\n".join(b" ".join(line.split()[:2]) for line in text.split(b"\n"))  # no labels
    inputs = tmp_path / "in"
    inputs.mkdir()
    (inputs / "whole.txt").write_bytes(text)
    end = b"\n\n" if kind == "chunker" else b"\n"

    def head(n):  # whole sentences, without the last line end
        return text[:n].rsplit(end, 1)[0]
    (inputs / "cut.txt").write_bytes(head(len(text) // 3))
    (inputs / "gz.txt.gz").write_bytes(gzip.compress(head(len(text) // 2)))
    (inputs / "empty.txt").write_bytes(b"")
    (inputs / "bom.txt").write_bytes(b"\xef\xbb\xbf" + head(5000) + b"\n\n\n \n")
    model = models / f"{kind}.sbm"
    for size in [rng.randrange(1, 400), rng.randrange(400, 20000), 1 << 23]:
        out = tmp_path / f"out{size}"
        done = seqbil.dask.tag_files(model, [inputs / "*.txt", inputs / "gz.txt.gz"], out, client=client,
                                     partition_bytes=size)
        assert done["files"] == 5 and done["skipped"] == 0
        assert sorted(os.listdir(out)) == ["bom.txt", "cut.txt", "empty.txt", "gz.txt.gz", "whole.txt"]
        for name in os.listdir(out):
            assert read(out / name) == reference(model, inputs / name), (size, name)
        assert (out / "gz.txt.gz").read_bytes()[:2] == b"\x1f\x8b"
    # an encoding with a mark: written once, at the start, as seqbil tag writes it
    out = tmp_path / "sig"
    seqbil.dask.tag_files(model, [inputs / "bom.txt"], out, client=client, partition_bytes=300, encoding="utf-8-sig")
    assert read(out / "bom.txt") == reference(model, inputs / "bom.txt", encoding="utf-8-sig")
    assert read(out / "bom.txt").count(b"\xef\xbb\xbf") == 1


def test_crfpp_columns_and_probabilities_as_tag_file_writes_them(client, models, tmp_path):
    """Tab-separated columns with U+3000 tokens and CRLF line ends (CRF++'s example
    corpora), and --marginals / --all-marginals (with --nbest), whatever the partitions."""
    import numpy as np
    from test_conll_fields import TEMPLATE, crfpp_corpus, write_corpus

    rng = np.random.default_rng(11)
    (tmp_path / "template").write_text(TEMPLATE)
    write_corpus(tmp_path / "train.data", crfpp_corpus(rng, 60), rng)
    model = tmp_path / "crfpp.sbm"
    seqbil.train(str(tmp_path / "train.data"), template=str(tmp_path / "template"), epochs=2, model=str(model))
    inputs = tmp_path / "in"
    inputs.mkdir()
    write_corpus(inputs / "test.data", crfpp_corpus(rng, 150), rng, labeled=False)
    (inputs / "seg.txt").write_bytes(sample_path("pku_test.utf8").read_bytes()[:6000].rsplit(b"\n", 1)[0])
    for options in ({}, {"marginals": True}, {"marginals": "all", "nbest": 2}):
        for size in (rng.integers(50, 400), 1 << 23):
            out = tmp_path / f"out{size}{len(options)}"
            for name, m in (("test.data", model), ("seg.txt", models / "segmenter.sbm")):
                seqbil.dask.tag_files(m, [inputs / name], out, client=client, partition_bytes=int(size), **options)
                assert read(out / name) == reference(m, inputs / name, **options), (options, size, name)


def test_bad_input_names_the_line_of_the_whole_file_and_the_others_are_written(client, models, tmp_path):
    text = sample_path("conll2000_test.txt").read_bytes()
    lines = text.split(b"\n")
    lines[len(lines) * 2 // 3] += b" extra fields"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\n".join(lines))
    good = tmp_path / "good.txt"
    good.write_bytes(text)
    model = models / "chunker.sbm"
    with pytest.raises(seqbil.SeqbilError) as expected:
        seqbil.tag_file(str(model), str(bad), io.BytesIO())
    for size in (500, 1 << 23):
        out = tmp_path / f"out{size}"
        with pytest.raises(seqbil.SeqbilError) as raised:
            seqbil.dask.tag_files(model, [bad, good], out, client=client, partition_bytes=size)
        assert str(raised.value) == str(expected.value)
        assert os.listdir(out) == ["good.txt"]  # nothing of bad.txt: no output, no part file
        assert read(out / "good.txt") == reference(model, good)
    # two bad files: both named
    (tmp_path / "bad2.txt").write_bytes(b"\xff\n")
    with pytest.raises(seqbil.SeqbilError, match=r"2 of 2 files were not tagged") as raised:
        seqbil.dask.tag_files(model, [bad, tmp_path / "bad2.txt"], tmp_path / "two", client=client)
    assert "bad2.txt:1: invalid utf-8" in str(raised.value) and str(expected.value) in str(raised.value)


def test_a_rerun_skips_finished_files_and_clears_what_a_stopped_run_left(client, models, tmp_path):
    model = models / "segmenter.sbm"
    text = sample_path("pku_test.utf8").read_bytes()
    for name in "abc":
        (tmp_path / f"{name}.txt").write_bytes(text[: 3000 * (ord(name) - 96)])
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.txt").write_bytes(b"finished before")
    (out / ".b.txt.part-000000").write_bytes(b"a part of a stopped run")
    (out / ".b.txt.part-000001.x7").write_bytes(b"a temporary file of a stopped run")
    told = []
    done = seqbil.dask.tag_files(model, [tmp_path / "*.txt"], out, client=client, partition_bytes=1000,
                                 echo=told.append)
    assert (done["files"], done["skipped"]) == (2, 1)
    assert any("1 of 3 files have their output already" in line for line in told)
    assert sorted(os.listdir(out)) == ["a.txt", "b.txt", "c.txt"]
    assert (out / "a.txt").read_bytes() == b"finished before"
    assert read(out / "b.txt") == reference(model, tmp_path / "b.txt")
    done = seqbil.dask.tag_files(model, [tmp_path / "*.txt"], out, client=client, overwrite=True)
    assert (done["files"], done["skipped"]) == (3, 0)
    assert read(out / "a.txt") == reference(model, tmp_path / "a.txt")


def test_names_that_clash_and_outputs_over_inputs_are_refused(models, tmp_path):
    model = models / "chunker.sbm"
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.txt").write_bytes(b"w t\n\n")
    with pytest.raises(seqbil.SeqbilError, match="would both be written to"):
        seqbil.dask.tag_files(model, [tmp_path / "x/a.txt", tmp_path / "y/a.txt"], tmp_path / "out", workers=1)
    with pytest.raises(seqbil.SeqbilError, match="would replace the input"):
        seqbil.dask.tag_files(model, [tmp_path / "x/a.txt"], tmp_path / "x", workers=1)
    with pytest.raises(seqbil.SeqbilError, match="no file matches"):
        seqbil.dask.tag_files(model, [tmp_path / "nothing*.txt"], tmp_path / "out", workers=1)


def test_tag_bag_gives_the_labels_of_the_model_api(client, models):
    bag_module = pytest.importorskip("dask.bag")
    model = seqbil.load(models / "segmenter.sbm")
    lines = sample_path("pku_test.utf8").read_text(encoding="utf-8").splitlines()[:60]
    bag = bag_module.from_sequence(lines, npartitions=4)
    labels = seqbil.dask.tag_bag(bag, models / "segmenter.sbm").compute()
    assert labels == model.tag_many(lines)
    words = seqbil.dask.tag_bag(bag, models / "segmenter.sbm", segment=True).compute()
    assert words == [model.segment(line) for line in lines]


def test_the_command_line_tags_a_glob_on_a_local_cluster(models, tmp_path):
    text = sample_path("pku_test.utf8").read_bytes()
    (tmp_path / "one.txt").write_bytes(text)
    (tmp_path / "two.txt.gz").write_bytes(gzip.compress(text[:4000].rsplit(b"\n", 1)[0]))
    run = [sys.executable, "-m", "seqbil", "tag", "-m", str(models / "segmenter.sbm")]
    proc = subprocess.run(run + ["-i", "*.t*", "--output-dir", "out", "--workers", "2", "--partition-mb", "0.01"],
                          cwd=tmp_path, env=ENV, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"tagged 2 files" in proc.stderr and b"Dask dashboard" in proc.stderr
    for name in ("one.txt", "two.txt.gz"):
        assert read(tmp_path / "out" / name) == reference(models / "segmenter.sbm", tmp_path / name)
    for args, message in ((["one.txt", "--workers", "2"], b"--workers goes with --output-dir"),
                          (["one.txt", "--output-dir", "o", "-o", "x"], b"not both"),
                          (["one.txt", "--output-dir", "o", "--jobs", "2"], b"--jobs is for one input"),
                          (["one.txt", "two.txt.gz"], b"or --output-dir DIR to tag many")):
        proc = subprocess.run(run + args, cwd=tmp_path, env=ENV, capture_output=True)
        assert proc.returncode == 2 and message in proc.stderr, proc.stderr.decode()


def test_without_dask_the_calls_say_what_to_install(models, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    (tmp_path / "a.txt").write_bytes(b"w t\n\n")
    with pytest.raises(seqbil.SeqbilError, match=r'pip install "seqbil\[dask\]"'):
        seqbil.dask.tag_files(models / "chunker.sbm", [tmp_path / "a.txt"], tmp_path / "out")


def test_a_running_scheduler_by_address_or_scheduler_file(client, models, tmp_path, monkeypatch):
    text = sample_path("pku_test.utf8").read_bytes()
    (tmp_path / "a.txt").write_bytes(text)
    address = client.scheduler.address
    scheduler_file = tmp_path / "scheduler.json"
    client.write_scheduler_file(str(scheduler_file))
    for n, where in enumerate((address, str(scheduler_file))):
        told = []
        seqbil.dask.tag_files(models / "segmenter.sbm", [tmp_path / "a.txt"], tmp_path / f"out{n}", scheduler=where,
                              partition_bytes=2000, echo=told.append)
        assert read(tmp_path / f"out{n}" / "a.txt") == reference(models / "segmenter.sbm", tmp_path / "a.txt")
    monkeypatch.setattr(seqbil.dask.cluster, "CONNECT_TIMEOUT", "1s")
    with pytest.raises(seqbil.SeqbilError, match="cannot reach the Dask scheduler"):
        seqbil.dask.tag_files(models / "segmenter.sbm", [tmp_path / "a.txt"], tmp_path / "x",
                              scheduler="tcp://127.0.0.1:1")
