"""Fuzzing: random bytes and mutated real files go to every reader, to the model and
checkpoint loaders and through the CLI. Only the documented SeqbilError (exit status 2
at the CLI) may come out; anything else is a bug.

The number of cases per target is SEQBIL_FUZZ_CASES (default 150); the cases are
seeded, so a failure names the case that reproduces it.
"""
import copy
import json
import os
import struct
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

from seqbil.cli import main
from seqbil.formats import ConllFormat, SighanFormat
from seqbil.errors import SeqbilError
from seqbil.model import Model
from seqbil.params import load_config
from seqbil.features.patterns import read_template_file
from seqbil.features.templates import TemplateSet
from seqbil.samples import sample_path

CASES = int(os.environ.get("SEQBIL_FUZZ_CASES", 150))
SPECIAL = [b"\0", b"\n", b"\r\n", b"\r", b"\t", b" ", b"\xff", b"\xef\xbb\xbf", b"\x1f\x8b", b"\xe3\x80\x80",
           b"%x[", b"]", b"=", b"[", b"\"", b"\x85", b"\xc0"]


TEXT = list(" \t\n\r\u3000\u00a0\u2028ab1-_%x[],=\"'#BIESO中国的\U0001F600")


def mutate(rng, data):
    """One to four random edits: bit flips, truncation, insertion, deletion, duplication,
    special bytes, text, or a random-bytes file."""
    data = bytearray(data)
    for _ in range(rng.integers(1, 5)):
        op, n = rng.integers(8), len(data)
        at = int(rng.integers(n + 1))
        if op == 0 and n:
            data[min(at, n - 1)] ^= 1 << int(rng.integers(8))
        elif op == 1:
            del data[at:]
        elif op == 2:
            data[at:at] = rng.bytes(int(rng.integers(1, 16)))
        elif op == 3:
            del data[at:at + int(rng.integers(1, 64))]
        elif op == 4:
            data[at:at] = data[at:at + int(rng.integers(1, 256))]
        elif op == 5:
            data[at:at] = SPECIAL[rng.integers(len(SPECIAL))]
        elif op == 6:
            data = bytearray(rng.bytes(int(rng.integers(0, 512))))
        else:  # valid UTF-8 text: reaches the parsers behind the decoder
            data[at:at] = "".join(rng.choice(TEXT, int(rng.integers(1, 12)))).encode("utf-8")
    return bytes(data)


def head(path, lines):
    with open(path, "rb") as f:
        return b"".join(f.readline() for _ in range(lines))


def only_seqbil_errors(target, seed_data, tmp_path, cases=CASES, seed=0):
    """Run target(path) on `cases` mutations of seed_data; return how many were rejected."""
    rng, rejected = np.random.default_rng(seed), 0
    path = tmp_path / "fuzzed"
    for case in range(cases):
        data = mutate(rng, seed_data)
        path.write_bytes(data)
        try:
            target(str(path))
        except SeqbilError:
            rejected += 1
        except Exception as exc:  # noqa: BLE001 - this is what the test looks for
            pytest.fail(f"case {case} (seed {seed}): {type(exc).__name__}: {exc}\ninput: {data[:300]!r}")
    return rejected


READERS = {
    "conll labeled": lambda p: list(ConllFormat().read(p)),
    "conll for tagging": lambda p: list(ConllFormat(3, -1).read(p, labeled=False, keep_empty=True)),
    "sighan labeled": lambda p: list(SighanFormat().read(p)),
    "sighan raw text": lambda p: list(SighanFormat().read(p, labeled=False, keep_empty=True)),
    "toml config": load_config,
    "template file": lambda p: TemplateSet(read_template_file(p)),
}
SEEDS = {"conll labeled": ("conll2000_train.txt", 40), "conll for tagging": ("conll2000_test.txt", 40),
         "sighan labeled": ("pku_train.utf8", 10), "sighan raw text": ("pku_test.utf8", 10)}


@pytest.mark.parametrize("name", list(READERS))
def test_readers_reject_or_read_mutated_files(name, tmp_path):
    if name in SEEDS:
        seed_data = head(sample_path(SEEDS[name][0]), SEEDS[name][1])
    elif name == "toml config":
        seed_data = open(os.path.join(os.path.dirname(__file__), "..", "configs", "conll2000.toml"), "rb").read()
    else:
        seed_data = b"# chunking\nU00:%x[-1,0]\nU01:%x[0,0]/%x[0,1]\n\nB10:%x[0,1]\nB\n"
    rejected = only_seqbil_errors(READERS[name], seed_data, tmp_path)
    assert 0 < rejected < CASES  # the mutations reach both outcomes


@pytest.fixture(scope="module")
def small_models(tmp_path_factory):
    """A linear and a bilinear chunker and a bol checkpoint, trained on a few sentences."""
    tmp = tmp_path_factory.mktemp("fuzz")
    (tmp / "train.txt").write_bytes(head(sample_path("conll2000_train.txt"), 120))
    paths = {}
    for learner in ("sp", "bol"):
        paths[learner] = tmp / f"{learner}.sbm"
        result = CliRunner().invoke(main, ["train", "-q", "--train", str(tmp / "train.txt"), "--epochs", "2",
                                           "--learner", learner, "--model", str(paths[learner]),
                                           "--checkpoint-every", "1"])
        assert result.exit_code == 0, result.output
    paths["ckpt"] = tmp / "bol.sbm.ckpt"
    return paths


def resume(path):
    """Continue a training run from a checkpoint, as `seqbil train --resume` does."""
    run_cli(["train", "-q", "--resume", path, "--model", path + ".sbm"])


def load_and_tag(path):
    """Load a model and tag a few sentences with it, as `seqbil tag` does."""
    model = Model.load(path)
    sentences = list(ConllFormat(3, -1).read(sample_path("conll2000_test.txt"), labeled=False))[:3] \
        if model.format.name == "conll" else list(SighanFormat().read(sample_path("pku_test.utf8")))[:3]
    for s, tags in zip(sentences, model.predict(sentences)):
        model.format.write(s, tags)


@pytest.mark.parametrize("kind", ["sp", "bol", "ckpt"])
def test_model_loader_rejects_mutated_files(kind, small_models, tmp_path):
    target = resume if kind == "ckpt" else load_and_tag
    rejected = only_seqbil_errors(target, small_models[kind].read_bytes(), tmp_path)
    assert rejected >= CASES * 0.9  # the checksums catch nearly every byte change


def rewrite_header(data, edit):
    """The model file `data` with its JSON header changed by edit(header) and the
    header checksum and length recomputed, so the loader's own checks are reached."""
    prefix = struct.Struct("<8sIIII")
    magic, version, hlen, _, reserved = prefix.unpack_from(data)
    header = json.loads(data[prefix.size:prefix.size + hlen])
    payload = data[prefix.size + hlen + (-(prefix.size + hlen)) % 8:]
    edit(header)
    hbytes = json.dumps(header).encode("utf-8")
    return (prefix.pack(magic, version, len(hbytes), zlib.crc32(hbytes), reserved)
            + hbytes + b"\0" * ((-(prefix.size + len(hbytes))) % 8) + payload)


ODD_VALUES = [None, True, 0, 1, -1, 3, 2 ** 40, -2 ** 63, 1.5, float("nan"), "", "x", "conll", "sighan", "nfkc",
              "<f8", "<i4", "U00:%x[0,9]", "B", [], [0], [2, 3], ["B-NP", "B-NP"], [""], ["a b"], {}, {"x": 1}]


def random_edit(rng):
    def edit(header):
        node = header
        while True:  # walk down to a random container, then change one of its entries
            keys = list(node) if isinstance(node, dict) else list(range(len(node)))
            if not keys:
                return
            key = keys[rng.integers(len(keys))]
            child = node[key]
            if isinstance(child, (dict, list)) and child and rng.random() < 0.7:
                node = child
                continue
            if isinstance(node, dict) and rng.random() < 0.15:
                del node[key]
            else:
                node[key] = copy.deepcopy(ODD_VALUES[rng.integers(len(ODD_VALUES))])
            return
    return edit


@pytest.mark.parametrize("kind", ["sp", "bol", "ckpt"])
def test_model_loader_checks_every_header_field(kind, small_models, tmp_path):
    rng, data, path = np.random.default_rng(7), small_models[kind].read_bytes(), tmp_path / "m.sbm"
    target = resume if kind == "ckpt" else load_and_tag
    rejected = 0
    for case in range(CASES):
        edits = [random_edit(rng) for _ in range(rng.integers(1, 3))]
        path.write_bytes(rewrite_header(data, lambda h: [e(h) for e in edits]))
        try:
            target(str(path))
        except SeqbilError:
            rejected += 1
        except Exception as exc:  # noqa: BLE001
            pytest.fail(f"case {case}: {type(exc).__name__}: {exc}\nheader: {path.read_bytes()[24:600]!r}")
    assert rejected > 0


def run_cli(args):
    result = CliRunner().invoke(main, args)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"{args}: {type(result.exception).__name__}: {result.exception}")
    assert result.exit_code in (0, 2), (args, result.output)
    if result.exit_code == 2:
        assert "seqbil: error:" in result.output and "Traceback" not in result.output
        raise SeqbilError(result.output)


def test_cli_tag_and_eval_on_mutated_input(small_models, tmp_path):
    model = str(small_models["bol"])
    seed_data = head(sample_path("conll2000_test.txt"), 60)
    gold = tmp_path / "gold.txt"
    gold.write_bytes(seed_data)
    n = max(CASES // 3, 10)
    for seed, args in enumerate((["tag", "--model", model], ["eval", "--model", model, "--data"],
                                 ["eval", "--gold", str(gold), "--pred"]), 1):
        rejected = only_seqbil_errors(lambda p: run_cli(args + [p]), seed_data, tmp_path, n, seed)
        assert 0 < rejected < n


def test_cli_train_on_mutated_corpora(tmp_path):
    seed_data = head(sample_path("conll2000_train.txt"), 60)
    n = max(CASES // 5, 10)
    model = str(tmp_path / "m.sbm")
    for learner, seed in (("sp", 4), ("bol", 5), ("bcd", 6)):
        rejected = only_seqbil_errors(lambda p: run_cli(["train", "-q", "--train", p, "--dev", p, "--epochs", "1",
                                                         "--learner", learner, "--model", model]),
                                      seed_data, tmp_path, n, seed)
        assert 0 < rejected < n
