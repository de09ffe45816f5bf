"""`bol`: online learning of the rank-1 bilinear model (Wu & Sun, Algorithm 2).

Block mode (default): the dual Theta is block diagonal with one S x (S+1) block per
1st-order attribute, and each block keeps its own rank-1 triple W_a = sigma_a u_a
v_a^T, refreshed by R power steps on every mistake that touches it (see
cython_ext/bilinear.pyx). The literal global reading, one sigma_1 over the whole
block-diagonal Theta, is in bol_global.py.

0-order attributes and the end scores form a linear part updated as in the paper's
section 4.3 (w += C dPhi-hat). With averaging, alpha (= sigma u) and beta (= v) are
averaged individually, lazily.
"""
import numpy as np

from .._bilinear import bol_block_chunk
from .base import Learner


class BlockPool:
    """Dense storage of the Theta blocks of the attributes touched so far."""

    def __init__(self, n_attributes, S):
        self.slot = np.full(n_attributes, -1, dtype=np.int64)
        self.pool = np.zeros((0, S, S + 1))
        self.used = 0

    def reserve(self, extra):
        need = self.used + extra
        if need > len(self.pool):
            grown = np.zeros((max(need, 2 * len(self.pool), 1024),) + self.pool.shape[1:])
            grown[:self.used] = self.pool[:self.used]
            self.pool = grown


def occurrences(data, order):
    """Number of 1st-order attribute occurrences in the sequences of order."""
    return int((data.b_ptr[data.seq_ptr[order + 1]] - data.b_ptr[data.seq_ptr[order]]).sum())


class Bilinear(Learner):
    name = "bol"

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings)
        S, A1 = self.S, self.A1
        self.R = int(settings["power_steps"])
        self.W0, self.end = np.zeros((self.A0, S)), np.zeros(S)
        self.alpha, self.beta, self.sigma = np.zeros((A1, S)), np.zeros((A1, S + 1)), np.zeros(A1)
        avg = (lambda a: np.zeros(a.shape)) if self.averaged else (lambda a: np.zeros((0,) * a.ndim))
        self.U0, self.Uend, self.Ua, self.Ub = (avg(a) for a in (self.W0, self.end, self.alpha, self.beta))
        self.blocks = BlockPool(A1, S)
        self.mark = np.full(A1, -1, dtype=np.int32)
        self.counter = 1
        self.updated = 0

    def train_chunk(self, data, order):
        self.blocks.reserve(occurrences(data, order))
        b = self.blocks
        mistakes, self.counter, b.used, updated = bol_block_chunk(
            order, data.seq_ptr, data.labels, data.u_ptr, data.u_ids, data.b_ptr, data.b_ids,
            self.W0, self.end, self.U0, self.Uend, self.alpha, self.beta, self.sigma, self.Ua, self.Ub,
            b.slot, b.pool, b.used, self.mark, self.C, self.R, self.counter, self.averaged)
        self.updated += updated
        return mistakes

    def end_pass(self, k):
        live = self.sigma[self.sigma > 0]
        stats = {"blocks": int(self.blocks.used), "block_updates": self.updated,
                 "sigma_mean": float(live.mean()) if len(live) else 0.0,
                 "sigma_max": float(live.max()) if len(live) else 0.0}
        self.updated = 0
        return stats

    def parameters(self):
        if not self.averaged:
            return "bilinear", {"W0": self.W0, "end": self.end, "alpha": self.alpha, "beta": self.beta}
        c = float(self.counter)
        return "bilinear", {"W0": self.W0 - self.U0 / c, "end": self.end - self.Uend / c,
                            "alpha": self.alpha - self.Ua / c, "beta": self.beta - self.Ub / c}
