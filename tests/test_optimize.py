"""seqbil.optimize: the port of liblbfgs (L-BFGS, More-Thuente, OWL-QN).

With pylbfgs (import name lbfgs, a wrapper of the C liblbfgs) the port's
iterates are compared with the library's: to rounding with numpy's reductions,
and bit for bit with liblbfgs's own order of summation swapped in.  Without it,
the minima are checked against scipy and the optimality conditions, and the
stopping rules, checkpoints and failures against their definitions."""
import tracemalloc
import warnings

import numpy as np
import pytest
from scipy.optimize import minimize

import seqbil.optimize as optimize
from seqbil.optimize import LBFGS


# ------------------------------------------------------------------ problems

def logistic(seed=0, samples=200, features=50, l2=1.0):
    """An L2-regularised logistic regression on random data: evaluate(x, g) -> f."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(samples, features))
    truth = rng.normal(size=features) * (rng.random(features) < 0.5)
    y = np.where(a @ truth + 0.5 * rng.normal(size=samples) > 0, 1.0, -1.0)

    def evaluate(x, g):
        z = y * (a @ x)
        g[:] = a.T @ (-y / (1.0 + np.exp(z))) + l2 * x
        return float(np.logaddexp(0.0, -z).sum() + 0.5 * l2 * (x @ x))
    return evaluate, features


def quadratic(seed=1, n=40):
    """0.5 x'Hx - b'x + c with H's eigenvalues from 0.1 to 10 and c such that
    the minimum is 1 (liblbfgs's delta test assumes a positive objective)."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    h = (q * np.logspace(-1, 1, n)) @ q.T
    b = rng.normal(size=n)
    minimiser = np.linalg.solve(h, b)
    c = 1.0 + 0.5 * (b @ minimiser)

    def evaluate(x, g):
        hx = h @ x
        g[:] = hx - b
        return float(0.5 * (x @ hx) - b @ x + c)
    evaluate.minimiser = minimiser
    return evaluate, n


def rosenbrock(n=20):
    """The extended Rosenbrock function from near its classic start: curved
    valleys that take the line searches through their branches."""
    def evaluate(x, g):
        a, b = x[0::2], x[1::2]
        t, u = b - a * a, 1.0 - a
        g[0::2] = -400.0 * t * a - 2.0 * u
        g[1::2] = 200.0 * t
        return float(100.0 * (t @ t) + u @ u + 1.0)
    evaluate.start = np.tile([-1.2, 1.0], n // 2)
    return evaluate, n


def far_regression(seed=2, samples=100, features=30):
    """A pseudo-Huber regression started far away: bounded gradients, so that
    the first steps are too short and the searches lengthen them."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(samples, features)) / np.sqrt(features)
    b = a @ rng.normal(size=features) + 0.1 * rng.normal(size=samples)

    def evaluate(x, g):
        r = a @ x - b
        root = np.sqrt(1.0 + r * r)
        g[:] = a.T @ (r / root)
        return float(root.sum())
    evaluate.start = np.full(features, 30.0)
    return evaluate, features


def small_logistic():
    """Strong L2: the minimum has ||x|| < 1, where the convergence test uses 1."""
    return logistic(seed=4, l2=40.0)


def more_thuente(k, scale):
    """The 1-d test functions of More & Thuente (1994), phi(scale * x) from
    x = 0: the first trial step, 1 / |g|, is at scale along phi's axis.  They
    were made to take line searches through their cases."""
    if k == 1:
        def phi(a):
            return -a / (a * a + 2.0), (a * a - 2.0) / (a * a + 2.0) ** 2
    elif k == 2:
        def phi(a):
            b = a + 0.004
            return b ** 5 - 2.0 * b ** 4, 5.0 * b ** 4 - 8.0 * b ** 3
    elif k == 3:
        def phi(a):
            b, l = 0.01, 39.0
            if a <= 1.0 - b:
                p, dp = 1.0 - a, -1.0
            elif a >= 1.0 + b:
                p, dp = a - 1.0, 1.0
            else:
                p, dp = (a - 1.0) ** 2 / (2.0 * b) + b / 2.0, (a - 1.0) / b
            return (p + 2.0 * (1.0 - b) / (l * np.pi) * np.sin(l * np.pi * a / 2.0),
                    dp + (1.0 - b) * np.cos(l * np.pi * a / 2.0))
    else:
        b1, b2 = {4: (0.001, 0.001), 5: (0.01, 0.001), 6: (0.001, 0.01)}[k]
        g1, g2 = np.sqrt(1.0 + b1 * b1) - b1, np.sqrt(1.0 + b2 * b2) - b2

        def phi(a):
            r1, r2 = np.sqrt((1.0 - a) ** 2 + b2 * b2), np.sqrt(a * a + b1 * b1)
            return g1 * r1 + g2 * r2, -g1 * (1.0 - a) / r1 + g2 * a / r2

    def evaluate(x, g):
        value, slope = phi(scale * x[0])
        g[0] = scale * slope
        return float(value)
    return evaluate


PROBLEMS = {"logistic": logistic, "quadratic": quadratic, "rosenbrock": rosenbrock,
            "far": far_regression, "small": small_logistic}


def start(evaluate, n):
    return getattr(evaluate, "start", np.random.default_rng(7).normal(size=n) * 0.1)


def port_run(evaluate, x0, steps=None, **settings):
    """The port's iterations until it stops (or `steps` of them): their
    reports, each with a copy of x."""
    x = x0.copy()
    opt = LBFGS(x, evaluate, **settings)
    records = []
    while opt.stop is None and (steps is None or len(records) < steps):
        info = opt.step()
        info["x"] = x.copy()
        records.append(info)
    return records, opt


# ---------------------------------------------------- liblbfgs through pylbfgs

LINESEARCH_NAMES = {"MoreThuente": "morethuente", "Backtracking": "wolfe",
                    "StrongBacktracking": "strongwolfe", "Armijo": "armijo"}


def liblbfgs_run(lbfgs, evaluate, x0, *, c1=0.0, linesearch="MoreThuente", num_memories=6,
                 epsilon=1e-5, period=10, delta=1e-5, max_linesearch=20, **constants):
    """liblbfgs's iterations, as its progress callback reports them, with the
    evaluations made since the previous report; its outcome; its final x."""
    records, calls = [], [0]

    def counted(x, g):
        calls[0] += 1
        return evaluate(x, g)

    def progress(x, g, fx, xnorm, gnorm, step, k, ls):
        records.append({"iteration": k, "objective": fx, "xnorm": xnorm, "gnorm": gnorm,
                        "step": step, "evaluations": calls[0], "x": np.array(x, copy=True)})
        calls[0] = 0
        return 0

    opt = lbfgs.LBFGS()
    opt.m = num_memories
    opt.epsilon = epsilon
    opt.past = period
    opt.delta = delta
    opt.max_linesearch = max_linesearch
    opt.orthantwise_c = c1
    # CRFsuite's choice: OWL-QN with LBFGS_LINESEARCH_BACKTRACKING (= the Wolfe one).
    opt.linesearch = "wolfe" if c1 > 0 else LINESEARCH_NAMES[linesearch]
    for name, value in constants.items():   # ftol, gtol, wolfe, xtol, min_step, max_step
        setattr(opt, name, value)
    outcome, final = "converged", None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            final = opt.minimize(counted, x0.copy(), progress=progress)
        except (lbfgs.LBFGSError, KeyError) as error:   # LBFGS_STOP (1) is raised
            outcome = "no improvement" if error.args and error.args[0] == 1 else "failed"
    if any(w.category is UserWarning for w in caught):   # recent pylbfgs warns of some failures
        outcome = "failed"
    return records, outcome, final


@pytest.fixture
def lbfgs():
    return pytest.importorskip("lbfgs")


@pytest.fixture
def c_order(monkeypatch):
    """liblbfgs's reductions: plain loops summing from the first entry."""
    monkeypatch.setattr(optimize, "_dot", lambda a, b: np.add.accumulate(np.multiply(a, b))[-1])
    monkeypatch.setattr(optimize, "_sum", lambda a: np.add.accumulate(a)[-1])
    monkeypatch.setattr(optimize, "_BLOCK", 1 << 40)


def outcome_of(records):
    stop = records[-1]["stop"]
    return "failed" if stop.startswith("line search failed") else stop


def assert_same_run(ours, theirs, outcome=None, exact=False):
    if outcome is not None:
        assert outcome_of(ours) == outcome
    if ours[-1]["iteration"] == 0:
        # A minimiser to start with: liblbfgs reports no iteration.
        ours = []
    elif outcome == "failed":
        # liblbfgs does not report the failed iteration; the port does.
        assert ours[-1]["iteration"] == len(theirs) + 1
        ours = ours[:-1]
    assert len(ours) == len(theirs)
    for mine, ref in zip(ours, theirs):
        assert mine["iteration"] == ref["iteration"]
        assert mine["evaluations"] == ref["evaluations"], mine["iteration"]
        if exact:
            for key in ("objective", "gnorm", "xnorm", "step"):
                assert mine[key] == ref[key], (mine["iteration"], key)
            assert np.array_equal(mine["x"], ref["x"]), mine["iteration"]
        else:
            assert abs(mine["objective"] - ref["objective"]) <= 1e-10 * abs(ref["objective"])
            assert mine["gnorm"] == pytest.approx(ref["gnorm"], rel=1e-6, abs=1e-10)
            np.testing.assert_allclose(mine["x"], ref["x"], rtol=1e-8, atol=1e-10)


SETTINGS = [
    pytest.param({}, id="MoreThuente"),
    pytest.param({"linesearch": "Backtracking"}, id="Backtracking"),
    pytest.param({"linesearch": "StrongBacktracking"}, id="StrongBacktracking"),
    pytest.param({"linesearch": "Armijo"}, id="Armijo"),
    pytest.param({"c1": 0.5}, id="OWL-QN"),
    pytest.param({"c1": 1.5}, id="OWL-QN-sparse"),
    pytest.param({"period": 0}, id="epsilon"),
    pytest.param({"c1": 0.5, "period": 0}, id="OWL-QN-epsilon"),
    pytest.param({"period": 3, "delta": 1e-3}, id="delta"),
    pytest.param({"c1": 0.5, "period": 3, "delta": 1e-3}, id="OWL-QN-delta"),
]


@pytest.mark.parametrize("problem", ["logistic", "quadratic", "small"])
@pytest.mark.parametrize("settings", SETTINGS)
def test_iterates_are_liblbfgs(lbfgs, problem, settings):
    evaluate, n = PROBLEMS[problem]()
    x0 = start(evaluate, n)
    theirs, outcome, _ = liblbfgs_run(lbfgs, evaluate, x0, **settings)
    ours, _ = port_run(evaluate, x0, **settings)
    assert len(ours) > 5
    assert_same_run(ours, theirs, outcome)


# Tighter line searches go through more of their branches; with gtol 0.01
# liblbfgs's CUBIC_MINIMIZER2 (case 3 of update_trial_interval, which takes
# the sign of theta where More and Thuente take the direction of the step)
# sends some searches backwards to fail, and the port's with them.
EXACT_SETTINGS = SETTINGS + [
    pytest.param({"gtol": 0.1}, id="gtol-0.1"),
    pytest.param({"gtol": 0.01}, id="gtol-0.01"),
    pytest.param({"ftol": 0.3, "gtol": 0.5, "linesearch": "StrongBacktracking"}, id="ftol-0.3"),
    pytest.param({"c1": 0.5, "ftol": 0.1}, id="OWL-QN-ftol-0.1"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("problem", PROBLEMS)
@pytest.mark.parametrize("settings", EXACT_SETTINGS)
def test_iterates_are_liblbfgs_bit_for_bit_with_its_order_of_summation(lbfgs, c_order, problem, settings):
    evaluate, n = PROBLEMS[problem]()
    x0 = start(evaluate, n)
    theirs, outcome, _ = liblbfgs_run(lbfgs, evaluate, x0, **settings)
    ours, _ = port_run(evaluate, x0, **settings)
    assert_same_run(ours, theirs, outcome, exact=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("k", range(1, 7))
@pytest.mark.parametrize("scale", [1e-3, 1e-1, 1e1, 1e3])
@pytest.mark.parametrize("settings", [{}, {"gtol": 0.1}, {"ftol": 1e-3, "gtol": 0.1}],
                         ids=["loose", "gtol-0.1", "ftol-0.001"])
def test_more_thuentes_functions_are_liblbfgs_bit_for_bit(lbfgs, k, scale, settings):
    evaluate = more_thuente(k, scale)
    settings = dict(settings, period=0, epsilon=1e-10)
    theirs, outcome, _ = liblbfgs_run(lbfgs, evaluate, np.zeros(1), **settings)
    ours, _ = port_run(evaluate, np.zeros(1), **settings)
    assert_same_run(ours, theirs, outcome, exact=True)


# At the end y's = 0 and the direction is NaN (in liblbfgs too): evaluate() warns.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("settings", [{}, {"linesearch": "StrongBacktracking"}, {"c1": 0.5}],
                         ids=["MoreThuente", "StrongBacktracking", "OWL-QN"])
def test_a_failed_line_search_is_liblbfgs_and_leaves_its_last_point(lbfgs, c_order, settings):
    # Run to the limits of rounding: the line search fails at last, as liblbfgs's does.
    evaluate, n = logistic(seed=3)
    x0 = np.zeros(n)
    settings = dict(settings, epsilon=0.0, period=0)
    theirs, outcome, final = liblbfgs_run(lbfgs, evaluate, x0, **settings)
    ours, opt = port_run(evaluate, x0, **settings)
    assert outcome == "failed"
    assert ours[-1]["stop"].startswith("line search failed")
    # liblbfgs reports no failed iteration: ours is one more.
    assert_same_run(ours, theirs, outcome, exact=True)
    assert np.array_equal(opt.x, theirs[-1]["x"])
    if final is not None:
        assert np.array_equal(opt.x, final)


# ----------------------------------------------------- minima and optimality

@pytest.mark.parametrize("problem", PROBLEMS)
def test_the_minimum_is_scipys(problem):
    evaluate, n = PROBLEMS[problem]()
    x0 = np.zeros(n)
    records, opt = port_run(evaluate, x0, epsilon=1e-10, period=0)
    assert records[-1]["stop"] == "converged" or records[-1]["stop"].startswith("line search failed")

    def fun(x):
        g = np.empty_like(x)
        return evaluate(x, g), g
    ref = minimize(fun, x0, jac=True, method="L-BFGS-B",
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000, "maxcor": 20})
    np.testing.assert_allclose(opt.x, ref.x, atol=1e-6)
    assert records[-1]["objective"] <= ref.fun + 1e-10 * abs(ref.fun)
    if problem == "quadratic":
        np.testing.assert_allclose(opt.x, evaluate.minimiser, atol=1e-6)


@pytest.mark.parametrize("problem", ["logistic", "quadratic"])
def test_owlqn_meets_the_l1_optimality_conditions_with_exact_zeros(problem):
    evaluate, n = PROBLEMS[problem]()
    c1 = 2.0 if problem == "logistic" else 0.5
    records, opt = port_run(evaluate, np.zeros(n) + 0.3, c1=c1, epsilon=1e-10, period=0)
    x = opt.x
    g = np.empty(n)
    f = evaluate(x, g)
    assert records[-1]["objective"] == pytest.approx(f + c1 * np.abs(x).sum(), rel=1e-14)
    zero = x == 0.0
    assert zero.sum() >= 5 and (~zero).sum() >= 5     # exact zeros, and not all of them
    # 0 is in the subdifferential of f + c1 |x|_1.
    np.testing.assert_allclose(g[~zero] + c1 * np.sign(x[~zero]), 0.0, atol=1e-6)
    assert np.all(np.abs(g[zero]) <= c1 + 1e-6)

    # The same minimum as scipy's, on x = u - v with u, v >= 0.
    def split(uv):
        u, v = uv[:n], uv[n:]
        grad = np.empty(n)
        value = evaluate(u - v, grad)
        return value + c1 * uv.sum(), np.concatenate([grad + c1, -grad + c1])
    ref = minimize(split, np.zeros(2 * n), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * n),
                   options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 10000, "maxcor": 20})
    assert records[-1]["objective"] <= ref.fun + 1e-9 * abs(ref.fun)
    np.testing.assert_allclose(x, ref.x[:n] - ref.x[n:], atol=1e-4)


# ----------------------------------------------------------- stopping rules

def test_epsilon_stops_at_the_first_small_gradient():
    evaluate, n = logistic()
    records, opt = port_run(evaluate, np.zeros(n), epsilon=1e-4, period=0)
    ratios = [r["gnorm"] / max(1.0, r["xnorm"]) for r in records]
    assert records[-1]["stop"] == "converged" and opt.status == optimize.LBFGS_SUCCESS
    assert ratios[-1] <= 1e-4 and all(ratio > 1e-4 for ratio in ratios[:-1])
    assert all(r["stop"] is None for r in records[:-1])
    with pytest.raises(RuntimeError, match="stopped"):
        opt.step()


@pytest.mark.parametrize("c1", [0.0, 0.5])
def test_delta_stops_at_the_first_small_decrease_over_the_period(c1):
    evaluate, n = logistic()
    x0 = np.zeros(n)
    period, delta = 4, 1e-3
    records, opt = port_run(evaluate, x0, c1=c1, period=period, delta=delta, epsilon=0.0)
    f0 = evaluate(x0, np.empty(n)) + c1 * np.abs(x0).sum()
    f = [f0] + [r["objective"] for r in records]
    stops = [k for k in range(period, len(f)) if (f[k - period] - f[k]) / f[k] < delta]
    assert stops and stops[0] == len(records) >= 2 * period
    assert records[-1]["stop"] == "no improvement" and opt.status == optimize.LBFGS_STOP
    with pytest.raises(RuntimeError):
        opt.step()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_delta_test_is_strict():
    # delta 0: an objective that stays the same is no reason to stop.
    evaluate, n = logistic(seed=3)
    records, _ = port_run(evaluate, np.zeros(n), c1=0.5, epsilon=0.0, period=1, delta=0.0)
    assert any(a["objective"] == b["objective"] for a, b in zip(records, records[1:]))
    assert records[-1]["stop"].startswith("line search failed")


def negative_quadratic():
    evaluate, n = quadratic()
    return (lambda x, g: evaluate(x, g) - 100.0), n


def test_delta_with_a_negative_objective_stops_after_the_first_period():
    # liblbfgs's (f' - f) / f < delta holds at once when f < 0 and decreases.
    evaluate, n = negative_quadratic()
    records, _ = port_run(evaluate, np.zeros(n), period=5)
    assert len(records) == 5 and records[-1]["stop"] == "no improvement"


def test_delta_with_a_negative_objective_is_liblbfgs(lbfgs):
    evaluate, n = negative_quadratic()
    theirs, outcome, _ = liblbfgs_run(lbfgs, evaluate, np.zeros(n), period=5)
    ours, _ = port_run(evaluate, np.zeros(n), period=5)
    assert_same_run(ours, theirs, outcome)


def test_a_minimiser_to_start_with_stops_before_any_step():
    evaluate, n = quadratic()
    x = evaluate.minimiser.copy()
    opt = LBFGS(x, evaluate)
    info = opt.step()
    assert info["iteration"] == 0 and info["evaluations"] == 1 and info["stop"] == "converged"
    assert opt.status == optimize.LBFGS_ALREADY_MINIMIZED
    assert np.array_equal(x, evaluate.minimiser)


# ------------------------------------------------------------- the interface

def test_x_is_the_callers_array_updated_in_place_and_the_report():
    evaluate, n = logistic()
    x = np.zeros(n)
    opt = LBFGS(x, evaluate)
    info = opt.step()
    assert opt.x is x and np.any(x != 0.0)
    assert set(info) == {"iteration", "objective", "gnorm", "xnorm", "step", "evaluations", "stop"}
    g = np.empty(n)
    assert info["objective"] == evaluate(x.copy(), g)
    assert info["gnorm"] == pytest.approx(np.linalg.norm(g), rel=1e-12)
    assert info["xnorm"] == pytest.approx(np.linalg.norm(x), rel=1e-12)
    assert info["iteration"] == 1 and info["evaluations"] >= 2 and opt.iteration == 1


def test_the_first_trial_step_is_one_over_the_gradient_norm():
    # On a quadratic whose Hessian is 2I the first trial, x0 - g/|g|, is accepted
    # by Armijo's condition when |g| > 1: x1 is known.
    def evaluate(x, g):
        np.multiply(x, 2.0, out=g)
        return float(x @ x)
    x0 = np.full(8, 3.0)
    x = x0.copy()
    info = LBFGS(x, evaluate, linesearch="Armijo").step()
    g0 = 2.0 * x0
    assert info["evaluations"] == 2 and info["step"] == 1.0 / np.linalg.norm(g0)
    np.testing.assert_allclose(x, x0 - g0 / np.linalg.norm(g0), rtol=1e-15)


@pytest.mark.parametrize("c1", [0.0, 0.5])
def test_state_and_restore_continue_exactly(c1):
    evaluate, n = logistic()
    x0 = np.zeros(n)
    straight, _ = port_run(evaluate, x0, steps=10, c1=c1)

    x = x0.copy()
    opt = LBFGS(x, evaluate, c1=c1)
    first = [opt.step() for _ in range(5)]
    arrays, scalars = opt.state()
    arrays = {k: v.copy() for k, v in arrays.items()}
    for _ in range(3):          # the original goes on: the snapshot must not move
        opt.step()

    fresh_x = np.random.default_rng(0).normal(size=n)
    fresh = LBFGS(fresh_x, evaluate, c1=c1)
    fresh.restore(arrays, dict(scalars))
    assert np.array_equal(fresh_x, straight[4]["x"])
    resumed = []
    for _ in range(5):
        info = fresh.step()
        info["x"] = fresh_x.copy()
        resumed.append(info)
    assert fresh.iteration == 10
    for mine, ref in zip(first + resumed, straight):
        ref = dict(ref)
        x_ref = ref.pop("x")
        x_mine = mine.pop("x", None)
        assert mine == ref
        if x_mine is not None:
            assert np.array_equal(x_mine, x_ref)


def test_restore_checks_the_shapes():
    evaluate, n = logistic()
    opt = LBFGS(np.zeros(n), evaluate)
    opt.step()
    arrays, scalars = opt.state()
    with pytest.raises(ValueError, match="n "):
        LBFGS(np.zeros(n + 1), evaluate).restore(arrays, scalars)
    with pytest.raises(ValueError, match="num_memories"):
        LBFGS(np.zeros(n), evaluate, num_memories=5).restore(arrays, scalars)
    with pytest.raises(ValueError, match="period"):
        LBFGS(np.zeros(n), evaluate, period=3).restore(arrays, scalars)
    with pytest.raises(ValueError, match="c1"):
        LBFGS(np.zeros(n), evaluate, c1=1.0).restore(arrays, scalars)
    bad = dict(arrays, s=arrays["s"][:, :-1])
    with pytest.raises(ValueError, match="'s'"):
        LBFGS(np.zeros(n), evaluate).restore(bad, scalars)
    with pytest.raises(ValueError, match="'d'"):
        LBFGS(np.zeros(n), evaluate).restore({k: v for k, v in arrays.items() if k != "d"}, scalars)


def test_a_failed_line_search_leaves_x_at_the_last_accepted_point():
    good, n = logistic()
    calls = [0]

    def evaluate(x, g):     # right for 12 evaluations, then a gradient of the wrong sign
        calls[0] += 1
        f = good(x, g)
        if calls[0] > 12:
            g *= -1.0
        return f
    records, opt = port_run(evaluate, np.zeros(n))
    assert records[-1]["stop"].startswith("line search failed: ")
    assert opt.status < 0
    assert np.array_equal(opt.x, records[-2]["x"])
    assert records[-1]["objective"] == records[-2]["objective"]
    with pytest.raises(RuntimeError):
        opt.step()


def test_an_interrupted_evaluation_restores_the_last_point_and_can_be_rerun():
    evaluate, n = logistic()
    straight, _ = port_run(evaluate, np.zeros(n), steps=8, c1=0.5)
    calls = [0]

    def flaky(x, g):
        calls[0] += 1
        if calls[0] == 9:
            raise KeyboardInterrupt
        return evaluate(x, g)
    x = np.zeros(n)
    opt = LBFGS(x, flaky, c1=0.5)
    done = []
    while len(done) < 8:
        try:
            info = opt.step()
        except KeyboardInterrupt:
            assert np.array_equal(x, done[-1]["x"] if done else np.zeros(n))
            continue
        info["x"] = x.copy()
        done.append(info)
    assert calls[0] > 9
    for mine, ref in zip(done, straight):
        assert mine["objective"] == ref["objective"] and np.array_equal(mine["x"], ref["x"])


@pytest.mark.parametrize("c1", [0.0, 0.5])
def test_a_step_makes_no_array_of_the_size_of_x(c1):
    n = 300_000
    rng = np.random.default_rng(0)
    h = rng.uniform(0.5, 2.0, n)
    b = rng.normal(size=n)

    def evaluate(x, g):     # allocation-free: 0.5 x'Hx - b'x with a diagonal H
        np.multiply(h, x, out=g)
        f = 0.5 * np.dot(x, g) - np.dot(b, x)
        g -= b
        return float(f)
    opt = LBFGS(np.zeros(n), evaluate, c1=c1)
    opt.step()
    opt.step()
    tracemalloc.start()
    try:
        for _ in range(3):
            opt.step()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * 8 // 4


def test_settings_are_checked():
    evaluate, n = logistic()
    with pytest.raises(ValueError, match="line search"):
        LBFGS(np.zeros(n), evaluate, linesearch="Wolfe")
    with pytest.raises(ValueError, match="float64"):
        LBFGS(np.zeros(n, dtype=np.float32), evaluate)
    with pytest.raises(ValueError, match="wolfe"):
        LBFGS(np.zeros(n), evaluate, linesearch="Backtracking", wolfe=1e-5)
    with pytest.raises(ValueError, match="c1"):
        LBFGS(np.zeros(n), evaluate, c1=-1.0)
    with pytest.raises(ValueError, match="epsilon"):
        LBFGS(np.zeros(n), evaluate, epsilon=-1.0)
    # CRFsuite: with c1 > 0 the search is the backtracking one, whatever was asked.
    assert LBFGS(np.zeros(n), evaluate, c1=1.0, linesearch="MoreThuente").linesearch == "Backtracking"
