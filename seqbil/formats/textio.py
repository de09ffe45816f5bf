"""Line reading that turns every decoding problem into an InputError with file and line."""
import gzip
import hashlib
import os
import sys
import zlib

from ..errors import InputError

GZIP_MAGIC = b"\x1f\x8b"


def is_gzip(path):
    """Whether the file at path is gzip-compressed (by its first two bytes)."""
    with open(path, "rb") as f:
        return f.read(2) == GZIP_MAGIC


def open_binary(source):
    """(binary stream, display name, must_close) for a path, '-' (stdin) or a stream."""
    if source is None or source == "-":
        return sys.stdin.buffer, "<stdin>", False
    if hasattr(source, "read"):
        stream = getattr(source, "buffer", source)
        return stream, getattr(source, "name", "<stream>"), False
    path = os.fspath(source)
    if os.path.isdir(path):
        raise InputError(path, 0, "is a directory, not a file")
    try:
        stream = open(path, "rb")
    except OSError as exc:
        raise InputError(path, 0, f"cannot open: {exc.strerror}") from None
    if stream.peek(2)[:2] == GZIP_MAGIC:  # gzip-compressed corpora are read as they are
        stream = gzip.GzipFile(fileobj=stream, mode="rb")
    return stream, path, True


def read_lines(source, encoding="utf-8"):
    """Yield (line number, text) with line ends ('\\n', '\\r\\n') and a leading BOM removed.

    Invalid bytes raise InputError naming the line and the byte offset in the file.
    Lines are read one at a time, so a pipe is consumed as its data arrives.
    """
    stream, name, close = open_binary(source)
    offset, number = 0, 0
    try:
        for number, raw in enumerate(_raw_lines(stream, name), 1):
            if number == 1 and raw.startswith(b"\xef\xbb\xbf") and encoding.replace("-", "").lower().startswith("utf8"):
                raw, offset = raw[3:], 3
            if b"\x00" in raw:
                at = offset + raw.index(b"\0")
                raise InputError(name, number, f"NUL byte at byte offset {at}: not a text file?")
            try:
                text = raw.decode(encoding)
            except UnicodeDecodeError as exc:
                raise InputError(name, number, f"invalid {encoding} at byte offset {offset + exc.start} "
                                 f"(byte 0x{raw[exc.start]:02x}); give the right --encoding") from None
            except LookupError:
                raise InputError(name, 0, f"unknown encoding {encoding!r}") from None
            offset += len(raw)
            yield number, text.rstrip("\r\n")
    finally:
        if close:
            stream.close()


def _raw_lines(stream, name):
    try:
        yield from iter(stream.readline, b"")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise InputError(name, 0, f"corrupt gzip data: {exc}") from None


def sha256_file(path):
    """sha256 of a file's bytes, read in blocks (InputError if it cannot be read)."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError as exc:
        raise InputError(str(path), 0, f"cannot read: {exc.strerror}") from None
    return h.hexdigest()
