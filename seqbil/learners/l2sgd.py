"""Linear-chain CRF trained by stochastic gradient descent with L2 regularisation, as
CRFsuite's l2sgd trainer (lib/crf/src/train_l2sgd.c, after Pegasos, Shalev-Shwartz,
Singer & Srebro 2007, and the learning-rate calibration of Bottou's sgd). The objective
is the crf learner's without c1, over the same feature set (crf.py, cython_ext/crf.pyx):

    f(w) = sum_j -log p(y_j | x_j) + c2 ||w||^2 = N (mean loss + (lambda / 2) ||w||^2),

lambda = 2 c2 / N over N training sequences. Each step takes one sequence j:

    eta = 1 / (lambda (t0 + t)),  w <- (1 - eta lambda) w,  w <- w - eta grad(-log p(y_j | x_j))(w),

t counting the steps from 0. The weights are kept as decay * x, decay the product of
the factors (1 - eta lambda) of the epoch's steps so far, so a step changes only the
features of its sentence (cython_ext/crf.pyx: CRFKernel.sgd); x is multiplied by decay
at the end of each epoch, so between epochs (and in checkpoints) decay is 1.

t0 = 1 / (lambda eta0), eta0 found by CRFsuite's calibration (l2sgd_calibration()):
each trial is one epoch of SGD over the first calibration_samples sequences of a
shuffled order, from the start weights, with t0 = 1 / (lambda eta); eta starts at
calibration_eta and is multiplied by calibration_rate while the trial's loss ends below
the initial loss (of those sequences at the start weights) and fewer than
calibration_candidates trials did so; then it goes down from calibration_eta / rate,
divided by the rate each trial, until calibration_candidates more trials lowered the
loss; at most calibration_max_trials - 1 trials in all (CRFsuite's count). The eta of
the least loss is eta0. A trial's loss is the sum of the sentences' losses during its
epoch plus (lambda / 2) ||w||^2 times the number of samples.

A pass is one epoch over the training sequences in a new random order. Its objective
is CRFsuite's: the losses summed during the epoch (each at the weights of its step
after the decay, before the gradient) plus c2 ||w||^2 at its end. Training stops when that objective fell by less than
delta (relatively) over the last period epochs (period 0: no such test), or after
epochs epochs, and the model is the weights of the epoch with the least objective
(CRFsuite's best_w).

Shuffling: CRFsuite shuffles with its own generator (dataset_shuffle, once for the
calibration sample and once per epoch); here numpy's generator seeded by `seed`
draws a permutation of the sequences for the calibration sample and a new one for each
epoch. Differences from CRFsuite where it has no behaviour of its own: continuing a
model (--init-model), the calibration and the epochs start from its weights, and the
initial loss of the calibration counts their L2 term over the samples, as the trials
do (CRFsuite starts from 0, where the two agree); a loss that is not finite ends
training with the weights of the best epoch (CRFsuite returns an error).
"""
import math

import numpy as np

from .._kernels.linalg import dot
from ..optimize import delta_test
from ..parameter import Param
from .base import BatchLearner, Checkpointed, register
from .crf import CRFWeights


def calibrate(trial, initial_loss, eta, rate, candidates, max_trials):
    """CRFsuite's search for the learning rate (train_l2sgd.c: l2sgd_calibration):
    trial(eta) is the loss after one epoch at eta; returns (best eta, [(eta, loss)])."""
    num, dec, trials, init_eta = candidates, False, 1, eta
    best_loss, best_eta, tried = math.inf, eta, []
    while num > 0 or not dec:
        loss = trial(eta)
        tried.append((eta, loss))
        ok = math.isfinite(loss) and loss < initial_loss
        if ok:
            num -= 1
        if math.isfinite(loss) and loss < best_loss:
            best_loss, best_eta = loss, eta
        if not dec:
            if ok and num > 0:
                eta *= rate
            else:
                dec, num, eta = True, candidates, init_eta / rate
        else:
            eta /= rate
        trials += 1
        if max_trials <= trials:
            break
    return best_eta, tried


def _finite(value):
    return float(value) if math.isfinite(value) else None


@register
class L2SGD(CRFWeights, BatchLearner):
    name = "l2sgd"
    summary = "linear-chain CRF by SGD with L2 (c2), as CRFsuite's l2sgd: a learning rate calibrated on a " \
              "sample, then eta = 1 / (lambda (t0 + t)), one sentence a step"
    averages = False
    probabilistic = True
    defaults = {"epochs": 1000, "delta": 1e-6}  # CRFsuite's l2sgd: max_iterations 1000, delta 1e-6
    checkpointed = Checkpointed(arrays=("x", "best_x", "best", "pf"), fixed=CRFWeights.FEATURE_SET,
                                numbers=("t", "t0", "eta", "decay", "rng"), progress={"t": 0.0, "t0": 0.0, "eta": 0.0})
    shown = (("objective", "objective {:.6g}"), ("improvement", "improvement {:.3g}"), ("norm", "|w| {:.4g}"),
             ("eta", "eta {:.4g}"),
             ("calibration", lambda c: f"eta0 {c['eta']:.4g} calibrated in {len(c['trials'])} trials"))
    # c2, all_possible_states, period and delta are in the core table (params.py)
    options = (
        Param("calibration_eta", float, 0.1, "l2sgd: the first learning rate the calibration tries (CRFsuite's "
              "calibration.eta)", positive=True),
        Param("calibration_rate", float, 2.0, "l2sgd: the calibration multiplies and divides the learning rate by "
              "this (CRFsuite's calibration.rate)", positive=True),
        Param("calibration_samples", int, 1000, "l2sgd: training sequences the calibration trains on, the first of "
              "a shuffled order (CRFsuite's calibration.samples)", positive=True),
        Param("calibration_candidates", int, 10, "l2sgd: learning rates that lower the loss the calibration looks "
              "for upwards and downwards (CRFsuite's calibration.candidates)", positive=True, maximum=10 ** 6),
        Param("calibration_max_trials", int, 20, "l2sgd: the calibration ends after this many trials (CRFsuite's "
              "calibration.max_trials)", positive=True, maximum=10 ** 6),
    )

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        self.c2 = float(settings.c2)
        self.period, self.delta = int(settings.period), float(settings.delta)
        self.rng = np.random.default_rng(settings.seed)
        self.kernel = None
        # the state of the run (snapshot): step counter, t0 (0 until calibrated), the last
        # eta, the decay (1 between epochs), the best epoch's objective and weights
        self.t = self.t0 = self.eta = 0.0
        self.decay = 1.0

    @classmethod
    def refuse(cls, settings):
        if settings.c2 <= 0:
            return "c2", "l2sgd needs an L2 term (c2 > 0): its learning rate is 1 / (lambda (t0 + t)), " \
                         "lambda = 2 c2 / N"
        return None

    def prepare(self, data):
        self.build_features(data)
        self.N = data.n_sequences
        self.lam = 2.0 * self.c2 / max(self.N, 1)
        self.best_x = np.zeros_like(self.x)
        self.best = np.full(1, np.inf)  # the best epoch's objective
        self.pf = np.zeros(self.period)  # the objectives of the last period epochs

    def calibrate(self, data):
        """t0 = 1 / (lambda eta0) by CRFsuite's calibration (module docstring); returns
        its record."""
        s, lam = self.settings, self.lam
        n = min(self.N, s.calibration_samples)
        sample = self.rng.permutation(self.N)[:n].astype(np.int64)
        w0 = self.x.copy()
        initial = self.kernel.loss(data, w0, sample) + 0.5 * lam * dot(w0, w0) * n

        def trial(eta):
            x = w0.copy()
            total, _, decay, _ = self.kernel.sgd(data, x, sample, 1.0 / (lam * eta), lam, 0.0)
            if not math.isfinite(total):
                return total
            x *= decay
            return total + 0.5 * lam * dot(x, x) * n
        eta, tried = calibrate(trial, initial, s.calibration_eta, s.calibration_rate,
                               s.calibration_candidates, s.calibration_max_trials)
        self.t0, self.t = 1.0 / (lam * eta), 0.0
        return {"eta": eta, "t0": self.t0, "samples": n, "initial_loss": _finite(initial),
                "trials": [[e, _finite(loss)] for e, loss in tried]}

    def train_pass(self, data, k):
        """One epoch (calibrating first when it is the run's first); returns its record:
        objective, improvement (the delta test's ratio, None for the first period
        epochs), norm |w|, the last step's eta, updates (steps so far) and stop."""
        record = {}
        if self.t0 == 0.0:
            record["calibration"] = self.calibrate(data)
        order = self.rng.permutation(self.N).astype(np.int64)
        total, self.t, decay, self.eta = self.kernel.sgd(data, self.x, order, self.t0, self.lam, self.t)
        if not math.isfinite(total):  # CRFsuite: "overflow loss"
            self.x[...] = self.best_x
            return {**record, "objective": None, "eta": self.eta, "updates": self.t,
                    "stop": "the loss is not finite (overflow): the weights of the best epoch are kept"}
        self.x *= decay
        norm2 = dot(self.x, self.x)
        objective = total + 0.5 * self.lam * norm2 * self.N
        if objective < self.best[0]:
            self.best[0] = objective
            self.best_x[...] = self.x
        improvement, stop = None, None
        if self.period > 0:
            improvement, below = delta_test(self.pf, k, objective, self.delta)
            if below:
                stop = f"the objective fell by less than delta = {self.delta:g} over the last " \
                       f"{self.period} epoch{'s' if self.period != 1 else ''}"
            self.pf[k % self.period] = objective
        return {**record, "objective": objective, "improvement": improvement, "norm": math.sqrt(norm2),
                "eta": self.eta, "updates": self.t, "stop": stop}

    def objective(self, data, x=None):
        """f(x) exactly (default: the current weights): the sum of -log p(y | x) over
        every training sequence plus c2 ||x||^2."""
        x = self.x if x is None else x
        return self.kernel.loss(data, x, np.arange(data.n_sequences, dtype=np.int64)) + self.c2 * dot(x, x)

    def finish(self):
        """The model is the best epoch's weights (CRFsuite's best_w)."""
        if self.best_x is not None and math.isfinite(self.best[0]):
            self.x[...] = self.best_x
        self.best_x = self.pf = None
