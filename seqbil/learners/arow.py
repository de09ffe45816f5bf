"""`arow`: adaptive regularization of weight vectors (Crammer, Kulesza & Dredze 2009) for
sequences on the linear first-order model, as CRFsuite trains it (lib/crf/src/train_arow.c).

Each weight has a mean (W0, W1, trans, end: what decodes) and a variance (V0, V1,
Vtrans, Vend: a diagonal covariance of the weights' shape, `arow_variance` at the
start). On a sentence decoded wrongly (d wrong labels) with dPsi = Psi(y) - Psi(yhat):
cost = score(yhat) - score(y) + d, alpha = cost / (arow_gamma + sum v dPsi^2), the means
move by alpha v dPsi and each variance becomes 1 / (1/v + dPsi^2 / arow_gamma)
(cython_ext/arow.pyx). CRFsuite does not average AROW's weights, so neither does this
learner (`averages = False`: the model is the last means). `--init-model` starts the
means from the model and the variances afresh. On threads (`--jobs N`, iterative
parameter mixing, training/threads.py) the copies are combined as Gaussians, each
weight's by the one that minimises sum_i mu_i KL(N(m, v) || N(m_i, v_i)) (a
combination by KL divergence, as Dredze, Crammer & Pereira 2008 propose for
classifiers trained in parallel): 1/v = sum_i mu_i / v_i and m = v sum_i mu_i m_i /
v_i, so a copy that learned a weight (a smaller variance) outweighs one that did not. Uniformly
mixing means and variances, as shards would, is not AROW: there are no shards, nor
multi-task training.
CRFsuite's `epsilon` stop (mean loss of an epoch) is not taken: `epochs` passes run.
"""
import numpy as np

from .._kernels.arow import AROWKernel
from .._kernels.mix import mix_gaussian
from ..parameter import Param
from .base import OnlineLearner, register


@register
class AROW(OnlineLearner):
    name = "arow"
    summary = ("AROW (Crammer, Kulesza & Dredze 2009) on the linear model as CRFsuite's arow: a variance per "
               "weight, no averaging")
    options = (
        Param("arow_variance", float, 1.0, "AROW: the initial variance of every weight (CRFsuite's variance)",
              positive=True),
        Param("arow_gamma", float, 1.0, "AROW: the regularisation r of its step: alpha = cost / (gamma + "
              "dPsi' Sigma dPsi), 1/v += dPsi^2 / gamma (CRFsuite's gamma)", positive=True),
    )
    averages = False  # CRFsuite's train_arow.c returns the means, never averaged
    checkpointed = OnlineLearner.checkpointed.plus(arrays=("W0", "W1", "end", "V0", "V1", "Vtrans", "Vend"))

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        self.averaged = False
        S, v = self.S, float(settings.arow_variance)
        self.W0 = np.zeros((self.A0, S))
        self.W1 = np.zeros((self.A1, S, S + 1))
        self.end = np.zeros(S)
        self.V0, self.V1, self.Vtrans, self.Vend = (np.full(a.shape, v) for a in (self.W0, self.W1, self.trans,
                                                                                  self.end))
        # the kernel works on these arrays in place: they are never replaced, only updated
        self.kernel = AROWKernel(self.W0, self.W1, self.trans, self.end, self.V0, self.V1, self.Vtrans, self.Vend,
                                 gamma=float(settings.arow_gamma), transitions=self.transitions)

    def train_chunk(self, data, order):
        return self.kernel.train_chunk(data, order)

    # --- on threads: each weight's mean and variance, combined as Gaussians (mix_own)
    _PAIRS = (("W0", "V0", 0), ("W1", "V1", 1), ("trans", "Vtrans", None), ("end", "Vend", None))
    own_mix = frozenset(name for pair in _PAIRS for name in pair[:2])
    dense_rows = True  # (every variance starts at arow_variance)

    def mixing(self):
        return {name: order for mean, variance, order in self._PAIRS for name in (mean, variance)}, []

    def mix_own(self, copies, touched, mu, mixed, parallel):
        """The means and variances at the rows touched (mix.pyx: mix_gaussian, on the
        threads), and the dense ones whole, into `mixed`, combined as the module says."""
        mu = np.asarray(mu, dtype=np.float64)
        for mean, variance, order in self._PAIRS:
            if order is not None:
                arrays = [getattr(c, mean) for c in copies], [getattr(c, variance) for c in copies]
                parallel(lambda part: mix_gaussian(*arrays, part, mu), touched[order])
                continue
            precision = sum(m / c.get_rows(variance, None) for m, c in zip(mu, copies))
            mixed[mean] = sum(m * c.get_rows(mean, None) / c.get_rows(variance, None)
                              for m, c in zip(mu, copies)) / precision
            mixed[variance] = 1.0 / precision

    def parameters(self):
        return "linear", {"W0": self.W0, "W1": self.W1, "trans": self.trans, "end": self.end}
