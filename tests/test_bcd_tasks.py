"""bcd learning several tasks with the coupling b (Cavallanti, Cesa-Bianchi & Gentile
2008, eq. 3) as augmented features.

A copy whose perceptron updates are scaled by c (b / (K (1 + b)) shared, 1 / (1 + b)
own) is a feature scaled by sqrt(c): PA-I there takes |dphi|^2 = sum of c |dphi_copy|^2
and moves each copy by tau c dphi_copy. The reference writes this out densely: a
sequence of task k decoded by brute force with the shared plus k's copies."""
import numpy as np
import pytest

import test_multitask
from seqbil.learners import LEARNERS
from seqbil.params import Settings
from test_bcd import sequence_score
from test_decode import random_dataset, tables
from test_multitask import augmented, explicit_spec, tasks_spec, two_standards, untied_dataset  # noqa: F401
from test_real_values import best_path, dphi, epoch_orders

SETTINGS = Settings.of({"C": 0.7, "bcd_rounds": 2, "bcd_epochs": 1})  # alpha, beta, alpha, beta


def run_passes(learner, data, orders):
    """Each pass of the learner over data in its order; returns the sides and mistakes."""
    sides, mistakes = [], []
    for k, order in enumerate(orders):
        learner.start_pass(k)
        sides.append(learner.side)
        mistakes.append(learner.train_chunk(data, order))
    return sides, mistakes


def own_rows(weights, k, S, A0, A1):
    """Task k's own copies of the weights of an augmented bcd learner."""
    return {"W0": weights["W0"][A0 + k * A0:A0 + (k + 1) * A0], "trans": weights["trans"][(k + 1) * S:(k + 2) * S],
            "end": weights["end"][(k + 1) * S:(k + 2) * S], "alpha": weights["alpha"][A1 + k * A1:A1 + (k + 1) * A1],
            "beta": weights["beta"][A1 + k * A1:A1 + (k + 1) * A1]}


@pytest.mark.parametrize("start", ["paper", "shared at zero"])
def test_without_coupling_each_task_learns_alone(rng, start):
    """b = 0: the shared copies never move, and task k's own copies follow single-task
    bcd run on task k's sequences in the same order, through both half-steps. From the
    paper's start 1/|1| the shared 1st-order copies add the same amount to every path
    of a sequence, which changes the sums' rounding only; with them at 0, nothing."""
    K, S, A0, A1 = 2, 3, 5, 4
    base = random_dataset(rng, 30, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1)
    orders = epoch_orders(rng, base, 4)
    joint = LEARNERS["bcd"](S, A0 + K * A0, A1 + K * A1, SETTINGS, tasks=tasks_spec(K, 0.0, A0, A1))
    if start == "shared at zero":
        joint.alpha[:A1] = 0.0
    shared_start = joint.ab[:A1].copy()
    sides, joint_mistakes = run_passes(joint, data, orders)
    assert sides == [0, 1, 0, 1]
    weights = joint.parameters()[1]
    assert not np.any(weights["W0"][:A0]) and not np.any(weights["trans"][:S]) and not np.any(weights["end"][:S])
    np.testing.assert_array_equal(joint.ab[:A1], shared_start)
    total = np.zeros(len(orders), int)
    for k in range(K):
        alone = LEARNERS["bcd"](S, A0, A1, SETTINGS)
        total += run_passes(alone, base, [order[task[order] == k] for order in orders])[1]
        got, want = own_rows(weights, k, S, A0, A1), alone.parameters()[1]
        for name in want:
            if start == "paper":
                np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-12, err_msg=f"task {k}: {name}")
            else:
                np.testing.assert_array_equal(got[name], want[name], err_msg=f"task {k}: {name}")
    assert joint_mistakes == total.tolist() and total[0] > 0


def bcd_tasks_reference(data, task, schedule, K, b, S, A0, A1, C):
    """Multi-task bcd written out densely on the augmented attributes of data: trans
    and end with a shared copy and one per task; a sequence of task k decoded by brute
    force with the shared plus k's copies; on a mistake, PA-I with every copy's part of
    |dphi|^2 weighted by its multiplier (the shared trans and end and k's by both) and
    every copy moved by tau times its multiplier times its part of dphi. Returns the
    weights and, per pass, the sequences decoded wrongly."""
    n0, n1 = A0 + K * A0, A1 + K * A1
    shared, own = b / (K * (1 + b)), 1 / (1 + b)
    c0, c1 = np.where(np.arange(n0) < A0, shared, own)[:, None], np.where(np.arange(n1) < A1, shared, own)[:, None]
    W0, trans, end = np.zeros((n0, S)), np.zeros(((K + 1) * S, S + 1)), np.zeros((K + 1) * S)
    alpha, beta = np.full((n1, S), 1 / np.sqrt(S)), np.full((n1, S + 1), 1 / np.sqrt(S + 1))
    wrong = []
    for order, side in schedule:
        wrong.append(np.zeros(data.n_sequences, np.uint8))
        for j in order:
            mine = slice((task[j] + 1) * S, (task[j] + 2) * S)
            tr, en = trans[:S] + trans[mine], end[:S] + end[mine]
            gold = data.labels[data.seq_ptr[j]:data.seq_ptr[j + 1]]
            pred, guess = best_path(*tables(data, j, W0, alpha[:, :, None] * beta[:, None, :]), tr, en)
            if np.array_equal(pred, gold):
                continue
            wrong[-1][j] = 1
            d = dphi(data, j, gold, pred, S, n0, n1)
            d1 = np.einsum("ayv,av->ay", d["W1"], beta) if side == 0 else np.einsum("ayv,ay->av", d["W1"], alpha)
            sq = (shared + own) * ((d["trans"] ** 2).sum() + (d["end"] ** 2).sum()) + (c0 * d["W0"] ** 2).sum() \
                + (c1 * d1 ** 2).sum()
            loss = guess - sequence_score(data, j, gold, W0, tr, en, alpha, beta) + 1.0
            tau = min(C, loss / sq)
            W0 += tau * c0 * d["W0"]
            for rows, step in ((slice(0, S), shared), (mine, own)):
                trans[rows] += tau * step * d["trans"]
                end[rows] += tau * step * d["end"]
            (alpha if side == 0 else beta)[:] += tau * c1 * d1
    return {"W0": W0, "trans": trans, "end": end, "alpha": alpha, "beta": beta}, wrong


@pytest.mark.parametrize("K, b", [(2, 0.5), (3, 3.0)])
def test_bcd_with_tasks_equals_its_reference(rng, K, b):
    S, A0, A1 = 3, 5, 4
    base = untied_dataset(rng, 24, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1)
    learner = LEARNERS["bcd"](S, A0 + K * A0, A1 + K * A1, SETTINGS, tasks=tasks_spec(K, b, A0, A1))
    orders = epoch_orders(rng, base, learner.passes())
    schedule = [(order, k // SETTINGS.bcd_epochs % 2) for k, order in enumerate(orders)]
    want, wrong = bcd_tasks_reference(data, task, schedule, K, b, S, A0, A1, SETTINGS.C)
    for k, ((order, side), flags) in enumerate(zip(schedule, wrong)):
        learner.start_pass(k)
        assert learner.side == side
        data.seq_wrong = np.zeros(data.n_sequences, np.uint8)
        assert learner.train_chunk(data, order) == flags.sum()
        np.testing.assert_array_equal(data.seq_wrong, flags)
    assert all(flags.sum() > 0 for flags in wrong[:2])  # both half-steps learned something
    got = learner.parameters()[1]
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-10, err_msg=name)


def test_bcd_refuses_a_general_interaction_matrix():
    K, S, A0, A1 = 2, 3, 5, 4
    message = "bcd learns several tasks with the coupling b (eq. 3) only; a general interaction matrix needs sp or bol"
    with pytest.raises(ValueError) as caught:
        LEARNERS["bcd"](S, A0 + K * A0, A1 + K * A1, Settings.of(), tasks=explicit_spec(K, np.eye(K), A0, A1))
    assert str(caught.value) == message
    learner = LEARNERS["bcd"](S, A0 + K * A0, A1 + K * A1, Settings.of(), tasks=tasks_spec(K, 1.0, A0, A1))
    assert learner.trans.shape == ((K + 1) * S, S + 1) and learner.end.shape == ((K + 1) * S,)


def test_a_multi_task_bcd_model_tags_each_task_in_its_standard(tmp_path, two_standards):  # noqa: F811
    test_multitask.test_a_multi_task_model_tags_each_task_in_its_standard(tmp_path, two_standards, "bcd")
