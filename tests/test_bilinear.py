"""The bilinear learner against dense numpy SVD and on toy corpora."""
import numpy as np
import pytest

from seqbil._bilinear import block_update
from seqbil.dataset import encode
from seqbil.learners import LEARNERS
from seqbil.model import Model
from seqbil.params import defaults
from seqbil.templates import TemplateSet, parse_template
from test_perceptron import separable_corpus, train_epochs


def top_pair(M):
    U, s, Vt = np.linalg.svd(M)
    return U[:, 0], Vt[0], s[0]


def sparse_update(rng, S, C=1.0, positions=3):
    """C * dPhi of one attribute block: +C at gold pairs, -C at predicted pairs."""
    D = np.zeros((S, S + 1))
    for _ in range(positions):
        g, gp, p, pp = rng.integers(0, S), rng.integers(0, S + 1), rng.integers(0, S), rng.integers(0, S + 1)
        D[g, gp] += C
        D[p, pp] -= C
    return D


def angle(x, y):
    c = abs(x @ y) / (np.linalg.norm(x) * np.linalg.norm(y))
    return float(np.arccos(min(1.0, c)))


@pytest.mark.parametrize("S", [4, 23])
def test_large_R_from_the_exact_pair_gives_the_new_top_pair(rng, S):
    for _ in range(10):
        u0, v0 = rng.normal(size=S), rng.normal(size=S + 1)
        prev = 6 * np.outer(u0, v0) / np.linalg.norm(u0) / np.linalg.norm(v0) + 0.5 * rng.normal(size=(S, S + 1))
        u, v, sigma = top_pair(prev)
        D = sparse_update(rng, S)
        theta = prev + D
        alpha, beta = sigma * u, v.copy()
        new_sigma = block_update(theta, alpha, beta, sigma, 300)
        u1, v1, s1 = top_pair(theta)
        assert new_sigma == pytest.approx(s1, abs=1e-6)
        sign = np.sign(beta @ v1)
        np.testing.assert_allclose(alpha, sign * s1 * u1, atol=1e-6)
        np.testing.assert_allclose(beta, sign * v1, atol=1e-6)
        # the orientation follows the previous pair (no flips that would cancel in averages)
        assert alpha @ u > 0


def literal_delta_form(theta_prev, D, u, v, sigma, R):
    """Eqs. (9)-(12) as printed, with the supplement's Rayleigh quotient for sigma."""
    theta = theta_prev + D
    db = np.zeros_like(v)
    for _ in range(R):
        da = (D @ v + theta @ db) / sigma
        db = (D.T @ u + theta.T @ da) / sigma
    a, b = u + da, v + db
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    return a, b, a @ theta @ b


@pytest.mark.parametrize("S", [4, 23])
def test_equals_the_literal_delta_form_from_an_exact_pair(rng, S):
    for _ in range(10):
        prev = rng.normal(size=(S, S + 1)) + 3 * np.outer(rng.normal(size=S), rng.normal(size=S + 1))
        u, v, sigma = top_pair(prev)
        D = sparse_update(rng, S)
        a, b, s = literal_delta_form(prev, D, u, v, sigma, 4)
        alpha, beta = sigma * u, v.copy()
        new_sigma = block_update(prev + D, alpha, beta, sigma, 4)
        assert new_sigma == pytest.approx(s, rel=1e-9)
        np.testing.assert_allclose(alpha, s * a, atol=1e-9)
        np.testing.assert_allclose(beta, b, atol=1e-9)


@pytest.mark.parametrize("S", [4, 23])
def test_paper_R4_is_close(rng, S):
    angles = []
    for _ in range(50):
        u0, v0 = rng.normal(size=S), rng.normal(size=S + 1)
        prev = 6 * np.outer(u0, v0) / np.linalg.norm(u0) / np.linalg.norm(v0) + 0.5 * rng.normal(size=(S, S + 1))
        u, v, sigma = top_pair(prev)
        D = sparse_update(rng, S)
        alpha, beta = sigma * u, v.copy()
        block_update(prev + D, alpha, beta, sigma, 4)
        u1, v1, _ = top_pair(prev + D)
        angles.append(max(angle(alpha, u1), angle(beta, v1)))
        # R=4 is never worse than keeping the previous pair
        assert angles[-1] <= max(angle(u, u1), angle(v, v1)) + 1e-12
    print(f"S={S}: mean angle to the exact pair after R=4 steps: {np.mean(angles):.2e} rad")
    assert np.mean(angles) < 1e-2


def test_fresh_block_starts_from_its_largest_column(rng):
    checked = 0
    for S in (4, 23) * 10:
        D = sparse_update(rng, S, positions=4)
        s = np.linalg.svd(D, compute_uv=False)
        if s[0] - s[1] < 1e-3:  # tied top singular values: the pair is not unique
            continue
        checked += 1
        alpha, beta = np.zeros(S), np.zeros(S + 1)
        sigma = block_update(D, alpha, beta, 0.0, 200)
        u1, v1, s1 = top_pair(D)
        assert sigma == pytest.approx(s1, rel=1e-6)
        np.testing.assert_allclose(np.outer(alpha, beta), s1 * np.outer(u1, v1), atol=1e-6)
    assert checked >= 5


def test_zero_block_stays_zero():
    D = np.zeros((4, 5))
    alpha, beta = np.ones(4), np.ones(5)
    assert block_update(D, alpha, beta, 0.0, 4) == 0.0
    assert not alpha.any() and not beta.any()


@pytest.mark.parametrize("averaged", [False, True])
def test_bol_with_zero_order_features_learns_a_toy_corpus(rng, tmp_path, averaged):
    sentences = separable_corpus(rng)
    labels = ["B", "I", "O"]
    templates = TemplateSet(parse_template(t) for t in ["U00:%x[0,0]", "B01:%x[0,0]", "B"])
    data, index = encode(sentences, templates, None, labels)
    learner = LEARNERS["bol"](3, index.n_attributes(0), index.n_attributes(1), {**defaults(), "averaged": averaged})
    history = train_epochs(learner, data, 20)
    assert history[0] > 0 and history[-1] == 0
    kind, weights = learner.parameters()
    assert kind == "bilinear"
    model = Model(kind, labels, index, {"format": "conll", "n_fields": 2, "evaluation": "accuracy"}, weights)
    if not averaged:
        assert model.predict(sentences) == [s.labels for s in sentences]
    model.save(tmp_path / "bol.sbm")
    again = Model.load(tmp_path / "bol.sbm")
    assert again.kind == "bilinear" and again.predict(sentences) == model.predict(sentences)


def test_block_mode_keeps_each_block_at_its_exact_rank1_with_large_R(rng):
    """With large R every touched block holds the top singular triple of its Theta_a."""
    sentences = separable_corpus(rng, 30)
    templates = TemplateSet(parse_template(t) for t in ["B01:%x[0,0]", "B02:%x[-1,0]"])
    data, index = encode(sentences, templates, None, ["B", "I", "O"])
    learner = LEARNERS["bol"](3, 0, index.n_attributes(1), {**defaults(), "averaged": False, "power_steps": 200})
    train_epochs(learner, data, 3)
    pool = learner.blocks
    checked = 0
    for a in np.flatnonzero(pool.slot >= 0):
        theta = pool.pool[pool.slot[a]]
        u, v, s = top_pair(theta)
        s2 = np.linalg.svd(theta, compute_uv=False)[1]
        if s2 > 0.9 * s:  # (near) ties: power iteration converges too slowly to compare
            continue
        checked += 1
        np.testing.assert_allclose(np.outer(learner.alpha[a], learner.beta[a]), s * np.outer(u, v), atol=1e-6)
    assert checked > 10
