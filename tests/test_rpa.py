"""The re-embedding passive-aggressive learner (seqbil/classify.py, cython_ext/rpa.pyx)
against slow references: KKT solves of the PA-II problems (6) and (7), PA-II on one-hot
words, and Algorithm 1 on dense matrices in numpy."""
import numpy as np
import pytest

from seqbil._kernels.classify import rpa_pass
from seqbil.classify import PA, RPA, Bags


def random_bags(rng, n, p, max_len=5):
    """Random documents with repeated words and real counts, and the same as dense x."""
    lists = [list(rng.integers(0, p, int(rng.integers(1, max_len + 1)))) for _ in range(n)]
    counts = [list(rng.uniform(0.5, 2.0, len(d))) for d in lists]
    dense = np.zeros((n, p))
    for i, (d, c) in enumerate(zip(lists, counts)):
        np.add.at(dense[i], d, c)
    return Bags.from_lists(lists, n_words=p, counts=counts), dense


def pa2_kkt(u0, v, C, lam):
    """argmin_u lam/2 |u - u0|^2 + C xi^2  s.t.  1 - <u, v> <= xi  (problem (8)), from
    its KKT conditions: u0 when the constraint is slack there, else the solution of the
    stationarity equations with the constraint tight (and a non-negative multiplier)."""
    if 1 - u0 @ v <= 0:
        return u0.copy()
    m = len(u0)
    # unknowns (u, xi, tau): lam (u - u0) - tau v = 0, 2 C xi - tau = 0, <u, v> + xi = 1
    A = np.zeros((m + 2, m + 2))
    A[:m, :m] = lam * np.eye(m)
    A[:m, m + 1] = -v
    A[m, m], A[m, m + 1] = 2 * C, -1
    A[m + 1, :m], A[m + 1, m] = v, 1
    sol = np.linalg.solve(A, np.concatenate([lam * u0, [0, 1]]))
    assert sol[m + 1] >= 0
    return sol[:m]


def one_document(rng, k, p):
    docs, dense = random_bags(rng, 1, p)
    return docs, dense[0], float(rng.choice([-1, 1])), rng.normal(size=k) * 0.5, rng.normal(size=(k, p)) * 0.5


def kernel(docs, y, w, Phi, C, lam, inner, anchored, learn_phi):
    w, E = w.copy(), np.array(Phi.T, order="C")  # a copy, also when Phi.T is contiguous
    k = len(w)
    rpa_pass(docs.ptr, docs.ids, docs.vals, np.array([y]), np.zeros(1, dtype=np.int64), w, E, C, lam, inner,
             1e-6, anchored, learn_phi, np.empty((int(np.diff(docs.ptr).max()), k)), np.empty(3 * k))
    return w, E.T


@pytest.mark.parametrize("case", range(40))
def test_w_step_solves_problem_6(case):
    rng = np.random.default_rng(case)
    k, p = int(rng.integers(1, 5)), int(rng.integers(2, 8))
    docs, x, y, w0, Phi = one_document(rng, k, p)
    C = float(10 ** rng.uniform(-2, 2))
    w, Phi_after = kernel(docs, y, w0, Phi, C, 1.0, 1, True, False)
    assert np.array_equal(Phi_after, Phi)
    np.testing.assert_allclose(w, pa2_kkt(w0, y * Phi @ x, C, 1.0), rtol=0, atol=1e-9)


@pytest.mark.parametrize("case", range(40))
def test_phi_step_solves_problem_7(case):
    """One inner iteration: the Phi-step, anchored at Phi_t, with w the w-step's result."""
    rng = np.random.default_rng(1000 + case)
    k, p = int(rng.integers(1, 5)), int(rng.integers(2, 8))
    docs, x, y, w0, Phi = one_document(rng, k, p)
    C, lam = float(10 ** rng.uniform(-2, 2)), float(10 ** rng.uniform(-2, 2))
    w, Phi_new = kernel(docs, y, w0, Phi, C, lam, 1, True, True)
    np.testing.assert_allclose(w, pa2_kkt(w0, y * Phi @ x, C, 1.0), rtol=0, atol=1e-9)
    # <Phi, y w x^T>F64 = y <w, Phi x>: problem (7) over vec(Phi)
    expect = pa2_kkt(Phi.ravel(), y * np.outer(w, x).ravel(), C, lam).reshape(k, p)
    np.testing.assert_allclose(Phi_new, expect, rtol=0, atol=1e-9)


def pa2_reference(X, y, C, epochs):
    """PA-II on the rows of X, in data order, from w = 0."""
    w = np.zeros(X.shape[1])
    for _ in range(epochs):
        for x, t in zip(X, y):
            loss = max(0.0, 1 - t * (w @ x))
            w = w + loss / (x @ x + 1 / (2 * C)) * t * x
    return w


@pytest.mark.parametrize("anchored,inner", [(True, 50), (False, 1)])
def test_identity_embedding_and_huge_lambda_is_one_hot_pa(rng, anchored, inner):
    """Phi = I that cannot move: RPA is PA-II on the words (its w is the word weights)."""
    n, p, C = 40, 12, 0.7
    docs, X = random_bags(rng, n, p)
    y = rng.choice([-1, 1], n)
    expect = pa2_reference(X, y, C, 3)
    rpa = RPA(C, lam=1e12, inner=inner, anchored=anchored).fit(docs, y, np.eye(p), epochs=3, seed=None)
    np.testing.assert_allclose(rpa.w_, expect, rtol=0, atol=1e-9)
    np.testing.assert_allclose(rpa.Phi_, np.eye(p), rtol=0, atol=1e-9)
    one_hot = PA(C).fit(docs, y, epochs=3, seed=None)
    np.testing.assert_allclose(one_hot.w_, expect, rtol=0, atol=1e-12)
    np.testing.assert_allclose(one_hot.decision_function(docs), X @ expect, rtol=0, atol=1e-12)


def test_pa_on_a_fixed_embedding(rng):
    n, p, k, C = 30, 9, 3, 2.0
    docs, X = random_bags(rng, n, p)
    y = rng.choice([-1, 1], n)
    Phi = rng.normal(size=(k, p))
    pa = PA(C).fit(docs, y, Phi, epochs=4, seed=None)
    expect = pa2_reference(X @ Phi.T, y, C, 4)
    np.testing.assert_allclose(pa.w_, expect, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(pa.Phi_, Phi)
    np.testing.assert_array_equal(pa.predict(docs), np.where(X @ Phi.T @ expect > 0, 1, -1))


def algorithm1_reference(X, y, Phi0, C, lam, inner, tol, anchored, orders):
    """Algorithm 1 with dense Phi (k x p) and dense x: for each document, alternate the
    closed-form steps (11) and (12) from the anchor, stop when Q_t of eq. (3) moves by
    at most tol or the margin holds."""
    w, Phi = np.zeros(Phi0.shape[0]), Phi0.copy()
    hinge = lambda w, Phi, x, t: max(0.0, 1 - t * (w @ Phi @ x))
    for order in orders:
        for i in order:
            x, t = X[i], y[i]
            if hinge(w, Phi, x, t) == 0 or x @ x == 0:
                continue
            wt, Pt = w.copy(), Phi.copy()
            Q = lambda w, Phi: (0.5 * np.sum((w - wt) ** 2) + 0.5 * lam * np.sum((Phi - Pt) ** 2)
                                + C * hinge(w, Phi, x, t) ** 2)
            q_prev = Q(wt, Pt)
            for _ in range(inner):
                wa = wt if anchored else w
                z = Phi @ x
                w = wa + hinge(wa, Phi, x, t) / (z @ z + 1 / (2 * C)) * t * z
                Pa = Pt if anchored else Phi
                Phi = Pa + hinge(w, Pa, x, t) / ((w @ w) * (x @ x) + lam / (2 * C)) * t * np.outer(w, x)
                q = Q(w, Phi)
                if hinge(w, Phi, x, t) == 0 or abs(q - q_prev) <= tol:
                    break
                q_prev = q
    return w, Phi


@pytest.mark.parametrize("anchored", [True, False])
@pytest.mark.parametrize("case", range(4))
def test_kernel_is_algorithm_1(anchored, case):
    rng = np.random.default_rng(2000 + case)
    n, p, k = 25, 15, int(rng.integers(2, 5))
    docs, X = random_bags(rng, n, p)
    y = rng.choice([-1, 1], n)
    Phi0 = rng.normal(size=(k, p))
    kept = Phi0.copy()
    C, lam, inner, epochs = [(0.5, 0.1, 50, 3), (10.0, 1.0, 50, 2), (0.1, 0.01, 5, 3), (2.0, 5.0, 50, 2)][case]
    model = RPA(C, lam, inner=inner, anchored=anchored).fit(docs, y, Phi0, epochs=epochs, seed=case)
    shuffle = np.random.default_rng(case)  # fit's orders: one permutation per pass
    orders = [shuffle.permutation(n) for _ in range(epochs)]
    w, Phi = algorithm1_reference(X, y, Phi0, C, lam, inner, 1e-6, anchored, orders)
    assert model.steps_ > n  # the inner loop ran more than once somewhere
    np.testing.assert_allclose(model.w_, w, rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.Phi_, Phi, rtol=0, atol=1e-9)
    np.testing.assert_allclose(model.decision_function(docs), X @ Phi.T @ w, rtol=0, atol=1e-9)
    assert not np.allclose(Phi, Phi0)
    np.testing.assert_array_equal(Phi0, kept)  # fit trains a copy


def test_fit_never_writes_into_phi0(rng):
    docs, _ = random_bags(rng, 10, 6)
    y = rng.choice([-1, 1], 10)
    for Phi0 in (rng.normal(size=(1, 6)), np.asfortranarray(rng.normal(size=(3, 6)))):
        kept = Phi0.copy()
        model = RPA(1.0, 0.1).fit(docs, y, Phi0, epochs=2)
        np.testing.assert_array_equal(Phi0, kept)
        assert not np.array_equal(model.Phi_, kept)


def test_partial_fit_continues_fit(rng):
    docs, _ = random_bags(rng, 20, 8)
    y = rng.choice([-1, 1], 20)
    Phi0 = rng.normal(size=(3, 8))
    once = RPA(0.5, 0.1).fit(docs, y, Phi0, epochs=4, seed=3)
    twice = RPA(0.5, 0.1).fit(docs, y, Phi0, epochs=1, seed=3).partial_fit(docs, y, epochs=3)
    np.testing.assert_array_equal(once.w_, twice.w_)
    np.testing.assert_array_equal(once.Phi_, twice.Phi_)


def test_bags_merge_repeated_words():
    docs = Bags.from_lists([[2, 0, 2], []], n_words=3, counts=[[1.0, 0.5, 2.0], []])
    assert docs.ptr.tolist() == [0, 2, 2] and docs.ids.tolist() == [0, 2] and docs.vals.tolist() == [0.5, 3.0]
    np.testing.assert_allclose(docs.normalized().vals, np.array([0.5, 3.0]) / np.hypot(0.5, 3.0))


def test_bad_inputs_raise_value_errors(rng):
    docs, _ = random_bags(rng, 6, 5)
    y = np.array([1, -1, 1, -1, 1, -1])
    Phi0 = rng.normal(size=(2, 5))
    cases = [
        (lambda: RPA().fit(docs, y, rng.normal(size=(2, 4))), "Phi0 must be k x p"),
        (lambda: RPA().fit(docs, y, rng.normal(size=5)), "Phi0 must be k x p"),
        (lambda: RPA().fit(docs, y[:5], Phi0), "5 labels for 6 documents"),
        (lambda: RPA().fit(docs, np.array([1, 0, 1, -1, 1, -1]), Phi0), "labels must be \\+1 or -1"),
        (lambda: PA().fit(docs, np.array([1, 2, 1, -1, 1, -1])), "labels must be \\+1 or -1"),
        (lambda: RPA(C=0), "C must be a positive"),
        (lambda: RPA(lam=-1), "lam must be a positive"),
        (lambda: RPA(inner=0), "inner must be"),
        (lambda: RPA().fit(docs, y, Phi0, epochs=-1), "epochs must be"),
        (lambda: RPA().predict(docs), "fit the model first"),
        (lambda: RPA().fit(docs, y, Phi0).predict(Bags.from_lists([[0]], n_words=7)), "the model has 5 words"),
        (lambda: RPA().fit([[0, 1]] * 6, y, Phi0), "must be a Bags"),
        (lambda: Bags.from_lists([[0, 5]], n_words=5), "word id 5 >= n_words"),
        (lambda: Bags.from_lists([[-1]], n_words=5), "word ids must be >= 0"),
        (lambda: Bags([0, 3], [1, 2]), "ptr must rise"),
    ]
    for call, message in cases:
        with pytest.raises(ValueError, match=message):
            call()
