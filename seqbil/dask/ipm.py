"""Iterative parameter mixing on a Dask cluster (`seqbil train --shards K`).

McDonald, Hall & Mann (2010), "Distributed training strategies for the structured
perceptron", Figure 3: the training file is cut into K shards; every epoch each shard
runs one pass of the learner from the mixed parameters, and the driver mixes them,
w = sum_k mu_k w_k, with mu_k = 1/K (uniform) or mistakes_k / sum of mistakes (their
weighting by errors). What the learner averages over the run (its lazy sums U and the
step counter) is mixed the same way, so that the averaged model of a mixed run is the
average over a virtual run whose steps are the mixed ones.

A shard is the sentences of a byte range of the file, cut at sentence boundaries as
tagging cuts files (dask/tagging.py: sentence_boundary), or, for a gzip file, a
contiguous range of sentences. No process reads the whole file: each shard is read by
the worker that holds it, which sends the vocabularies of its fields (survey), then,
under the vocabularies merged in shard order, the distinct keys of every template
with their counts (count); the driver merges keys, not corpora, into the index that
training in one process would build (FeatureIndex.from_counts), and the shards encode
themselves by it (encode). The worker keeps the encoded shard, its learner and a copy
of the parameters as the epoch began from epoch to epoch. The kernels flag the
positions their updates reach (Dataset.pos_diff), so after a pass the worker compares
only the rows of the attributes there, and keeps the entries that changed (key =
attribute * row size + column, and the value); it sends the dense parameters
(transitions, end scores), the scalars and how many entries changed in each bucket of
rows. The driver then asks the shards for their entries a range of rows at a time,
mixes the range entry by entry over the union of the entries sent (a shard that left
an entry as it was contributes its value from the start of the epoch), lets the
learner adjust the mix (bol: the factors of the mixed blocks), and sends the range's
mix to every shard: it holds one range's messages at a time, never a whole epoch's.
Shard k shuffles with seed + k, so shard 0 of 1 makes exactly the passes of training
in one process, and a run's result depends on the shards and the seed, not on the
workers that hold them. Keys are kept sorted, and made distinct by sorting (runs,
distinct).

The driver is Mixer, here; the tasks it gives the shards' workers are in
ipm_shards.py, and the arithmetic of the mix (shared by both) in ipm_mix.py.
"""
import os
import time
import uuid
import zlib

import numpy as np

from ..errors import InputError, SeqbilError
from ..formats.textio import is_gzip
from .cluster import worker_addresses
from .ipm_mix import apply, full_state, mix_dense, mix_entries, ranges
from .ipm_shards import (shard_changed, shard_count, shard_drop, shard_encode, shard_epoch, shard_remade, shard_start,
                         shard_survey)


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
        self.K = int(settings.shards)
        self.by_mistakes = settings.mixing == "mistakes"
        self.run = uuid.uuid4().hex
        workers = sorted(worker_addresses(client))
        if not workers:
            raise SeqbilError("the Dask cluster has no workers")
        self.where = [workers[k % len(workers)] for k in range(self.K)]
        path = os.path.abspath(os.fspath(source))
        self.size = os.path.getsize(path)
        self.spec = {"path": path, "name": os.fspath(source), "gz": is_gzip(path), "format": fmt.name,
                     "n_fields": fmt.n_fields, "label_column": settings.label_column,
                     "encoding": settings.encoding}
        self.losses, self.recoveries, self.epochs_run = [0] * self.K, [], 0
        self.message_errors = []  # (of the epoch: in its log record)
        self.sizes = self.shared = self.shared_data = None
        self._state = None  # (epochs run, full_state of the driver's learner then)
        self._parts = None  # the last epoch's mix, in parts: [{worker: future of the part there}]
        self._taking = False

    # --- before the passes: the feature index of the shards, their encoding ---------

    def survey(self, request):
        """Every shard read by its worker (and kept there): what the index and the
        run need of it (shard_survey), in shard order. The first bad line in the file's
        order is the error."""
        out = self._on_shards(lambda k, w: self._submit(shard_survey, w, self.run, k, self.K, self.spec, self.size,
                                                        request), None, "reading")
        bad = next((r["error"] for r in out if "error" in r), None)
        if bad is not None:
            raise InputError(*bad)
        return out

    def count(self, index, witness=False):
        """The shards' key_counts under `index` (the merged vocabularies), and with
        witness a sentence of labels in which I- starts a chunk, if any (IOB1)."""
        [shared] = self.client.scatter([index], broadcast=True, hash=False)
        out = self._on_shards(lambda k, w: self._submit(shard_count, w, self.run, k, self.K, self.spec, self.size,
                                                        shared, witness), None, "counting attributes")
        return out

    def encode(self, index, templates, labels):
        """The shards encoded by the index, kept on their workers; returns the CRC-32
        of their encodings (checkpoint.fingerprint of each, in shard order)."""
        self.shared_data = {"index": index, "templates": templates, "labels": labels, "settings": self.settings}
        # one object per worker (scatter takes a list's items one by one, a dict's values too)
        [self.shared] = self.client.scatter([self.shared_data], broadcast=True, hash=False)
        out = self._on_shards(lambda k, w: self._submit(shard_encode, w, self.run, k, self.K, self.spec, self.size,
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
        self._on_shards(lambda k, w: self._submit(shard_start, w, self.run, k, self.K, self.spec, self.size, self.shared,
                                                  spec, states.get(w), epochs_run) if w in states or not epochs_run
                        else None, None, "setting up")
        learner.only_mixing()
        if self.echo is not None:
            self.echo(f"iterative parameter mixing: {self.K} shards of {', '.join(map(str, self.sizes))} sequences "
                      f"on {len(set(self.where))} Dask workers; mixing {self.settings.mixing}")

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
                return self._submit(shard_epoch, w, self.run, s, k, [held[w] for held in parts] if parts else None)
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
        sent = self._on_shards(lambda s, w: self._submit(shard_changed, w, self.run, s, k, lo, hi), None,
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
            futures = [self._submit(shard_drop, where, self.run) for where in sorted(alive)]
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
        return self._submit(shard_remade, self.where[k], self.run, k, self.K, self.spec, self.size, shared, state,
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
