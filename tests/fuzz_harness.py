"""A structure-aware fuzzer of the files seqbil reads from strangers.

It rewrites what a hostile or a buggy writer would: the header fields and arrays of
seqbil's container (models, checkpoints, structures) with the checksums recomputed;
the header, dictionary, templates and weights of CRF++ text and binary models; the
header, feature chunk and string databases of CRFsuite models; and corpora at the
limits. Each mutant goes through every reader and command that takes its kind of file
(load, tag with every output layout, eval, inspect, convert, --init-model, --resume,
the Python API), in process, and each run must end either normally or with a clear
error (exit status 2, one `seqbil: error:` line): never a traceback, a signal, a hang
or an out-of-memory error (the runs are small; run_campaign caps the address space).

    python tests/fuzz_harness.py --family sbm --cases 200 --seed 1

runs a campaign and prints what went wrong, if anything; tests/test_fuzz_files.py
runs one in CI. A case is a (family, seed, number) and is reproduced by
`--only NUMBER`.
"""
import argparse
import copy
import gzip
import io
import json
import os
import resource
import signal
import struct
import subprocess
import sys
import time
import traceback
import zlib
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
FAMILIES = ("sbm", "ckpt", "sbs", "crfpp-text", "crfpp-binary", "crfsuite", "corpus")
ADDRESS_SPACE = 4 << 30  # the bound on a campaign's memory (bytes of address space)
HANG = 60.0  # seconds a case may take on a busy machine before it counts as a hang


# --- seeds: small real files of every kind ------------------------------------------------

def _sample(name):
    import seqbil
    return Path(seqbil.__file__).parent / "samples" / name


def _head_conll(path, sentences):
    out, n = [], 0
    for line in path.read_text(encoding="utf-8").splitlines(keepends=True):
        out.append(line)
        if not line.strip():
            n += 1
            if n == sentences:
                break
    return "".join(out)


def build_seeds(where):
    """{name: path} of seed files written under `where` (kept between runs)."""
    import seqbil
    where = Path(where)
    done = where / "seeds.json"
    if done.exists():
        return {k: Path(v) for k, v in json.loads(done.read_text()).items()}
    where.mkdir(parents=True, exist_ok=True)
    conll = where / "train.txt"
    conll.write_text(_head_conll(_sample("conll2000_train.txt"), 25), encoding="utf-8")
    lines = [line.strip() for line in _sample("pku_train.utf8").read_text(encoding="utf-8").splitlines()
             if line.strip()]
    sighan = where / "train.utf8"
    sighan.write_text("\n".join(lines[:25]) + "\n", encoding="utf-8")
    other = where / "other.utf8"
    other.write_text("\n".join(" ".join(s[i:i + 2] for i in range(0, len(s), 2))
                               for s in ("".join(line.split()) for line in lines[25:50])) + "\n", encoding="utf-8")
    items = where / "train.crfsuite"
    with gzip.open(_sample("conll2000_train.crfsuite.gz"), "rt", encoding="utf-8") as f:
        items.write_text(_head_conll_text(f.read(), 25), encoding="utf-8")
    seeds = {"conll": conll, "sighan": sighan, "items": items}
    quiet = {"temperature": 1.0, "progress": False}

    def model(name, *args, **kwargs):
        seeds[name] = where / f"{name}.sbm"
        seqbil.train(*args, model=str(seeds[name]), **quiet, **kwargs)
    model("linear", str(conll), config="conll2000", learner="sp", epochs=1)
    model("bilinear", str(conll), config="conll2000", learner="bol", epochs=1)
    model("segmenter", str(sighan), config="cws", learner="pa", epochs=1)
    model("zero-order", str(sighan), config="sighan2005_0order", learner="bcd", epochs=1)
    model("tasks", config="sighan2005", tasks=[f"a={sighan}", f"b={other}"], learner="sp", epochs=1)
    model("attributes", str(items), config="crfsuite", learner="sp", epochs=1)
    rng = np.random.default_rng(0)
    words = sorted({line.split()[0] for line in conll.read_text().splitlines() if line.strip()})
    vectors = where / "vectors.txt"
    vectors.write_text("".join(f"{w} " + " ".join(f"{x:.3f}" for x in rng.normal(size=3)) + "\n" for w in words))
    model("vectors", str(conll), config="conll2000", learner="sp", epochs=1, vectors=[f"emb={vectors}"],
          templates=["U00:%vec[0,0,emb]", "U01:%x[0,1]", "B"])
    unlabeled = where / "unlabeled.txt"
    unlabeled.write_text("".join(" ".join(line.split()[0] for line in s.splitlines() if line.strip()) + "\n"
                                 for s in _sample("conll2000_train.txt").read_text().split("\n\n")[:300]))
    seeds["structure"] = where / "structure.sbs"
    seqbil.learn_structure([str(unlabeled)], str(seeds["structure"]), targets=12, dim=3, aux_epochs=1, jobs=1,
                           progress=False)
    model("with-structure", str(conll), config="conll2000", learner="bol", epochs=1,
          structure=str(seeds["structure"]))
    for learner in ("sp", "bol", "bcd", "pa", "arow", "crf", "l2sgd", "rpa"):
        path = where / f"ckpt-{learner}.sbm"
        extra = {"embeddings": str(vectors)} if learner == "rpa" else {}
        seqbil.train(str(conll), config="conll2000", learner=learner, epochs=2, model=str(path), checkpoint_every=1,
                     **quiet, **extra)
        seeds[f"ckpt-{learner}"] = Path(str(path) + ".ckpt")
    from test_foreign import random_crfpp, write_binary, write_crfsuite, write_text
    crfpp = random_crfpp(np.random.default_rng(1))
    seeds["crfpp-text"], seeds["crfpp-binary"] = where / "crfpp.txt", where / "crfpp.bin"
    write_text(crfpp, seeds["crfpp-text"])
    write_binary(crfpp, seeds["crfpp-binary"])
    labels, attributes = ["B-NP", "I-NP", "O"], ["w[0]=the", "w[0]=cat", "pos[0]=NN", "bias"]
    features = [(0, a, y, float(rng.normal())) for a in range(len(attributes)) for y in range(len(labels))]
    features += [(1, y, z, float(rng.normal())) for y in range(len(labels)) for z in range(len(labels))]
    seeds["crfsuite"] = where / "model.crfsuite"
    write_crfsuite(seeds["crfsuite"], labels, attributes, features)
    done.write_text(json.dumps({k: str(v) for k, v in seeds.items()}))
    return seeds


def _head_conll_text(text, sentences):
    return "\n\n".join(text.split("\n\n")[:sentences]) + "\n\n"


# --- values at the limits -------------------------------------------------------------------

INTS = [0, 1, -1, 2, 3, 7, 255, 256, 2 ** 15, 2 ** 16, 2 ** 31 - 1, 2 ** 31, -2 ** 31, 2 ** 32, 2 ** 40,
        2 ** 62, 2 ** 63 - 1, -2 ** 63, 10 ** 7, 999, 1000, 1001, 100_000]
FLOATS = [0.0, -0.0, 1e-320, 1e-30, 1e-4, 0.5, 1e4, 1e30, 3.5e38, 1e308, float("inf"), float("-inf"),
          float("nan"), -1.0]
STRINGS = ["", "x", " ", "a b", "\t", "B", "B-NP", "O", "U00:%x[0,0]", "U:%x[-2000000000,0]", "%task", "%attr",
           "U00:%dict[words]", "U00:%x[0,1000]", "\udc80", "\x00", "中文", "utf-16", "unicode_escape", "nfkc",
           "conll", "sighan", "crfsuite", "linear", "bilinear", "float32", "float64", "sparse rows", "x" * 10_000]


def odd_value(rng, like=None):
    """A value at a limit: of the kind of `like` most of the time, else of any kind."""
    kind = rng.integers(8)
    if like is not None and rng.random() < 0.6:
        if isinstance(like, bool):
            return not like
        if isinstance(like, int):
            return int(rng.choice(INTS)) if rng.random() < 0.7 else like + int(rng.integers(-2, 3))
        if isinstance(like, float):
            return float(rng.choice(FLOATS))
        if isinstance(like, str):
            return str(rng.choice(STRINGS))
        if isinstance(like, list):
            return [] if rng.random() < 0.3 else like + like[:1] if like else [odd_value(rng)]
    if kind == 0:
        return None
    if kind == 1:
        return bool(rng.integers(2))
    if kind == 2:
        return int(rng.choice(INTS))
    if kind == 3:
        return float(rng.choice(FLOATS))
    if kind == 4:
        return str(rng.choice(STRINGS))
    if kind == 5:
        return [odd_value(rng) for _ in range(rng.integers(3))]
    if kind == 6:
        return {str(rng.choice(STRINGS[:12])): odd_value(rng)}
    nested = []  # deep, but not past the container's limit of 64
    for _ in range(int(rng.integers(10, 70))):
        nested = [nested]
    return nested


# --- the container: header fields and arrays, checksums recomputed ---------------------------

def edit_header(rng, meta):
    """Replace, delete or add one entry somewhere in the JSON header."""
    node = meta
    while True:
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            return
        key = keys[int(rng.integers(len(keys)))]
        child = node[key]
        if isinstance(child, (dict, list)) and child and rng.random() < 0.7:
            node = child
            continue
        roll = rng.random()
        if isinstance(node, dict) and roll < 0.12:
            del node[key]
        elif isinstance(node, dict) and roll < 0.2:
            node[str(rng.choice(STRINGS[:12]))] = odd_value(rng)
        else:
            node[key] = odd_value(rng, child)
        return


def edit_array(rng, arrays):
    """One change to one array: an element at a limit, a pointer nudged, a slice
    reversed, cut, emptied, doubled, retyped or reshaped, arrays swapped or dropped."""
    if not arrays:
        return
    names = sorted(arrays)
    name = names[int(rng.integers(len(names)))]
    a = np.array(arrays[name])
    op = int(rng.integers(11))
    if op <= 2 and a.size:  # an element at a limit (the commonest: it passes shape checks)
        flat = a.reshape(-1)
        i = int(rng.integers(flat.size)) if rng.random() < 0.7 else (0 if rng.random() < 0.5 else flat.size - 1)
        if a.dtype.kind == "f":
            with np.errstate(all="ignore"):
                flat[i] = rng.choice(FLOATS)
        elif a.dtype.kind in "iu":
            info = np.iinfo(a.dtype)
            choices = [v for v in INTS + [info.max, info.min, flat.size, flat.size - 1, flat.size + 1]
                       if info.min <= v <= info.max]
            flat[i] = choices[int(rng.integers(len(choices)))]
        else:
            flat[i] = rng.integers(256)
    elif op == 3 and a.size:  # a pointer or id nudged by one
        flat = a.reshape(-1)
        i = int(rng.integers(flat.size))
        if a.dtype.kind in "iu":
            info = np.iinfo(a.dtype)
            flat[i] = min(max(int(flat[i]) + (1 if rng.random() < 0.5 else -1), info.min), info.max)
        elif a.dtype.kind == "f":
            with np.errstate(all="ignore"):
                flat[i] = flat[i] * 1e30
    elif op == 4 and a.ndim and len(a) > 1:
        lo = int(rng.integers(len(a) - 1))
        a[lo:] = a[lo:][::-1].copy()
    elif op == 5 and a.ndim and len(a):
        a = a[:int(rng.integers(len(a)))]
    elif op == 6:
        a = a[:0]
    elif op == 7 and a.ndim:
        a = np.concatenate([a, a])
    elif op == 8:
        from seqbil.modelfile import _DTYPES
        kinds = sorted(_DTYPES)
        with np.errstate(all="ignore"):
            a = a.astype(kinds[int(rng.integers(len(kinds)))])
    elif op == 9:
        a = a.reshape(-1) if a.ndim != 1 else a.reshape(1, -1) if rng.random() < 0.5 else a[:0].reshape(0, 0)
    else:
        other = names[int(rng.integers(len(names)))]
        if rng.random() < 0.5 and other != name:
            arrays[name], arrays[other] = arrays[other], arrays[name]
            return
        del arrays[name]
        return
    arrays[name] = a


def mutate_container(rng, src, out):
    from seqbil.modelfile import read_model
    meta, arrays = read_model(str(src))
    meta = copy.deepcopy(meta)
    arrays = {k: np.array(v) for k, v in arrays.items()}
    for _ in range(int(rng.integers(1, 4))):
        if rng.random() < 0.45:
            edit_header(rng, meta)
        else:
            edit_array(rng, arrays)
    write_container(out, meta, arrays)
    return out


def write_container(out, meta, arrays):
    """write_model, and for a header holding lone surrogates (JSON holds them as escapes,
    which UTF-8 cannot encode) the same file with the escapes put in by hand."""
    from seqbil import modelfile
    try:
        modelfile.write_model(str(out), meta, arrays)
        return
    except UnicodeEncodeError:
        pass
    escapes = {}

    def scrub(x):
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                token = f"@@escape{len(escapes)}@@"
                escapes[token] = json.dumps(x)  # (ASCII, the surrogates escaped)
                return token
            return x
        if isinstance(x, list):
            return [scrub(v) for v in x]
        if isinstance(x, dict):
            return {scrub(k): scrub(v) for k, v in x.items()}
        return x
    modelfile.write_model(str(out), scrub(meta), arrays)
    data = Path(out).read_bytes()
    size = modelfile._PREFIX.size
    magic, version, hlen, _, reserved = modelfile._PREFIX.unpack(data[:size])
    header = data[size:size + hlen]
    payload = data[size + hlen + (-(size + hlen)) % 8:]
    for token, escaped in escapes.items():
        header = header.replace(json.dumps(token).encode(), escaped.encode())
    Path(out).write_bytes(modelfile._PREFIX.pack(magic, version, len(header), zlib.crc32(header), reserved) + header
                          + b"\0" * ((-(size + len(header))) % 8) + payload)


# --- CRF++ models -------------------------------------------------------------------------

def mutate_crfpp_text(rng, src, out):
    """Change the header numbers, labels, templates, feature lines or weights of a
    crf_learn -t model."""
    sections = Path(src).read_bytes().split(b"\n\n")  # header, labels, templates, features, weights
    for _ in range(int(rng.integers(1, 4))):
        s = int(rng.integers(len(sections)))
        lines = sections[s].split(b"\n")
        i = int(rng.integers(len(lines)))
        op = int(rng.integers(6))
        if s == 0 and op < 4:  # a header number at a limit
            name, _, _ = lines[i].partition(b" ")
            lines[i] = name + b" " + str(odd_value(rng, 1) if rng.random() < 0.8 else odd_value(rng)).encode("utf-8", "surrogateescape")
        elif s == 3 and op < 4:  # a feature's offset at a limit, or its key changed
            fid, _, key = lines[i].partition(b" ")
            if rng.random() < 0.6:
                lines[i] = str(abs(int(rng.choice(INTS)))).encode() + b" " + key
            else:
                lines[i] = fid + b" " + key[:int(rng.integers(len(key) + 1))] + rng.choice(
                    [b"", b"%x[0,0]", b"\xff", b"/", b" ", b"_B-1", b"_B+2"])
        elif s == 4 and op < 4:
            lines[i] = str(float(rng.choice(FLOATS)) if rng.random() < 0.8 else "x").encode()
        elif s == 2 and op < 4:
            lines[i] = rng.choice([b"U00:%x[-2000000000,0]", b"U00:%x[0,99999]", b"B00:%x[0,0]", b"U", b"X00",
                                   b"U00:%x[0,0", b"U00:%x[1,1]/%x[-1,1]", lines[i] * 2])
        elif s == 1 and op < 4:
            lines[i] = rng.choice([b"", b"O", b"a b", b"\xff", lines[i] + b"\xc3", b"B-NP"])
        elif op == 4 and len(lines) > 1:
            del lines[i]
        else:
            lines.insert(i, lines[i])
        sections[s] = b"\n".join(lines)
    Path(out).write_bytes(b"\n\n".join(sections))
    return out


_CRFPP_HEAD = struct.Struct("<IidIII")  # version, type, cost factor, maxid, xsize, double array bytes


def mutate_crfpp_binary(rng, src, out):
    """Change the header fields, the double array's units or the weights of a crf_learn
    binary model (it has no checksum: these are what a writer controls)."""
    data = bytearray(Path(src).read_bytes())
    version, kind, cost, maxid, xsize, dsize = _CRFPP_HEAD.unpack_from(data)
    at = _CRFPP_HEAD.size
    ysize = struct.unpack_from("<I", data, at)[0]
    tsize = struct.unpack_from("<I", data, at + 4 + ysize)[0]
    units_at = at + 8 + ysize + tsize
    alpha_at = units_at + dsize
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(6))
        if op == 0:
            fields = [version, kind, cost, maxid, xsize, dsize]
            j = int(rng.integers(6))
            value = float(rng.choice(FLOATS)) if j == 2 else int(rng.choice([v for v in INTS if 0 <= v < 2 ** 32]))
            if j == 1:
                value = int(rng.choice([v for v in INTS if -2 ** 31 <= v < 2 ** 31]))
            fields[j] = value
            _CRFPP_HEAD.pack_into(data, 0, *fields)
        elif op in (1, 2) and dsize >= 8:  # a unit's base or check
            u = int(rng.integers(dsize // 8))
            if op == 1:
                struct.pack_into("<i", data, units_at + 8 * u, int(rng.choice([v for v in INTS + [u, -u, u + 1]
                                                                              if -2 ** 31 <= v < 2 ** 31])))
            else:
                struct.pack_into("<I", data, units_at + 8 * u + 4, int(rng.choice([v for v in INTS + [u, u - 1]
                                                                                  if 0 <= v < 2 ** 32])))
        elif op == 3 and maxid:
            with np.errstate(all="ignore"):
                weight = float(np.float32(rng.choice(FLOATS)))
            struct.pack_into("<f", data, alpha_at + 4 * int(rng.integers(maxid)), weight)
        elif op == 4:  # a label or template byte
            if ysize + tsize:
                data[at + 4 + int(rng.integers(ysize + tsize))] = int(rng.choice([0, 0x20, 0xFF, ord("%"), 0x0A]))
        else:  # (the last change: the offsets above are those of the seed)
            cut = int(rng.integers(len(data)))
            data = data[:cut] if rng.random() < 0.5 else data + data[cut:cut + 64]
            break
    Path(out).write_bytes(bytes(data))
    return out


# --- CRFsuite models -------------------------------------------------------------------------

_CRFSUITE_HEAD = struct.Struct("<4sI4s9I")


def mutate_crfsuite(rng, src, out):
    """Change the header's sizes and offsets, a feature (type, source, destination,
    weight), or a string database's header, offsets or record lengths."""
    data = bytearray(Path(src).read_bytes())
    head = list(_CRFSUITE_HEAD.unpack_from(data))
    off_feat, off_labels, off_attrs = head[7], head[8], head[9]
    n_feat = struct.unpack_from("<I", data, off_feat + 8)[0]
    for _ in range(int(rng.integers(1, 4))):
        op = int(rng.integers(6))
        if op == 0:
            j = int(rng.integers(3, 12))
            head[j] = int(rng.choice([v for v in INTS + [head[j] + 1, head[j] - 1, len(data)] if 0 <= v < 2 ** 32]))
            _CRFSUITE_HEAD.pack_into(data, 0, *head)
        elif op in (1, 2) and n_feat:
            f = off_feat + 12 + 20 * int(rng.integers(n_feat))
            if op == 1:
                j = int(rng.integers(3))
                struct.pack_into("<I", data, f + 4 * j, int(rng.choice([v for v in INTS if 0 <= v < 2 ** 32])))
            else:
                struct.pack_into("<d", data, f + 12, float(rng.choice(FLOATS)))
        elif op == 3:  # a database header field: size, flag, byte order, count, backward offset
            db = off_labels if rng.random() < 0.5 else off_attrs
            j = int(rng.integers(1, 6))
            struct.pack_into("<I", data, db + 4 * j, int(rng.choice([v for v in INTS if 0 <= v < 2 ** 32])))
        elif op == 4:  # a word of a database's records or backward array
            db = off_labels if rng.random() < 0.5 else off_attrs
            span = max(1, (len(data) - db - 24 - 2048) // 4)
            at = db + 24 + 2048 + 4 * int(rng.integers(span))
            if at + 4 <= len(data):
                struct.pack_into("<I", data, at, int(rng.choice([v for v in INTS if 0 <= v < 2 ** 32])))
        else:
            data = data[:int(rng.integers(len(data)))]
            break
    Path(out).write_bytes(bytes(data))
    return out


# --- corpora ------------------------------------------------------------------------------

TOKENS = ["", " ", "\t", "\u3000", "\x00", "\ufeff", "\r", "x" * 100_000, "B-", "I-X", "E-", "S", "-DOCSTART-",
          "中", "\U0001F600", "\udc80", "%x[0,0]", "a b", "\x85", "\u2028"]


def mutate_corpus(rng, src, out):
    """Change a corpus as text: tokens at the limits, fields added or dropped, lines
    repeated or dropped, sentences joined, bytes that are not UTF-8."""
    lines = Path(src).read_bytes().split(b"\n")
    for _ in range(int(rng.integers(1, 5))):
        i = int(rng.integers(len(lines)))
        op = int(rng.integers(8))
        fields = lines[i].split(b" ") if b" " in lines[i] else lines[i].split(b"\t")
        if op <= 1:
            token = str(rng.choice(TOKENS)).encode("utf-8", "surrogateescape")
            fields[int(rng.integers(len(fields)))] = token
            lines[i] = b" ".join(fields)
        elif op == 2:
            lines[i] = b" ".join(fields + fields[:int(rng.integers(1, 3))])
        elif op == 3 and len(fields) > 1:
            lines[i] = b" ".join(fields[:-1])
        elif op == 4:
            lines.insert(i, lines[i])
        elif op == 5:
            lines = [line for line in lines if line.strip()] if rng.random() < 0.3 else lines[:i] + lines[i + 1:]
        elif op == 6:
            lines[i] = lines[i] + rng.choice([b"\xff", b"\xc3", b"\r", b"\x00", b" ", b"\t"])
        else:
            lines[i] = b" ".join([b"x"] * int(rng.choice([1, 2, 100, 1001, 5000])))
    data = b"\n".join(lines)
    if rng.random() < 0.1:  # gzip, whole or cut short (corpora are read compressed as they are)
        data = bytearray(gzip.compress(data))
        if rng.random() < 0.3:  # its header: method, flags, extra fields
            data[int(rng.integers(2, 10))] = int(rng.integers(256))
        data = bytes(data[:int(rng.integers(len(data)))] if rng.random() < 0.5 else data)
    Path(out).write_bytes(data)
    return out


# --- running the commands in process ------------------------------------------------------

class Outcome:
    """How one command ended: 'ok', 'refused' (a clear error) or 'bad' (what must not be)."""

    def __init__(self, kind, what=""):
        self.kind, self.what = kind, what


def run_cli(args, stdin=b""):
    """Run `seqbil ARGS` in this process as the console script would: the exit status, the
    error output, and any exception that escaped."""
    from click.testing import CliRunner
    from seqbil.cli import main
    result = CliRunner().invoke(main, args, input=stdin, catch_exceptions=True)
    err = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        text = "".join(traceback.format_exception(result.exception))[-1500:]
        return Outcome("bad", f"{type(result.exception).__name__}: {result.exception}\n{text}")
    return judge(result.exit_code, err)


def judge(status, err):
    if "Traceback" in err:
        return Outcome("bad", f"exit {status}, a traceback: {err[-1500:]}")
    if "out of memory" in err or "MemoryError" in err:  # small inputs: memory must follow from their size
        return Outcome("bad", f"exit {status}, out of memory: {err[-400:]}")
    if status == 0:
        return Outcome("ok")
    lines = [line for line in err.splitlines() if line.startswith("seqbil: error:")]
    if status == 2 and lines:
        return Outcome("refused", lines[-1][:300])
    return Outcome("bad", f"exit {status} without a clear error: {err[-600:]}")


def run_api(call):
    """Run a Python API call: SeqbilError is the documented error, anything else a bug."""
    from seqbil.errors import SeqbilError
    try:
        with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
            call()
    except SeqbilError as exc:
        return Outcome("refused", str(exc)[:300])
    except MemoryError:
        return Outcome("bad", "MemoryError")
    except Exception as exc:  # noqa: BLE001 - what the fuzzer looks for
        return Outcome("bad", "".join(traceback.format_exception(exc))[-1500:])
    return Outcome("ok")


INPUTS = {"conll": b"Confidence NN\nin IN\nthe DT\npound NN\n\nHe PRP\n\n",
          "sighan": "扬帆远东做与中国合作的先行\n\n希望\n".encode("utf-8"),
          "crfsuite": b"w[0]=the\tpos[0]=DT\nw[0]=cat\tpos[0]=NN\n\n"}
LAYOUTS = ([], ["--nbest", "2"], ["--confidence"], ["--marginals"], ["--all-marginals"], ["--nbest", "2", "--marginals"])


def model_commands(path, seeds, work, kind, check_output=False):
    """The commands and API calls that read a seqbil model: [(name, thunk)]."""
    fmt = {"segmenter": "sighan", "zero-order": "sighan", "tasks": "sighan", "attributes": "crfsuite"}.get(kind, "conll")
    task = ["--task", "a"] if kind == "tasks" else []
    data = {"conll": seeds["conll"], "sighan": seeds["sighan"], "crfsuite": seeds["items"]}[fmt]
    gold = work / "gold.txt"
    if not gold.exists() or gold.stat().st_size == 0:
        gold.write_bytes(Path(data).read_bytes())
    out = work / "out.sbm"
    runs = [(f"tag {' '.join(layout)}".strip(), lambda layout=layout: run_cli(["tag", "-m", str(path), *task,
                                                                                 *layout], INPUTS[fmt]))
            for layout in LAYOUTS]
    runs += [("eval", lambda: run_cli(["eval", "-m", str(path), "--data", str(data), *task])),
             ("inspect", lambda: run_cli(["inspect", str(path)])),
             ("inspect --json", lambda: run_cli(["inspect", "--json", str(path)])),
             ("convert", lambda: run_cli(["convert", str(path), str(out)])),
             ("convert float64 prune", lambda: run_cli(["convert", str(path), str(out), "--precision", "float64",
                                                        "--prune", "0.01"])),
             ("train --init-model", lambda: run_cli(["train", "--init-model", str(path), "--train", str(data),
                                                     "--epochs", "1", "--learner", "sp", "-q", "--model",
                                                     str(out), *task])),
             ("api", lambda: run_api(lambda: _api(path, fmt, kind)))]
    return runs


def _api(path, fmt, kind):
    import seqbil
    model = seqbil.load(str(path))
    if kind == "tasks":
        model = model.for_task(model.tasks[0])
    if fmt == "sighan":
        model.segment("扬帆远东做与中国合作")
        model.marginals(list("扬帆远东"))
    elif fmt == "conll":
        model.tag([["Confidence", "NN"], ["in", "IN"]])
        model.marginals([["Confidence", "NN"], ["in", "IN"]])
    else:
        model.tag([{"w[0]=the": 1.0}, {"pos[0]=NN": 1.0}])


def case_runs(family, mutant, seeds, work, seed_name):
    """The runs of one mutant of a family."""
    if family == "sbm":
        return model_commands(mutant, seeds, work, seed_name)
    if family == "ckpt":
        return [("train --resume", lambda: run_cli(["train", "--resume", str(mutant), "--epochs", "3", "-q",
                                                    "--model", str(work / "resumed.sbm")]))]
    if family == "sbs":
        return [("train --structure", lambda: run_cli(["train", "--train", str(seeds["conll"]), "--learner", "sp",
                                                       "--epochs", "1", "-q", "--structure", str(mutant),
                                                       "--model", str(work / "s.sbm")])),
                ("inspect", lambda: run_cli(["inspect", str(mutant)])),
                ("load as a model", lambda: run_cli(["tag", "-m", str(mutant)], INPUTS["conll"]))]
    if family in ("crfpp-text", "crfpp-binary", "crfsuite"):
        source = "crfsuite" if family == "crfsuite" else "crfpp"
        converted = work / "converted.sbm"

        def convert_and_use():
            if converted.exists():
                converted.unlink()
            first = run_cli(["convert", "--from", source, str(mutant), str(converted)])
            if first.kind != "ok":
                return first
            # what a conversion writes loads, and every command reads it
            loaded = run_api(lambda: __import__("seqbil").load(str(converted)))
            if loaded.kind != "ok":
                return Outcome("bad", f"converted with exit 0 into a model that does not load: {loaded.what}")
            for name, run in model_commands(converted, seeds, work, "attributes" if source == "crfsuite" else
                                            "crfpp"):
                if name in ("eval", "train --init-model"):
                    continue
                got = run()
                if got.kind == "bad":
                    return Outcome("bad", f"converted with exit 0, then `{name}`: {got.what}")
            return first
        return [("convert --from " + source, convert_and_use),
                ("tag a foreign model", lambda: run_cli(["tag", "-m", str(mutant)], INPUTS["conll"]))]
    if family == "corpus":
        fmt = seed_name
        flag = {"conll": [], "sighan": ["--format", "sighan"], "crfsuite": ["--format", "crfsuite"]}[fmt]
        model = {"conll": seeds["linear"], "sighan": seeds["segmenter"], "crfsuite": seeds["attributes"]}[fmt]
        return [("train", lambda: run_cli(["train", "--train", str(mutant), *flag, "--learner", "sp", "--epochs",
                                           "1", "-q", "--model", str(work / "c.sbm")] +
                                          (["--template", str(HERE.parent / "configs" / "crfpp_chunking.template")]
                                           if fmt == "conll" else []))),
                ("tag", lambda: run_cli(["tag", "-m", str(model), str(mutant)])),
                ("tag --marginals", lambda: run_cli(["tag", "-m", str(model), "--marginals", str(mutant)])),
                ("eval", lambda: run_cli(["eval", "-m", str(model), "--data", str(mutant)]))]
    raise ValueError(family)


SEED_NAMES = {"sbm": ["linear", "bilinear", "segmenter", "zero-order", "tasks", "attributes", "vectors",
                      "with-structure"],
              "ckpt": ["ckpt-sp", "ckpt-bol", "ckpt-bcd", "ckpt-pa", "ckpt-arow", "ckpt-crf", "ckpt-l2sgd",
                       "ckpt-rpa"],
              "sbs": ["structure"], "crfpp-text": ["crfpp-text"], "crfpp-binary": ["crfpp-binary"],
              "crfsuite": ["crfsuite"], "corpus": ["conll", "sighan", "crfsuite"]}
MUTATORS = {"sbm": mutate_container, "ckpt": mutate_container, "sbs": mutate_container,
            "crfpp-text": mutate_crfpp_text, "crfpp-binary": mutate_crfpp_binary, "crfsuite": mutate_crfsuite,
            "corpus": mutate_corpus}


def corpus_seed(seeds, name):
    return {"conll": seeds["conll"], "sighan": seeds["sighan"], "crfsuite": seeds["items"]}[name]


def one_case(family, seed, number, seeds, work):
    """[(run name, Outcome)] of case `number` of a campaign."""
    rng = np.random.default_rng([seed, number, FAMILIES.index(family)])
    names = SEED_NAMES[family]
    seed_name = names[number % len(names)]
    src = corpus_seed(seeds, seed_name) if family == "corpus" else seeds[seed_name]
    mutant = work / f"mutant{Path(src).suffix}"
    MUTATORS[family](rng, src, mutant)
    return seed_name, [(name, run()) for name, run in case_runs(family, mutant, seeds, work, seed_name)]


# --- a campaign: cases in a child process under limits, watched ----------------------------

def _child(args):
    """Run cases [start, stop) of a campaign, writing a line per case as it starts and
    as it ends (the parent reads them to tell which case a signal or a hang hit)."""
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))
    seeds = build_seeds(args.seeds)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    with open(args.log, "a", buffering=1) as log:
        for number in range(args.start, args.stop):
            log.write(json.dumps({"case": number, "started": time.time()}) + "\n")
            seed_name, outcomes = one_case(args.family, args.seed, number, seeds, work)
            log.write(json.dumps({"case": number, "seed_file": seed_name,
                                  "runs": [[name, o.kind, o.what] for name, o in outcomes]}) + "\n")


def run_campaign(family, cases, seed, where, hang=HANG):
    """Run `cases` cases of one family in child processes (a case that kills or hangs its
    child is recorded, and the next child goes on after it): a summary dict whose
    'failures' list every case that did not end normally or in a clear error."""
    where = Path(where)
    where.mkdir(parents=True, exist_ok=True)
    log = where / f"{family}-{seed}.jsonl"
    if log.exists():
        log.unlink()
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    start, failures, started = 0, [], time.time()
    build = subprocess.run([sys.executable, "-P", __file__, "--seeds-only", "--seeds", str(where / "seeds")],
                           env=env, capture_output=True, text=True)
    if build.returncode:
        raise RuntimeError(f"building the seed files failed: {build.stderr[-2000:]}")
    while start < cases:
        child = subprocess.Popen([sys.executable, "-P", __file__, "--child", "--family", family, "--seed", str(seed),
                                  "--start", str(start), "--stop", str(cases), "--seeds", str(where / "seeds"),
                                  "--work", str(where / f"work-{family}-{seed}"), "--log", str(log)],
                                 env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        current, since = start, time.time()
        while child.poll() is None:
            time.sleep(0.2)
            last = _last_started(log)
            if last is not None and last != current:
                current, since = last, time.time()
            if time.time() - since > hang:
                child.kill()
                child.wait()
                failures.append({"case": current, "what": f"a hang: still running after {hang:.0f} s"})
                break
        else:
            if child.returncode != 0:
                failures.append({"case": _last_started(log) or start,
                                 "what": f"the process ended with status {child.returncode} "
                                         f"({_signal_name(child.returncode)}): {child.stderr.read()[-1500:].decode(errors='replace')}"})
        child.stderr.close()
        start = (_last_started(log) if _last_started(log) is not None else start) + 1
    records = [json.loads(line) for line in log.read_text().splitlines() if "runs" in line]
    kinds = {}
    for record in records:
        for name, kind, what in record["runs"]:
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "bad":
                failures.append({"case": record["case"], "seed_file": record["seed_file"], "run": name,
                                 "what": what})
    return {"family": family, "seed": seed, "cases": cases, "ended": len(records), "runs": kinds,
            "failures": failures, "seconds": round(time.time() - started, 1)}


def _last_started(log):
    if not log.exists():
        return None
    last = None
    with open(log) as f:
        for line in f:
            if '"started"' in line:
                try:
                    last = json.loads(line)["case"]
                except ValueError:
                    pass
    return last


def _signal_name(status):
    if status < 0:
        try:
            return signal.Signals(-status).name
        except ValueError:
            return "a signal"
    return "an exit"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", choices=FAMILIES)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--where", default="fuzz-run")
    parser.add_argument("--only", type=int, help="run this case alone, in this process, and say what each run gave")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--seeds-only", action="store_true", help=argparse.SUPPRESS)
    for name in ("--start", "--stop"):
        parser.add_argument(name, type=int, help=argparse.SUPPRESS)
    for name in ("--seeds", "--work", "--log"):
        parser.add_argument(name, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.seeds_only:
        build_seeds(args.seeds)
        return 0
    if args.child:
        _child(args)
        return 0
    families = [args.family] if args.family else list(FAMILIES)
    if args.only is not None:
        seeds = build_seeds(Path(args.where) / "seeds")
        work = Path(args.where) / "work-only"
        work.mkdir(parents=True, exist_ok=True)
        for family in families:
            seed_name, outcomes = one_case(family, args.seed, args.only, seeds, work)
            for name, o in outcomes:
                print(f"{family} case {args.only} ({seed_name}) {name}: {o.kind} {o.what}")
        return 0
    bad = 0
    for family in families:
        summary = run_campaign(family, args.cases, args.seed, args.where)
        print(json.dumps({k: v for k, v in summary.items() if k != "failures"}))
        for failure in summary["failures"]:
            print(json.dumps(failure)[:2000])
        bad += len(summary["failures"])
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
