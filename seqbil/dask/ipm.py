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
the feature index the driver built; the worker keeps the encoded shard and its
learner from epoch to epoch. After a pass it sends the rows of the parameters that
changed (the attributes it updated) and the dense ones (transitions, end scores);
the driver mixes them, row by row over the union of the touched rows (a shard that
did not touch a row contributes that row's value from the start of the epoch), and
sends the mixed rows back to every shard. Shard k shuffles with seed + k, so shard 0
of 1 makes exactly the passes of training in one process, and a run's result depends
on the shards and the seed, not on the workers that hold them.
"""
import io
import os
import threading
import uuid

import numpy as np

from ..errors import SeqbilError
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
        with open(path, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
        size = os.path.getsize(path)
        spec = {"path": path, "gz": gz, "format": fmt.name, "n_fields": fmt.n_fields,
                "label_column": settings["label_column"], "encoding": settings["encoding"]}
        # one object per worker (scatter takes a list's items one by one, a dict's values too)
        [shared] = client.scatter([{"index": index, "templates": templates, "labels": labels, "settings": settings,
                                    "learner": (type(learner), learner.S, learner.A0, learner.A1,
                                                learner.transitions)}], broadcast=True, hash=False)
        futures = [client.submit(_setup, self.run, k, self.K, spec, size, shared, workers=[self.where[k]],
                                 allow_other_workers=False, pure=False) for k in range(self.K)]
        self.sizes = _results(client, futures)
        if echo is not None:
            echo(f"iterative parameter mixing: {self.K} shards of {', '.join(map(str, self.sizes))} sequences "
                 f"on {len(set(self.where))} Dask workers; mixing {settings['mixing']}")
        self.mixed = None  # the last epoch's mixed rows, for the shards

    def epoch(self, k, bar=None):
        """One epoch: a pass on every shard, then the mix; returns (mistakes, stats)."""
        client = self.client
        [mixed] = client.scatter([self.mixed], broadcast=True, hash=False) if self.mixed is not None else [None]
        futures = [client.submit(_epoch, self.run, s, k, mixed, workers=[self.where[s]], allow_other_workers=False,
                                 pure=False) for s in range(self.K)]
        if bar is not None:
            from distributed import as_completed
            for future in as_completed(futures):
                bar.update(self.sizes[futures.index(future)])
        results = _results(client, futures)
        mistakes = [r["mistakes"] for r in results]
        total = sum(mistakes)
        mu = [m / total for m in mistakes] if self.by_mistakes and total else [1.0 / self.K] * self.K
        self.mixed = mix(self.learner, results, mu)
        apply(self.learner, self.mixed)
        stats = {"shard_mistakes": mistakes, "delta_bytes": sum(_nbytes(r) for r in results),
                 "mixed_bytes": _nbytes(self.mixed),
                 "rows_mixed": [len(self.mixed.get(f"rows{o}", ())) for o in (0, 1)]}
        return total, stats

    def close(self):
        futures = [self.client.submit(_drop, self.run, k, workers=[self.where[k]], allow_other_workers=False,
                                      pure=False) for k in range(self.K)]
        try:
            self.client.gather(futures)
        except Exception:  # the state goes with the workers anyway
            pass


def _results(client, futures):
    try:
        return client.gather(futures)
    except SeqbilError:
        raise
    except Exception as exc:  # a worker lost, and the shards it held with it
        raise SeqbilError(f"iterative parameter mixing failed on a Dask worker ({type(exc).__name__}: {exc}); "
                          "run the training again") from None


def _nbytes(message):
    return sum(v.nbytes for v in message.values() if isinstance(v, np.ndarray))


# --- mixing ---------------------------------------------------------------------

def mix(learner, results, mu):
    """The mixed parameters from the shards' messages (see the module's docstring):
    {rows0, rows1: the attributes touched by any shard; NAME: the mixed rows or the
    mixed dense parameter; SCALAR: the mixed value}. The sums run over the shards in
    order and a row touched by every shard takes no term from the start of the epoch,
    so that one shard's parameters come back exactly."""
    names, scalars = learner.mixing()
    out = {}
    for order in (0, 1):
        touched = [r[f"rows{order}"] for r in results]
        rows = np.unique(np.concatenate(touched)) if touched else np.zeros(0, np.int64)
        out[f"rows{order}"] = rows
        at = [np.searchsorted(rows, t) for t in touched]
        count = np.zeros(len(rows), np.int64)
        weight = np.zeros(len(rows))
        for a, m in zip(at, mu):
            count[a] += 1
            weight[a] += m
        partial = np.flatnonzero(count < len(results))  # rows some shard left as they were
        for name, o in names.items():
            if o != order:
                continue
            start = learner.get_rows(name, rows[partial])
            acc = np.zeros((len(rows),) + start.shape[1:])
            for r, a, m in zip(results, at, mu):
                acc[a] += m * r[name] if m != 1.0 else r[name]
            if len(partial):
                acc[partial] += (1.0 - weight[partial]).reshape((-1,) + (1,) * (start.ndim - 1)) * start
            out[name] = acc
    for name, o in names.items():
        if o is None:
            acc = 0.0
            for r, m in zip(results, mu):
                acc = acc + (m * r[name] if m != 1.0 else r[name])
            out[name] = acc
    for name in scalars:
        value = sum(m * r[name] for r, m in zip(results, mu))
        out[name] = int(round(value)) if isinstance(getattr(learner, name), int) else value
    learner.mixed(out, len(results))
    return out


def apply(learner, mixed):
    """Put mixed parameters into a learner (in place)."""
    names, scalars = learner.mixing()
    for name, order in names.items():
        learner.set_rows(name, None if order is None else mixed[f"rows{order}"], mixed[name])
    for name in scalars:
        setattr(learner, name, mixed[name])


# --- the workers ------------------------------------------------------------------

_shards, _lock = {}, threading.Lock()


class _Shard:
    def __init__(self, data, learner, rng):
        self.data, self.learner, self.rng = data, learner, rng
        # the attributes that occur in the shard: the only rows a pass can change
        self.occurs = [np.unique(data.u_ids) if data.u_ids.size else np.zeros(0, np.int64),
                       np.unique(data.b_ids) if data.b_ids.size else np.zeros(0, np.int64)]


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
    """Take the mixed parameters, make one pass over the shard, and return the rows
    it changed, the dense arrays, the scalars and the mistakes."""
    shard = _shards.get((run, k))
    if shard is None:
        raise SeqbilError("a Dask worker lost the shard it held (it restarted?); run the training again")
    learner, data = shard.learner, shard.data
    if mixed is not None:
        apply(learner, mixed)
    names, scalars = learner.mixing()
    before = {name: learner.get_rows(name, shard.occurs[o]) for name, o in names.items() if o is not None}
    learner.start_pass(epoch)
    order = shard.rng.permutation(data.n_sequences).astype(np.int64)
    mistakes = 0
    for c in range(0, data.n_sequences, CHUNK):
        mistakes += learner.train_chunk(data, order[c:c + CHUNK])
    learner.end_pass(epoch)
    out = {"mistakes": int(mistakes)}
    for o in (0, 1):
        occurs = shard.occurs[o]
        after = {name: learner.get_rows(name, occurs) for name, order_ in names.items() if order_ == o}
        changed = np.zeros(len(occurs), bool)
        for name, values in after.items():
            changed |= (values != before[name]).reshape(len(occurs), -1).any(axis=1)
        out[f"rows{o}"] = occurs[changed]
        out.update({name: values[changed] for name, values in after.items()})
    for name, o in names.items():
        if o is None:
            out[name] = learner.get_rows(name, None)
    for name in scalars:
        out[name] = getattr(learner, name)
    return out


def _drop(run, k):
    with _lock:
        _shards.pop((run, k), None)
