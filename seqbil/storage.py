"""How a model keeps its weights for tagging: per attribute, only the non-zero ones.

Training works on dense blocks (model/core.py): W0 (A0 x S), and W1 (A1 x S x (S + 1)) or
alpha (A1 x S) and beta (A1 x (S + 1)). Most rows stay zero (an attribute gets a
weight only when it takes part in a mistake) and most of the others hold a few
non-zero cells, so a model keeps each block as a CSR matrix over attributes (Rows):
row a holds the cells idx[ptr[a]:ptr[a + 1]] (ascending) with values val[...]:

    W0   cell y                      (width S)
    W1   cell y * (S + 1) + v        (width S (S + 1); v = S: the start symbol)
    AB   cell y for alpha[a, y], S + v for beta[a, v]   (width 2 S + 1)

Values are float32 unless float64 is asked for; scores are summed in double. Where
the rows are full enough that (cell, value) pairs would take more room than the
rows themselves (the bilinear factors with few labels), a block keeps its rows
dense instead: val is then n_rows x width, and ptr and idx are None. The label
transitions and end scores (S (S + 1) + S values) stay dense float64.
Attributes whose rows are empty are taken out of the key tables altogether
(compact), so that a model holds neither keys nor rows for them. (A multi-task model
stacks a shared copy of trans and end and one per task: (K + 1) S rows.) The blocks
travel together as a Store.
"""
from dataclasses import dataclass, replace

import numpy as np

from .errors import SeqbilError

PRECISIONS = {"float32": np.float32, "float64": np.float64}


class Rows:
    """A CSR matrix over attributes (see the module docstring)."""

    def __init__(self, ptr, idx, val, width):
        self.ptr, self.idx, self.val, self.width = ptr, idx, val, int(width)

    @property
    def dense(self):
        return self.ptr is None

    @property
    def n_rows(self):
        return len(self.val) if self.dense else len(self.ptr) - 1

    @property
    def nnz(self):
        return int(np.count_nonzero(self.val)) if self.dense else len(self.idx)

    def compact_layout(self):
        """These rows in the layout that takes less room: (cell, value) pairs, or dense."""
        size = self.val.dtype.itemsize
        pairs = 8 * (self.n_rows + 1) + (4 + size) * self.nnz
        if (self.n_rows * self.width * size < pairs) == self.dense:
            return self
        if self.dense:
            return Rows.from_dense(self.val, self.val.dtype.name)
        return Rows(None, None, self.to_dense(self.val.dtype), self.width)

    @classmethod
    def from_dense(cls, dense, precision="float32", prune=0.0, chunk=1 << 16):
        """The cells of a 2-D array with |w| > prune, after rounding to the precision
        (a weight that rounds to 0 is not kept). Works through `chunk` rows at a time,
        so that no full-size copy of the weights is made."""
        dense = np.asarray(dense)
        dtype = PRECISIONS[precision]
        counts, idx, val = np.zeros(dense.shape[0], dtype=np.int64), [], []
        for lo in range(0, dense.shape[0], chunk):
            rounded = dense[lo:lo + chunk].astype(dtype)
            rows, cols = np.nonzero(np.abs(rounded) > prune if prune > 0 else rounded)
            counts[lo:lo + chunk] = np.bincount(rows, minlength=len(rounded))
            idx.append(cols.astype(np.int32))
            val.append(rounded[rows, cols])
        ptr = np.zeros(dense.shape[0] + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        return cls(ptr, np.concatenate(idx) if idx else np.zeros(0, np.int32),
                   np.concatenate(val) if val else np.zeros(0, dtype), dense.shape[1])

    @classmethod
    def from_slots(cls, rows, attrs, n_rows, precision="float32", prune=0.0, chunk=1 << 16):
        """from_dense of the (n_rows, ...) array whose row attrs[s] is rows[s] and
        whose other rows are zero, without making it: the rows are read in the order
        of their attributes, a chunk at a time."""
        dtype = PRECISIONS[precision]
        slot = np.full(n_rows, -1, dtype=np.int32)  # each attribute's row (attrs is one-to-one)
        slot[attrs] = np.arange(len(attrs), dtype=np.int32)
        order = slot[slot >= 0]  # the rows in the order of their attributes
        del slot
        ptr, idx, val = np.zeros(n_rows + 1, dtype=np.int64), [], []
        width = int(np.prod(rows.shape[1:], dtype=np.int64))
        for lo in range(0, len(order), chunk):
            at = order[lo:lo + chunk]
            rounded = rows[at].reshape(len(at), width).astype(dtype)
            r, c = np.nonzero(np.abs(rounded) > prune if prune > 0 else rounded)
            ptr[attrs[at] + 1] = np.bincount(r, minlength=len(at))
            idx.append(c.astype(np.int32))
            val.append(rounded[r, c])
        np.cumsum(ptr, out=ptr)
        return cls(ptr, np.concatenate(idx) if idx else np.zeros(0, np.int32),
                   np.concatenate(val) if val else np.zeros(0, dtype), width)

    def pruned(self, precision, prune=0.0):
        """These rows with only the cells |w| > prune after rounding to the precision
        (from_dense of their dense form, without making it when they are sparse)."""
        if self.dense:
            return Rows.from_dense(self.val, precision, prune)
        val = self.val.astype(PRECISIONS[precision], copy=False)
        keep = np.abs(val) > prune if prune > 0 else val != 0
        if keep.all():
            return Rows(self.ptr, self.idx, val, self.width)
        kept = np.zeros(len(keep) + 1, dtype=np.int64)  # cells kept before each cell
        np.cumsum(keep, out=kept[1:])
        ptr = kept[self.ptr]
        return Rows(ptr, self.idx[keep], val[keep], self.width)

    def to_dense(self, dtype=np.float64):
        if self.dense:
            return self.val.astype(dtype)
        out = np.zeros((self.n_rows, self.width), dtype=dtype)
        rows = np.repeat(np.arange(self.n_rows), np.diff(self.ptr))
        out[rows, self.idx] = self.val
        return out

    def nonempty(self):
        """Which rows hold a cell."""
        return self.val.any(axis=1) if self.dense else np.diff(self.ptr) > 0

    def take(self, keep):
        """The rows where keep (a boolean mask) is true, in order."""
        if self.dense:
            return Rows(None, None, np.ascontiguousarray(self.val[keep]), self.width)
        counts = np.diff(self.ptr)[keep]
        ptr = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        cells = np.repeat(keep, np.diff(self.ptr))
        return Rows(ptr, self.idx[cells], self.val[cells], self.width)

    def rows(self, lo, hi):
        """Rows lo:hi, as views of these arrays (pointers made to start at 0)."""
        if self.dense:
            return Rows(None, None, self.val[lo:hi], self.width)
        a, b = self.ptr[lo], self.ptr[hi]
        return Rows(self.ptr[lo:hi + 1] - a, self.idx[a:b], self.val[a:b], self.width)

    def count(self, lo, hi):
        """Non-zero cells in rows lo:hi."""
        if self.dense:
            return int(np.count_nonzero(self.val[lo:hi]))
        return int(self.ptr[hi] - self.ptr[lo])

    def arrays(self, name):
        if self.dense:
            return {f"{name}.val": self.val}
        return {f"{name}.ptr": self.ptr, f"{name}.idx": self.idx, f"{name}.val": self.val}

    @classmethod
    def from_arrays(cls, arrays, name, width):
        if f"{name}.ptr" not in arrays:
            val = arrays[f"{name}.val"]
            if val.dtype not in (np.float32, np.float64) or val.ndim != 2 or val.shape[1] != width:
                raise ValueError(f"dense weights {name} are inconsistent")
            return cls(None, None, val, width)
        ptr, idx, val = arrays[f"{name}.ptr"], arrays[f"{name}.idx"], arrays[f"{name}.val"]
        if ptr.dtype != np.int64 or idx.dtype != np.int32 or val.dtype not in (np.float32, np.float64) \
                or ptr.ndim != 1 or idx.ndim != 1 or val.shape != idx.shape or len(ptr) < 1 \
                or ptr[0] != 0 or ptr[-1] != len(idx):
            raise ValueError(f"sparse weights {name} are inconsistent")
        # the decoder checks every row's bounds and every cell's index as it reads them;
        # what densifies the rows (convert, --init-model) relies on these
        if np.any(ptr[1:] < ptr[:-1]) or len(idx) and idx.view(np.uint32).max() >= width:  # (-1: 2**32 - 1)
            raise ValueError(f"sparse weights {name}: row pointers that go back or cells outside a row")
        return cls(ptr, idx, val, width)


def first_order_block(kind, S):
    """(name, width) of the 1st-order block of a model kind."""
    return ("W1", S * (S + 1)) if kind == "linear" else ("AB", 2 * S + 1)


@dataclass
class Store:
    """A model's weights as decoding reads them and its file keeps them: the 0-order
    rows w0 (W0), the 1st-order rows w1 (a linear model's W1; a bilinear model's AB),
    trans and end (float64), and whether decoding sums the scores in float32
    (sums32: as crf_test sums a binary CRF++ model's weights)."""
    w0: "Rows"
    w1: "Rows"
    trans: np.ndarray
    end: np.ndarray
    bilinear: bool = False
    sums32: bool = False

    @property
    def first_name(self):
        """The name of the 1st-order block in a model file: W1 or AB."""
        return "AB" if self.bilinear else "W1"

    def block(self, order):
        return self.w0 if order == 0 else self.w1

    def finite(self):
        """Whether every weight is finite (a file's, a converted model's, or one rounded to
        a precision whose range it leaves)."""
        return all(np.isfinite(a).all() for a in (self.w0.val, self.w1.val, self.trans, self.end))

    def with_blocks(self, w0, w1):
        return replace(self, w0=w0, w1=w1)

    def arrays(self):
        """The arrays a model file keeps, by name."""
        return {"trans": self.trans, "end": self.end, **self.w0.arrays("W0"), **self.w1.arrays(self.first_name)}


def sparse_weights(kind, weights, S, precision="float32", prune=0.0, layout=True):
    """The Store of dense weights ({"W0", "W1" or "alpha" and "beta", "trans",
    "end"}); layout=False leaves the choice of each block's layout
    (Rows.compact_layout) to the caller."""
    w0 = Rows.from_dense(weights["W0"], precision, prune)
    if kind == "linear" and isinstance(weights["W1"], Rows):  # made sparse by the learner (slots_to_rows)
        w1 = weights["W1"].pruned(precision, prune)
    elif kind == "linear":
        W1 = np.asarray(weights["W1"])
        w1 = Rows.from_dense(W1.reshape(len(W1), S * (S + 1)), precision, prune)
    else:
        w1 = Rows(None, None, _factor_rows(weights["alpha"], weights["beta"], PRECISIONS[precision], prune), 2 * S + 1)
    if layout:
        w0, w1 = w0.compact_layout(), w1.compact_layout()
    return Store(w0, w1, np.asarray(weights["trans"], dtype=np.float64), np.asarray(weights["end"], dtype=np.float64),
                 bilinear=kind != "linear")


def dense_store(kind, weights, S, precision="float32"):
    """The Store of dense weights with every block kept dense, zero cells too: what a
    decode that runs once reads (the held-out decode after each training pass), with
    the values sparse_weights keeps, without its scan for the non-zero cells, which
    on a small corpus took more time than the decode."""
    dtype = PRECISIONS[precision]
    w0 = Rows(None, None, np.asarray(weights["W0"], dtype=dtype), S)
    if kind == "linear" and isinstance(weights["W1"], Rows):  # made sparse by the learner (slots_to_rows)
        w1 = weights["W1"].pruned(precision, 0.0)
    elif kind == "linear":
        W1 = np.asarray(weights["W1"], dtype=dtype)
        w1 = Rows(None, None, W1.reshape(len(W1), S * (S + 1)), S * (S + 1))
    else:
        w1 = Rows(None, None, _factor_rows(weights["alpha"], weights["beta"], dtype, 0.0), 2 * S + 1)
    return Store(w0, w1, np.asarray(weights["trans"], dtype=np.float64), np.asarray(weights["end"], dtype=np.float64),
                 bilinear=kind != "linear")


def _factor_rows(alpha, beta, dtype, prune, chunk=1 << 16):
    """Dense [alpha | beta] rows at a precision, pruned, made chunk by chunk (no
    full-size temporaries: these are the largest arrays of a bilinear model)."""
    alpha, beta = np.asarray(alpha), np.asarray(beta)
    S = alpha.shape[1]
    out = np.empty((len(alpha), S + beta.shape[1]), dtype=dtype)
    for lo in range(0, len(alpha), chunk):
        ab = out[lo:lo + chunk]
        ab[:, :S], ab[:, S:] = alpha[lo:lo + chunk], beta[lo:lo + chunk]
        if prune > 0:
            ab[np.abs(ab) <= prune] = 0
        # alpha[a] beta[a]^T is zero when either factor is: keep both or neither
        ab[~(ab[:, :S].any(axis=1) & ab[:, S:].any(axis=1))] = 0
        ab[ab == 0] = 0  # -0.0 as +0.0, as the (cell, value) layout would store it
    return out


def dense_weights(kind, store, S):
    """The dense blocks (float64) of a Store."""
    out = {"W0": store.w0.to_dense(), "trans": np.array(store.trans, dtype=np.float64),
           "end": np.array(store.end, dtype=np.float64)}
    if kind == "linear":
        out["W1"] = store.w1.to_dense().reshape(-1, S, S + 1)
    else:
        ab = store.w1.to_dense()
        out["alpha"], out["beta"] = np.ascontiguousarray(ab[:, :S]), np.ascontiguousarray(ab[:, S:])
    return out


def compact_weights(kind, S, dense, store, tables, precision, prune=0.0):
    """(Store, key tables, report) of a model's weights (dense blocks, or else its
    Store) with only |w| > prune kept, at `precision`, and the attributes left
    without any weight taken out of the key tables (per order (table, ptr)). The
    report gives per order the attributes and non-zero weights before and after."""
    if dense is None and kind == "linear":  # sparse already: no dense copy is made
        nonzero = [store.w0.nnz, store.w1.nnz]
        store = store.with_blocks(store.w0.pruned(precision, prune), store.w1.pruned(precision, prune))
    else:
        dense = dense if dense is not None else dense_weights(kind, store, S)
        nonzero = [np.count_nonzero(dense["W0"]),
                   sum(np.count_nonzero(dense[k]) for k in (("W1",) if kind == "linear" else ("alpha", "beta")))]
        store = sparse_weights(kind, dense, S, precision, prune, layout=False)
        dense = None  # (the dense blocks go before the rows are taken: the peak of a run's end)
    if not store.finite():
        raise SeqbilError(f"weights that are not finite in {precision} (beyond its range): keep "
                          f"{'float64' if precision == 'float32' else 'them out'}")
    report, kept_tables, blocks = {}, [], []
    for order in (0, 1):
        table, ptr = tables[order]
        keep = store.block(order).nonempty()
        keep[len(table):] = True  # the %vec components: their ids follow the keyed attributes
        kept = np.concatenate([[0], np.cumsum(keep[:len(table)], dtype=np.int64)])
        kept_tables.append((np.ascontiguousarray(table[keep[:len(table)]]), kept[ptr]))
        blocks.append(store.block(order).take(keep).compact_layout())
        report[order] = {"attributes": [len(table), len(kept_tables[-1][0])], "weights": [int(nonzero[order]),
                                                                                         blocks[-1].nnz]}
    return store.with_blocks(*blocks), kept_tables, report
