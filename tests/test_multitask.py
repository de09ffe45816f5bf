"""Multi-task learning (Cavallanti, Cesa-Bianchi & Gentile 2008, section 3) as
augmented features: every attribute, trans and end have a shared copy and a copy per
task; an update on task k moves the shared copies by b / (K (1 + b)) and k's own by
1 / (1 + b) times the single-task step.

The reference is the paper's Figure 1 written out: K explicit weight vectors, the
sequence of task k decoded by brute force with vector k, and on a mistake every
vector j moved by (A^-1)_{jk} C dPhi, A^-1 computed by numpy from eq. (3)."""
import dataclasses

import numpy as np
import pytest

from seqbil.features.dataset import Dataset
from seqbil.learners import LEARNERS
from seqbil.params import defaults
from test_decode import random_dataset, tables
from test_real_values import Snapshots, best_path, dphi, epoch_orders


def augmented(data, task, K, A0, A1):
    """data with each attribute a of an order (A attributes) at a position of a task-k
    sequence present twice: shared as a, and as k's own copy A + k A + a (values
    alike); and seq_task."""
    def copies(ptr, ids, vals, A):
        out_ptr, out_ids, out_vals = [0], [], []
        for j in range(data.n_sequences):
            for p in range(data.seq_ptr[j], data.seq_ptr[j + 1]):
                mine = ids[ptr[p]:ptr[p + 1]]
                out_ids += list(mine) + list(A + task[j] * A + mine)
                if vals is not None:
                    out_vals += list(vals[ptr[p]:ptr[p + 1]]) * 2
                out_ptr.append(len(out_ids))
        return (np.array(out_ptr, np.int64), np.array(out_ids, np.int32),
                None if vals is None else np.array(out_vals, np.float32))
    u_ptr, u_ids, u_vals = copies(data.u_ptr, data.u_ids, data.u_vals, A0)
    b_ptr, b_ids, _ = copies(data.b_ptr, data.b_ids, None, A1)
    out = Dataset(data.seq_ptr, data.labels, u_ptr, u_ids, b_ptr, b_ids, u_vals)
    out.seq_task = np.asarray(task, dtype=np.int32)
    return out


def tasks_spec(K, b, A0, A1):
    return (K, b, (A0, A0 + K * A0), (A1, A1 + K * A1))


def per_task(weights, K, S, A0, A1):
    """The weights that score task j: the shared copies plus j's own."""
    out = []
    for j in range(K):
        out.append({"W0": weights["W0"][:A0] + weights["W0"][A0 + j * A0:A0 + (j + 1) * A0],
                    "W1": weights["W1"][:A1] + weights["W1"][A1 + j * A1:A1 + (j + 1) * A1],
                    "trans": weights["trans"][:S] + weights["trans"][(j + 1) * S:(j + 2) * S],
                    "end": weights["end"][:S] + weights["end"][(j + 1) * S:(j + 2) * S]})
    return out


def figure1_reference(data, task, orders, K, b, S, A0, A1, C):
    """Figure 1 with eq. (3), A = (1 + b) I - (b / K) 1 1^T: K perceptrons, the one of
    the sequence's task predicting, all of them moved on its mistakes."""
    A_inv = np.linalg.inv((1 + b) * np.eye(K) - (b / K) * np.ones((K, K)))
    U = [{"W0": np.zeros((A0, S)), "W1": np.zeros((A1, S, S + 1)), "trans": np.zeros((S, S + 1)),
          "end": np.zeros(S)} for _ in range(K)]
    avg = [Snapshots(u) for u in U]
    mistakes = 0
    for order in orders:
        for j in order:
            k = task[j]
            gold = data.labels[data.seq_ptr[j]:data.seq_ptr[j + 1]]
            pred, _ = best_path(*tables(data, j, U[k]["W0"], U[k]["W1"]), U[k]["trans"], U[k]["end"])
            if not np.array_equal(pred, gold):
                mistakes += 1
                d = dphi(data, j, gold, pred, S, A0, A1)
                for i in range(K):
                    for name in d:
                        U[i][name] += C * A_inv[i, k] * d[name]
            for i in range(K):
                avg[i].add(U[i])
    return mistakes, U, [a.mean() for a in avg]


def untied_dataset(rng, n_seq, S, A0, A1):
    """random_dataset with at least one 0-order entry at every position, valued at
    random: two paths then score alike with probability 0, so that the rounding of
    sums taken in another order cannot change which one is decoded."""
    data = random_dataset(rng, n_seq, S, A0, A1)
    P = data.n_positions
    counts = rng.integers(1, 4, size=P)
    u_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    u_ids = rng.integers(0, A0, size=int(u_ptr[-1])).astype(np.int32)
    vals = rng.normal(size=len(u_ids)).astype(np.float32)
    return dataclasses.replace(data, u_ptr=u_ptr, u_ids=u_ids, u_vals=vals)


@pytest.mark.parametrize("b", [0.0, 0.5, 3.0])
@pytest.mark.parametrize("averaged", [False, True])
def test_augmented_perceptron_equals_figure1(rng, b, averaged):
    K, S, A0, A1, C = 3, 3, 5, 4, 0.7
    base = untied_dataset(rng, 24, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1)
    orders = epoch_orders(rng, base, 3)
    learner = LEARNERS["sp"](S, A0 + K * A0, A1 + K * A1, {**defaults(), "averaged": averaged, "C": C},
                             tasks=tasks_spec(K, b, A0, A1))
    mistakes = sum(learner.train_chunk(data, order) for order in orders)
    ref_mistakes, final, mean = figure1_reference(base, task, orders, K, b, S, A0, A1, C)
    assert mistakes == ref_mistakes > 0
    for got, want in zip(per_task(learner.parameters()[1], K, S, A0, A1), mean if averaged else final):
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("learner", ["sp", "bol"])
def test_without_coupling_each_task_learns_alone(rng, learner):
    """b = 0: the shared copies never move, and task k's own copies follow exactly the
    single-task learner run on task k's sequences in the same order."""
    K, S, A0, A1 = 2, 3, 5, 4
    base = random_dataset(rng, 30, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1)
    order = rng.permutation(base.n_sequences).astype(np.int64)
    settings = {**defaults(), "averaged": False, "C": 0.7}
    joint = LEARNERS[learner](S, A0 + K * A0, A1 + K * A1, settings, tasks=tasks_spec(K, 0.0, A0, A1))
    joint.train_chunk(data, order)
    weights = joint.parameters()[1]
    first = "W1" if learner == "sp" else "alpha"
    assert not np.any(weights["W0"][:A0]) and not np.any(weights[first][:A1])  # the shared copies
    for k in range(K):
        alone = LEARNERS[learner](S, A0, A1, settings)
        alone.train_chunk(base, order[task[order] == k])
        want = alone.parameters()[1]
        got = {"W0": weights["W0"][A0 + k * A0:A0 + (k + 1) * A0], "trans": weights["trans"][(k + 1) * S:(k + 2) * S],
               "end": weights["end"][(k + 1) * S:(k + 2) * S]}
        for name in ("W1",) if learner == "sp" else ("alpha", "beta"):
            got[name] = weights[name][A1 + k * A1:A1 + (k + 1) * A1]
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"task {k}: {name}")


def test_tasks_are_checked(rng):
    S, A0, A1 = 3, 5, 4
    base = random_dataset(rng, 6, S, A0, A1)
    learner = LEARNERS["sp"](S, 3 * A0, 3 * A1, defaults(), tasks=tasks_spec(2, 1.0, A0, A1))
    order = np.arange(base.n_sequences, dtype=np.int64)
    with pytest.raises(ValueError, match="seq_task"):
        learner.train_chunk(base, order)
    data = augmented(base, np.zeros(base.n_sequences, dtype=np.int32), 2, A0, A1)
    data.seq_task[2] = 5
    with pytest.raises(ValueError, match="task 5"):
        learner.train_chunk(data, order)
    for name in ("bcd",):
        with pytest.raises(ValueError, match="several tasks"):
            LEARNERS[name](S, A0, A1, defaults(), tasks=tasks_spec(2, 1.0, A0, A1))
    with pytest.raises(ValueError, match="several tasks"):
        LEARNERS["bol"](S, A0, A1, {**defaults(), "rank1": "global"}, tasks=tasks_spec(2, 1.0, A0, A1))
