"""`rpa`: the re-embedding passive-aggressive learner (Denis & Ralaivola 2017) for
sequence labelling, on the linear first-order model.

On each training sentence decoded wrongly, structured PA-II (Crammer et al. 2006) on
the weights with the word vectors fixed (the paper's eq. 6), then a PA-II step on the
vectors Phi of the sentence's words with the weights fixed (eq. 7), up to `inner`
alternations (cython_ext/rpa.pyx). The vectors are those the %emb templates read
(`embeddings`: a file, or random); without %emb templates, or with
`freeze_embeddings`, it is structured PA-II on fixed features, the paper's baseline.
Averaging averages the weights and Phi (lazily, Daume 2006). On threads (`--jobs N`,
iterative parameter mixing) Phi and its sums are mixed whole, as the dense weights are.
"""
import numpy as np

from .._kernels.rpa import RPAKernel
from ..parameter import Param
from .base import AveragedLinear, register


@register
class ReEmbeddingPA(AveragedLinear):
    name = "rpa"
    summary = ("re-embedding passive-aggressive (Denis & Ralaivola 2017): structured PA-II on the weights and "
               "on the word vectors the %emb templates read")
    options = (
        Param("lam", float, 1.0, "how far a step may move the word vectors: the Phi-step's regulariser lambda "
              "(eq. 7; large: the vectors barely move)", positive=True, flag="--lambda",
              maximum=1e15),  # (it divides the step: 1e15 holds the vectors still)
        Param("inner", int, 1, "alternations of the weight step and the vector step per sentence (the paper's "
              "inner loop; they stop early when the margin holds)", positive=True, maximum=10 ** 4),
        Param("freeze_embeddings", bool, False, "keep the word vectors fixed: structured PA-II on them (the "
              "paper's baseline)"),
        Param("rpa_loss", str, "hamming", "the margin a step asks for: hamming (the number of wrong labels) or "
              "zero-one (1 for any wrong sentence)", choices=("hamming", "zero-one")),
    )
    embeds = True  # training hands it the %emb vectors (attach) and the corpus's rows of them
    mixes = False  # a shard would need the vectors, which the corpus it encodes reads: no shards
    # (first, the %emb templates' rows of W0, which the kernel reads unchecked, is fixed by
    # the templates: a checkpoint's must be this run's)
    checkpointed = AveragedLinear.checkpointed.plus(arrays=("Phi", "UPhi"), fixed=("first",))

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        self.attach(np.zeros(0, np.int32), np.zeros((0, 1)))

    def attach(self, first, phi):
        """Learn the vectors phi (R x k, a row per word) too, read by the %emb templates
        whose k weights are the 0-order attributes first[e] .. first[e] + k - 1."""
        self.first = np.ascontiguousarray(first, dtype=np.int32)
        self.Phi = np.array(phi, dtype=np.float64, order="C")
        self.UPhi = np.zeros(self.Phi.shape if self.averaged else (0, self.Phi.shape[1]))
        s = self.settings
        # the kernel works on these arrays in place: they are never replaced, only updated
        self.kernel = RPAKernel(self.W0, self.W1, self.trans, self.end, self.U0, self.U1, self.Utrans, self.Uend,
                                self.Phi, self.UPhi, self.first, C=self.C, cost=s.rpa_loss == "hamming",
                                averaged=self.averaged, transitions=self.transitions, lam=float(s.lam),
                                inner=int(s.inner), learn_phi=not s.freeze_embeddings)

    def mixing(self):
        names, scalars = super().mixing()
        names["Phi"] = None
        if self.averaged:
            names["UPhi"] = None
        return names, scalars

    def mix_own(self, copies, touched, mu, mixed, parallel):
        """The weight rows the %emb templates read are not among the attributes of the
        encoded corpus (which gives the vectors' rows instead): mixed here, whole."""
        k = self.Phi.shape[1]
        rows = (self.first[:, None] + np.arange(k)).ravel().astype(np.int64)
        for name in ("W0", "U0") if self.averaged else ("W0",):
            mix = sum(m * copy.get_rows(name, rows) for m, copy in zip(mu, copies))
            for copy in copies:
                copy.set_rows(name, rows, mix)

    def twin(self):
        twin = super().twin()
        twin.attach(self.first, self.Phi)
        return twin

    def embedding(self):
        """Phi as decoding reads it: averaged when averaging is on."""
        return self.Phi - self.UPhi / float(self.counter) if self.averaged else self.Phi.copy()

