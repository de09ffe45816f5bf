"""The sequence re-embedding PA kernel (cython_ext/rpa.pyx, RPAKernel) against a slow
numpy reference: dense feature vectors Psi built position by position, argmax by
enumerating every label path, and the closed-form PA-II steps on w and on Phi, which
are themselves checked against the KKT conditions of their problems."""
import itertools
from functools import partial
from types import SimpleNamespace

import numpy as np
import pytest

from seqbil._kernels.rpa import RPAKernel

TOL = dict(rtol=1e-9, atol=1e-12)
NAMES = ("W0", "W1", "trans", "end", "U0", "U1", "Utrans", "Uend", "Phi", "UPhi")


def make_case(seed, values=False, transitions=True, k=None, R=4):
    """A few random sequences (lengths 1..4) over S in {2, 3} labels: 6 keyed 0-order
    attributes (1..3 per position, values 1 or random float32), E in {1, 2} embedding
    templates of width k reading R words (or -1), 3 1st-order attributes (one per
    position), random start weights, sums and Phi (trans zero without transitions)."""
    rng = np.random.default_rng(seed)
    S, E, k = int(rng.integers(2, 4)), int(rng.integers(1, 3)), k or int(rng.integers(2, 4))
    A0, A1 = 6, 3
    lens = rng.integers(1, 5, int(rng.integers(3, 6)))
    P = int(lens.sum())
    u_ptr = np.concatenate([[0], np.cumsum(rng.integers(1, 4, P))]).astype(np.int64)
    u_ids = rng.integers(0, A0, u_ptr[-1]).astype(np.int32)
    data = SimpleNamespace(
        seq_ptr=np.concatenate([[0], np.cumsum(lens)]).astype(np.int64), labels=rng.integers(0, S, P).astype(np.int32),
        u_ptr=u_ptr, u_ids=u_ids, u_vals=rng.uniform(0.5, 2.0, len(u_ids)).astype(np.float32) if values else None,
        b_ptr=None, b_ids=rng.integers(0, A1, P).astype(np.int32), b_width=1,
        emb_rows=rng.integers(-1, R, (P, E)).astype(np.int32), seq_task=None, seq_wrong=None)
    shapes = [(A0 + E * k, S), (A1, S, S + 1), (S, S + 1), (S,)]
    weights, U = [rng.normal(0, 0.5, s) for s in shapes], [rng.normal(0, 0.5, s) for s in shapes]
    if not transitions:  # trans is then never learned and stays zero, as the learners allocate it
        weights[2][:], U[2][:] = 0.0, 0.0
    return SimpleNamespace(
        data=data, S=S, k=k, n_seq=len(lens), transitions=transitions, shapes=shapes,
        emb_first=(A0 + k * np.arange(E)).astype(np.int32), weights=weights, U=U,
        Phi=rng.normal(0, 0.7, (R, k)), UPhi=rng.normal(0, 0.5, (R, k)),
        orders=[rng.permutation(len(lens)), rng.integers(0, len(lens), len(lens) + 2)])


def psi(case, j, y, Phi):
    """The dense feature vector of label path y on sequence j (flattened W0, W1, trans, end):
    score(y) = w @ psi(y); the embedding rows of W0 get the Phi values as features."""
    d, S, k = case.data, case.S, case.k
    f = [np.zeros(s) for s in case.shapes]
    prev = S
    for i, yi in enumerate(y):
        p = d.seq_ptr[j] + i
        for q in range(d.u_ptr[p], d.u_ptr[p + 1]):
            f[0][d.u_ids[q], yi] += 1.0 if d.u_vals is None else float(d.u_vals[q])
        for b in d.b_ids[p * d.b_width:(p + 1) * d.b_width]:
            f[1][b, yi, prev] += 1.0
        if case.transitions:
            f[2][yi, prev] += 1.0
        for first, r in zip(case.emb_first, d.emb_rows[p]):
            if r >= 0:
                f[0][first:first + k, yi] += Phi[r]
        prev = yi
    f[3][y[-1]] += 1.0
    return np.concatenate([a.ravel() for a in f])


def margin(case, j, gold, yhat, w, Phi):
    return w @ (psi(case, j, gold, Phi) - psi(case, j, yhat, Phi))


def margin_of_w(case, j, gold, yhat, Phi, w):
    return margin(case, j, gold, yhat, w, Phi)


def margin_of_phi(case, j, gold, yhat, w, phi):
    return margin(case, j, gold, yhat, w, phi.reshape(-1, case.k))


def reference(case, orders, counter, C, lam, inner, hamming, learn_phi, averaged):
    """The training passes in numpy. Returns the final arrays (dict), the (mistakes, counter)
    of every chunk and every step taken as (margin function, anchor, Delta, lam, C, result)."""
    S, k, e0 = case.S, case.k, case.emb_first
    flat = lambda arrays: np.concatenate([a.ravel() for a in arrays])
    w, U, Phi, UPhi = flat(case.weights), flat(case.U), case.Phi.copy(), case.UPhi.copy()
    results, steps = [], []
    for order in orders:
        mistakes = 0
        for j in order:
            p0, p1 = case.data.seq_ptr[j], case.data.seq_ptr[j + 1]
            gold = tuple(int(y) for y in case.data.labels[p0:p1])
            yhat = max(itertools.product(range(S), repeat=p1 - p0), key=lambda y: w @ psi(case, j, y, Phi))
            if yhat != gold:
                mistakes += 1
                delta = float(np.sum(np.array(yhat) != gold)) if hamming else 1.0
                for _ in range(inner if learn_phi else 1):
                    dpsi = psi(case, j, gold, Phi) - psi(case, j, yhat, Phi)
                    loss = delta - w @ dpsi
                    if loss <= 0:
                        break
                    tau = loss / (dpsi @ dpsi + 1 / (2 * C))
                    fn = partial(margin_of_w, case, j, gold, yhat, Phi.copy())
                    steps.append((fn, w.copy(), delta, 1.0, C, w + tau * dpsi))
                    w, U = w + tau * dpsi, U + counter * tau * dpsi
                    if not learn_phi:
                        break
                    W0 = w[:np.prod(case.shapes[0])].reshape(case.shapes[0])
                    G = np.zeros_like(Phi)
                    for i, row in enumerate(case.data.emb_rows[p0:p1]):
                        for first, r in zip(e0, row):
                            if r >= 0:
                                G[r] += W0[first:first + k, gold[i]] - W0[first:first + k, yhat[i]]
                    loss = delta - margin(case, j, gold, yhat, w, Phi)
                    if loss <= 0 or np.sum(G * G) == 0:
                        break
                    eta = loss / (np.sum(G * G) + lam / (2 * C))
                    fn = partial(margin_of_phi, case, j, gold, yhat, w.copy())
                    steps.append((fn, Phi.ravel().copy(), delta, lam, C, (Phi + eta * G).ravel()))
                    Phi, UPhi = Phi + eta * G, UPhi + counter * eta * G
            counter += 1
        results.append((mistakes, counter))
    sizes = np.cumsum([np.prod(s) for s in case.shapes])[:-1]
    out = [a.reshape(s) for a, s in zip(np.split(w, sizes), case.shapes)]
    out += [a.reshape(s) for a, s in zip(np.split(U, sizes), case.shapes)] if averaged else []
    return dict(zip(NAMES, out), Phi=Phi, **({"UPhi": UPhi} if averaged else {})), results, steps


def run_kernel(case, orders, counter, C, lam, inner, hamming, learn_phi, averaged, data=None):
    """RPAKernel on copies of the case's arrays (zero-size sums when not averaged)."""
    arrays = [a.copy() for a in case.weights]
    if averaged:
        arrays += [u.copy() for u in case.U] + [case.Phi.copy(), case.UPhi.copy()]
    else:
        arrays += [np.zeros((0,) + s[1:]) for s in case.shapes] + [case.Phi.copy(), np.zeros((0, case.k))]
    kernel = RPAKernel(*arrays, case.emb_first, C=C, lam=lam, inner=inner, cost=hamming, learn_phi=learn_phi,
                       averaged=averaged, transitions=case.transitions)
    results = []
    for order in orders:
        mistakes, counter = kernel.train_chunk(data or case.data, np.asarray(order, dtype=np.int64), counter)
        results.append((mistakes, counter))
    return dict(zip(NAMES, arrays)), results


def check_pa2_optimal(fn, v0, delta, lam, C, v):
    """v minimises lam/2 |v - v0|^2 + C xi^2 s.t. fn(v) >= delta - xi, fn affine: the KKT
    conditions with xi = max(0, delta - fn(v)) and multiplier 2 C xi read
    lam (v - v0) = 2 C xi grad fn (the gradient taken by differences, not from G or dPsi)."""
    grad = np.array([fn(v0 + e) - fn(v0) for e in np.eye(len(v0))])
    xi = max(0.0, delta - fn(v))
    assert xi > 0  # PA-II leaves slack: the constraint is active
    np.testing.assert_allclose(lam * (v - v0), 2 * C * xi * grad, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_reference_steps_solve_their_pa2_problems(seed):
    """Every w-step and Phi-step of the reference is the minimiser of its PA-II problem."""
    case = make_case(seed, values=seed % 2 == 0, transitions=seed % 3 != 0)
    _, results, steps = reference(case, case.orders, 1, 0.8, 0.3, 3, seed % 2 == 1, True, True)
    assert results[0][0] > 0 and len(steps) > 2
    for step in steps:
        check_pa2_optimal(*step)


@pytest.mark.parametrize("learn_phi,inner", [(False, 1), (True, 1), (True, 3)])
@pytest.mark.parametrize("averaged", [False, True])
@pytest.mark.parametrize("hamming", [False, True])
@pytest.mark.parametrize("transitions", [False, True])
@pytest.mark.parametrize("values", [False, True])
@pytest.mark.parametrize("seed", range(2))
def test_kernel_matches_reference(seed, values, transitions, hamming, averaged, learn_phi, inner):
    """Two chunks (a permutation, then a draw with repeats) from a counter > 1: every array
    and the returned (mistakes, counter) equal the reference's."""
    case = make_case(100 * seed + 8 * values + 4 * transitions + 2 * hamming + averaged, values, transitions)
    C, lam = [(0.8, 0.3), (3.0, 1.5)][seed]
    args = (case.orders, 4, C, lam, inner, hamming, learn_phi, averaged)
    expect, expect_results, _ = reference(case, *args)
    got, results = run_kernel(case, *args)
    assert expect_results[0][0] > 0
    assert results == expect_results
    for name in expect:
        np.testing.assert_allclose(got[name], expect[name], **TOL, err_msg=name)
    assert (not learn_phi) == np.array_equal(got["Phi"], case.Phi)


def expanded(case, Phi):
    """The same data with the embedding features written out as 0-order entries
    (id emb_first[e] + j, value Phi[r, j]) and no embedding rows read."""
    d = case.data
    ids, vals, ptr = [], [], [0]
    for p in range(len(d.labels)):
        for q in range(d.u_ptr[p], d.u_ptr[p + 1]):
            ids.append(d.u_ids[q])
            vals.append(1.0 if d.u_vals is None else d.u_vals[q])
        for first, r in zip(case.emb_first, d.emb_rows[p]):
            if r >= 0:
                ids += range(first, first + case.k)
                vals += list(Phi[r])
        ptr.append(len(ids))
    return SimpleNamespace(**{**vars(d), "u_ptr": np.array(ptr, dtype=np.int64), "u_ids": np.array(ids, np.int32),
                              "u_vals": np.array(vals, np.float32), "emb_rows": np.full_like(d.emb_rows, -1)})


@pytest.mark.parametrize("seed", range(4))
def test_fixed_phi_is_structured_pa2(seed):
    """learn_phi False (inner ignored) is structured PA-II with Phi as fixed feature values:
    the same as the kernel on the data with the embeddings written out as valued entries,
    and as the reference; Phi and its sums never change."""
    case = make_case(500 + seed, values=seed % 2 == 1, transitions=seed < 2)
    case.Phi = case.Phi.astype(np.float32).astype(np.float64)  # exact as float32 u_vals
    args = (case.orders, 1, 1.2, 0.5, 3, seed > 1, False, True)
    got, results = run_kernel(case, *args)
    plain, plain_results = run_kernel(case, *args, data=expanded(case, case.Phi))
    expect, expect_results, _ = reference(case, *args)
    assert results == plain_results == expect_results and results[0][0] > 0
    for name in NAMES:
        np.testing.assert_allclose(got[name], plain[name], **TOL, err_msg=name)
        np.testing.assert_allclose(got[name], expect[name], **TOL, err_msg=name)
    np.testing.assert_array_equal(got["Phi"], case.Phi)
    np.testing.assert_array_equal(got["UPhi"], case.UPhi)


@pytest.mark.parametrize("seed", range(4))
def test_one_hot_phi_with_huge_lambda_barely_moves(seed):
    """Phi = identity (one-hot words) and lam = 1e12: the Phi-step is ~1e-12, so one inner
    iteration with learn_phi gives the weights of learn_phi False."""
    case = make_case(900 + seed, values=seed % 2 == 1, k=3, R=3)
    case.Phi = np.eye(3)
    args = (case.orders, 1, 1.0, 1e12, 1, seed > 1)
    moving, moving_results = run_kernel(case, *args, True, True)
    fixed, fixed_results = run_kernel(case, *args, False, True)
    assert moving_results == fixed_results and moving_results[0][0] > 0
    for name in NAMES:
        np.testing.assert_allclose(moving[name], fixed[name], rtol=0, atol=1e-9, err_msg=name)
    assert not np.array_equal(moving["Phi"], np.eye(3))
