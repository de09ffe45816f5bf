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
range of sentences. No process reads the whole file: each shard is read by the worker
that holds it, which sends the vocabularies of its fields (survey), then, under the
vocabularies merged in shard order, the distinct keys of every template with their
counts (count); the driver merges keys, not corpora, into the index that training in
one process would build (FeatureIndex.from_counts), and the shards encode themselves
by it (encode). The worker keeps the encoded shard, its learner and a copy of the
parameters as the epoch began from epoch to epoch. The kernels flag
the positions their updates reach (Dataset.pos_diff), so after a pass the worker
compares only the rows of the attributes there, and keeps the entries that changed
(key = attribute * row size + column, and the value); it sends the dense parameters
(transitions, end scores), the scalars and how many entries changed in each bucket of
rows. The driver then asks the shards for their entries a range of rows at a time,
mixes the range entry by entry over the union of the entries sent (a shard that left
an entry as it was contributes its value from the start of the epoch), lets the
learner adjust the mix (bol: the factors of the mixed blocks), and sends the range's
mix to every shard: it holds one range's messages at a time, never a whole epoch's. Shard k shuffles
with seed + k, so shard 0 of 1 makes exactly the passes of training in one process,
and a run's result depends on the shards and the seed, not on the workers that hold
them. Keys are kept sorted, and made distinct by sorting (runs, distinct).
"""
import io
import os
import threading
import time
import uuid
import zlib

import numpy as np

from ..errors import InputError, SeqbilError
from ..formats.textio import is_gzip
from ..training import CHUNK
from .cluster import worker_addresses
from .tagging import _boundary

BUCKETS = 256  # the rows of each order counted in this many buckets, of which a range of the mix is made


class Mixer:
    """The driver's side: make the shards on the workers, run the epochs, mix.

    learner: the driver's learner, which holds the mixed parameters (its arrays are
    updated in place after every epoch).

    A worker that is lost takes its shards with it. The driver holds what redoing
    them needs: the mixed parameters as the epoch began (its learner), each shard's
    byte range and its random state (the seed and the number of epochs run). So a
    lost shard is read and encoded again by a worker that is left (or one that
    joined), set to the driver's parameters, and makes the epoch's pass again; the
    shards that finished keep their results. The model is the undisturbed run's. A
    shard lost more than MAX_LOSSES times, or no worker left for WAIT_FOR_WORKERS
    seconds, ends the run."""

    MAX_LOSSES = 3
    WAIT_FOR_WORKERS = 60.0
    RANGE_ENTRIES = 1 << 17  # the entries the shards send for one range of the mix, about

    def __init__(self, client, settings, source, fmt, echo=None):
        self.client, self.settings, self.echo = client, settings, echo
        self.learner = None  # (start() gives it)
        self.K = int(settings["shards"])
        self.by_mistakes = settings["mixing"] == "mistakes"
        self.run = uuid.uuid4().hex
        workers = sorted(worker_addresses(client))
        if not workers:
            raise SeqbilError("the Dask cluster has no workers")
        self.where = [workers[k % len(workers)] for k in range(self.K)]
        path = os.path.abspath(os.fspath(source))
        self.size = os.path.getsize(path)
        self.spec = {"path": path, "name": os.fspath(source), "gz": is_gzip(path), "format": fmt.name,
                     "n_fields": fmt.n_fields, "label_column": settings["label_column"],
                     "encoding": settings["encoding"]}
        self.losses, self.recoveries, self.epochs_run = [0] * self.K, [], 0
        self.message_errors = []  # (of the epoch: in its log record)
        self.sizes = self.shared = self.shared_data = None
        self._state = None  # (epochs run, full_state of the driver's learner then)
        self._parts = None  # the last epoch's mix, in parts: [{worker: future of the part there}]
        self._taking = False

    # --- before the passes: the feature index of the shards, their encoding ---------

    def survey(self, request):
        """Every shard read by its worker (and kept there): what the index and the
        run need of it (_survey), in shard order. The first bad line in the file's
        order is the error."""
        out = self._on_shards(lambda k, w: self._submit(_survey, w, self.run, k, self.K, self.spec, self.size,
                                                        request), None, "reading")
        bad = next((r["error"] for r in out if "error" in r), None)
        if bad is not None:
            raise InputError(*bad)
        return out

    def count(self, index, witness=False):
        """The shards' key_counts under `index` (the merged vocabularies), and with
        witness a sentence of labels in which I- starts a chunk, if any (IOB1)."""
        [shared] = self.client.scatter([index], broadcast=True, hash=False)
        out = self._on_shards(lambda k, w: self._submit(_count, w, self.run, k, self.K, self.spec, self.size,
                                                        shared, witness), None, "counting attributes")
        return out

    def encode(self, index, templates, labels):
        """The shards encoded by the index, kept on their workers; returns the CRC-32
        of their encodings (checkpoint.fingerprint of each, in shard order)."""
        self.shared_data = {"index": index, "templates": templates, "labels": labels, "settings": self.settings}
        # one object per worker (scatter takes a list's items one by one, a dict's values too)
        [self.shared] = self.client.scatter([self.shared_data], broadcast=True, hash=False)
        out = self._on_shards(lambda k, w: self._submit(_encode, w, self.run, k, self.K, self.spec, self.size,
                                                        self.shared), None, "encoding")
        self.sizes = [n for n, _ in out]
        return zlib.crc32(np.array([crc for _, crc in out], np.uint32).tobytes())

    def start(self, learner, epochs_run=0):
        """A learner on every shard, from the driver's learner: its parameters when the
        run resumed from a checkpoint (epochs_run > 0, the shards' random states moved
        on by the epochs run)."""
        self.learner, self.epochs_run = learner, epochs_run
        spec = (type(learner), learner.S, learner.A0, learner.A1, learner.transitions)
        self.shared_data["learner"] = spec
        states = self._scatter_each(self._full_state()) if epochs_run else {}
        self._on_shards(lambda k, w: self._submit(_start, w, self.run, k, self.K, self.spec, self.size, self.shared,
                                                  spec, states.get(w), epochs_run) if w in states or not epochs_run
                        else None, None, "setting up")
        learner.only_mixing()
        if self.echo is not None:
            self.echo(f"iterative parameter mixing: {self.K} shards of {', '.join(map(str, self.sizes))} sequences "
                      f"on {len(set(self.where))} Dask workers; mixing {self.settings['mixing']}")

    def epoch(self, k, bar=None):
        """One epoch: a pass on every shard, then the mix, range by range of the
        attributes; returns (mistakes, stats).

        The shards keep the entries they changed. The driver asks for them a range of
        rows at a time (ranges of about RANGE_ENTRIES entries, from the counts the
        shards send with their pass), mixes the range and sends the mix to the shards,
        so that it holds one range's messages at a time, never the whole epoch's. Its
        learner keeps the parameters as the epoch began until every range is mixed
        (what a shard lost meanwhile is remade from); then it takes the mix, a range
        at a time, from a worker that holds it."""
        start = time.perf_counter()
        self.recoveries = []
        parts = self._parts

        def submit(s, w):  # (a worker the mix did not reach is taken for lost: its shards are made again)
            if parts is None or all(w in held for held in parts):
                return self._submit(_epoch, w, self.run, s, k, [held[w] for held in parts] if parts else None)
        results = self._on_shards(submit, bar, f"epoch {k + 1}", k)
        mixing = time.perf_counter()
        mistakes = [r["pass_mistakes"] for r in results]
        total = sum(mistakes)
        mu = [m / total for m in mistakes] if self.by_mistakes and total else [1.0 / self.K] * self.K
        head = mix_dense(self.learner, results, mu)
        counts = sum(r["entries"] for r in results)
        pass_s, shard_s = max(r["pass_s"] for r in results), max(r["shard_s"] for r in results)
        del results
        self._parts, sent_bytes, mixed_bytes, entries, spans = [self._scatter_each(head)], 0, _nbytes(head), 0, []
        for lo, hi in ranges(counts, self.RANGE_ENTRIES):
            part, sent = self._mix_range(k, lo, hi, mu, head)
            sent_bytes, mixed_bytes = sent_bytes + sent, mixed_bytes + _nbytes(part)
            entries += sum(len(keys) for keys, _ in part.values())
            self._parts.append(self._scatter_each(part))
            spans.append((lo, hi))
            del part
        # the driver's learner takes the mix only now: until here it was the epoch's start
        self._taking = True  # (no shard can be made again from it meanwhile)
        for i, (lo, hi) in enumerate(spans, 1):
            part = self._fetch(self._parts[i])
            if part is None:  # no worker holding it is left: the shards still have what they changed
                part = self._mix_range(k, lo, hi, mu, head)[0]
                self._parts[i] = self._scatter_each(part)
            if i == len(spans):
                apply(self.learner, head)
            apply(self.learner, part)
        del part
        self._taking = False
        self.epochs_run += 1
        end = time.perf_counter()
        # where an epoch goes: the slowest shard's pass, the rest of the shards' work
        # (taking the mix, collecting what changed), the messages, and the driver's mix
        stats = {"shard_mistakes": mistakes, "delta_bytes": sent_bytes, "mixed_bytes": mixed_bytes,
                 "entries_mixed": entries, "ranges": len(self._parts) - 1,
                 "pass_s": pass_s, "shard_s": shard_s,
                 "mix_s": end - mixing, "epoch_s": end - start}
        if self.recoveries:
            stats["recovered"] = self.recoveries
        if self.message_errors:
            stats["message_errors"], self.message_errors = self.message_errors, []
        return total, stats

    def _mix_range(self, k, lo, hi, mu, head):
        """(the mix of the entries the shards changed in the rows of buckets lo..hi-1,
        as the learner adjusts it; the bytes they sent)."""
        sent = self._on_shards(lambda s, w: self._submit(_changed, w, self.run, s, k, lo, hi), None,
                               f"epoch {k + 1}", k, then=(lo, hi))
        nbytes = sum(_nbytes(m) for m in sent)
        part = mix_entries(self.learner, sent, mu)
        del sent
        adjusted = {**part, **{name: head[name] for name in self.learner.mixing()[1]}}
        self.learner.mixed(adjusted, self.K)
        return {name: adjusted[name] for name in part}, nbytes

    def _fetch(self, held):
        """A mixed range from one of the workers that hold it (None: none is left)."""
        for worker in sorted(held):
            try:
                return held[worker].result()
            except Exception as exc:  # (that worker went: another may hold it too)
                self.message_errors.append(f"{worker}: {type(exc).__name__}: {exc}")
        return None

    def close(self):
        """Free the shards on the workers that are still there (a lost one took its own)."""
        from distributed import wait
        try:
            alive = self._alive()
            futures = [self._submit(_drop, where, self.run) for where in sorted(alive)]
            wait(futures, timeout=20)
        except Exception:  # the state goes with the workers anyway
            pass

    def _submit(self, fn, worker, *args):
        # a shard's task runs only on the worker that holds the shard
        return self.client.submit(fn, *args, workers=[worker], allow_other_workers=False, pure=False)

    def _scatter_each(self, message):
        """{worker: message there} for every worker holding a shard that takes it. Each
        worker gets its own copy (not a broadcast), so that its tasks depend on nothing
        held elsewhere: a lost worker takes only its own shards' inputs with it."""
        out = {}
        for w in sorted(set(self.where) & self._alive()):
            for _ in range(2):
                try:
                    [out[w]] = self.client.scatter([message], workers=[w], hash=False)
                    break
                except Exception as exc:  # (it went in between: its shards are made again)
                    self.message_errors.append(f"{w}: {type(exc).__name__}: {exc}")
        return out

    def _alive(self):
        return worker_addresses(self.client)

    def _on_shards(self, submit, bar, what, epoch=None, then=None):
        """submit(k, worker) on every shard k; their results in shard order. The bar
        moves by each shard's sequences as it finishes. A shard whose worker is gone
        before its result is here is made again on another worker (see the class), and
        its task submitted there (then: the range of the mix the task collects, after
        the shard's pass is made again)."""
        from distributed import wait
        alive = self._alive()
        futures = {k: submit(k, self.where[k]) if self.where[k] in alive else None for k in range(self.K)}
        results, lost_at = {}, {}
        while len(results) < self.K:
            pending = [f for k, f in futures.items() if k not in results and f is not None]
            done = set()
            if pending:
                try:
                    done = set(wait(pending, timeout=2, return_when="FIRST_COMPLETED")[0])
                except TimeoutError:
                    pass
                except Exception:  # a future cancelled (its data was lost with a worker): made again below
                    done = {f for f in pending if f.done()}
            for k, f in futures.items():
                if k in results or f not in done:
                    continue
                if f.status == "finished":
                    try:
                        results[k] = f.result()
                    except Exception:  # its worker went in between: made again below
                        continue
                    if k in lost_at:
                        self._recovered(k, lost_at.pop(k), what)
                    if bar is not None and self.sizes is not None:
                        bar.update(self.sizes[k])
                elif f.status == "error" and self.where[k] in self._alive() \
                        and type(f.exception()).__name__ != "KilledWorker":
                    exc = f.exception()
                    # the other shards' tasks run on to their end (a running task cannot be
                    # stopped): wait for them, so that close() lets go of what they keep
                    others = [g for j, g in futures.items() if j != k and g is not None and j not in results]
                    try:
                        wait(others, timeout=60)
                    except Exception:  # (lost or timed out: their workers' state goes with them)
                        pass
                    if isinstance(exc, SeqbilError):
                        raise exc
                    raise SeqbilError(f"iterative parameter mixing failed on a Dask worker ({type(exc).__name__}: "
                                      f"{exc}); run the training again") from None
            alive = self._alive()
            for k, f in futures.items():
                failed = f is None or self.where[k] not in alive or f.status in ("error", "cancelled")
                if k in results or not failed:
                    continue
                if f is not None:
                    f.cancel()
                lost_at.setdefault(k, (self.where[k], self.where[k] in alive, time.perf_counter(), _why(f)))
                futures[k] = self._remake(k, alive, epoch, what, submit, then)
        return [results[k] for k in range(self.K)]

    def _remake(self, k, alive, epoch, what, submit, then=None):
        """Shard k again, on the worker of those alive holding the fewest shards; then
        its task: before the passes, the task of the phase (which reads the shard again
        there); in them, with the driver's parameters and the shard's random state."""
        self.losses[k] += 1
        if self.losses[k] > self.MAX_LOSSES:
            raise SeqbilError(f"shard {k + 1} of {self.K} was lost {self.losses[k]} times ({what}); the Dask "
                              "cluster keeps losing its workers: run the training again")
        waited = time.perf_counter()
        while not alive:
            if time.perf_counter() - waited > self.WAIT_FOR_WORKERS:
                raise SeqbilError(f"no Dask worker is left ({what}), and none joined in "
                                  f"{self.WAIT_FOR_WORKERS:g} s")
            time.sleep(0.5)
            alive = self._alive()
        if self._taking:
            raise SeqbilError(f"shard {k + 1} of {self.K} was lost while the driver took the mix ({what}); run the "
                              "training again, or resume it from its checkpoint")
        load = {w: sum(1 for j, x in enumerate(self.where) if x == w and j != k) for w in alive}
        self.where[k] = min(sorted(alive), key=lambda w: load[w])
        if self.learner is None or epoch is None and not self.epochs_run:
            return submit(k, self.where[k])
        try:  # its inputs on its new worker itself (those on the lost one may be all there was)
            shared, state = self.client.scatter([self.shared_data, self._full_state()], workers=[self.where[k]],
                                                hash=False)
        except Exception:  # that worker went too: made again on the next round
            return None
        return self._submit(_remade, self.where[k], self.run, k, self.K, self.spec, self.size, shared, state,
                            self.epochs_run, epoch, then)

    def _full_state(self):
        """full_state of the driver's learner, made once an epoch (it changes only at
        the mix), however many shards are made again."""
        if self._state is None or self._state[0] != self.epochs_run:
            self._state = (self.epochs_run, full_state(self.learner))
        return self._state[1]

    def _recovered(self, k, lost, what):
        worker, still_there, since, why = lost
        seconds = time.perf_counter() - since
        self.recoveries.append({"shard": k + 1, "lost_worker": worker, "worker_left": still_there,
                                "worker": self.where[k], "seconds": round(seconds, 3), "why": why})
        if self.echo is not None:
            how = f"its inputs lost on Dask worker {worker}" if still_there else f"lost with Dask worker {worker}"
            self.echo(f"shard {k + 1} of {self.K} {how} ({what}): read again on {self.where[k]} and its part "
                      f"redone in {seconds:.1f} s")


def _why(future):
    """What became of a shard's task that is to be made again (for the log)."""
    if future is None:
        return "its inputs were not there"
    if future.status == "error":
        exc = future.exception()
        return f"{type(exc).__name__}: {exc}"
    return future.status


def _nbytes(message):
    arrays = [a for v in message.values() for a in (v if isinstance(v, tuple) else (v,))]
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


# --- mixing ---------------------------------------------------------------------

def mix(learner, results, mu):
    """The mixed parameters from the shards' messages (see the module's docstring):
    {NAME: (keys, values) for a parameter with a row per attribute (key = row *
    row size + column: the entries some shard changed), the mixed array for a dense
    one, the mixed number for a scalar}, as the learner adjusts them (Learner.mixed).
    The sums run over the shards in order and an entry every shard changed takes no
    term from the start of the epoch, so that one shard's parameters come back
    exactly. (Mixer.epoch makes the same mix a range of rows at a time.)"""
    out = mix_dense(learner, results, mu)
    out.update(mix_entries(learner, results, mu))
    learner.mixed(out, len(results))
    return out


def mix_dense(learner, results, mu):
    """The mix of the dense parameters and of the scalars."""
    names, scalars = learner.mixing()
    out = {}
    for name, order in names.items():
        if order is None:
            acc = 0.0
            for r, m in zip(results, mu):
                acc = acc + (m * r[name] if m != 1.0 else r[name])
            out[name] = acc
    for name in scalars:
        value = sum(m * r[name] for r, m in zip(results, mu))
        out[name] = int(round(value)) if isinstance(getattr(learner, name), int) else value
    return out


def mix_entries(learner, results, mu):
    """The mix of the entries the shards changed in the parameters with a row per
    attribute (a partial entry takes its value at the start of the epoch from the
    learner)."""
    names, _ = learner.mixing()
    out = {}
    for name, order in names.items():
        if order is None:
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
    return out


def ranges(counts, target):
    """[(lo, hi)] of row buckets (see _epoch: BUCKETS per order), consecutive, each
    with about `target` of the entries counted (at least one bucket each)."""
    out, lo, held = [], 0, 0
    for b, n in enumerate(counts.tolist()):
        if held and held + n > target:
            out.append((lo, b))
            lo, held = b, 0
        held += n
    out.append((lo, len(counts)))
    return out


def bucket_rows(lo, hi, n):
    """The rows of buckets lo..hi-1 of n rows: row r is in bucket r * BUCKETS // n."""
    return -(-lo * n // BUCKETS), -(-hi * n // BUCKETS)


def apply(learner, mixed):
    """Put mixed parameters into a learner (in place): those the message holds."""
    names, scalars = learner.mixing()
    for name, order in names.items():
        if name not in mixed:
            continue
        if order is None:
            learner.set_rows(name, None, mixed[name])
        else:
            set_entries(learner, name, *mixed[name])
    for name in scalars:
        if name in mixed:
            setattr(learner, name, mixed[name])


def full_state(learner, chunk=1 << 16):
    """Everything mixing carries, whole, as a mixed message: the non-zero entries of
    the parameters with a row per attribute, the dense ones, the scalars (a shard made
    again takes it with apply())."""
    names, scalars = learner.mixing()
    out, sizes = {}, (learner.A0, learner.A1)
    for name, order in names.items():
        if order is None:
            out[name] = np.array(learner.get_rows(name, None), copy=True)
            continue
        keys, values = [np.zeros(0, np.int64)], [np.zeros(0)]
        for lo in range(0, sizes[order], chunk):
            rows = np.arange(lo, min(lo + chunk, sizes[order]))
            flat = by_row(learner.get_rows(name, rows))
            r, c = np.nonzero(flat)
            keys.append(rows[r] * flat.shape[1] + c)
            values.append(flat[r, c])
        out[name] = (np.concatenate(keys), np.concatenate(values))
    for name in scalars:
        out[name] = getattr(learner, name)
    return out


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


def entries(learner, name, keys, chunk=1 << 14):
    """The values of a parameter at the entries `keys` (row * row size + column,
    sorted), read a chunk of rows at a time (get_rows gives whole rows)."""
    rows, cols = np.divmod(keys, learner.row_size(name))
    out = np.empty(len(keys))
    for lo, hi in _row_chunks(rows, chunk):
        unique, at = runs(rows[lo:hi])
        out[lo:hi] = by_row(learner.get_rows(name, unique))[at, cols[lo:hi]]
    return out


def set_entries(learner, name, keys, values, chunk=1 << 14):
    """Set a parameter at the entries `keys` (row * row size + column, sorted), a
    chunk of rows at a time."""
    rows, cols = np.divmod(keys, learner.row_size(name))
    for lo, hi in _row_chunks(rows, chunk):
        unique, at = runs(rows[lo:hi])
        block = learner.get_rows(name, unique)
        by_row(block)[at, cols[lo:hi]] = values[lo:hi]
        learner.set_rows(name, unique, block)


def _row_chunks(rows, chunk):
    """(lo, hi) spans of a sorted array of rows, each of at most `chunk` rows (whole:
    a row is never split)."""
    if not len(rows):
        return []
    unique, first = np.unique(rows, return_index=True)
    cuts = first[::chunk].tolist() + [len(rows)]
    return list(zip(cuts[:-1], cuts[1:]))


# --- the workers ------------------------------------------------------------------

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


def _ids_at(ptr, ids, positions):
    """The distinct ids of the CSR rows `positions` (ptr[p]:ptr[p + 1] of ids)."""
    lo, hi = ptr[positions], ptr[positions + 1]
    lengths = hi - lo
    if not lengths.sum():
        return np.zeros(0, np.int64)
    starts = np.repeat(lo - np.concatenate([[0], np.cumsum(lengths)[:-1]]), lengths)
    return distinct(np.sort(ids[starts + np.arange(lengths.sum())]).astype(np.int64))


def _read_shard(spec, k, K, size):
    """The Corpus of shard k. A bad line is named by its place in the file."""
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


def _survey(run, k, K, spec, size, request):
    """Read shard k, keep it, and return what the driver needs of it to make the index
    and the run: its sentences, tokens and labels, the vocabulary of every field the
    templates read (field_vocabularies; request: fields, normalize, length_cap), the
    attribute names (%attr), the distinct values of some columns (for vectors) and its
    words (for a dictionary from the training data). A bad line: {"error": (path,
    line, message)}."""
    from ..features.dictionaries import training_words
    from ..features.index import field_vocabularies, normalizer

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


def _count(run, k, K, spec, size, index, witness):
    """The key_counts of shard k under the merged vocabularies (index), and with
    witness the labels of a sentence in which an I- tag starts a chunk (or None)."""
    from ..evaluation.chunks import _iob1_start

    corpus = _corpus(run, k, K, spec, size)
    counts, names = index.key_counts(corpus)
    found = next((list(s) for s in corpus.label_sequences() if s is not None and _iob1_start(s)), None) \
        if witness else None
    return {"counts": counts, "names": names, "witness": found}


def _dataset(run, k, K, spec, size, shared):
    """Shard k encoded: as this worker encoded it before (_encode), or encoded now from
    the corpus it keeps or reads."""
    from ..features.dataset import encode

    with _lock:
        data = _datasets.pop((run, k), None)
    if data is None:
        corpus = _corpus(run, k, K, spec, size)
        data = encode(corpus, shared["templates"], shared["index"], shared["labels"])[0]
        data.without_b_ptr()
    with _lock:
        _corpora.pop((run, k), None)
    return data


def _encode(run, k, K, spec, size, shared):
    """Encode shard k by the run's index and keep it; (sequences, CRC-32 of the
    encoding)."""
    from ..checkpoint import fingerprint

    data = _dataset(run, k, K, spec, size, shared)
    with _lock:
        _datasets[(run, k)] = data
    return data.n_sequences, fingerprint(data)


def _start(run, k, K, spec, size, shared, learner, state=None, epochs_run=0):
    """Shard k ready for the passes on this worker: encoded, with a learner (learner:
    its class and sizes), set to the driver's parameters (state) when the run resumed,
    its random state moved on by the epochs run. Returns its number of sequences."""
    data = _dataset(run, k, K, spec, size, shared)
    cls, S, A0, A1, transitions = learner
    shard = _Shard(data, cls(S, A0, A1, shared["settings"], transitions),
                   np.random.default_rng(shared["settings"]["seed"] + k))
    if state is not None:
        apply(shard.learner, state)
        shard.base = _base(shard.learner)
    for _ in range(epochs_run):  # the permutation of each epoch run before
        shard.rng.permutation(data.n_sequences)
    with _lock:
        _shards[(run, k)] = shard
    return data.n_sequences


def _remade(run, k, K, spec, size, shared, state, epochs_run, epoch, then=None):
    """Shard k made on this worker from the driver's parameters (its worker was lost):
    read and encoded, its learner set to them, its random state moved on by the
    epochs run; then the pass of `epoch` (None: its number of sequences, as _start)
    and, with then = (lo, hi), the entries it changed there (_changed)."""
    n = _start(run, k, K, spec, size, shared, shared["learner"], state, epochs_run)
    if epoch is None:
        return n
    out = _epoch(run, k, epoch, None)
    return out if then is None else _changed(run, k, epoch, *then)


def _take(shard, mixed):
    """Put a message of the mix into a shard's learner and its copy of the epoch's start."""
    learner = shard.learner
    apply(learner, mixed)
    for name, o in learner.mixing()[0].items():
        if o is not None and name in mixed:
            keys, values = mixed[name]
            rows, cols = np.divmod(keys, shard.base[name].shape[1])
            shard.base[name][rows, cols] = values


def _epoch(run, k, epoch, parts):
    """Take the mix of the last epoch (its parts, in order), make one pass over the
    shard, and keep the entries it changed (found among the rows of the attributes at
    the positions the kernels flagged) for _changed; return the dense arrays, the
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
    positions = np.flatnonzero(data.pos_diff)
    touched = [_ids_at(data.u_ptr, data.u_ids, positions), _ids_at(data.b_pointers(), data.b_ids, positions)]
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


def _changed(run, k, epoch, lo, hi):
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


def _drop(run):
    """Let go of everything this worker keeps for a run."""
    with _lock:
        for kept in (_shards, _corpora, _datasets):
            for key in [key for key in kept if key[0] == run]:
                del kept[key]
