"""The .sbm model file: versioned, self-describing, checksummed, no pickle.

Layout (little-endian):
    8 bytes   magic  b"\\x89SBM\\r\\n\\x1a\\n"
    uint32    format version
    uint32    header length H
    uint32    CRC-32 of the header
    uint32    reserved (0)
    H bytes   header: UTF-8 JSON {"meta": {...}, "arrays": [...], "payload_bytes", "payload_crc32"}
    padding   to a multiple of 8
    payload   the arrays, each at an 8-aligned offset, raw little-endian data

Every size in the header is checked against the file before anything is allocated,
so a damaged or hostile file gives a ModelFileError and never a crash. Reading maps
the file (mmap) and the arrays are views of the mapping: nothing is parsed or copied,
and pages are read as they are used. Version 2 (sparse weights, see storage.py) is
written; version 1 (dense weights) is read.
"""
import json
import mmap
import os
import struct
import tempfile
import threading
import zlib

import numpy as np

from .errors import ModelFileError

MAGIC = b"\x89SBM\r\n\x1a\n"
VERSION = 2
_PREFIX = struct.Struct("<8sIIII")
_DTYPES = {"<f8", "<f4", "<i4", "<i8", "|u1"}
_MAX_HEADER = 1 << 26
# the deepest nesting of lists and dicts a header may have: seqbil's own go 7 deep (a
# training record's choice, its rows, their curves); one nested 200,000 deep would
# exhaust the recursion of whatever reads it next
MAX_DEPTH = 64


def _pad(n):
    return (-n) % 8


def write_model(path, meta, arrays):
    """Write atomically: a temporary file in the same directory, fsync, then rename."""
    specs, offset = [], 0
    arrays = {name: np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<") if a.dtype.byteorder == ">" else a.dtype)
              for name, a in arrays.items()}
    crc = 0
    for name, a in arrays.items():
        if a.dtype.str not in _DTYPES:
            raise ValueError(f"array {name}: unsupported dtype {a.dtype.str}")
        specs.append({"name": name, "dtype": a.dtype.str, "shape": list(a.shape), "offset": offset,
                      "nbytes": a.nbytes})
        offset += a.nbytes + _pad(a.nbytes)
    for a in arrays.values():
        crc = zlib.crc32(b"\0" * _pad(a.nbytes), zlib.crc32(a.data.cast("B") if a.nbytes else b"", crc))
    header = json.dumps({"meta": meta, "arrays": specs, "payload_bytes": offset, "payload_crc32": crc},
                        ensure_ascii=False)
    hbytes = header.encode("utf-8")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp", dir=directory)
    try:
        os.chmod(tmp, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as f:
            f.write(_PREFIX.pack(MAGIC, VERSION, len(hbytes), zlib.crc32(hbytes), 0))
            f.write(hbytes + b"\0" * _pad(_PREFIX.size + len(hbytes)))
            for a in arrays.values():
                if a.nbytes:
                    f.write(a.data.cast("B"))
                f.write(b"\0" * _pad(a.nbytes))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    try:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def read_model(path, verify=True, background=False):
    """(meta, arrays) of a model file; ModelFileError on any problem. The arrays are
    read-only views of a memory map of the file. verify=False skips the checksum of
    the payload (the header's is always checked): start-up then does not grow with
    the size of the file. background=True: (meta, arrays, wait), the payload's checksum
    computed in a thread while the caller checks what the arrays mean (zlib releases
    the GIL), and wait() raising ModelFileError if it does not match (None without
    verify); the caller calls it before it uses the arrays or says they are wrong."""
    try:
        if os.path.isdir(path):
            raise ModelFileError(f"{path}: is a directory, not a model file")
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            prefix = f.read(_PREFIX.size)
            if len(prefix) < _PREFIX.size or not prefix.startswith(MAGIC):
                raise ModelFileError(f"{path}: not a seqbil model file ({_guess(prefix)})")
            _, version, hlen, hcrc, _ = _PREFIX.unpack(prefix)
            if version > VERSION:
                raise ModelFileError(f"{path}: model format version {version} is newer than this seqbil "
                                     f"reads (version {VERSION}); upgrade seqbil")
            if version < 1 or hlen > min(_MAX_HEADER, size - _PREFIX.size):
                raise ModelFileError(f"{path}: truncated or corrupt header")
            hbytes = f.read(hlen)
            if zlib.crc32(hbytes) != hcrc:
                raise ModelFileError(f"{path}: header checksum mismatch (the file is corrupt)")
            try:
                header = json.loads(hbytes.decode("utf-8"))
                specs, total, crc, meta = header["arrays"], header["payload_bytes"], header["payload_crc32"], header["meta"]
                if not (_is_int(total) and _is_int(crc) and isinstance(meta, dict) and isinstance(specs, list)):
                    raise TypeError
                if _depth(header) > MAX_DEPTH:
                    raise ModelFileError(f"{path}: corrupt header (nested more than {MAX_DEPTH} deep)")
                if b"\\u" in hbytes and not _is_text(header):
                    raise ModelFileError(f"{path}: corrupt header (a string that is not text: a lone surrogate)")
            except (ValueError, KeyError, TypeError, RecursionError):
                raise ModelFileError(f"{path}: corrupt header") from None
            start = _PREFIX.size + hlen + _pad(_PREFIX.size + hlen)
            if total != size - start:
                raise ModelFileError(f"{path}: file is {size} bytes, the header says {start + total} "
                                     f"(truncated or corrupt)")
            _check_specs(path, specs, total)
            # an empty payload cannot be mapped; mmap is also refused by some file systems
            try:
                payload = memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))[start:] if total else b""
            except (OSError, ValueError):
                f.seek(start)
                payload = f.read(total)
    except OSError as exc:
        raise ModelFileError(f"{path}: cannot read: {exc.strerror}") from None
    mismatch = ModelFileError(f"{path}: payload checksum mismatch (the file is corrupt)")
    if len(payload) != total:
        raise mismatch
    wait = None
    if verify and background:
        wait = _checked_beside(payload, crc, mismatch)
    elif verify and zlib.crc32(payload) != crc:
        raise mismatch
    arrays = {s["name"]: np.frombuffer(payload, dtype=s["dtype"], count=s["nbytes"] // np.dtype(s["dtype"]).itemsize,
                                       offset=s["offset"]).reshape(s["shape"]) for s in specs}
    return (meta, arrays, wait) if background else (meta, arrays)


def _checked_beside(payload, crc, mismatch):
    """Start the payload's CRC-32 in a thread; the function returned waits for it and
    raises `mismatch` unless it is crc."""
    found = []
    thread = threading.Thread(target=lambda: found.append(zlib.crc32(payload)), daemon=True)
    thread.start()

    def wait():
        thread.join()
        if found != [crc]:
            raise mismatch
    return wait


def file_version(path):
    """The format version written in a model file's prefix."""
    with open(path, "rb") as f:
        prefix = f.read(_PREFIX.size)
    if len(prefix) < _PREFIX.size or not prefix.startswith(MAGIC):
        raise ModelFileError(f"{path}: not a seqbil model file ({_guess(prefix)})")
    return _PREFIX.unpack(prefix)[1]


def _depth(value):
    """How deep lists and dicts nest in a parsed header (without recursion)."""
    if not isinstance(value, (dict, list)):
        return 0
    deepest, stack = 1, [(value, 1)]
    while stack:  # (containers only: a header's strings and numbers are most of its values)
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        stack.extend((v, depth + 1) for v in (value.values() if isinstance(value, dict) else value)
                     if isinstance(v, (dict, list)))
    return deepest


def _is_text(header):
    """Whether every string of a parsed header is Unicode text: JSON's escapes can spell
    a lone surrogate, which no encoding writes (every later print or save would fail)."""
    try:
        json.dumps(header, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _check_specs(path, specs, total):
    """Every array lies inside the payload with a size that matches its dtype and shape."""
    names = set()
    try:
        for s in specs:
            name, dtype, shape, offset, nbytes = s["name"], s["dtype"], s["shape"], s["offset"], s["nbytes"]
            if not isinstance(name, str) or name in names or dtype not in _DTYPES or not isinstance(shape, list):
                raise ValueError
            if not all(_is_int(d) and 0 <= d <= total for d in shape + [offset, nbytes]):
                raise ValueError
            count = 1
            for d in shape:
                count *= d  # Python ints: no overflow
            if count * np.dtype(dtype).itemsize != nbytes or offset % 8 or offset + nbytes > total:
                raise ValueError
            names.add(name)
    except (ValueError, KeyError, TypeError):
        raise ModelFileError(f"{path}: corrupt array table") from None


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _guess(prefix):
    if not prefix:
        return "empty file"
    if prefix[:1] == b"\x80" or prefix[:2] in (b"(d", b"(l", b"}q", b"]q"):
        return "it looks like a Python pickle, which seqbil never loads"
    if prefix.startswith(b"PK"):
        return "it looks like a zip archive"
    if prefix.startswith(MAGIC[:4]):
        return "truncated"
    tool = other_tool(prefix)
    if tool:
        name = {"crfsuite": "CRFsuite", "crfpp": "CRF++", "wapiti": "Wapiti"}[tool]
        return f"it is a {name} model: convert it once with `seqbil convert --from {tool} MODEL OUT.sbm`"
    return "unknown format"


# Other tools' model files, known by their first bytes: the container says how to bring
# one over when it is given one, and foreign/ reads them
_CRFPP_HEAD = struct.Struct("<IidII")  # version, type, cost factor, maxid, xsize


def crfpp_form(head):
    """Whether the first bytes of a file are those of a CRF++ model: "binary" (crf_learn's
    model), "text" (crf_learn -t), or None."""
    if head.startswith(b"version: "):
        return "text"
    if len(head) >= _CRFPP_HEAD.size:
        version, kind, cost, maxid, xsize = _CRFPP_HEAD.unpack_from(head)
        if version // 100 == 1 and kind == 0 and 0 < cost < 1e300 and maxid > 0 and 0 < xsize < 1 << 16:
            return "binary"
    return None


def is_crfsuite(head):
    """Whether the first bytes of a file are those of a CRFsuite model (chunk lCRF, type FOMC)."""
    return head[:4] == b"lCRF" and head[8:12] == b"FOMC"


def other_tool(head):
    """Which tool's model file begins with `head` ("crfpp", "crfsuite", "wapiti"), or None."""
    if head.startswith(b"#mdl#"):  # (Wapiti's model.c: mdl_save)
        return "wapiti"
    return "crfsuite" if is_crfsuite(head) else "crfpp" if crfpp_form(head) else None
