"""Tagging many files on a Dask cluster (`seqbil tag --output-dir`).

A plain input file is cut into partitions of about partition_bytes: partition j is the
bytes from b(j * size) to b((j + 1) * size), where b(x) is the first sentence boundary
at or after x (the end of the first blank line at or after x - 1 for CoNLL models, the
start of the first line at or after x for segmentation models; b(0) = 0). Each worker
computes the two boundaries of its partition itself from a small read around them, so
the input never goes through the driver, and neighbouring partitions meet exactly. A
gzip file cannot be entered in the middle: it is one partition.

A partition is tagged block by block as `seqbil tag` tags a stream (seqbil/tagging/:
the same reader and tagger), into a hidden part file in the output directory, so a
worker's memory does not grow with the input. When every part of a file is there, the
driver joins them, in order, into a temporary file that replaces the output only
then; the parts go. The output is byte for byte what `seqbil tag` writes for the file
(gzip-compressed when the input is), whatever the partitions and the workers.

An output that exists is a finished file: a rerun skips it (unless overwrite), so a
run that failed or was stopped goes on where it was. The hidden files of a stopped run
(.NAME.part-*) are removed when the file is tagged again.
"""
import collections
import contextlib
import glob
import gzip
import os
import shutil
import tempfile
import threading

from tqdm import tqdm

from ..errors import InputError, SeqbilError
from ..formats.textio import is_gzip, open_binary, wide_encoding
from ..progress import disabled
from ..tagging import (BLANK_LINE, BlockReader, BlockTagger, block_bytes, byte_order_mark, failure_of, prepare,
                       raise_failure, warm_model)
from .cluster import connect

PARTITION_BYTES = 8 << 20  # seconds of tagging per partition: enough tasks to balance, few enough to cost nothing
_WINDOW = 1 << 16  # bytes read to find a boundary, more for longer sentences
_PART = ".{name}.part-"  # hidden part files of output `name` in the output directory


def tag_files(model, inputs, output_dir, *, client=None, scheduler=None, workers=None, encoding=None, task=None,
              dicts=(), nbest=None, confidence=False, marginals=False, partition_bytes=PARTITION_BYTES,
              overwrite=False, progress=False, echo=None):
    """Tag files on a Dask cluster, one output file per input file.

    `seqbil tag --output-dir` calls this function. Each file is cut into partitions
    that the workers read and tag themselves; the output is byte for byte what
    `seqbil tag` writes for the file (gzip-compressed when the input is). Every
    output appears whole or not at all. A file with bad input is not written; the
    others are, and a `SeqbilError` (an `InputError` for one file) names each
    problem.

    Parameters
    ----------
    model : str or os.PathLike
        The path of a model file, read by every worker (memory-mapped, once per
        worker process).
    inputs : str, os.PathLike or list of them
        Paths and glob patterns (`"corpus/*.txt.gz"`), plain or gzip files. The
        outputs are `output_dir/NAME` for each input `NAME`, so the names must
        differ.
    output_dir : str or os.PathLike
        The directory of the outputs, made if need be.
    client : distributed.Client, default=None
        A dask Client to run on.
    scheduler : str, default=None
        The address of a Dask scheduler (`tcp://host:8786`), or a scheduler file.
    workers : int, default=None
        The worker processes of a local cluster made for the call (default: one per
        CPU core).
    encoding : str, default=None
        As for `seqbil.tag_file`.
    task : str, default=None
        As for `seqbil.tag_file`.
    nbest : int, default=None
        As for `seqbil.tag_file`.
    confidence : bool, default=False
        As for `seqbil.tag_file`.
    marginals : bool or str, default=False
        As for `seqbil.tag_file`.
    dicts : list of str, default=()
        `[NAME=]FILE` word lists added to the model's dictionaries (as `seqbil tag
        --dict`).
    partition_bytes : int, default=PARTITION_BYTES
        About the size of the partitions of a plain file (`PARTITION_BYTES`: 8 MiB);
        a gzip file cannot be entered in the middle: it is one partition.
    overwrite : bool, default=False
        Tag files whose output exists too (default: skip them, so that a rerun
        goes on where a failed or stopped run was).
    progress : bool or "auto", default=False
        Show a progress bar of the input bytes; "auto": only on a terminal.
    echo : callable, default=None
        A function of one line, told the dashboard link and the files skipped.

    Returns
    -------
    summary : dict
        `files` (tagged now), `skipped` (finished before), `sentences` and `bytes`
        (the input bytes read).

    Raises
    ------
    SeqbilError
        For bad options, inputs that match no file, or files with bad input.
    """
    path = os.fspath(model)
    if not isinstance(path, str):
        raise SeqbilError("give the model as the path of a model file: the workers read it themselves")
    loaded, encoding = prepare(path, task, encoding, nbest, confidence, marginals)
    for spec in dicts:  # checked here, once, before any worker reads them
        name, eq, file = spec.rpartition("=")
        loaded.add_word_file(file, name if eq else None)
    files = _expand(inputs)
    for file in files:
        _refuse_wide(file, encoding)
    if partition_bytes < 1:
        raise SeqbilError(f"partition size must be at least 1 byte, got {partition_bytes}")
    job = _Job(os.path.abspath(path), _stamp(path), task, tuple(dicts), encoding, nbest, confidence, marginals or False,
               loaded.format.sentence_per_line)
    output_dir = os.fspath(output_dir)
    try:
        os.makedirs(output_dir, exist_ok=True)
    except OSError as exc:
        raise SeqbilError(f"{output_dir}: cannot make the output directory: {exc.strerror}") from None
    plans, skipped = _plan(files, output_dir, overwrite, partition_bytes)
    if skipped and echo is not None:
        echo(f"{skipped} of {len(files)} files have their output already; skipping them (overwrite to redo)")
    summary = {"files": 0, "skipped": skipped, "sentences": 0, "bytes": 0}
    if not plans:
        return summary
    with connect(client, scheduler, workers, echo) as c:
        return _run(c, job, plans, summary, progress)


def tag_bag(bag, model, *, task=None, segment=False):
    """Tag the sentences of a dask.bag.

    Each partition is tagged in one batch, by a model loaded once per worker
    process.

    Parameters
    ----------
    bag : dask.bag.Bag
        Sentences as for `Model.tag`: lists of tokens (strings, or lists of the
        attribute fields) or, for a segmentation model, strings.
    model : str or os.PathLike
        The path of a model file.
    task : str, default=None
        The task to tag, for a multi-task model (`Model.for_task`).
    segment : bool, default=False
        Give a segmentation model's words instead of labels (`Model.segment`).

    Returns
    -------
    labels : dask.bag.Bag
        The labels of each sentence (a list of label strings per sentence), or with
        `segment`, its words.

    Raises
    ------
    SeqbilError
        For a model not given as a path, or `segment` with a model that is not a
        segmentation model.
    """
    path = os.fspath(model)
    if not isinstance(path, str):
        raise SeqbilError("give the model as the path of a model file: the workers read it themselves")
    loaded, _ = prepare(path, task, None, None, False)
    if segment and not loaded.format.segments:
        raise SeqbilError("segment=True needs a segmentation model (corpus format sighan)")
    job = _Job(os.path.abspath(path), _stamp(path), task, (), None, None, False, False,
               loaded.format.sentence_per_line)
    return bag.map_partitions(_tag_sentences, job, segment)


# --- the plan: files, outputs, partitions ------------------------------------------

# What every task needs to tag: sent to the workers, and the key of their model.
_Job = collections.namedtuple("_Job", "model stamp task dicts encoding nbest confidence marginals one_per_line")


def _stamp(path):
    """(size, mtime) of the model file: a worker that sees another file says so."""
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns


def _expand(inputs):
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    files, seen = [], set()
    for item in inputs:
        item = os.fspath(item)
        found = sorted(glob.glob(item)) if glob.has_magic(item) else [item]
        if not found:
            raise SeqbilError(f"no file matches {item}")
        for path in found:
            if os.path.isdir(path):
                raise InputError(path, 0, "is a directory, not a file")
            if not os.path.exists(path):
                raise InputError(path, 0, "cannot open: No such file or directory")
            key = os.path.realpath(path)
            if key not in seen:
                seen.add(key)
                files.append(path)
    if not files:
        raise SeqbilError("no input files")
    return files


def _refuse_wide(path, encoding):
    """The partitions of a file are cut at line feeds, bytes 0x0a, which UTF-16 and
    UTF-32 text holds inside its characters: such a file (named by the encoding, or
    marked by its byte-order mark) is refused before any work."""
    stream, name, close = open_binary(path)
    try:
        codec = wide_encoding(stream, encoding)
    finally:
        if close:
            stream.close()
    if codec is not None:
        raise InputError(name, 0, f"is {codec}: tagging on a cluster cuts files at line feeds, which {codec} cannot "
                         f"take; convert it to UTF-8 (iconv -f {codec.upper()} -t UTF-8), or tag it with "
                         f"seqbil tag without --output-dir")


class _Plan:
    """One input file: its output, whether it is gzip, its partitions' nominal ends."""

    def __init__(self, number, path, output, partition_bytes):
        self.number, self.path, self.output = number, path, output
        self.source = os.path.abspath(path)  # what the workers open: their working directory may differ
        self.size = os.path.getsize(path)
        self.gz = is_gzip(path)
        if self.gz or self.size == 0:
            self.ranges = [(0, self.size)]
        else:
            cuts = list(range(0, self.size, partition_bytes)) + [self.size]
            self.ranges = list(zip(cuts[:-1], cuts[1:]))
        directory, name = os.path.split(os.path.abspath(output))
        self.part_prefix = os.path.join(directory, _PART.format(name=name))
        self.results = [None] * len(self.ranges)
        self.futures = []

    def part(self, j):
        return f"{self.part_prefix}{j:06d}"

    def remove_parts(self):
        for stale in glob.glob(glob.escape(self.part_prefix) + "*"):
            with contextlib.suppress(OSError):
                os.unlink(stale)


def _plan(files, output_dir, overwrite, partition_bytes):
    plans, skipped, taken = [], 0, {}
    for number, path in enumerate(files):
        name = os.path.basename(path)
        if name in taken:
            raise SeqbilError(f"{taken[name]} and {path} would both be written to {os.path.join(output_dir, name)}: "
                              "give inputs with different names")
        taken[name] = path
        output = os.path.join(output_dir, name)
        if os.path.exists(output) and os.path.samefile(output, path):
            raise SeqbilError(f"{path}: the output would replace the input; give another output directory")
        if os.path.exists(output) and not overwrite:
            skipped += 1
            continue
        plans.append(_Plan(number, path, output, partition_bytes))
    return plans, skipped


# --- the driver ------------------------------------------------------------------------

def _run(client, job, plans, summary, progress):
    from distributed import as_completed  # imported here: without the dask extra this module still imports

    futures, owner = [], {}
    for plan in plans:
        plan.remove_parts()  # of a run that was stopped
        for j, (start, end) in enumerate(plan.ranges):
            # earlier files first, so that outputs appear in input order as the run goes
            future = client.submit(_tag_part, job, plan.source, plan.path, plan.gz, start, end, plan.part(j), pure=False,
                                   priority=-plan.number)
            futures.append(future)
            plan.futures.append(future)
            owner[future.key] = (plan, j)
    failed, pending = {}, list(plans)  # pending: not yet written or failed, in input order
    bar = tqdm(total=sum(p.size for p in plans), unit="B", unit_scale=True, desc="tagging", disable=disabled(progress))
    finished = False
    try:
        for future in as_completed(futures):
            plan, j = owner[future.key]
            start, end = plan.ranges[j]
            bar.update(end - start)
            if plan.number in failed:
                continue
            try:
                result = future.result()
            except Exception as exc:  # a worker lost, or an error outside the tagging
                result = ("failed", f"{type(exc).__name__}: {exc}")
            if result[0] != "ok":
                failed[plan.number] = result
                client.cancel(plan.futures)
            else:
                plan.results[j] = result
            # the files now complete in input order are joined (also when the file before them just failed)
            while pending and (pending[0].number in failed or all(pending[0].results)):
                done = pending.pop(0)
                if done.number not in failed:
                    _join(done, job.encoding)
                    summary["files"] += 1
                    summary["sentences"] += sum(r[1] for r in done.results)
                    summary["bytes"] += done.size
        finished = True
    finally:
        bar.close()
        if not finished:
            client.cancel(futures)
        for plan in plans:
            if plan.number in failed or not finished:
                plan.remove_parts()
    if failed:
        _report(failed, len(plans))
    return summary


def _join(plan, encoding):
    """The output of a file from its parts, atomically; the parts go."""
    directory, name = os.path.split(plan.part_prefix)
    fd, tmp = tempfile.mkstemp(prefix=name + "joined.", dir=directory)
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o666 & ~mask)
        with os.fdopen(fd, "wb") as out:
            mark = byte_order_mark(encoding)
            if mark and any(r[2] for r in plan.results):  # as seqbil tag: once, before the first byte
                out.write(gzip.compress(mark, mtime=0) if plan.gz else mark)
            for j in range(len(plan.ranges)):
                with open(plan.part(j), "rb") as part:
                    shutil.copyfileobj(part, out, 1 << 20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, plan.output)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise SeqbilError(f"{plan.output}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    plan.remove_parts()


def _report(failed, n):
    if len(failed) == 1:
        raise_failure(next(iter(failed.values())))
    lines = []
    for result in failed.values():
        try:
            raise_failure(result)
        except SeqbilError as exc:
            lines.append(f"  {exc}")
    raise SeqbilError(f"{len(failed)} of {n} files were not tagged (the others are written):\n" + "\n".join(lines))


# --- the workers -------------------------------------------------------------------------

_models, _models_lock = {}, threading.Lock()


def _model(job):
    """The job's model in this worker process: loaded (memory-mapped) on first use."""
    key = (job.model, job.stamp, job.task, job.dicts)
    with _models_lock:
        model = _models.get(key)
        if model is None:
            if _stamp(job.model) != job.stamp:
                raise SeqbilError(f"{job.model}: not the model file the run began with (it changed, or this "
                                  "worker sees another file at that path)")
            model, _ = prepare(job.model, job.task, None, None, False)
            for spec in job.dicts:
                name, eq, file = spec.rpartition("=")
                model.add_word_file(file, name if eq else None)
            warm_model(model)
            _models.clear()  # one model per worker: a new run's replaces the last
            _models[key] = model
    return model


def _tag_part(job, path, name, gz, start, end, part):
    """Tag the partition [b(start), b(end)) of path (all of it if gz) into the file
    `part`; ("ok", sentences, output bytes) or a failure as failure_of gives
    (errors name the file `name`)."""
    lo = 0
    try:
        tagger = BlockTagger(_model(job), name, job.encoding, job.nbest, job.confidence, job.marginals)
        with open(path, "rb") as f:
            if gz:
                stream = gzip.GzipFile(fileobj=f, mode="rb")
            else:
                size = os.fstat(f.fileno()).st_size
                lo = sentence_boundary(f, start, size, job.one_per_line)
                hi = sentence_boundary(f, end, size, job.one_per_line)
                f.seek(lo)
                stream = _Range(f, hi - lo)
            reader = BlockReader(stream, name, job.one_per_line, block_bytes(job.nbest), offset=lo)
            return ("ok",) + _write_part(tagger, reader, part, gz)
    except InputError as exc:
        if exc.line and lo:  # the reader counted lines from the partition's start
            exc = InputError(exc.path, exc.line + _lines_before(path, lo), exc.message)
        return failure_of(exc)
    except Exception as exc:
        return failure_of(exc)


def _write_part(tagger, reader, part, gz):
    directory, name = os.path.split(part)
    fd, tmp = tempfile.mkstemp(prefix=name + ".", dir=directory)
    sentences = written = 0
    try:
        with os.fdopen(fd, "wb") as raw:
            out = gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) if gz else raw
            for block in reader:
                if block is not None:
                    data, n = tagger(block)
                    out.write(data)
                    sentences, written = sentences + n, written + len(data)
            if gz:
                out.close()
        os.replace(tmp, part)  # whole, or not there: a task run twice writes the same part
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return sentences, written


def sentence_boundary(f, x, size, one_per_line):
    """b(x): the first sentence boundary at or after x (see the module's docstring)."""
    if x <= 0:
        return 0
    if x >= size:
        return size
    window = _WINDOW
    while True:
        f.seek(x - 1)
        buf = f.read(window)
        if one_per_line:
            at = buf.find(b"\n")
            if at >= 0:
                return x + at
        else:
            # a match found in the window is the first from x - 1 in the file too: one
            # that began earlier and ran past the window would hold no line end after
            # its first byte, yet a later match has two
            found = BLANK_LINE.search(buf)
            if found:
                return x - 1 + found.end()
        if x - 1 + len(buf) >= size:
            return size
        window *= 4  # a long sentence: look further


class _Range:
    """The next n bytes of a binary file, as a stream."""

    def __init__(self, f, n):
        self.f, self.left = f, n

    def read(self, n=-1):
        n = self.left if n is None or n < 0 else min(n, self.left)
        data = self.f.read(n) if n else b""
        self.left -= len(data)
        return data


def _lines_before(path, offset):
    """Line ends in the first offset bytes of path."""
    count = 0
    with open(path, "rb") as f:
        while offset > 0:
            data = f.read(min(offset, 1 << 20))
            if not data:
                break
            count += data.count(b"\n")
            offset -= len(data)
    return count


def _tag_sentences(sentences, job, segment):
    model = _model(job)
    sentences = list(sentences)
    if segment:
        return [model.segment(s) for s in sentences]
    return model.tag_many(sentences)
