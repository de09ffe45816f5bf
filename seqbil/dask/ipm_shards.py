"""The shards' side of iterative parameter mixing (dask/ipm.py): the tasks the driver
gives the worker that holds each shard. A worker keeps a shard from task to task (read,
encoded, with its learner and a copy of the parameters as the epoch began) until the
run lets go of it (shard_drop)."""
import io
import threading
import time

import numpy as np

from ..checkpoint import fingerprint
from ..errors import InputError, SeqbilError
from ..evaluation.chunks import iob1_start
from ..features.dataset import encode
from ..features.dictionaries import training_words
from ..features.index import field_vocabularies, normalizer
from ..formats import make_format
from ..formats.sentence import Corpus
from ..learners.base import CHUNK
from .ipm_mix import BUCKETS, apply, bucket_rows, by_row, ids_at
from .tagging import sentence_boundary

# what a worker keeps of a run's shards, by (run, shard): read, encoded, ready for the passes
_corpora, _datasets, _shards, _lock = {}, {}, {}, threading.Lock()


class _Shard:
    def __init__(self, data, learner, rng):
        self.data, self.learner, self.rng = data, learner, rng
        self.changed = None  # (epoch, {NAME: (keys, values)}): what the last pass changed
        data.pos_diff = np.zeros(data.n_positions, np.uint8)  # the kernels flag where they update
        self.base = _base(learner)


def _base(learner):
    """The parameters with a row per attribute as the epoch begins, flattened by row,
    to find the entries a pass changed (the rows it may have changed are known)."""
    names, _ = learner.mixing()
    every = (np.arange(learner.A0), np.arange(learner.A1))
    return {name: by_row(learner.get_rows(name, every[o])) for name, o in names.items() if o is not None}


def _read_shard(spec, k, K, size):
    """The Corpus of shard k. A bad line is named by its place in the file."""
    fmt = make_format(spec["format"], spec["n_fields"], spec["label_column"])
    if spec["gz"]:  # no entering the middle: every shard reads the file and keeps its range of sentences
        sentences = list(fmt.read(spec["path"], labeled=True, encoding=spec["encoding"]))
        n = len(sentences)
        return Corpus.of(sentences[n * k // K:n * (k + 1) // K])
    one_per_line = fmt.sentence_per_line
    with open(spec["path"], "rb") as f:
        lo = sentence_boundary(f, size * k // K, size, one_per_line)
        hi = sentence_boundary(f, size * (k + 1) // K, size, one_per_line)
        f.seek(lo)
        raw = io.BytesIO(f.read(hi - lo))
    raw.name = spec.get("name", spec["path"])
    try:
        return Corpus.of(fmt.read(raw, labeled=True, encoding=spec["encoding"]))
    except InputError as exc:
        if not exc.line:
            raise
        with open(spec["path"], "rb") as f:  # the lines before the shard (only now: errors are rare)
            before = sum(block.count(b"\n") for block in iter(lambda: f.read(min(1 << 20, lo - f.tell())), b""))
        raise InputError(exc.path, exc.line + before, exc.message) from None


def _corpus(run, k, K, spec, size):
    """Shard k as this worker read it before (kept), or read now and kept."""
    with _lock:
        corpus = _corpora.get((run, k))
    if corpus is None:
        corpus = _read_shard(spec, k, K, size)
        with _lock:
            _corpora[(run, k)] = corpus
    return corpus


def shard_survey(run, k, K, spec, size, request):
    """Read shard k, keep it, and return what the driver needs of it to make the index
    and the run: its sentences, tokens and labels, the vocabulary of every field the
    templates read (field_vocabularies; request: fields, normalize, length_cap), the
    attribute names (%attr), the distinct values of some columns (for vectors) and its
    words (for a dictionary from the training data). A bad line: {"error": (path,
    line, message)}."""
    try:
        corpus = _corpus(run, k, K, spec, size)
    except InputError as exc:
        return {"error": (exc.path, exc.line, exc.message)}
    fold = normalizer(request["normalize"])
    try:
        vocabularies = [v.strings for v in field_vocabularies(corpus, request["fields"], fold,
                                                              request["length_cap"])]
    except ValueError as exc:  # a column missing in some sentence
        return {"error": (spec["name"], 0, str(exc))}
    return {"sentences": len(corpus), "tokens": corpus.n_tokens, "labels": list(corpus.label_values),
            "vocabularies": vocabularies, "names": list(corpus.items.names) if corpus.items is not None else None,
            "columns": {c: list(corpus.column(c)[0]) for c in request["columns"]},
            "words": training_words(corpus, fold, request["min_length"])[0] if request["words"] else None}


def shard_count(run, k, K, spec, size, index, witness):
    """The key_counts of shard k under the merged vocabularies (index), and with
    witness the labels of a sentence in which an I- tag starts a chunk (or None)."""
    corpus = _corpus(run, k, K, spec, size)
    counts, names = index.key_counts(corpus)
    found = next((list(s) for s in corpus.label_sequences() if s is not None and iob1_start(s)), None) \
        if witness else None
    return {"counts": counts, "names": names, "witness": found}


def _dataset(run, k, K, spec, size, shared):
    """Shard k encoded: as this worker encoded it before (shard_encode), or encoded now from
    the corpus it keeps or reads."""
    with _lock:
        data = _datasets.pop((run, k), None)
    if data is None:
        corpus = _corpus(run, k, K, spec, size)
        data = encode(corpus, shared["templates"], shared["index"], shared["labels"])[0]
        data.without_b_ptr()
    with _lock:
        _corpora.pop((run, k), None)
    return data


def shard_encode(run, k, K, spec, size, shared):
    """Encode shard k by the run's index and keep it; (sequences, CRC-32 of the
    encoding)."""
    data = _dataset(run, k, K, spec, size, shared)
    with _lock:
        _datasets[(run, k)] = data
    return data.n_sequences, fingerprint(data)


def shard_start(run, k, K, spec, size, shared, learner, state=None, epochs_run=0):
    """Shard k ready for the passes on this worker: encoded, with a learner (learner:
    its class and sizes), set to the driver's parameters (state) when the run resumed,
    its random state moved on by the epochs run. Returns its number of sequences."""
    data = _dataset(run, k, K, spec, size, shared)
    cls, S, A0, A1, transitions = learner
    shard = _Shard(data, cls(S, A0, A1, shared["settings"], transitions),
                   np.random.default_rng(shared["settings"].seed + k))
    if state is not None:
        apply(shard.learner, state)
        shard.base = _base(shard.learner)
    for _ in range(epochs_run):  # the permutation of each epoch run before
        shard.rng.permutation(data.n_sequences)
    with _lock:
        _shards[(run, k)] = shard
    return data.n_sequences


def shard_remade(run, k, K, spec, size, shared, state, epochs_run, epoch, then=None):
    """Shard k made on this worker from the driver's parameters (its worker was lost):
    read and encoded, its learner set to them, its random state moved on by the
    epochs run; then the pass of `epoch` (None: its number of sequences, as shard_start)
    and, with then = (lo, hi), the entries it changed there (shard_changed)."""
    n = shard_start(run, k, K, spec, size, shared, shared["learner"], state, epochs_run)
    if epoch is None:
        return n
    out = shard_epoch(run, k, epoch, None)
    return out if then is None else shard_changed(run, k, epoch, *then)


def _take(shard, mixed):
    """Put a message of the mix into a shard's learner and its copy of the epoch's start."""
    learner = shard.learner
    apply(learner, mixed)
    for name, o in learner.mixing()[0].items():
        if o is not None and name in mixed:
            keys, values = mixed[name]
            rows, cols = np.divmod(keys, shard.base[name].shape[1])
            shard.base[name][rows, cols] = values


def shard_epoch(run, k, epoch, parts):
    """Take the mix of the last epoch (its parts, in order), make one pass over the
    shard, and keep the entries it changed (found among the rows of the attributes at
    the positions the kernels flagged) for shard_changed; return the dense arrays, the
    scalars, the mistakes, and the count of changed entries by bucket of rows."""
    start = time.perf_counter()
    shard = _shards.get((run, k))
    if shard is None:
        raise SeqbilError("a Dask worker lost the shard it held (it restarted?); run the training again")
    learner, data = shard.learner, shard.data
    names, scalars = learner.mixing()
    shard.changed = None
    for mixed in parts or ():
        _take(shard, mixed)
    learner.start_pass(epoch)
    order = shard.rng.permutation(data.n_sequences).astype(np.int64)
    data.pos_diff[:] = 0
    mistakes, passing = 0, time.perf_counter()
    for c in range(0, data.n_sequences, CHUNK):
        mistakes += learner.train_chunk(data, order[c:c + CHUNK])
    learner.end_pass(epoch)
    # ("pass_mistakes": a learner's scalars may be named "mistakes", as bol's running count is)
    out = {"pass_mistakes": int(mistakes), "pass_s": time.perf_counter() - passing}
    # the rows an update can have changed: the attributes at the flagged positions;
    # of those, the entries that differ from the epoch's start travel
    touched = [ids_at(data.u_ptr, data.u_ids, data.pos_diff, learner.A0),
               ids_at(data.b_pointers(), data.b_ids, data.pos_diff, learner.A1)]
    sizes, changed, counts = (learner.A0, learner.A1), {}, np.zeros(BUCKETS, np.int64)
    for name, o in names.items():
        if o is not None:
            rows = touched[o]
            now = by_row(learner.get_rows(name, rows))
            at, cols = np.nonzero(now != shard.base[name][rows])
            changed[name] = (rows[at] * now.shape[1] + cols, now[at, cols])
            counts += np.bincount(rows[at] * BUCKETS // max(sizes[o], 1), minlength=BUCKETS)
    shard.changed = (epoch, changed)
    out["entries"] = counts
    for name, o in names.items():
        if o is None:
            out[name] = learner.get_rows(name, None)
    for name in scalars:
        out[name] = getattr(learner, name)
    out["shard_s"] = time.perf_counter() - start
    return out


def shard_changed(run, k, epoch, lo, hi):
    """The entries shard k changed in the pass of `epoch`, in the rows of buckets
    lo..hi-1: {NAME: (keys, values)}."""
    shard = _shards.get((run, k))
    if shard is None or shard.changed is None or shard.changed[0] != epoch:
        raise SeqbilError("a Dask worker lost the shard it held (it restarted?); run the training again")
    learner, out = shard.learner, {}
    sizes = (learner.A0, learner.A1)
    for name, o in learner.mixing()[0].items():
        if o is not None:
            keys, values = shard.changed[1][name]
            width = shard.base[name].shape[1]
            a, b = (r * width for r in bucket_rows(lo, hi, sizes[o]))
            i, j = np.searchsorted(keys, a), np.searchsorted(keys, b)
            out[name] = (keys[i:j], values[i:j])
    return out


def shard_drop(run):
    """Let go of everything this worker keeps for a run."""
    with _lock:
        for kept in (_shards, _corpora, _datasets):
            for key in [key for key in kept if key[0] == run]:
                del kept[key]
