"""Iterative parameter mixing on a Dask cluster (`seqbil train --shards K`).

McDonald, Hall & Mann (2010), "Distributed training strategies for the structured
perceptron", Figure 3: the training file is cut into K shards; every epoch each shard
runs one pass of the learner from the mixed parameters, and the driver mixes them,
w = sum_k mu_k w_k, with mu_k = 1/K (uniform) or mistakes_k / sum of mistakes (their
weighting by errors). What the learner averages over the run (its lazy sums U and the
step counter) is mixed the same way, so that the averaged model of a mixed run is the
average over a virtual run whose steps are the mixed ones.

A shard is the sentences of a byte range of the file, cut at sentence boundaries as
tagging cuts files (dask/tagging.py: _boundary), or, for a gzip file, a contiguous
range of sentences. Each shard is read and encoded by the worker that holds it, with
the feature index the driver built; the worker keeps the encoded shard, its learner
and a copy of the parameters as the epoch began from epoch to epoch. The kernels flag
the positions their updates reach (Dataset.pos_diff), so after a pass the worker
compares only the rows of the attributes there, and sends the entries that changed
(key = attribute * row size + column, and the value) with the dense parameters
(transitions, end scores) and the scalars. The driver mixes entry by entry over the
union of the entries sent (a shard that left an entry as it was contributes its value
from the start of the epoch), lets the learner adjust the mix (bol: the factors of
the mixed blocks), and sends the mixed entries back to every shard. Shard k shuffles
with seed + k, so shard 0 of 1 makes exactly the passes of training in one process,
and a run's result depends on the shards and the seed, not on the workers that hold
them. Keys are kept sorted, and made distinct by sorting (runs, distinct).
"""
import io
import os
import threading
import time
import uuid

import numpy as np

from ..errors import SeqbilError
from ..formats.textio import is_gzip
from .tagging import _boundary

CHUNK = 256  # sequences per call into compiled code, as training.py


class Mixer:
    """The driver's side: make the shards on the workers, run the epochs, mix.

    learner: the driver's learner, which holds the mixed parameters (its arrays are
    updated in place after every epoch)."""

    def __init__(self, client, learner, settings, source, fmt, index, templates, labels, echo=None):
        self.client, self.learner, self.settings = client, learner, settings
        self.K = int(settings["shards"])
        self.by_mistakes = settings["mixing"] == "mistakes"
        self.run = uuid.uuid4().hex
        workers = sorted(client.scheduler_info()["workers"])
        if not workers:
            raise SeqbilError("the Dask cluster has no workers")
        self.where = [workers[k % len(workers)] for k in range(self.K)]
        path = os.path.abspath(os.fspath(source))
        size = os.path.getsize(path)
        spec = {"path": path, "gz": is_gzip(path), "format": fmt.name, "n_fields": fmt.n_fields,
                "label_column": settings["label_column"], "encoding": settings["encoding"]}
        # one object per worker (scatter takes a list's items one by one, a dict's values too)
        [shared] = client.scatter([{"index": index, "templates": templates, "labels": labels, "settings": settings,
                                    "learner": (type(learner), learner.S, learner.A0, learner.A1,
                                                learner.transitions)}], broadcast=True, hash=False)
        futures = [client.submit(_setup, self.run, k, self.K, spec, size, shared, workers=[self.where[k]],
                                 allow_other_workers=False, pure=False) for k in range(self.K)]
        self.sizes = self._gather(futures)
        if echo is not None:
            echo(f"iterative parameter mixing: {self.K} shards of {', '.join(map(str, self.sizes))} sequences "
                 f"on {len(set(self.where))} Dask workers; mixing {settings['mixing']}")
        self.mixed = None  # the last epoch's mixed entries, for the shards

    def epoch(self, k, bar=None):
        """One epoch: a pass on every shard, then the mix; returns (mistakes, stats)."""
        client, start = self.client, time.perf_counter()
        [mixed] = client.scatter([self.mixed], broadcast=True, hash=False) if self.mixed is not None else [None]
        futures = [client.submit(_epoch, self.run, s, k, mixed, workers=[self.where[s]], allow_other_workers=False,
                                 pure=False) for s in range(self.K)]
        results = self._gather(futures, bar)
        mixing = time.perf_counter()
        mistakes = [r["mistakes"] for r in results]
        total = sum(mistakes)
        mu = [m / total for m in mistakes] if self.by_mistakes and total else [1.0 / self.K] * self.K
        self.mixed = mix(self.learner, results, mu)
        apply(self.learner, self.mixed)
        end = time.perf_counter()
        # where an epoch goes: the slowest shard's pass, the rest of the shards' work
        # (taking the mix, collecting what changed), the messages, and the driver's mix
        stats = {"shard_mistakes": mistakes, "delta_bytes": sum(_nbytes(r) for r in results),
                 "mixed_bytes": _nbytes(self.mixed),
                 "entries_mixed": sum(len(v[0]) for v in self.mixed.values() if isinstance(v, tuple)),
                 "pass_s": max(r["pass_s"] for r in results), "shard_s": max(r["shard_s"] for r in results),
                 "mix_s": end - mixing, "epoch_s": end - start}
        return total, stats

    def close(self):
        """Free the shards on the workers that are still there (a lost one took its own)."""
        from distributed import wait
        try:
            alive = set(self.client.scheduler_info()["workers"])
            futures = [self.client.submit(_drop, self.run, k, workers=[where], allow_other_workers=False, pure=False)
                       for k, where in enumerate(self.where) if where in alive]
            wait(futures, timeout=20)
        except Exception:  # the state goes with the workers anyway
            pass

    def _gather(self, futures, bar=None):
        """The shards' results, in shard order; the bar moves by each shard's sequences
        as it finishes. A shard's task runs only on the worker that holds the shard, so
        a worker that is gone is an error here, not a task waiting for ever."""
        from distributed import wait
        pending = set(futures)
        while pending:
            try:
                done, pending = wait(list(pending), timeout=2, return_when="FIRST_COMPLETED")
            except TimeoutError:
                lost = set(self.where) - set(self.client.scheduler_info()["workers"])
                if lost:
                    raise SeqbilError(f"the Dask worker {sorted(lost)[0]} is gone, and the shards it held with it; "
                                      "run the training again") from None
                continue
            if bar is not None:
                bar.update(sum(self.sizes[futures.index(f)] for f in done if f.status == "finished"))
        try:
            return self.client.gather(futures)
        except SeqbilError:
            raise
        except Exception as exc:
            raise SeqbilError(f"iterative parameter mixing failed on a Dask worker ({type(exc).__name__}: {exc}); "
                              "run the training again") from None


def _nbytes(message):
    arrays = [a for v in message.values() for a in (v if isinstance(v, tuple) else (v,))]
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


# --- mixing ---------------------------------------------------------------------

def mix(learner, results, mu):
    """The mixed parameters from the shards' messages (see the module's docstring):
    {NAME: (keys, values) for a parameter with a row per attribute (key = row *
    row size + column: the entries some shard changed), the mixed array for a dense
    one, the mixed number for a scalar}. The sums run over the shards in order and an
    entry every shard changed takes no term from the start of the epoch, so that one
    shard's parameters come back exactly."""
    names, scalars = learner.mixing()
    out = {}
    for name, order in names.items():
        if order is None:
            acc = 0.0
            for r, m in zip(results, mu):
                acc = acc + (m * r[name] if m != 1.0 else r[name])
            out[name] = acc
            continue
        sent = [r[name] for r in results]
        keys = distinct(np.sort(np.concatenate([k for k, _ in sent])))
        acc, weight, count = np.zeros(len(keys)), np.zeros(len(keys)), np.zeros(len(keys), np.int64)
        for (k, v), m in zip(sent, mu):
            at = np.searchsorted(keys, k)
            acc[at] += m * v if m != 1.0 else v
            weight[at] += m
            count[at] += 1
        partial = np.flatnonzero(count < len(results))  # entries some shard left as they were
        if len(partial):
            acc[partial] += (1.0 - weight[partial]) * entries(learner, name, keys[partial])
        out[name] = (keys, acc)
    for name in scalars:
        value = sum(m * r[name] for r, m in zip(results, mu))
        out[name] = int(round(value)) if isinstance(getattr(learner, name), int) else value
    learner.mixed(out, len(results))
    return out


def apply(learner, mixed):
    """Put mixed parameters into a learner (in place)."""
    names, scalars = learner.mixing()
    for name, order in names.items():
        if order is None:
            learner.set_rows(name, None, mixed[name])
        else:
            set_entries(learner, name, *mixed[name])
    for name in scalars:
        setattr(learner, name, mixed[name])


def runs(keys):
    """(distinct values, the index of each value among them) of a sorted array (keys
    are kept sorted throughout: a sort is much faster than numpy's hashing unique)."""
    new = np.ones(len(keys), bool)
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    return keys[new], np.cumsum(new) - 1


def distinct(keys):
    """The distinct values of a sorted array."""
    return runs(keys)[0]


def by_row(array):
    """A view with one row per attribute, flat (also when there are none)."""
    return array.reshape(array.shape[0], int(np.prod(array.shape[1:], dtype=np.int64)))


def entries(learner, name, keys):
    """The values of a parameter at the entries `keys` (row * row size + column)."""
    rows, cols = np.divmod(keys, learner.row_size(name))
    unique, at = runs(rows)
    return by_row(learner.get_rows(name, unique))[at, cols]


def set_entries(learner, name, keys, values):
    """Set a parameter at the entries `keys` (row * row size + column)."""
    rows, cols = np.divmod(keys, learner.row_size(name))
    unique, at = runs(rows)
    block = learner.get_rows(name, unique)
    flat = by_row(block)
    flat[at, cols] = values
    learner.set_rows(name, unique, block)


# --- the workers ------------------------------------------------------------------

_shards, _lock = {}, threading.Lock()


class _Shard:
    def __init__(self, data, learner, rng):
        self.data, self.learner, self.rng = data, learner, rng
        data.pos_diff = np.zeros(data.n_positions, np.uint8)  # the kernels flag where they update
        # the parameters with a row per attribute as the epoch began, flattened by row,
        # to find the entries a pass changed (the rows it may have changed are known)
        names, _ = learner.mixing()
        every = (np.arange(learner.A0), np.arange(learner.A1))
        self.base = {name: by_row(learner.get_rows(name, every[o]))
                     for name, o in names.items() if o is not None}


def _ids_at(ptr, ids, positions):
    """The distinct ids of the CSR rows `positions` (ptr[p]:ptr[p + 1] of ids)."""
    lo, hi = ptr[positions], ptr[positions + 1]
    lengths = hi - lo
    if not lengths.sum():
        return np.zeros(0, np.int64)
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return distinct(np.sort(ids[starts + np.arange(lengths.sum())]).astype(np.int64))


def _read_shard(spec, k, K, size):
    from ..formats import make_format
    from ..formats.sentence import Corpus

    fmt = make_format(spec["format"], spec["n_fields"], spec["label_column"])
    if spec["gz"]:  # no entering the middle: every shard reads the file and keeps its range of sentences
        sentences = list(fmt.read(spec["path"], labeled=True, encoding=spec["encoding"]))
        n = len(sentences)
        return Corpus.of(sentences[n * k // K:n * (k + 1) // K])
    one_per_line = spec["format"] == "sighan"
    with open(spec["path"], "rb") as f:
        lo = _boundary(f, size * k // K, size, one_per_line)
        hi = _boundary(f, size * (k + 1) // K, size, one_per_line)
        f.seek(lo)
        raw = f.read(hi - lo)
    return Corpus.of(fmt.read(io.BytesIO(raw), labeled=True, encoding=spec["encoding"]))


def _setup(run, k, K, spec, size, shared):
    """Read and encode shard k; keep it, with a learner, in this worker. Returns its
    number of sequences."""
    from ..features.dataset import encode

    corpus = _read_shard(spec, k, K, size)
    data = encode(corpus, shared["templates"], shared["index"], shared["labels"])[0]
    data.without_b_ptr()
    cls, S, A0, A1, transitions = shared["learner"]
    learner = cls(S, A0, A1, shared["settings"], transitions)
    with _lock:
        _shards[(run, k)] = _Shard(data, learner, np.random.default_rng(shared["settings"]["seed"] + k))
    return data.n_sequences


def _epoch(run, k, epoch, mixed):
    """Take the mixed parameters, make one pass over the shard, and return the entries
    it changed (found among the rows of the attributes at the positions the kernels
    flagged), the dense arrays, the scalars and the mistakes."""
    start = time.perf_counter()
    shard = _shards.get((run, k))
    if shard is None:
        raise SeqbilError("a Dask worker lost the shard it held (it restarted?); run the training again")
    learner, data = shard.learner, shard.data
    names, scalars = learner.mixing()
    if mixed is not None:
        apply(learner, mixed)
        for name, o in names.items():
            if o is not None:
                keys, values = mixed[name]
                rows, cols = np.divmod(keys, shard.base[name].shape[1])
                shard.base[name][rows, cols] = values
    learner.start_pass(epoch)
    order = shard.rng.permutation(data.n_sequences).astype(np.int64)
    data.pos_diff[:] = 0
    mistakes, passing = 0, time.perf_counter()
    for c in range(0, data.n_sequences, CHUNK):
        mistakes += learner.train_chunk(data, order[c:c + CHUNK])
    learner.end_pass(epoch)
    out = {"mistakes": int(mistakes), "pass_s": time.perf_counter() - passing}
    # the rows an update can have changed: the attributes at the flagged positions;
    # of those, the entries that differ from the epoch's start travel
    positions = np.flatnonzero(data.pos_diff)
    touched = [_ids_at(data.u_ptr, data.u_ids, positions), _ids_at(data.b_pointers(), data.b_ids, positions)]
    for name, o in names.items():
        if o is not None:
            rows = touched[o]
            now = by_row(learner.get_rows(name, rows))
            at, cols = np.nonzero(now != shard.base[name][rows])
            out[name] = (rows[at] * now.shape[1] + cols, now[at, cols])
    for name, o in names.items():
        if o is None:
            out[name] = learner.get_rows(name, None)
    for name in scalars:
        out[name] = getattr(learner, name)
    out["shard_s"] = time.perf_counter() - start
    return out


def _drop(run, k):
    with _lock:
        _shards.pop((run, k), None)
