"""Line reading that turns every decoding problem into an InputError with file and line."""
import codecs
import gzip
import hashlib
import io
import os
import sys
import zlib

from ..errors import InputError

GZIP_MAGIC = b"\x1f\x8b"


GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)  # a gzip stream that is cut short or corrupt

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


# byte-order marks of the encodings whose line feed is not the byte 0x0a (UTF-32 first: its
# little-endian mark begins with UTF-16's)
WIDE_MARKS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
              (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


# ASCII text with a plus and backslash escapes: what every encoding a corpus can be in
# decodes as itself (UTF-16 and UTF-32 aside: they are read by a path of their own)
_PROBE = b"a+b\\n\\u0041"


def encoding_problem(encoding):
    """What is wrong with reading and writing text in `encoding`, or None: unknown, not a
    text codec (rot13, base64), or one that does not read ASCII as itself
    (unicode_escape turns the characters \\n into a line break, utf-7 reads + as the
    start of base64)."""
    try:
        info = codecs.lookup(encoding)
    except (LookupError, TypeError, ValueError):
        return f"unknown encoding {encoding!r}"
    if not getattr(info, "_is_text_encoding", True):
        return f"{encoding!r} is not a text encoding"
    if info.name.startswith(("utf-16", "utf-32")):
        return None
    try:
        same = info.decode(_PROBE)[0] == _PROBE.decode("ascii")
    except (UnicodeError, ValueError, TypeError):
        same = False
    return None if same else f"encoding {encoding!r} does not read ASCII text as itself"


def wide_encoding(stream, encoding):
    """The UTF-16 or UTF-32 codec to read stream with, or None: the one named, or the
    one whose byte-order mark starts a stream read as UTF-8 (the default), which UTF-8
    would refuse at its first byte."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return None
    if name.startswith(("utf-16", "utf-32")):
        return name
    if name.startswith("utf-8") and hasattr(stream, "peek"):
        head = stream.peek(4)[:4]
        return next((codec for mark, codec in WIDE_MARKS if head.startswith(mark)), None)
    return None


class Utf8Reader(io.RawIOBase):
    """A binary stream in UTF-16 or UTF-32 read as UTF-8, so that every reader splits it
    at the byte 0x0a as it splits UTF-8; bytes the codec cannot decode raise InputError
    with their line."""

    def __init__(self, stream, name, codec):
        self.stream, self.name, self.codec = stream, name, codec
        self.decoder = codecs.getincrementaldecoder(codec)()
        self.pending, self.line, self.first, self.done = b"", 1, True, False

    def readable(self):
        return True

    def readinto(self, buffer):
        while not self.pending and not self.done:
            raw = self.stream.read(1 << 16)
            self.done = not raw
            state = self.decoder.getstate()
            try:
                text = self.decoder.decode(raw, final=self.done)
            except UnicodeDecodeError as exc:
                before = codecs.getincrementaldecoder(self.codec)()  # the lines before the bad bytes
                before.setstate(state)
                line = self.line + before.decode(raw[:exc.start], final=False).count("\n")
                raise InputError(self.name, line, f"invalid {self.codec}: {exc.reason}; give the right "
                                 f"--encoding") from None
            if self.first and text:  # utf-16-le/-be and utf-32-le/-be keep a mark as U+FEFF
                text, self.first = text.removeprefix("\ufeff"), False
            self.line += text.count("\n")
            self.pending = text.encode("utf-8", "surrogatepass")
        n = min(len(buffer), len(self.pending))
        buffer[:n], self.pending = self.pending[:n], self.pending[n:]
        return n


def utf8_input(stream, name, encoding):
    """(stream, encoding to decode it with): a UTF-16 or UTF-32 stream (named, or
    marked) read as UTF-8 (Utf8Reader); any other as it is."""
    try:  # (peeking at a gzip stream reads its header)
        codec = wide_encoding(stream, encoding)
    except GZIP_ERRORS as exc:
        raise InputError(name, 0, f"corrupt gzip data: {exc}") from None
    if codec is None:
        return stream, encoding
    return io.BufferedReader(Utf8Reader(stream, name, codec)), "utf-8"


def read_lines(source, encoding="utf-8"):
    """Yield (line number, text) with line ends ('\\n', '\\r\\n') and a leading BOM removed.

    Invalid bytes raise InputError naming the line and the byte offset in the file.
    Lines are read one at a time, so a pipe is consumed as its data arrives. UTF-16
    and UTF-32 are read when named or marked by a byte-order mark (see utf8_input).
    """
    problem = encoding_problem(encoding)
    if problem:
        raise InputError(str(source) if isinstance(source, (str, os.PathLike)) else "<input>", 0, problem)
    stream, name, close = open_binary(source)
    offset, number = 0, 0
    outer, (stream, encoding) = stream, utf8_input(stream, name, encoding)
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
            outer.close()


def _raw_lines(stream, name):
    try:
        yield from iter(stream.readline, b"")
    except GZIP_ERRORS as exc:
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
