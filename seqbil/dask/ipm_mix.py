"""The arithmetic of iterative parameter mixing (dask/ipm.py): the shards' messages
mixed entry by entry, a learner's parameters read and set by entry (key = row * row
size + column), and the buckets of rows by which the mix is cut into ranges."""
import numpy as np
from .._kernels.mix import ids_flagged

BUCKETS = 256  # the rows of each order counted in this many buckets, of which a range of the mix is made


def mix(learner, results, mu):
    """The mixed parameters from the shards' messages (see ipm.py's docstring):
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
    """[(lo, hi)] of row buckets (BUCKETS per order, counted by ipm_shards.py: shard_epoch),
    consecutive, each with about `target` of the entries counted (at least one bucket
    each)."""
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


def ids_at(ptr, ids, flags, n_ids):
    """The distinct ids, sorted, of the CSR rows p (ptr[p]:ptr[p + 1] of ids, each
    below n_ids) whose flag is set: the attributes at the positions a pass flagged,
    whose rows it may have changed (mix.pyx)."""
    return ids_flagged(np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(ids, dtype=np.int32),
                       np.ascontiguousarray(flags, dtype=np.uint8), n_ids)


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
