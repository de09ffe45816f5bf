"""`seqbil aso --shards K`: the auxiliary problems of a structure trained on the shards
of a Dask cluster, for raw text larger than one machine (seqbil/aso.py learns them in
one process).

The text (the files one after another) is cut into K ranges of sentences; each worker
reads its range and keeps it (4 bytes a token). Nothing else of the text travels, only
what adds up over its parts:
- the values of each column, which the driver merges in order of first appearance over
  the shards (aso_text.merge_values), so that value ids, feature keys and attribute
  ids are those of one process reading the whole text; and how often each is seen,
  of which the driver chooses the targets;
- per split, the count of every feature key (SplitText.key_counts), merged by the
  driver (aso_text.merge_key_counts) into the split's index, which every shard then
  takes;
- the first round of a one-template split in closed form: its co-occurrence counts,
  summed by the driver a block of rows at a time, so the structure is the one process's;
- SGD rounds: every epoch, each shard makes its pass over its part from the mixed
  weights, and the driver averages the passes' weight vectors by the shards' tokens and
  sends them back (iterative parameter mixing, McDonald, Hall & Mann 2010, as `seqbil
  train --shards`), a column block at a time (d x 64 float32), so that the driver holds
  one split's weights and a block per shard;
- the sums of squares of Theta phi(x) for the RMS.
The SVD runs on the driver, as in one process.
"""
import os
import threading
import uuid

import numpy as np

from ..aso import BLOCK, StructureLearner, column_blocks, closed_form_counts, targets_of_counts
from ..aso_text import CHUNK, SplitText, merge_key_counts, merged_values, read_columns, read_text
from ..errors import SeqbilError
from ..formats.sentence import Corpus
from ..tagging import cpus
from .cluster import connect, worker_addresses

_texts, _lock = {}, threading.Lock()


class ShardedStructureLearner(StructureLearner):
    """StructureLearner whose text is on K shards of a Dask cluster (client). spec:
    {"paths", "unit", "encoding", "columns" (unlabeled_format = columns)};
    n_sentences: of the whole text (the shards' ranges are cut by it)."""

    def __init__(self, settings, client, K, spec, n_sentences, unit, splits, jobs=1, echo=None, progress=False,
                 chunk=CHUNK):
        super().__init__(settings, None, unit, splits, jobs, echo, progress, chunk)
        self.client, self.K, self.run = client, int(K), uuid.uuid4().hex
        workers = sorted(worker_addresses(client))
        if not workers:
            raise SeqbilError("the Dask cluster has no workers")
        self.where = [workers[k % len(workers)] for k in range(self.K)]
        cuts = [n_sentences * k // self.K for k in range(self.K + 1)]
        parts = self._all(_read, lambda k: (spec, (cuts[k], cuts[k + 1]), settings, unit, jobs, chunk))
        # value tables merged in shard order: the order of first appearance in the whole text
        n_columns = max(len(values) for values, _, _ in parts)
        self.values, self.counts, luts = [], [], [[] for _ in parts]
        for c in range(n_columns):
            values, column_luts = merged_values([v[c] if c < len(v) else [] for v, _, _ in parts])
            for k, lut in enumerate(column_luts):
                luts[k].append(lut)
            self.values.append(values)
            counts = np.zeros(len(values), np.int64)
            for k, (_, n, _) in enumerate(parts):
                if c < len(n):
                    np.add.at(counts, luts[k][c], n[c])
            self.counts.append(counts)
        self.sizes = [P for _, _, P in parts]
        self.P = sum(self.sizes)
        [values] = client.scatter([self.values], broadcast=True, hash=False)
        self._all(_renumber, lambda k: (values, luts[k]))
        # the driver's own texts are empty: it keeps the splits' indexes, not the text
        self.empty = Corpus(np.zeros(0, np.int64), self.values, [np.zeros(0, np.int32) for _ in self.values], [],
                            np.zeros(0, np.int32))

    def close(self):
        try:
            self._all(_drop, lambda k: ())
        except Exception:  # the shards go with the workers anyway
            pass

    def _submit(self, fn, k, *args):
        return self.client.submit(fn, self.run, k, *args, workers=[self.where[k]], allow_other_workers=False,
                                  pure=False)

    def _all(self, fn, args):
        """fn(run, k, *args(k)) on every shard k; the results in shard order."""
        futures = [self._submit(fn, k, *args(k)) for k in range(self.K)]
        try:
            return self.client.gather(futures)
        except SeqbilError:
            raise
        except Exception as exc:
            raise SeqbilError(f"seqbil aso failed on a Dask worker ({type(exc).__name__}: {exc}); run it "
                              "again") from None

    def n_tokens(self):
        return self.P

    def n_columns(self):
        return len(self.values)

    def target_table(self, m, column):
        return targets_of_counts(self.values[column], self.counts[column], m, column)

    def split_text(self, name, templates):
        targets = self.targets
        counts = merge_key_counts(self._all(_count, lambda k: (name, templates, targets)))
        text = SplitText(self.empty, templates, self.chunk, self.fields)
        text.set_counts(counts, self.settings.aux_min_count)
        text.name = name
        [counts] = self.client.scatter([counts], broadcast=True, hash=False)
        self._all(_set_counts, lambda k: (name, counts))
        return text

    def weights(self, text, rnd, name, offsets, column, theta=None):
        s = self.settings
        d = text.index.n_keyed(0)
        m = len(self.targets[column][0])
        if rnd == 0 and len(text.templates.templates) == 1:  # the counts add up: one process's U
            totals = self._all(_closed_counts, lambda k: (name, offsets, column))
            total = np.sum(totals, axis=0)
            pos = list(column_blocks(d, [m] * len(offsets), np.int32))
            for o, counts in enumerate(pos):
                for a in range(0, d, 4096):
                    for part in self._all(_rows, lambda k: (name, o, a, a + 4096)):
                        counts[a:a + 4096] += part
            self._all(_forget, lambda k: (name,))
            return [closed_form_counts(counts, total, self.P, s.aux_lambda, s.aux_loss) for counts in pos]
        # iterative parameter mixing: every epoch each shard makes its pass from the mixed
        # weights, which are then its weights averaged by tokens, a block at a time
        widths = self._all(_sgd_start, lambda k: (name, rnd, offsets, column, theta))[0]
        blocks = list(column_blocks(d, widths))
        V = [np.zeros((0 if theta is None else theta.shape[1], w), np.float32) for w in widths]
        mu = [np.float32(P / self.P) for P in self.sizes]
        for epoch in range(s.aux_epochs):
            self._all(_sgd_epoch, lambda k: (name,))
            last = epoch + 1 == s.aux_epochs
            for b, W in enumerate(blocks):
                W[:], V[b][:] = 0, 0
                for (w, v), m_k in zip(self._all(_block, lambda k: (name, b)), mu):
                    W += m_k * w
                    V[b] += m_k * v
                if not last:
                    self._all(_set_block, lambda k: (name, b, W, V[b]))
        self._all(_forget, lambda k: (name,))
        if theta is not None:
            for W, v in zip(blocks, V):
                W += theta @ v  # u_l = w_l + Theta^T v_l
        return blocks

    def sum_squares(self, text, theta):
        [theta] = self.client.scatter([theta], broadcast=True, hash=False)
        return float(sum(self._all(_sum_squares, lambda k: (text.name, theta))))

    def done_with(self, name):
        self._all(_drop_split, lambda k: (name,))


# --- the workers ------------------------------------------------------------------

class _Part:
    """A shard's text and its local learner (targets set by the driver), the split
    texts by name and what a round left (closed-form counts or SGD blocks)."""

    def __init__(self, learner):
        self.learner, self.texts, self.kept = learner, {}, {}


def _part(run, k):
    part = _texts.get((run, k))
    if part is None:
        raise SeqbilError("a Dask worker lost the shard of text it held (it restarted?); run seqbil aso again")
    return part


def _read(run, k, spec, keep, settings, unit, jobs, chunk):
    """Read sentences keep[0]..keep[1]-1 of the text; keep them. Returns each column's
    values, how often each is seen, and the number of tokens."""
    reader = read_columns if spec["columns"] else (lambda paths, enc, _p, keep: read_text(paths, unit, enc, None,
                                                                                          keep))
    corpus, _ = reader(spec["paths"], spec["encoding"], None, keep=keep)
    with _lock:
        _texts[(run, k)] = _Part(StructureLearner(settings, corpus, unit, [], jobs, None, False, chunk))
    counts = [np.bincount(ids, minlength=len(values)) for values, ids in zip(corpus.values, corpus.ids)]
    return corpus.values, counts, corpus.n_tokens


def _renumber(run, k, values, luts):
    corpus = _part(run, k).learner.corpus
    for c, lut in enumerate(luts):
        corpus.ids[c] = lut[corpus.ids[c]] if len(lut) else corpus.ids[c]
        corpus.values[c] = values[c]
    for c in range(len(luts), len(values)):  # a column this shard's text does not have
        corpus.values.append(values[c])
        corpus.ids.append(np.full(corpus.n_tokens, -1, np.int32))


def _count(run, k, name, templates, targets):
    part = _part(run, k)
    part.learner.targets = targets
    text = part.texts[name] = SplitText(part.learner.corpus, templates, part.learner.chunk, part.learner.fields)
    return text.key_counts()


def _set_counts(run, k, name, counts):
    part = _part(run, k)
    part.texts[name].set_counts(counts, part.learner.settings.aux_min_count)


def _closed_counts(run, k, name, offsets, column):
    part = _part(run, k)
    pos, total = part.learner.cooccurrence_counts(part.texts[name], offsets, column)
    part.kept[name] = pos
    return total


def _rows(run, k, name, o, a, b):
    return _part(run, k).kept[name][o][a:b]


def _sgd_start(run, k, name, rnd, offsets, column, theta):
    """The shard's SGD of a split (StructureLearner.sgd_epochs), to be run an epoch at a
    time; returns the widths of its blocks."""
    part = _part(run, k)
    part.kept[name] = [part.learner.sgd_epochs(part.texts[name], rnd, name, offsets, column, theta), None]
    m = len(part.learner.targets[column][0])
    return [min(b0 + BLOCK, m) - b0 for _ in offsets for b0 in range(0, m, BLOCK)]


def _sgd_epoch(run, k, name):
    kept = _part(run, k).kept[name]
    kept[1] = next(kept[0])


def _block(run, k, name, b):
    """(W, V) of block b after the epoch (V: the Theta part, rounds after the first)."""
    block = _part(run, k).kept[name][1][b]
    return block[2], block[3]


def _set_block(run, k, name, b, W, V):
    block = _part(run, k).kept[name][1][b]
    block[2][:], block[3][:] = W, V


def _forget(run, k, name):
    _part(run, k).kept.pop(name, None)


def _sum_squares(run, k, name, theta):
    part = _part(run, k)
    return part.learner.sum_squares(part.texts[name], theta)


def _drop_split(run, k, name):
    part = _part(run, k)
    part.texts.pop(name, None)
    part.kept.pop(name, None)


def _drop(run, k):
    with _lock:
        _texts.pop((run, k), None)


def sharded_structure(settings, paths, unit, columns, n_sentences, specs, jobs, echo, progress, shards, client,
                       scheduler, workers, n_files):
    """(structure, a corpus of the text's value tables without its tokens, the counts
    of column 0's values) learned on the shards of a Dask cluster."""
    if client is None and scheduler is None and workers is None:
        workers = min(shards, cpus())
    spec = {"paths": [os.path.abspath(p) for p in paths], "unit": unit, "encoding": settings.encoding,
            "columns": columns}
    with connect(client=client, scheduler=scheduler, workers=workers, echo=echo if progress else None) as c:
        learner = ShardedStructureLearner(settings, c, shards, spec, n_sentences, unit, specs, jobs, echo, progress)
        echo(f"read {n_sentences} sentences, {learner.P} {unit}s ({len(learner.values[0])} distinct) from "
             f"{n_files} file{'s' * (n_files > 1)} on {shards} shards of {', '.join(map(str, learner.sizes))} {unit}s")
        try:
            structure = learner.learn()
        finally:
            learner.close()
    structure.provenance["shards"] = shards
    return structure, learner.empty, learner.counts[0]
