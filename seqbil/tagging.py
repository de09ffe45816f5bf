"""Tagging a stream: what `seqbil tag` runs, as seqbil.tag_file.

The input is read as bytes and cut into blocks of whole sentences (at a blank line for
CoNLL models, at a line end for segmentation models) without looking at every line.
Each block is decoded, parsed, tagged, formatted and encoded in one piece, by this
process (jobs=1) or by worker processes that each hold the model (jobs>1), and the
blocks are written in input order: the output does not depend on the number of jobs
or on where the blocks were cut. A block ends after about BLOCK_BYTES of input, at the
end of the input, or, from a pipe or a terminal, when no more input is waiting, so that
each sentence comes out as soon as the input pauses.
"""
import codecs
import collections
import contextlib
import gzip
import io
import multiprocessing
import multiprocessing.connection
import os
import re
import select
import signal
import stat
import sys
import tempfile
import zlib

import numpy as np

from ._kernels.conll_block import Vocab, char_block, split_block, write_block, write_chars
from .errors import InputError, SeqbilError, check_output
from .features.dataset import Dataset
from .features.functions import apply_chain
from .formats.base import score_text
from .formats.textio import open_binary, utf8_input
from .model import Model

BLOCK_BYTES = 1 << 18  # input bytes per block: a few thousand tokens, well above the per-block overhead
READ_BYTES = 1 << 16   # what one read asks for; a pipe gives what it has
# a blank line after a line end: where a CoNLL sentence may end. Blank as the reader
# (formats/conll.py: split_fields) sees it: spaces and tabs, then the CRs of the line end
BLANK_LINE = re.compile(rb"\n[ \t]*\r*\n")


def tag_file(model, input=None, output=None, *, encoding=None, jobs=1, nbest=None, confidence=False, marginals=False,
             task=None):
    """Tag a file or stream and write the result.

    `seqbil tag` calls this function. The output of a CoNLL model is each input line
    with the predicted label appended (after a tab where the line's fields are
    separated by tabs, else after a space) and a blank line after each sentence;
    that of a segmentation model, each line split into words.

    Parameters
    ----------
    model : Model or str or os.PathLike
        A model (`seqbil.load`) or the path of a model file.
    input : str, os.PathLike or binary file object, default=None
        A path (plain or gzip), None or `"-"` for standard input, or a binary
        stream. CoNLL models read one token per line (the attribute fields, with or
        without the label) with a blank line after each sentence; segmentation
        models read one sentence per line.
    output : str, os.PathLike or file object, default=None
        A path, None or `"-"` for standard output, or a stream. A path is written
        atomically: a temporary file in the same directory replaces the file only
        when everything has been tagged, so that a failed or interrupted run leaves
        the old file as it was. Streams are flushed after every block.
    encoding : str, default=None
        Of the input and the output; default: the model's (the encoding of its
        training corpus, utf-8 unless it was trained otherwise).
    jobs : int, default=1
        Worker processes tagging blocks of sentences in parallel, each with the
        model (shared with this process where processes start by fork); 0: one per
        available CPU core. The output is the same, byte for byte, for any `jobs`.
    nbest : int, default=None
        Print the `nbest` best labelings of each sentence, each under a line
        `# RANK SCORE` (as `seqbil tag --nbest`).
    confidence : bool, default=False
        Print the margins (as `seqbil tag --confidence`). Not with `nbest` or
        `marginals`.
    marginals : bool or str, default=False
        True prints probabilities as CRF++'s `crf_test -v1` does (`seqbil tag
        --marginals`): a line `# PROB` before each sentence, the probability of its
        labeling, and `LABEL/PROB`, the label and its marginal probability, in
        place of each token's label; `"all"` also appends every label's
        `LABEL/PROB` (`crf_test -v2`, `--all-marginals`). Segmentation models print
        `# PROB`, `# boundary P1 ... Pn` (per character, the probability that a word
        ends after it) and, with `"all"`, a line `# LABEL P1 ... Pn` per label, then
        the segmented line. With `nbest`, `# RANK PROB` heads each labeling, PROB
        being its probability.
    task : str, default=None
        The task to tag, for a multi-task model (`Model.for_task`).

    Returns
    -------
    n : int
        The number of sentences read (for segmentation models: of lines).

    Raises
    ------
    SeqbilError
        For problems with the input or the options; an `InputError` names the file
        and line.

    Examples
    --------
    >>> import os
    >>> import tempfile
    >>> import seqbil
    >>> from seqbil.samples import sample_path
    >>> model = seqbil.train(epochs=1)
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     seqbil.tag_file(model, sample_path("conll2000_test.txt"), os.path.join(tmp, "tagged.txt"))
    200
    """
    model_path = model
    model, encoding = prepare(model, task, encoding, nbest, confidence, marginals)
    if isinstance(output, (str, os.PathLike)):
        check_output(output, inputs=[input, model_path])
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 0:
        raise SeqbilError(f"jobs must be a whole number of at least 0, got {jobs!r}")
    jobs = jobs or cpus()
    raw, name, close = open_binary(input)
    try:
        stream, read_encoding = utf8_input(raw, name, encoding)  # UTF-16 and UTF-32 read as UTF-8
        tagger = BlockTagger(model, name, encoding, nbest, confidence, marginals, read_encoding)
        reader = BlockReader(stream, name, model.format.sentence_per_line, block_bytes(nbest))
        with _destination(output, encoding) as write:
            if jobs == 1:
                return _tag_here(tagger, reader, write)
            return _tag_in_workers(tagger, reader, write, jobs)
    finally:
        if close:
            raw.close()


def prepare(model, task, encoding, nbest, confidence, marginals=False):
    """(model, encoding) of a tagging run, after checking the options (see tag_file)."""
    if not isinstance(model, Model):
        model = Model.load(model)
    if task is not None:
        model = model.for_task(task)
    model._need_task()
    if nbest is not None and (isinstance(nbest, bool) or not isinstance(nbest, int) or nbest < 1):
        raise SeqbilError(f"nbest must be a whole number of at least 1, got {nbest!r}")
    if nbest and confidence:
        raise SeqbilError("nbest and confidence print different layouts; give one of them")
    if marginals not in (False, None, True, "all"):
        raise SeqbilError(f"marginals must be True, \"all\" or False, got {marginals!r}")
    if marginals and confidence:
        raise SeqbilError("marginals and confidence print different layouts; give one of them")
    encoding = encoding or model.corpus.get("encoding", "utf-8")
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise SeqbilError(f"unknown encoding {encoding!r}") from None
    return model, encoding


def block_bytes(nbest):
    """Input bytes per block: the k best paths of a block need k times the memory of one."""
    return max(1, BLOCK_BYTES // nbest) if nbest else BLOCK_BYTES


def cpus():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        return os.cpu_count() or 1


def _fast_applies(model, utf8, nbest, confidence, marginals):
    """Whether blocks of input can go through compiled code (cython_ext/conll_block.pyx):
    one label per token, UTF-8 text, a model of the current index layout whose templates
    read columns (no dictionaries, vectors, structure or tasks); for CoNLL models, plain
    columns as the model reads them (no functions, no normalization), for segmentation
    models any function of a character. Returns "columns", "chars" or None."""
    index = model.index
    if not (utf8 and not nbest and not confidence and not marginals and not model.tasks and
            index.layout == "boundaries-first" and index.vectors is None and index.structure is None and
            not index.lexicons and not model.templates.items and index.field_list and
            all(f.kind == "" and not f.source for f in index.field_list)):
        return None
    return model.format.compiled_block(index)


# --- reading: blocks of whole sentences -------------------------------------------

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


# --- tagging one block ---------------------------------------------------------------

class BlockTagger:
    """Tags a block: its bytes in, (output bytes, sentences) out. The same in this
    process and in the workers."""

    def __init__(self, model, name, encoding, nbest, confidence, marginals=False, read_encoding=None):
        """encoding: the output's; read_encoding: the input's (default: the same)."""
        self.model, self.name, self.encoding = model, name, encoding
        self.read_encoding = read_encoding or encoding
        self.nbest, self.confidence, self.marginals = nbest, confidence, marginals
        self.utf8 = self.read_encoding.replace("-", "").lower().startswith("utf8")
        # (not utf-8-sig: decoding each line, the reference drops a BOM at every line's start;
        # the compiled paths read and write UTF-8)
        plain = codecs.lookup(self.read_encoding).name == "utf-8" and codecs.lookup(encoding).name == "utf-8"
        self.fast = _fast_applies(model, plain, nbest, confidence, marginals)
        self._block = None  # the compiled CoNLL reader and writer, made on first use (in the process that tags)

    def __call__(self, block):
        raw, line, offset = block
        if offset == 0 and self.utf8 and raw.startswith(codecs.BOM_UTF8):  # as formats/textio.py reads a file
            raw, offset = raw[3:], 3
        self._check(raw, line, offset)
        if self.fast == "columns":
            done = self._tag_block(raw)
            if done is not None:
                return done
        elif self.fast == "chars":
            return self._tag_chars(raw)
        # An empty line in front: the reader drops a byte order mark only from its first
        # line, which a block after the first must not lose.
        try:
            sentences = list(self.model.format.read(io.BytesIO(b"\n" + raw), labeled=False, encoding=self.read_encoding,
                                                    keep_empty=True))
        except InputError as exc:
            raise InputError(self.name, exc.line and exc.line + line - 2, exc.message) from None
        if sentences and sentences[0].line == 1:  # segmentation: the empty line in front
            del sentences[0]
        return encode_text(self._text(sentences), self.encoding), len(sentences)

    def __getstate__(self):
        return {**self.__dict__, "_block": None}

    def warm(self):
        """Build what the compiled path makes on first use (vocabulary and key hash
        tables, character tables) now, so that forked workers share it."""
        if self.fast == "columns":
            self._tag_block(b"")
        elif self.fast == "chars":
            self._tag_chars(b"")

    def _tag_block(self, raw):
        """(output, sentences) of a block of CoNLL lines by the compiled reader and
        writer (cython_ext/conll_block.pyx), or None for input that formats/conll.py
        must read (and refuse, with file and line)."""
        model, index = self.model, self.model.index
        if self._block is None:
            vocabs = [Vocab([v.encode("utf-8") for v in index.fields[f].strings]) for f in index.field_list]
            columns = np.array([f.column for f in index.field_list], dtype=np.int32)
            labels = [y.encode("utf-8") for y in model.labels]
            fmt = model.format
            self._block = (vocabs, columns, labels, fmt.n_fields, fmt.label_index())
        vocabs, columns, labels, n_fields, label_at = self._block
        found = split_block(raw, n_fields, label_at, index.K, vocabs, columns)
        if found is None:
            return None
        matrix, positions, seq_ptr, line_start, line_end, sep = found
        best = self._decode_fields(matrix, positions, seq_ptr)
        return write_block(raw, seq_ptr, line_start, line_end, sep, best, labels), len(seq_ptr) - 1

    def _decode_fields(self, matrix, positions, seq_ptr):
        """The best label of every token of a field matrix (features/index.py:
        field_matrix), its keys looked up in the index's hash tables."""
        index = self.model.index
        parts = index.encode_fields(matrix, positions, hashed=True)
        return self.model.decode(Dataset(seq_ptr, np.full(len(positions), -1, dtype=np.int32), *parts))

    def _tag_chars(self, raw):
        """(output, lines) of a block of raw text for a segmentation model: the
        characters and their field ids as arrays, the field matrix, encoding, decoding
        and the segmented lines in compiled code; each distinct character's ids (the
        model's normalization and the templates' functions) computed once."""
        model, index = self.model, self.model.index
        if self._block is None:
            space = np.array([chr(c).isspace() for c in range(1 << 16)], dtype=np.uint8)
            labels = model.labels
            ends = np.array([y in ("E", "S") for y in labels], dtype=np.uint8)
            starts = np.array([y in ("B", "S") for y in labels], dtype=np.uint8)
            luts = [np.full(1 << 16, -2, dtype=np.int32) for _ in index.field_list]
            self._block = (space, ends, starts, luts, [{} for _ in index.field_list])
        space, ends, starts, luts, wide = self._block
        cps = np.frombuffer(raw.decode("utf-8").encode("utf-32-le"), dtype=np.uint32)
        values = np.empty((len(index.field_list), len(cps)), dtype=np.int32)
        narrow = cps < (1 << 16)
        every = bool(narrow.all())
        bmp = cps if every else np.where(narrow, cps, 0)  # (the others read from the dicts below)
        for f, field in enumerate(index.field_list):
            new = np.unique(bmp[luts[f][bmp] == -2])  # characters whose ids this process has not made yet
            if len(new):
                luts[f][new] = [self._char_id(field, int(c)) for c in new]
            ids = luts[f][bmp]
            if not every:  # characters beyond the BMP: a dict
                for i in np.flatnonzero(~narrow):
                    c = int(cps[i])
                    if c not in wide[f]:
                        wide[f][c] = self._char_id(field, c)
                    ids[i] = wide[f][c]
            values[f] = ids
        matrix, positions, seq_ptr, char_at, seq_line, lines = char_block(cps, space, values, index.K)
        best = self._decode_fields(matrix, positions, seq_ptr)
        out = write_chars(cps, char_at, seq_ptr, seq_line, lines, best, ends, starts)
        return out.tobytes().decode("utf-32-le").encode(self.encoding), lines

    def _char_id(self, field, c):
        """The id of a character in a field's vocabulary (-1: unknown), as
        features/index.py: field_matrix gives it: normalized, then the field's functions."""
        index = self.model.index
        value = chr(c)
        if index.fold is not None:
            value = index.fold(value)
        if field.chain:
            value = apply_chain(field.chain, value)
        return index.fields[field].index.get(value, -1)

    def _check(self, raw, line, offset):
        """The errors of formats/textio.py for a NUL byte or bytes the encoding cannot
        decode, with the line and byte offset in the whole input."""
        nul = raw.find(b"\0")
        try:
            raw.decode(self.read_encoding)
            bad = -1
        except UnicodeDecodeError as exc:
            bad = exc.start
        if nul < 0 and bad < 0:
            return
        nul_line = line + raw.count(b"\n", 0, nul) if nul >= 0 else float("inf")
        bad_line = line + raw.count(b"\n", 0, bad) if bad >= 0 else float("inf")
        if nul_line <= bad_line:  # a line is checked for NUL bytes before it is decoded
            raise InputError(self.name, nul_line, f"NUL byte at byte offset {offset + nul}: not a text file?")
        raise InputError(self.name, bad_line, f"invalid {self.read_encoding} at byte offset {offset + bad} "
                         f"(byte 0x{raw[bad]:02x}); give the right --encoding")

    def _text(self, sentences):
        model, fmt, name = self.model, self.model.format, self.name
        if self.marginals:
            return self._probabilities(sentences)
        notes = fmt.notes
        if self.nbest:  # an empty line (segmentation) has one labeling, the empty one
            found = model.predict_nbest(sentences, self.nbest, name)
            return "".join(f"{notes}{rank} {score_text(score)}\n" + fmt.write(s, tags)
                           for s, paths in zip(sentences, found) for rank, (tags, score) in enumerate(paths))
        if self.confidence:
            parts = []
            for s, (tags, margins, margin) in zip(sentences, model.predict_confidence(sentences, name)):
                parts.append(f"{notes}confidence {score_text(margin)}\n" + fmt.write(s, fmt.with_margins(tags, margins)))
            return "".join(parts)
        nonempty = [s for s in sentences if len(s)]
        tags = iter(model.predict(nonempty, name) if nonempty else [])
        return "".join(fmt.write(s, next(tags)) if len(s) else "\n" for s in sentences)

    def _probabilities(self, sentences):
        """The layout of --marginals and --all-marginals (see tag_file), with --nbest too."""
        model, fmt, every = self.model, self.model.format, self.marginals == "all"
        if self.nbest:
            found = model.predict_nbest_marginals(sentences, self.nbest, self.name)
        else:
            found = [([(tags, p)], P) for tags, p, P, _ in model.predict_marginals(sentences, self.name)]
        return "".join(fmt.write_marginals(s, paths, P.tolist(), model.labels, every, self.nbest)
                       for s, (paths, P) in zip(sentences, found))


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
    return codecs.getincrementalencoder(encoding)().encode("")


# --- writing -------------------------------------------------------------------------

@contextlib.contextmanager
def _destination(output, encoding):
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


# --- one process, or workers ---------------------------------------------------------

def _tag_here(tagger, reader, write):
    count = 0
    for block in reader:
        if block is not None:
            data, n = tagger(block)
            write(data)
            count += n
    return count


def _tag_in_workers(tagger, reader, write, jobs):
    """Blocks to idle workers, at most 2 * jobs ahead of the output; results written in
    input order as they complete. From a pipe, input is read only when it is waiting or
    when nothing is being tagged, so output never waits for more input."""
    warm_model(tagger.model)
    tagger.warm()
    workers = _Workers(tagger, jobs)
    finished = False
    try:
        limit = 2 * jobs
        blocks = iter(reader)
        idle = list(workers.conns)
        busy, done = {}, {}  # busy: connection -> block number; done: block number -> result
        sent = written = count = 0
        ended = False
        while True:
            while written in done:
                result = done.pop(written)
                written += 1
                if result[0] != "ok":
                    raise_failure(result)
                write(result[1])
                count += result[2]
            if ended and written == sent:
                finished = True
                return count
            while idle and not ended and sent - written < limit and (not busy or reader.waiting()):
                try:
                    block = next(blocks)
                except StopIteration:
                    ended = True
                except SeqbilError as exc:  # a read error comes after the blocks before it, as with one job
                    done[sent], sent, ended = failure_of(exc), sent + 1, True
                else:
                    if block is not None:
                        conn = idle.pop()
                        workers.send(conn, block)
                        busy[conn], sent = sent, sent + 1
            if not busy:
                continue
            watch = list(busy)
            if reader.pause_fd is not None and idle and not ended and sent - written < limit:
                watch.append(reader.pause_fd)
            for conn in multiprocessing.connection.wait(watch):
                if conn in busy:
                    done[busy.pop(conn)] = workers.receive(conn)
                    idle.append(conn)
    finally:
        workers.close(abort=not finished)


def warm_model(model):
    """Tag one token, so that what a model builds on first use is built once, here,
    and shared by the workers (fork) instead of built in each."""
    fmt = model.format
    model.tag(fmt.example())


def failure_of(exc):
    if isinstance(exc, InputError):
        return ("input", exc.path, exc.line, exc.message)
    if isinstance(exc, SeqbilError):
        return ("seqbil", str(exc))
    return ("failed", f"{type(exc).__name__}: {exc}")


def raise_failure(result):
    if result[0] == "input":
        raise InputError(*result[1:])
    if result[0] == "seqbil":
        raise SeqbilError(result[1])
    raise SeqbilError(f"tagging failed in a worker process: {result[1]}")


class _Workers:
    """Worker processes, one pipe each, one block at a time each (so that neither side
    ever waits to send while the other waits to send too)."""

    def __init__(self, tagger, n):
        method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        context = multiprocessing.get_context(method)
        self.conns, self.procs = [], []
        try:
            for _ in range(n):
                mine, theirs = context.Pipe()
                # a forked worker closes its copies of this process's ends, so that each
                # side sees the other's end of the pipe close when it exits or dies
                inherited = self.conns + [mine] if method == "fork" else []
                proc = context.Process(target=_work, args=(tagger, theirs, inherited), daemon=True,
                                       name="seqbil-tag")
                proc.start()
                theirs.close()
                self.conns.append(mine)
                self.procs.append(proc)
        except BaseException:
            self.close(abort=True)
            raise

    def send(self, conn, block):
        try:
            conn.send(block)
        except OSError:
            raise SeqbilError(self._died(conn)) from None

    def receive(self, conn):
        try:
            return conn.recv()
        except (EOFError, OSError):
            raise SeqbilError(self._died(conn)) from None

    def _died(self, conn):
        proc = self.procs[self.conns.index(conn)]
        proc.join(5)
        code = proc.exitcode
        how = f"killed by signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        return f"a tagging worker process stopped unexpectedly ({how})"

    def close(self, abort):
        """Stop the workers: at once (abort), or when they see their pipe close."""
        if abort:
            for proc in self.procs:
                if proc.is_alive():
                    proc.terminate()
        for conn in self.conns:
            conn.close()
        for proc in self.procs:
            proc.join(10)
            if proc.is_alive():
                proc.kill()
                proc.join()


def _work(tagger, conn, inherited):
    """A worker process: tag the blocks that come on conn until it closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches every process; the main one stops the workers
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not a handler of the main process's, inherited by fork
    for other in inherited:
        other.close()
    while True:
        try:
            block = conn.recv()
        except (EOFError, OSError):
            return
        try:
            data, n = tagger(block)
            result = ("ok", data, n)
        except Exception as exc:  # reported by the main process, in its place in the output
            result = failure_of(exc)
        try:
            conn.send(result)
        except OSError:
            return
