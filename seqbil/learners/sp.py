"""Structured perceptron (Collins 2002) on the linear first-order model (eq. 2)."""
import numpy as np

from .._kernels.sp import PerceptronKernel
from .base import AveragedLinear, register


@register
class Perceptron(AveragedLinear):
    name = "sp"
    summary = "structured perceptron (Collins 2002) on the linear model, lazy averaging"
    multitask = True
    progress = {"counter": 1, "used": 0}
    # W1 and U1 hold a row per slot (sp.pyx): slot[a] is attribute a's row, given as
    # an update first reaches a; the rows never reached stay untouched zero pages
    _BY_SLOT = frozenset(("W1", "U1"))

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        self.slot = np.full(len(self.W1), -1, dtype=np.int32)
        self.used = 0
        # the kernel works on these arrays in place: they are never replaced, only updated
        self.kernel = PerceptronKernel(self.W0, self.W1, self.trans, self.end, self.U0, self.U1, self.Utrans,
                                       self.Uend, self.C, self.averaged, self.transitions, self.slot, tasks)

    def train_chunk(self, data, order):
        mistakes, self.counter, self.used = self.kernel.train_chunk(data, order, self.counter, self.used)
        return mistakes

    def get_rows(self, name, rows):
        if name not in self._BY_SLOT:
            return super().get_rows(name, rows)
        pool = getattr(self, name)
        slots = self.slot if rows is None else self.slot[rows]
        out = np.zeros((len(slots),) + pool.shape[1:])  # an attribute without a row: zeros
        has = slots >= 0
        out[has] = pool[slots[has]]
        return out

    def set_rows(self, name, rows, values):
        if name not in self._BY_SLOT:
            return super().set_rows(name, rows, values)
        rows = np.arange(len(self.slot)) if rows is None else np.asarray(rows)
        new = rows[self.slot[rows] < 0]  # rows this learner has not held: slots after the used ones
        self.slot[new] = self.used + np.arange(len(new), dtype=np.int32)
        self.used += len(new)
        getattr(self, name)[self.slot[rows]] = values

    def parameters(self):
        W1 = self.get_rows("W1", None)
        weights = {"W0": self.W0, "W1": W1, "trans": self.trans, "end": self.end}
        if self.averaged:
            c = float(self.counter)
            weights = {"W0": self.W0 - self.U0 / c, "W1": W1 - self.get_rows("U1", None) / c,
                       "trans": self.trans - self.Utrans / c, "end": self.end - self.Uend / c}
        return "linear", weights

    def final_parameters(self):
        """parameters() once training is over, without a second float64 copy of W1:
        the rows in use (averaged on the way) are rounded to the precision the model
        keeps (it rounds to it anyway), then put in attribute order; each step goes a
        chunk at a time from the end of its source and gives that memory back."""
        attrs = np.empty(self.used, dtype=np.int32)
        held = np.flatnonzero(self.slot >= 0)
        attrs[self.slot[held]] = held
        W1, U1, c = self.W1, self.U1 if self.averaged else None, float(self.counter)
        self.kernel = self.W1 = self.U1 = None
        shape, dtype = W1.shape, np.float32 if self.settings["precision"] == "float32" else np.float64
        # 1. the rows in use, averaged (parameters()'s rounding), at the model's precision
        if dtype == W1.dtype and U1 is None:
            rows = W1
        else:
            rows = np.empty((self.used,) + shape[1:], dtype=dtype)
            for lo, hi in _chunks_from_end(self.used):
                rows[lo:hi] = W1[lo:hi] if U1 is None else W1[lo:hi] - U1[lo:hi] / c
                W1, U1 = _shrink(W1, lo), _shrink(U1, lo)
        del W1, U1
        # 2. in attribute order
        self.W1, self.U1 = np.zeros(shape, dtype=dtype), np.zeros((0,) * len(shape))
        for lo, hi in _chunks_from_end(self.used):
            self.W1[attrs[lo:hi]] = rows[lo:hi]
            rows = _shrink(rows, lo)
        del rows
        self.slot = np.zeros(0, dtype=np.int32)
        self._average_in_place(("W0", "trans", "end"))  # (W1 done above)
        return "linear", {w: getattr(self, w) for w in ("W0", "W1", "trans", "end")}

    def warm_start(self, weights):
        """As AveragedLinear's, the 1st-order rows with a weight each at a slot."""
        weights = dict(weights)
        W1 = np.asarray(weights.pop("W1"))
        if W1.shape != self.W1.shape:
            raise ValueError(f"W1: shape {W1.shape}, the learner has {self.W1.shape}")
        super().warm_start(weights)
        live = np.flatnonzero(W1.reshape(len(W1), W1[0].size if len(W1) else 0).any(axis=1))
        self.slot[live] = np.arange(len(live), dtype=np.int32)
        self.used = len(live)
        self.W1[:len(live)] = W1[live]


def _chunks_from_end(n, size=1 << 15):
    """(lo, hi) of the chunks of range(n), from the last."""
    for hi in range(n, 0, -size):
        yield max(0, hi - size), hi


def _shrink(a, n):
    """a cut to its first n rows in place, the rest of its memory given back (realloc);
    a itself where it cannot be resized (None stays None)."""
    if a is None:
        return None
    try:
        a.resize((n,) + a.shape[1:], refcheck=False)
        return a
    except ValueError:
        return a[:n]
