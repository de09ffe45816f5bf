"""Structured perceptron (Collins 2002) on the linear first-order model (eq. 2)."""
from .._kernels.sp import PerceptronKernel
from .base import AveragedLinear, register


@register
class Perceptron(AveragedLinear):
    name = "sp"
    summary = "structured perceptron (Collins 2002) on the linear model, lazy averaging"
    multitask = True

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        # the kernel works on these arrays in place: they are never replaced, only updated
        self.kernel = PerceptronKernel(self.W0, self.W1, self.trans, self.end, self.U0, self.U1, self.Utrans,
                                       self.Uend, self.C, self.averaged, self.transitions, tasks)
