"""The bilinear learner against dense numpy SVD and on toy corpora."""
import numpy as np
import pytest

from seqbil._kernels.bol import block_update
from seqbil.features.dataset import encode
from seqbil.learners import LEARNERS
from seqbil.model import Model
from seqbil.params import Settings
from seqbil.features.templates import TemplateSet, parse_template
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
    learner = LEARNERS["bol"](3, index.n_attributes(0), index.n_attributes(1), Settings.of({"averaged": averaged}))
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
    learner = LEARNERS["bol"](3, 0, index.n_attributes(1), Settings.of({"averaged": False, "power_steps": 200}))
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
        row = pool.slot[a]  # the factors, like the blocks, are kept by slot
        np.testing.assert_allclose(np.outer(learner.alpha[row], learner.beta[row]), s * np.outer(u, v), atol=1e-6)
    assert checked > 10


@pytest.mark.parametrize("R", [1, 200])
def test_diagnose_angles_equal_a_per_block_computation(rng, R):
    sentences = separable_corpus(rng, 30)
    templates = TemplateSet(parse_template(t) for t in ["B01:%x[0,0]", "B02:%x[-1,0]"])
    data, index = encode(sentences, templates, None, ["B", "I", "O"])
    learner = LEARNERS["bol"](3, 0, index.n_attributes(1), Settings.of({"averaged": False, "power_steps": R}))
    train_epochs(learner, data, 2)
    pool, by_block, values = learner.blocks, [], []
    for a in np.flatnonzero(pool.slot >= 0):
        theta = pool.pool[pool.slot[a]].astype(np.float64)
        u, v, s = top_pair(theta)
        s2 = np.linalg.svd(theta, compute_uv=False)[1]
        if s > 0:
            x, y = learner.alpha[pool.slot[a]], learner.beta[pool.slot[a]]  # kept by slot
            values.append(abs(x @ theta @ y) / np.linalg.norm(x) / np.linalg.norm(y) / s)
            if s2 <= 0.9 * s:
                by_block.append(np.degrees(max(angle(x, u), angle(y, v))))
    got = learner.diagnose(batch=7)  # small batches: the batching must not matter
    assert got["angle_mean"] == pytest.approx(np.mean(by_block), abs=1e-6)
    assert got["value_ratio_mean"] == pytest.approx(np.mean(values), abs=1e-9)
    assert got["gapped_share"] == pytest.approx(len(by_block) / len(values))
    if R == 200:
        assert got["angle_mean"] < 1e-3 and got["value_ratio_mean"] > 1 - 1e-9
    else:
        assert got["angle_mean"] > 0.01 and got["value_ratio_mean"] < 1 - 1e-6


# --- global mode ------------------------------------------------------------------
from scipy.linalg import block_diag  # noqa: E402

from seqbil._kernels.bol_global import global_update  # noqa: E402


def dense_global_step(theta_prev, D, alpha, beta, sigma, R):
    """Eqs. (9)-(12) on the dense block-diagonal matrices, with the supplement's sigma;
    alpha and beta have unit norm. Returns (alpha, beta, sigma) after normalisation."""
    theta = theta_prev + D
    sig = sigma if sigma > 0 else np.linalg.norm(D)
    da, db = np.zeros_like(alpha), np.zeros_like(beta)
    for _ in range(R):
        da = (D @ beta + theta @ db) / sig
        db = (D.T @ alpha + theta.T @ da) / sig
    a, b = alpha + da, beta + db
    num = sigma * np.linalg.norm(alpha) * np.linalg.norm(beta) + alpha @ D @ beta + da @ theta @ (beta + db) \
        + alpha @ theta @ db
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return a / na, b / nb, num / (na * nb)


def blocks_to_dense(blocks):
    return block_diag(*blocks)


def state_vectors(a_raw, b_raw, state):
    return state[1] * a_raw.ravel(), state[2] * b_raw.ravel()


@pytest.mark.parametrize("S", [4, 23])
def test_global_update_equals_dense_equations_over_a_sequence(rng, S):
    A = 5
    theta = np.zeros((A, S, S + 1), dtype=np.float32)  # the kernels keep Theta in float32
    a_raw, b_raw = np.ones((A, S)), np.ones((A, S + 1))
    state = np.array([0.0, 1 / np.sqrt(A * S), 1 / np.sqrt(A * (S + 1)), 1.0, 1.0, 0.0, 0.0])
    alpha, beta = state_vectors(a_raw, b_raw, state)
    sigma = 0.0
    for step in range(8):
        D = np.stack([sparse_update(rng, S, positions=int(rng.integers(0, 3))) for _ in range(A)])
        theta64 = blocks_to_dense(theta.astype(np.float64))
        ref_a, ref_b, ref_sigma = dense_global_step(theta64, blocks_to_dense(D), alpha, beta, sigma, 4)
        global_update(theta, D, a_raw, b_raw, state, 4)
        got_a, got_b = state_vectors(a_raw, b_raw, state)
        np.testing.assert_allclose(got_a, ref_a, atol=1e-9)
        np.testing.assert_allclose(got_b, ref_b, atol=1e-9)
        assert state[0] == pytest.approx(ref_sigma, rel=1e-9, abs=1e-9)
        # the incremental norms agree with recomputed ones: the vectors are unit again
        assert np.linalg.norm(got_a) == pytest.approx(1.0, abs=1e-9)
        assert np.linalg.norm(got_b) == pytest.approx(1.0, abs=1e-9)
        alpha, beta, sigma = got_a, got_b, state[0]


@pytest.mark.parametrize("S", [4, 23])
def test_global_large_R_from_the_exact_pair_gives_the_top_pair(rng, S):
    A = 3
    # a dense Theta_{t-1} with a clear top singular pair spread over all blocks
    theta = np.stack([rng.normal(size=(S, S + 1)) for _ in range(A)])
    theta[1] += 8 * np.outer(rng.normal(size=S), rng.normal(size=S + 1)) / np.sqrt(S * (S + 1))
    theta = theta.astype(np.float32)  # the kernels keep Theta in float32
    U, s, Vt = np.linalg.svd(blocks_to_dense(theta.astype(np.float64)))
    state = np.array([s[0], 1.0, 1.0, 1.0, 1.0, 0.0, 0.0])
    a_raw, b_raw = U[:, 0].reshape(A, S).copy(), Vt[0].reshape(A, S + 1).copy()
    D = np.stack([sparse_update(rng, S, C=0.2) for _ in range(A)])
    new = blocks_to_dense((theta + D).astype(np.float32).astype(np.float64))  # Theta += C dPhi as the kernel rounds it
    global_update(theta, D, a_raw, b_raw, state, 300)
    U1, s1, Vt1 = np.linalg.svd(new)
    got_a, got_b = state_vectors(a_raw, b_raw, state)
    sign = np.sign(got_a @ U1[:, 0])
    np.testing.assert_allclose(got_a, sign * U1[:, 0], atol=1e-6)
    np.testing.assert_allclose(got_b, sign * Vt1[0], atol=1e-6)
    # one step from the exact pair: the supplement's sigma is the recomputed Rayleigh quotient
    # (up to the float32 rounding of Theta_t, which its incremental terms do not see)
    assert state[0] == pytest.approx(got_a @ new @ got_b, rel=1e-6)
    assert state[0] == pytest.approx(s1[0], rel=1e-6)


def test_global_mode_trains_and_reloads(rng, tmp_path):
    sentences = separable_corpus(rng, 40)
    labels = ["B", "I", "O"]
    templates = TemplateSet(parse_template(t) for t in ["U00:%x[0,0]", "B01:%x[0,0]", "B"])
    data, index = encode(sentences, templates, None, labels)
    for averaged in (False, True):
        settings = Settings.of({"rank1": "global", "averaged": averaged})
        learner = LEARNERS["bol"](3, index.n_attributes(0), index.n_attributes(1), settings)
        history = train_epochs(learner, data, 5)
        assert history[0] > 0
        kind, weights = learner.parameters()
        assert all(np.isfinite(w).all() for w in weights.values())
        model = Model(kind, labels, index, {"format": "conll", "n_fields": 2, "evaluation": "accuracy"}, weights)
        model.save(tmp_path / "g.sbm")
        assert Model.load(tmp_path / "g.sbm").predict(sentences) == model.predict(sentences)


@pytest.mark.parametrize("mode", ["block", "global"])
def test_lazy_averages_equal_explicit_means(rng, mode):
    sentences = separable_corpus(rng, 15)
    templates = TemplateSet(parse_template(t) for t in ["U00:%x[0,0]", "B01:%x[0,0]", "B"])
    data, index = encode(sentences, templates, None, ["B", "I", "O"])
    learner = LEARNERS["bol"](3, index.n_attributes(0), index.n_attributes(1),
                              Settings.of({"rank1": mode, "averaged": True}))
    plain = LEARNERS["bol"](3, index.n_attributes(0), index.n_attributes(1),
                            Settings.of({"rank1": mode, "averaged": False}))
    _, initial = plain.parameters()
    sums, steps = {k: v.copy() for k, v in initial.items()}, 0
    for _ in range(3):
        for j in rng.permutation(data.n_sequences):
            order = np.array([j], dtype=np.int64)
            learner.train_chunk(data, order)
            plain.train_chunk(data, order)
            _, now = plain.parameters()
            sums = {k: sums[k] + now[k] for k in now}
            steps += 1
    _, avg = learner.parameters()
    # global mode: G * raw - U cancels large terms, as the global scales drift fast
    tol = {"block": 1e-9, "global": 1e-4}[mode]
    for name in ("alpha", "beta", "W0", "end"):  # means over the initial and every later snapshot
        np.testing.assert_allclose(avg[name], sums[name] / (steps + 1), rtol=tol, atol=1e-9)


def test_model_decodes_with_the_weights_assigned_last(rng):
    """Reassigning a model's weights (as training does after every epoch) is seen by decode."""
    sentences = separable_corpus(rng, 10)
    labels = ["B", "I", "O"]
    templates = TemplateSet(parse_template(t) for t in ["B01:%x[0,0]", "B"])
    data, index = encode(sentences, templates, None, labels)
    learner = LEARNERS["bol"](3, 0, index.n_attributes(1), Settings.of({"averaged": False}))
    model = Model("bilinear", labels, index, {"format": "conll", "n_fields": 2, "evaluation": "accuracy"}, {})
    for _ in range(4):
        train_epochs(learner, data, 1)
        model.kind, model.weights = learner.parameters()
        fresh = Model("bilinear", labels, index, model.corpus, {k: v.copy() for k, v in model.weights.items()})
        assert list(model.decode(data)) == list(fresh.decode(data))


def test_bol_trains_when_no_first_order_attribute_is_left(rng, tmp_path):
    """min_count can leave no 1st-order attribute: bol then learns the linear part."""
    import seqbil
    path = tmp_path / "train.txt"
    path.write_text("".join("".join(f"{w} {y}\n" for w, y in zip(s.columns[0], s.labels)) + "\n"
                            for s in separable_corpus(rng, 20)), encoding="utf-8")
    model = seqbil.train(str(path), config="conll2000", learner="bol", min_count=10 ** 6, epochs=2,
                         templates=["U00:%x[0,0]", "B01:%x[0,0]", "B"])
    assert model.index.n_attributes(1) == 0 and len(model.tag(["a", "b"])) == 2


def test_slots_to_attributes_is_the_averaged_scatter():
    """Slot-ordered rows (averaged, at a precision) in attribute order equal
    out[attrs] = (W - U / c)[:k] on a zeroed array, over chunk boundaries too."""
    from seqbil.learners.base import slots_to_attributes
    rng = np.random.default_rng(3)
    for n, width, chunked in [(int(rng.integers(0, 30)), int(rng.integers(1, 5)), False) for _ in range(300)] + \
            [(70_000, 3, True)]:
        k = int(rng.integers(0, n + 1)) if not chunked else 40_000
        W, U = rng.normal(size=(n, width)), rng.normal(size=(n, width))
        attrs = rng.permutation(n)[:k].astype(np.int32)
        for averaged, dtype in ((False, np.float64), (True, np.float64), (False, np.float32), (True, np.float32)):
            want = np.zeros((n, width), dtype=dtype)
            want[attrs] = ((W - U / 7.0) if averaged else W)[:k].astype(dtype)
            got = slots_to_attributes(W.copy(), U.copy() if averaged else None, 7, attrs, n, dtype)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got, want)
