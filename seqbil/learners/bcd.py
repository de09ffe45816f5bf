"""`bcd`: blockwise coordinate descent for the bilinear model (Wu & Sun, Algorithm 1).

alpha and beta start at 1/|1| in every attribute block; then R rounds, each running
`bcd_epochs` passes of the online SVM solver for alpha with beta fixed, then as many
for beta with alpha fixed (cython_ext/bcd.pyx). No parameter averaging.

Several tasks are learned with the coupling b of Cavallanti, Cesa-Bianchi & Gentile
(2008, eq. 3) as augmented features, like sp and bol: PA-I in the space where each
weight copy is a feature scaled by the square root of its step multiplier, b / (K (1 +
b)) shared and 1 / (1 + b) own (see cython_ext/bcd.pyx). A general interaction
matrix is refused.

On threads (`--jobs N`, iterative parameter mixing after every pass) the copies'
parameters are mixed as they stand: within a half-step the model is linear in the
side it learns, and the other side is the same in every copy.
"""
import numpy as np

from .._kernels.bcd import BCDKernel
from ..parameter import Param
from .base import OnlineLearner, register


@register
class CoordinateDescent(OnlineLearner):
    name = "bcd"
    summary = "blockwise coordinate descent for the bilinear model (Wu & Sun 2015, Algorithm 1), no averaging"
    bilinear = True
    averages = False
    multitask = True  # with the coupling b of eq. (3) only
    options = (
        Param("bcd_rounds", int, 2, "alternations between alpha and beta (R)", positive=True),
        Param("bcd_epochs", int, 5, "epochs of the online SVM solver per half-step", positive=True),
    )
    checkpointed = OnlineLearner.checkpointed.plus(arrays=("W0", "end", "ab", "mark0", "mark1"),
                                                   numbers=("rounds", "epochs", "side"), progress={"side": 0})

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        S = self.S
        self.rounds, self.epochs = int(settings.bcd_rounds), int(settings.bcd_epochs)
        self.W0, self.end = np.zeros((self.A0, S)), np.zeros(self.copies * S)
        self.ab = np.empty((self.A1, 2 * S + 1))  # alpha[a] next to beta[a] in memory
        self.alpha, self.beta = self.ab[:, :S], self.ab[:, S:]
        self.alpha[:], self.beta[:] = 1 / np.sqrt(S), 1 / np.sqrt(S + 1)
        self.mark0 = np.full(self.A0, -1, dtype=np.int32)
        self.mark1 = np.full(self.A1, -1, dtype=np.int32)
        self.side = 0
        # the kernel works on these arrays in place: they are never replaced, only updated
        self.kernel = BCDKernel(self.W0, self.trans, self.end, self.alpha, self.beta, self.mark0, self.mark1,
                                C=self.C, transitions=self.transitions, tasks=tasks)

    def passes(self):
        return 2 * self.rounds * self.epochs

    def pass_name(self, k):
        r, rest = divmod(k, 2 * self.epochs)
        side, e = divmod(rest, self.epochs)
        return f"round {r + 1}/{self.rounds} {'alpha' if side == 0 else 'beta'} epoch {e + 1}/{self.epochs}"

    def start_pass(self, k):
        self.side = (k // self.epochs) % 2

    def train_chunk(self, data, order):
        return self.kernel.train_chunk(data, order, self.side)

    def end_pass(self, k):
        return {"side": "alpha" if self.side == 0 else "beta"}

    dense_rows = True  # (alpha and beta start at 1/|1| everywhere)

    def mixing(self):
        return {"W0": 0, "trans": None, "end": None, "ab": 1}, []

    def row_pool(self, name):
        return (getattr(self, name), None) if name in ("W0", "ab") else None

    def parameters(self):
        return "bilinear", {"W0": self.W0, "trans": self.trans, "end": self.end, "alpha": self.alpha,
                            "beta": self.beta}
