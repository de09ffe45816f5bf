"""Structured perceptron (Collins 2002) on the linear first-order model (eq. 2)."""
import numpy as np

from .._kernels.sp import PerceptronKernel
from .base import Learner, averaged_linear, register


@register
class Perceptron(Learner):
    name = "sp"
    summary = "structured perceptron (Collins 2002) on the linear model, lazy averaging"
    multitask = True

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        S = self.S
        self.W0 = np.zeros((self.A0, S))
        self.W1 = np.zeros((self.A1, S, S + 1))
        self.end = np.zeros(self.copies * S)
        shape = (lambda a: a.shape) if self.averaged else (lambda a: (0,) * a.ndim)
        self.U0, self.U1, self.Utrans, self.Uend = (np.zeros(shape(a)) for a in (self.W0, self.W1, self.trans,
                                                                                  self.end))
        self.counter = 1
        # the kernel works on these arrays in place: they are never replaced, only updated
        self.kernel = PerceptronKernel(self.W0, self.W1, self.trans, self.end, self.U0, self.U1, self.Utrans,
                                       self.Uend, self.C, self.averaged, self.transitions, tasks)

    def train_chunk(self, data, order):
        mistakes, self.counter = self.kernel.train_chunk(data, order, self.counter)
        return mistakes

    def mixing(self):
        pairs = (("W0", 0, "U0"), ("W1", 1, "U1"), ("trans", None, "Utrans"), ("end", None, "Uend"))
        names = {w: order for w, order, _ in pairs}
        if self.averaged:  # the lazy sums and the step counter mix as the weights do
            names.update({u: order for _, order, u in pairs})
        return names, ["counter"] if self.averaged else []

    def parameters(self):
        return averaged_linear(self)
