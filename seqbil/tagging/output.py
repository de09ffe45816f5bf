"""The output of `seqbil tag`: blocks encoded, and written to a stream or, atomically,
to a file."""
import codecs
import contextlib
import io
import os
import sys
import tempfile

from ..errors import SeqbilError


def encode_text(text, encoding):
    """text in encoding, without the byte order mark that encodings such as utf-8-sig
    or utf-16 begin with: the output gets it once, at its start (byte_order_mark)."""
    encoder = codecs.getincrementalencoder(encoding)()
    encoder.encode("")
    try:
        return encoder.encode(text, final=True)
    except UnicodeEncodeError as exc:
        raise SeqbilError(f"cannot write {exc.object[exc.start:exc.end]!r} in {encoding} (a label of the model?); "
                          "give another --encoding") from None


def byte_order_mark(encoding):
    """What an output in encoding begins with: b"" for most encodings."""
    return codecs.getincrementalencoder(encoding)().encode("")


@contextlib.contextmanager
def destination(output, encoding):
    """A function writing a block's bytes to output (see tag_file)."""
    mark, started = byte_order_mark(encoding), False

    def writer(put, name, flush=None):
        def write(data):
            nonlocal started
            if not data:
                return
            try:
                if not started and mark:
                    put(mark)
                started = True
                put(data)
                if flush is not None:
                    flush()
            except BrokenPipeError:
                raise
            except OSError as exc:
                raise SeqbilError(f"{name}: cannot write: {exc.strerror or exc}") from None
        return write

    if output is None or output == "-" or hasattr(output, "write"):
        stream = sys.stdout if output is None or output == "-" else output
        name = "<stdout>" if stream is sys.stdout else getattr(stream, "name", "<stream>")
        if isinstance(stream, io.TextIOBase) and not hasattr(stream, "buffer"):  # e.g. io.StringIO
            mark = b""
            yield writer(lambda data: stream.write(data.decode(encoding)), name)
            return
        if hasattr(stream, "buffer"):  # text written before goes first
            stream.flush()
            stream = stream.buffer
        yield writer(stream.write, name, stream.flush)
        return
    path = os.fspath(output)
    if os.path.isdir(path):
        raise SeqbilError(f"{path}: is a directory, not a file")
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp", dir=directory)
    except OSError as exc:
        raise SeqbilError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)  # mkstemp makes it private; the result is an ordinary file
        with os.fdopen(fd, "wb") as f:
            yield writer(f.write, path)
            try:
                f.flush()
                os.fsync(f.fileno())
            except OSError as exc:
                raise SeqbilError(f"{path}: cannot write: {exc.strerror}") from None
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself survives a crash
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
