"""The input of `seqbil tag` as blocks of whole sentences, cut without looking at
every line: at a blank line for CoNLL models, at a line end for segmentation models."""
import collections
import gzip
import os
import re
import select
import stat
import zlib

from ..errors import InputError, SeqbilError

BLOCK_BYTES = 1 << 18  # input bytes per block: a few thousand tokens, well above the per-block overhead
READ_BYTES = 1 << 16   # what one read asks for; a pipe gives what it has
# a blank line after a line end: where a CoNLL sentence may end. Blank as the reader
# (formats/conll.py: split_fields) sees it: spaces and tabs, then the CRs of the line end
BLANK_LINE = re.compile(rb"\n[ \t]*\r*\n")


def block_bytes(nbest):
    """Input bytes per block: the k best paths of a block need k times the memory of one."""
    return max(1, BLOCK_BYTES // nbest) if nbest else BLOCK_BYTES


class BlockReader:
    """The input as blocks of whole sentences, each (bytes, number of its first line,
    byte offset of its start); None when a pipe pauses within a sentence."""

    def __init__(self, stream, name, one_per_line, size, line=1, offset=0):
        self.stream, self.name = stream, name
        self.start = line, offset  # of the stream's first byte in the input
        self.one_per_line, self.size = one_per_line, size
        self.pause_fd = _pause_fd(stream)
        self.ready = collections.deque()  # blocks cut, not yet taken

    def waiting(self):
        """Whether the next block comes without waiting for input: one is cut already,
        or input is waiting (always, for a regular file)."""
        return bool(self.ready) or self._input_waiting()

    def _input_waiting(self):
        if self.pause_fd is None:
            return True
        try:
            return bool(select.select([self.pause_fd], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def __iter__(self):
        read = getattr(self.stream, "read1", None) or self.stream.read
        buf, (line, offset) = bytearray(), self.start
        scan = pause_scan = 0  # where the next search for a sentence end starts (none before it)

        def take(cut):
            nonlocal line, offset, scan, pause_scan
            raw = bytes(buf[:cut])
            del buf[:cut]
            self.ready.append((raw, line, offset))
            line, offset, scan, pause_scan = line + raw.count(b"\n"), offset + len(raw), 0, 0
        while True:
            while self.ready:
                yield self.ready.popleft()
            chunk = self._read(read)
            if not chunk:
                if buf:
                    take(len(buf))
                    yield self.ready.popleft()
                return
            buf += chunk
            while len(buf) >= self.size:  # full blocks: up to the first sentence end after size bytes
                start = max(scan, self.size - 1)
                cut = self._first_end(buf, start)
                if not cut:
                    scan = self._resume(buf, start)
                    break
                take(cut)
            if not self._input_waiting():
                # the input pauses: what is complete goes now
                cut = self._last_end(buf, pause_scan)
                if cut:
                    take(cut)
                else:
                    pause_scan = self._resume(buf, pause_scan)
                    yield None

    def _read(self, read):
        try:
            chunk = read(READ_BYTES)
        except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
            raise InputError(self.name, 0, f"corrupt gzip data: {exc}") from None
        if isinstance(chunk, str):
            raise SeqbilError(f"{self.name}: give a path or a binary stream, not a text stream")
        return chunk

    def _first_end(self, buf, start):
        """Position after the first sentence end at or after start; 0 if none."""
        if self.one_per_line:
            return buf.find(b"\n", start) + 1
        found = BLANK_LINE.search(buf, start)
        return found.end() if found else 0

    def _last_end(self, buf, start):
        """Position after the last sentence end at or after start; 0 if none."""
        if self.one_per_line:
            return buf.rfind(b"\n", start) + 1
        end = 0
        for found in BLANK_LINE.finditer(buf, start):
            end = found.end()
        return end

    @staticmethod
    def _resume(buf, start):
        """Where to search again once more input has come, when buf[start:] holds no
        sentence end: at its last line end (it may begin a blank line)."""
        last = buf.rfind(b"\n", start)
        return last if last >= 0 else len(buf)


def _pause_fd(stream):
    """The descriptor to watch for pauses in the input: that of a pipe or terminal;
    None for regular files, compressed input and streams without one."""
    if isinstance(stream, gzip.GzipFile):
        return None
    try:
        fd = stream.fileno()
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        select.select([fd], [], [], 0)
    except (AttributeError, OSError, ValueError):  # no descriptor, or one select cannot watch
        return None
    return fd
