"""`pa`: structured passive-aggressive learning (Crammer, Dekel, Keshet, Shalev-Shwartz &
Singer 2006, sections 3 and 8) on the linear first-order model, as CRFsuite trains it
(lib/crf/src/train_passive_aggressive.c); CRF++'s MIRA with one best is the same step.

On a sentence decoded wrongly (yhat, d wrong labels) the weights move along dPsi =
Psi(y) - Psi(yhat) by tau, for the loss l = score(yhat) - score(y) + Delta with Delta =
sqrt(d) (`pa_error_sensitive`, CRFsuite's error_sensitive = 1) or 1:
    pa_type 0 (PA):    tau = l / |dPsi|^2
    pa_type 1 (PA-I):  tau = min(C, l / |dPsi|^2)
    pa_type 2 (PA-II): tau = l / (|dPsi|^2 + 1 / (2C))
(CRFsuite's cost_sensitive / cost_insensitive and tau0, tau1, tau2; C is its `c`).
Averaging (`averaged`, CRFsuite's averaging = 1) is CRFsuite's too: ws += tau u dPsi
with u counting the sentences from 1, the average w - ws / u (Daume 2006's trick). The
kernel is rpa's weight step (cython_ext/rpa.pyx, RPAKernel) without %emb adaptation:
%emb and %vec templates are read as fixed values. CRFsuite keeps a weight only for the
(attribute, label) pairs seen in training and has no start, end or 1st-order attribute
features; here the model is sp's (every pair, W1, trans with a start column, end).
CRFsuite's `epsilon` stop (mean loss of an epoch) is not taken: `epochs` passes run.
"""

from .._kernels.rpa import RPAKernel
from ..parameter import Param
from .base import AveragedLinear, register

ZERO_ONE, SQRT_HAMMING = 0, 2  # RPAKernel's cost codes


@register
class PassiveAggressive(AveragedLinear):
    name = "pa"
    summary = ("structured passive-aggressive (Crammer et al. 2006) on the linear model as CRFsuite's pa: "
               "PA, PA-I or PA-II (pa_type), cost sqrt(wrong labels) or 1 (pa_error_sensitive), averaged")
    options = (
        Param("pa_type", int, 1, "the passive-aggressive step: 0 PA (no slack), 1 PA-I (the step capped at C), "
              "2 PA-II (squared slack, 1/(2C) added to |dPsi|^2) (CRFsuite's type)", choices=(0, 1, 2)),
        Param("pa_error_sensitive", bool, True, "the margin a wrong sentence must gain counts its wrong labels: "
              "sqrt of their number, else 1 (CRFsuite's error_sensitive)"),
    )

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        cost = SQRT_HAMMING if settings.pa_error_sensitive else ZERO_ONE
        # the kernel works on these arrays in place: they are never replaced, only updated
        self.kernel = RPAKernel(self.W0, self.W1, self.trans, self.end, self.U0, self.U1, self.Utrans, self.Uend,
                                C=self.C, cost=cost, averaged=self.averaged, transitions=self.transitions,
                                pa_type=int(settings.pa_type))
