"""Structured perceptron (Collins 2002) on the linear first-order model (eq. 2)."""
import numpy as np

from .._kernels.sp import PerceptronKernel
from .base import AveragedLinear, register, slots_to_rows


@register
class Perceptron(AveragedLinear):
    name = "sp"
    summary = "structured perceptron (Collins 2002) on the linear model, lazy averaging"
    multitask = True
    checkpointed = AveragedLinear.checkpointed.plus(arrays=("slot",), numbers=("used",), progress={"used": 0})
    # W1 and U1 hold a row per slot (sp.pyx): slot[a] is attribute a's row, given as
    # an update first reaches a; the rows never reached stay untouched zero pages
    _BY_SLOT = frozenset(("W1", "U1"))

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        self.slot = np.full(len(self.W1), -1, dtype=np.int32)
        self.used = 0
        # the kernel works on these arrays in place: they are never replaced, only updated
        self.kernel = PerceptronKernel(self.W0, self.W1, self.trans, self.end, self.U0, self.U1, self.Utrans,
                                       self.Uend, C=self.C, averaged=self.averaged, transitions=self.transitions,
                                       slot=self.slot, tasks=tasks)

    def state_problem(self, arrays, scalars):
        """The kernel writes row slot[a] of the pool W1 (U1) unchecked, and gives the
        next new attribute row `used`: the rows held are 0 .. used - 1, one attribute
        each, within the pool."""
        used, slot = scalars["used"], arrays["slot"]
        if not used <= len(self.W1):
            return f"used = {used} is past the {len(self.W1)} rows of the pool"
        held = slot[slot >= 0]
        if np.any(slot < -1) or np.any(held >= used) or len(held) != used or \
                np.any(np.bincount(held, minlength=used) != 1):
            return f"slot does not give the rows 0 .. {used - 1} one attribute each"
        return None

    def train_chunk(self, data, order):
        mistakes, self.counter, self.used = self.kernel.train_chunk(data, order, self.counter, self.used)
        return mistakes

    def get_rows(self, name, rows):
        if name not in self._BY_SLOT:
            return super().get_rows(name, rows)
        pool = getattr(self, name)
        slots = self.slot if rows is None else self.slot[rows]
        out = pool.take(np.maximum(slots, 0), axis=0) if len(pool) else np.zeros((len(slots),) + pool.shape[1:])
        out[slots < 0] = 0.0  # an attribute without a row: zeros
        return out

    def row_pool(self, name):
        return (getattr(self, name), self.slot) if name in self._BY_SLOT else super().row_pool(name)

    def hold_rows(self, order, rows):
        if order == 1:
            new = rows[self.slot[rows] < 0]  # (the pools' rows past the used ones are zeros)
            self.slot[new] = self.used + np.arange(len(new), dtype=np.int32)
            self.used += len(new)

    def set_rows(self, name, rows, values):
        if name not in self._BY_SLOT:
            return super().set_rows(name, rows, values)
        rows = np.arange(len(self.slot)) if rows is None else np.asarray(rows)
        new = rows[self.slot[rows] < 0]  # rows this learner has not held: slots after the used ones
        self.slot[new] = self.used + np.arange(len(new), dtype=np.int32)
        self.used += len(new)
        getattr(self, name)[self.slot[rows]] = values

    def final_parameters(self):
        """parameters() once training is over, at the model's precision, without a
        second float64 copy of W1 and without a dense W1 over all the attributes: W1
        comes as the sparse rows the model keeps (slots_to_rows; the model's weights
        setter takes them as they are)."""
        attrs = np.empty(self.used, dtype=np.int32)  # the attribute of each slot
        for lo in range(0, len(self.slot), 1 << 16):  # (no index array as long as the slots)
            part = self.slot[lo:lo + (1 << 16)]
            held = np.flatnonzero(part >= 0)
            attrs[part[held]] = lo + held
        W1, U1 = self.W1, self.U1 if self.averaged else None
        self.kernel = self.W1 = self.U1 = None
        self.slot = np.zeros(0, dtype=np.int32)
        self.W1 = slots_to_rows(W1, U1, self.counter, attrs, len(W1), self.settings.precision)
        self.U1 = np.zeros((0,) * W1.ndim)
        del W1, U1
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

