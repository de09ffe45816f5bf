"""The online learners on partially labelled sentences: a latent structured perceptron.

A sentence whose labels are partly known (formats/partial.py) has many labellings that
keep what is known. Before each chunk of sentences, each such sentence's target is
the best of them under the learner's current weights (constrained Viterbi, as forced
decoding does it: cython_ext/known.pxd), and the learner then takes its usual step
toward that target: the latent-variable perceptron of Sun, Matsuzaki, Okanohara &
Tsujii (2009, "Latent variable perceptron algorithm for structured classification",
IJCAI, Algorithm 1: the latent structure is the labelling of the unknown tokens),
which the passive-aggressive and bilinear learners follow alike. With every label
known, nothing changes.

The decode reads only the weight rows of the attributes that the chunk's partial
sentences hold (Learner.current_rows), so that a chunk's refresh costs about as much
as its training step, whatever the size of the model.
"""
import numpy as np

from .._kernels.decode import decode_corpus
from ..features.dataset import Dataset
from ..storage import dense_store


class LatentTargets:
    """The targets of a training corpus's partially labelled sentences, refreshed per
    chunk into data.labels (the gold labels every learner's kernel reads)."""

    def __init__(self, data):
        self.data = data
        partial_pos = (data.known < 0).astype(np.int64)
        counts = np.add.reduceat(partial_pos, data.seq_ptr[:-1]) if data.n_positions else np.zeros(0, np.int64)
        counts[np.diff(data.seq_ptr) == 0] = 0  # (reduceat reads the next sequence's first position for an empty one)
        self.partial = counts > 0
        self.b_ptr = data.b_pointers()

    def refresh(self, learner, order):
        """Set the targets of the partial sentences among `order` (sequence indices) to
        their best consistent labellings under the learner's current weights."""
        seqs = np.asarray(order)[self.partial[order]]
        if len(seqs) == 0:
            return
        sub, positions, rows0, rows1 = self._subset(seqs)
        kind, weights = learner.current_rows(rows0, rows1)
        store = dense_store(kind, weights, learner.S, "float64")
        out = np.zeros(sub.n_positions, dtype=np.int32)
        decode_corpus(sub, store, out, np.ascontiguousarray(self.data.known[positions]), self.data.label_sets)
        self.data.labels[positions] = out

    def _subset(self, seqs):
        """(the sequences seqs as a Dataset of their own with attribute ids renumbered
        from 0, their positions in the corpus, and the attributes of each order that
        ids 0, 1, ... stand for)."""
        data = self.data
        starts, ends = data.seq_ptr[seqs], data.seq_ptr[seqs + 1]
        lengths = ends - starts
        positions = np.concatenate([np.arange(a, b) for a, b in zip(starts, ends)])
        seq_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        u_ptr, u_ids, u_entries = _gather(data.u_ptr, data.u_ids, positions)
        b_ptr, b_ids, _ = _gather(self.b_ptr, data.b_ids, positions)
        rows0, u_local = np.unique(u_ids, return_inverse=True)
        rows1, b_local = np.unique(b_ids, return_inverse=True)
        u_vals = data.u_vals[u_entries] if data.u_vals is not None else None
        sub = Dataset(seq_ptr, np.zeros(len(positions), np.int32), u_ptr, u_local.astype(np.int32), b_ptr,
                      b_local.astype(np.int32), u_vals)
        return sub, positions, rows0, rows1


def _gather(ptr, ids, positions):
    """The CSR rows `positions` of (ptr, ids): (their ptr from 0, their ids, the indices
    of those ids in `ids`)."""
    lo, hi = ptr[positions], ptr[positions + 1]
    counts = hi - lo
    out_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    entries = np.repeat(lo - out_ptr[:-1], counts) + np.arange(out_ptr[-1])
    return out_ptr, ids[entries], entries
