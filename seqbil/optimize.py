"""L-BFGS and OWL-QN, one iteration at a time: a port of liblbfgs to numpy.

This module is a line-by-line port of liblbfgs, the C library of L-BFGS by
Naoaki Okazaki (Copyright (c) 1990 Jorge Nocedal, Copyright (c) 2007-2010
Naoaki Okazaki, MIT licence), in the version that CRFsuite ships and calls from
its train_lbfgs.c.  It keeps liblbfgs's arithmetic, its tests and its return
codes, so that a run follows the iterates of CRFsuite's trainer:

- L-BFGS (Nocedal 1980; Liu & Nocedal 1989): the two-loop recursion over the
  last ``num_memories`` pairs (s, y), the initial matrix scaled by y's/y'y, a
  first step of 1/||g|| and 1 afterwards;
- the line search of More & Thuente (1994) with liblbfgs's
  ``update_trial_interval``, and liblbfgs's backtracking searches with the
  Armijo, the regular Wolfe or the strong Wolfe conditions (linesearch.py);
- OWL-QN (Andrew & Gao 2007) for f(x) + c1 * ||x||_1: the pseudo-gradient,
  the search direction constrained to the pseudo-gradient's orthant and the
  backtracking search whose trial points are projected onto the orthant of
  the last point;
- the stopping tests: ||g|| / max(1, ||x||) <= epsilon (the pseudo-gradient
  for OWL-QN), and (f' - f) / f < delta, f' being the objective ``period``
  iterations before.

The loop is the caller's: ``LBFGS.step()`` runs one iteration of liblbfgs's
``lbfgs()`` and returns what liblbfgs hands its progress callback, so that a
learner can log, score, checkpoint or stop between iterations; ``state()`` and
``restore()`` continue a run exactly.  The differences from liblbfgs are in
DEVIATIONS below; dot products are plain loops in liblbfgs's order
(cython_ext/linalg.pyx: numpy's would call a BLAS whose spinning threads take the
cores a learner's gradient runs on), and with liblbfgs's order swapped in for the
L1 norm's too (as the tests do), the iterates are liblbfgs's bit for bit.

Kept on purpose: liblbfgs's CUBIC_MINIMIZER2 (case 3 of update_trial_interval)
chooses between tmin and tmax by the sign of theta, where More & Thuente's
MCSTEP chooses by the direction of the step (stp > stx).  liblbfgs fixed this
in 2020, after the copy that CRFsuite ships; with the default gtol 0.9 it
rarely matters, with a small gtol it sends some searches backwards to fail.
The port does what CRFsuite does.

The defaults are CRFsuite's (train_lbfgs.c): 6 memories, epsilon 1e-5, period
10, delta 1e-5, More-Thuente with at most 20 evaluations a search, and for
c1 > 0 the backtracking search (OWL-QN needs it).  The line search constants
are liblbfgs's: ftol 1e-4, wolfe 0.9, gtol 0.9, xtol 1e-16, min_step 1e-20,
max_step 1e20.

Memory: besides the caller's x, the optimizer keeps the history as two
(num_memories x n) arrays and three vectors of n (gradient, direction, work),
one more for OWL-QN (the pseudo-gradient); liblbfgs's copies of the previous
point and gradient live in the history slot that the iteration overwrites.
"""
import math

import numpy as np

from ._kernels.linalg import dot
from .linesearch import (BACKTRACKING_STRONG_WOLFE, BACKTRACKING_WOLFE, LBFGSERR_INVALIDPARAMETERS,
                         LINE_SEARCH_ERRORS, LINESEARCHES, MORETHUENTE, F64, backtracking, backtracking_failure,
                         more_thuente)

__all__ = ["LBFGS", "LINESEARCHES", "DEVIATIONS"]

DEVIATIONS = """\
- The previous point and gradient (liblbfgs's xp and gp) are kept in the
  history slot that the iteration is about to overwrite, not in two arrays of
  their own; the arithmetic is the same.
- The L1 norm (OWL-QN) is summed by numpy (pairwise, in blocks), whose order
  differs from liblbfgs's plain loop: results agree to rounding, not bit for bit.
- After a failed line search liblbfgs restores x and g but returns the
  objective of the last trial point; here the objective, the norms and the
  pseudo-gradient are those of the restored point.
- An exception raised by evaluate() (an interrupt) restores x and g to the
  last accepted point, and the iteration can be run again.
- step() reports the iteration whose line search failed (liblbfgs calls no
  progress callback for it) and, for a minimiser to start with (liblbfgs's
  LBFGS_ALREADY_MINIMIZED), an iteration 0.  evaluate() is not told the
  step.
- The delta test is CRFsuite's liblbfgs's, (f' - f) / f < delta; later
  liblbfgs releases test |(f' - f) / f|, which differs only when the objective
  is negative or increases.
- Unknown line search names are an error, where CRFsuite falls back to
  More-Thuente; there is no max_iterations (the caller stops calling step())
  and the L1 term covers all the variables (liblbfgs's orthantwise_start and
  orthantwise_end are 0 and n).
"""

# Return codes of liblbfgs (lbfgs.h) for a run that ends well; a failed line
# search ends it with its own (linesearch.py).
LBFGS_SUCCESS = 0
LBFGS_STOP = 1
LBFGS_ALREADY_MINIMIZED = 2

_NAMES = {code: name for name, code in LINESEARCHES.items()}

_BLOCK = 1 << 14  # the OWL-QN loops work on blocks of this many entries


def _dot(a, b):
    """a . b summed in order, with no BLAS threads (cython_ext/linalg.pyx), as an
    IEEE scalar."""
    return F64(dot(a, b))

# The reductions (liblbfgs's vecdot and its sums): numpy's, whose order of
# summation is not liblbfgs's plain loop.  The tests swap in sequential ones
# to compare with liblbfgs bit for bit.
_sum = np.sum


def _blocks(n):
    for lo in range(0, n, _BLOCK):
        yield slice(lo, min(lo + _BLOCK, n))


def owlqn_pseudo_gradient(pg, x, g, c):
    """liblbfgs's owlqn_pseudo_gradient: the pseudo-gradient of f + c * ||x||_1
    into pg (the right or the left partial derivative at zero, or 0)."""
    for sl in _blocks(len(x)):
        xs, gs, ps = x[sl], g[sl], pg[sl]
        lt = xs < 0.
        gt = xs > 0.
        zero = ~(lt | gt)
        ps.fill(0.)
        np.subtract(gs, c, out=ps, where=lt | (zero & (gs > c)))
        np.add(gs, c, out=ps, where=gt | (zero & (gs < -c)))


def _l1norm(x, buf):
    """liblbfgs's owlqn_x1norm."""
    norm = F64(0.)
    for sl in _blocks(len(x)):
        part = buf[:sl.stop - sl.start]
        np.abs(x[sl], out=part)
        norm += _sum(part)
    return norm


def _project(v, sign, buf):
    """liblbfgs's owlqn_project: v[i] = 0 where v[i] * sign[i] <= 0."""
    for sl in _blocks(len(v)):
        part = buf[:sl.stop - sl.start]
        np.multiply(v[sl], sign[sl], out=part)
        np.copyto(v[sl], 0., where=part <= 0.)


def _norm(v):
    """liblbfgs's vec2norm."""
    return F64(math.sqrt(_dot(v, v)))


def delta_test(past, i, f, delta):
    """liblbfgs's test of progress at iteration i, of objective f: (rate, stop),
    rate = (f' - f) / f with f' the objective len(past) iterations before (None
    while there is no such iteration), stop whether rate < delta.  past holds
    the last len(past) objectives, iteration j's at j % len(past); the caller
    puts f in its place (liblbfgs only if the run goes on)."""
    period = len(past)
    if i < period:
        return None, False
    rate = (past[i % period] - f) / f
    return rate, rate < delta


class LBFGS:
    """Minimise f(x) (+ c1 * ||x||_1 with OWL-QN when c1 > 0), liblbfgs's way,
    one iteration per step().

    x: the variables, a float64 1-d array that the optimizer updates in place.
    evaluate(x, g) -> f: the smooth part of the objective at x, writing its
    gradient into g (an array of x's shape) in place.  The c1 * ||x||_1 term is
    the optimizer's: evaluate() leaves it out.
    linesearch: "MoreThuente", "Backtracking" (regular Wolfe conditions) or
    "StrongBacktracking" (strong Wolfe), as in CRFsuite, or "Armijo"
    (sufficient decrease alone).  With c1 > 0 the search is OWL-QN's
    backtracking one whatever this says, as in CRFsuite.
    period (liblbfgs's past) and delta: stop when the objective decreased by
    less than delta (relatively) over the last period iterations; period 0
    turns the test off.
    """

    def __init__(self, x, evaluate, *, c1=0.0, num_memories=6, epsilon=1e-5, period=10, delta=1e-5,
                 linesearch="MoreThuente", max_linesearch=20, ftol=1e-4, wolfe=0.9, gtol=0.9,
                 xtol=1e-16, min_step=1e-20, max_step=1e20):
        if not isinstance(x, np.ndarray) or x.dtype != np.float64 or x.ndim != 1:
            raise ValueError("x must be a 1-d numpy array of float64")
        if not x.flags.c_contiguous or not x.flags.writeable:
            raise ValueError("x must be a contiguous, writeable array (it is updated in place)")
        n = x.shape[0]
        if n <= 0:
            raise ValueError("x has no variables")
        if linesearch not in LINESEARCHES:
            raise ValueError(f"unknown line search {linesearch!r}: one of {', '.join(LINESEARCHES)}")
        if int(num_memories) <= 0:
            raise ValueError("num_memories must be positive")
        # liblbfgs's checks of its parameters, in its order.
        checks = [
            (epsilon < 0., "epsilon"), (int(period) < 0, "period"), (delta < 0., "delta"),
            (min_step < 0., "min_step"), (max_step < min_step, "max_step"), (ftol < 0., "ftol"),
        ]
        self.c1 = float(c1)
        # CRFsuite: OWL-QN with the backtracking search (liblbfgs has no other for it).
        code = BACKTRACKING_WOLFE if self.c1 > 0 else LINESEARCHES[linesearch]
        if code in (BACKTRACKING_WOLFE, BACKTRACKING_STRONG_WOLFE):
            checks.append((wolfe <= ftol or 1. <= wolfe, "wolfe"))
        checks += [(gtol < 0., "gtol"), (xtol < 0., "xtol"), (int(max_linesearch) <= 0, "max_linesearch"),
                   (self.c1 < 0., "c1")]
        for bad, name in checks:
            if bad:
                raise ValueError(f"invalid parameter {name}")

        self.x = x
        self.n = n
        self.evaluate = evaluate
        self.m = int(num_memories)
        self.epsilon = float(epsilon)
        self.period = int(period)
        self.delta = float(delta)
        self.linesearch = _NAMES[code]
        self._ls = code
        self.max_linesearch = int(max_linesearch)
        self.ftol, self.wolfe, self.gtol, self.xtol = float(ftol), float(wolfe), float(gtol), float(xtol)
        self.min_step, self.max_step = float(min_step), float(max_step)

        self._g = np.zeros(n)
        self._d = np.zeros(n)
        self._w = np.zeros(n)                       # work: orthant signs, two-loop terms
        self._pg = np.zeros(n) if self.c1 > 0 else None
        self._buf = np.zeros(min(n, _BLOCK)) if self.c1 > 0 else None
        self._s = np.zeros((self.m, n))
        self._y = np.zeros((self.m, n))
        self._ys = np.zeros(self.m)
        self._alpha = np.zeros(self.m)
        self._pf = np.zeros(self.period)

        self._started = False
        self._fx = F64(0.)
        self._step = F64(0.)     # the first trial step of the next iteration
        self._k = 1             # liblbfgs's k: the number of the next iteration
        self._end = 0           # the history slot the next iteration writes
        self._evaluations = 0   # evaluate() calls in all
        self.stop = None        # why the optimizer stopped, or None
        self.status = None      # liblbfgs's return code once stopped

    # ------------------------------------------------------------------ helpers

    @property
    def iteration(self):
        """The number of iterations done."""
        return self._k - 1 if self._started else 0

    def value(self):
        self._evaluations += 1
        f = F64(self.evaluate(self.x, self._g))
        if self.c1 > 0:
            f += _l1norm(self.x, self._buf) * self.c1
        return f

    def trial(self, stp, xp):
        """x <- xp + stp * d (liblbfgs's veccpy and vecadd)."""
        np.multiply(self._d, stp, out=self.x)
        np.add(self.x, xp, out=self.x)

    def _gnorm(self):
        return _norm(self._g if self._pg is None else self._pg)

    def slope(self):
        """g . d: the derivative of the objective along the direction, at x."""
        return _dot(self._g, self._d)

    # ----------------------------------------------------- OWL-QN's line search

    def _line_search_backtracking_owlqn(self, f, stp, xp, gp):
        # gp is the pseudo-gradient at xp, as liblbfgs passes it.
        x, wp, buf = self.x, self._w, self._buf
        count = 0
        width = 0.5
        finit = f
        if stp <= 0.:
            return LBFGSERR_INVALIDPARAMETERS, f, stp
        # Choose the orthant for the new point.
        for sl in _blocks(self.n):
            np.negative(gp[sl], out=wp[sl])
            np.copyto(wp[sl], xp[sl], where=xp[sl] != 0.)
        while True:
            self.trial(stp, xp)
            # The current point is projected onto the orthant.
            _project(x, wp, buf)
            f = self.value()
            count += 1
            dgtest = F64(0.)
            for sl in _blocks(self.n):
                part = buf[:sl.stop - sl.start]
                np.subtract(x[sl], xp[sl], out=part)
                dgtest += _dot(part, gp[sl])
            if f <= finit + self.ftol * dgtest:
                # The sufficient decrease condition.
                return count, f, stp
            error = backtracking_failure(self, count, stp)
            if error:
                return error, f, stp
            stp = stp * width

    # -------------------------------------------------------------- iterations

    def _finish(self, info, status, reason):
        self.status = status
        self.stop = reason
        info["stop"] = reason
        return info

    def _info(self, iteration, evaluations, step):
        return {"iteration": iteration, "objective": float(self._fx),
                "gnorm": float(self._gnorm()), "xnorm": float(_norm(self.x)),
                "step": float(step), "evaluations": evaluations, "stop": None}

    def _start(self):
        """What lbfgs() does before its loop: evaluate x, the first direction
        (the steepest descent one) and the first step 1 / ||d||."""
        x, g, d = self.x, self._g, self._d
        self._fx = self.value()
        if self._pg is not None:
            owlqn_pseudo_gradient(self._pg, x, g, self.c1)
        if self.period > 0:
            self._pf[0] = self._fx
        np.negative(g if self._pg is None else self._pg, out=d)
        self._started = True
        # Make sure that the initial variables are not a minimizer.
        xnorm = _norm(x)
        gnorm = self._gnorm()
        if xnorm < 1.0:
            xnorm = 1.0
        if gnorm / xnorm <= self.epsilon:
            return False
        self._step = F64(1.0) / _norm(d)
        return True

    def step(self):
        """One iteration of liblbfgs's lbfgs(): a line search along the current
        direction, the stopping tests, then the next direction.  Returns the
        iteration's number, objective (with the L1 term), the norms of the
        (pseudo-)gradient and of x, the accepted step, the evaluate() calls it
        made and why the optimizer stopped (None if it goes on)."""
        if self.stop is not None:
            raise RuntimeError(f"the optimizer has stopped ({self.stop}); it does not step any more")
        x, g, pg = self.x, self._g, self._pg
        evaluations_before = self._evaluations
        if not self._started:
            if not self._start():
                # liblbfgs's LBFGS_ALREADY_MINIMIZED: iteration 0, no step.
                info = self._info(0, self._evaluations - evaluations_before, 0.0)
                return self._finish(info, LBFGS_ALREADY_MINIMIZED, "converged")

        k, end = self._k, self._end
        # The current point and gradient, kept in the history slot that this
        # iteration writes (liblbfgs's xp and gp).
        xp, gp = self._s[end], self._y[end]
        np.copyto(xp, x)
        np.copyto(gp, g)
        fx_prev = self._fx

        # Search for an optimal step.
        ls, fx, step = self._search(xp, gp)
        evaluations = self._evaluations - evaluations_before

        if ls < 0:
            # Revert to the previous point.
            np.copyto(x, xp)
            np.copyto(g, gp)
            if pg is not None:
                owlqn_pseudo_gradient(pg, x, g, self.c1)
            self._fx = fx_prev
            info = self._info(k, evaluations, step)
            return self._finish(info, ls, "line search failed: " + LINE_SEARCH_ERRORS[ls])

        self._fx = fx
        if pg is not None:
            owlqn_pseudo_gradient(pg, x, g, self.c1)
        info = self._info(k, evaluations, step)
        stopped = self._stopping_test(info, k, fx)
        if stopped:
            self._k = k + 1
            return self._finish(info, *stopped)

        self._k, self._end = self._next_direction(k, end)
        # Now the search direction d is ready: try step 1 first.
        self._step = F64(1.0)
        return info

    def _search(self, xp, gp):
        """The line search from xp along d: (evaluations or an error code, f,
        step).  An interrupted evaluation puts x and g back at xp and gp, the
        last accepted point, so that the iteration can be run again."""
        try:
            if self._pg is not None:
                return self._line_search_backtracking_owlqn(self._fx, self._step, xp, self._pg)
            if self._ls == MORETHUENTE:
                return more_thuente(self, self._fx, self._step, xp)
            return backtracking(self, self._fx, self._step, xp, self._ls)
        except BaseException:
            np.copyto(self.x, xp)
            np.copyto(self._g, gp)
            raise

    def _stopping_test(self, info, k, fx):
        """(status, reason) if iteration k, of objective fx, ends the run, else
        None; the objective joins the last period ones if the run goes on."""
        # Convergence test: |g(x)| / max(1, |x|) <= epsilon.
        xnorm = max(info["xnorm"], 1.0)
        if info["gnorm"] / xnorm <= self.epsilon:
            return LBFGS_SUCCESS, "converged"

        # Stopping criterion: (f(past_x) - f(x)) / f(x) < delta.
        if self.period > 0:
            with np.errstate(all="ignore"):
                _, stop = delta_test(self._pf, k, fx, self.delta)
            if stop:
                return LBFGS_STOP, "no improvement"
            self._pf[k % self.period] = fx
        return None

    def _next_direction(self, k, end):
        """After iteration k: its pair (s, y) into history slot end, which held
        its starting point and gradient, then the next direction d.  Returns the
        number of the next iteration and the slot it writes."""
        x, g, d, pg, m = self.x, self._g, self._d, self._pg, self.m
        # s_{k+1} = x_{k+1} - x_{k}; y_{k+1} = g_{k+1} - g_{k}, in place of xp and gp.
        s_new, y_new = self._s[end], self._y[end]
        np.subtract(x, s_new, out=s_new)
        np.subtract(g, y_new, out=y_new)
        ys = _dot(y_new, s_new)
        yy = _dot(y_new, y_new)
        self._ys[end] = ys

        # The two-loop recursion for d = -(H g) (Nocedal 1980, p. 779).
        bound = m if m <= k else k
        k += 1
        end = (end + 1) % m
        np.negative(g if pg is None else pg, out=d)
        w, alpha = self._w, self._alpha
        with np.errstate(all="ignore"):
            j = end
            for _ in range(bound):
                j = (j + m - 1) % m
                alpha[j] = _dot(self._s[j], d) / self._ys[j]
                np.multiply(self._y[j], -alpha[j], out=w)
                d += w
            d *= ys / yy
            for _ in range(bound):
                beta = _dot(self._y[j], d) / self._ys[j]
                np.multiply(self._s[j], alpha[j] - beta, out=w)
                d += w
                j = (j + 1) % m

        # Constrain the search direction to the pseudo-gradient's orthant.
        if pg is not None:
            buf = self._buf
            for sl in _blocks(self.n):
                part = buf[:sl.stop - sl.start]
                np.multiply(d[sl], pg[sl], out=part)
                np.copyto(d[sl], 0., where=part >= 0.)
        return k, end

    # -------------------------------------------------------------- checkpoints

    def state(self, copy=True):
        """(arrays, scalars): everything needed to continue this run exactly with
        restore().  copy=False returns views of the optimizer's own arrays (for
        writing them out at once without doubling the memory)."""
        take = np.copy if copy else (lambda a: a)
        arrays = {"x": take(self.x), "g": take(self._g), "d": take(self._d),
                  "s": take(self._s), "y": take(self._y), "ys": take(self._ys), "pf": take(self._pf)}
        scalars = {"n": self.n, "num_memories": self.m, "period": self.period, "c1": self.c1,
                   "started": self._started, "fx": float(self._fx), "step": float(self._step),
                   "k": self._k, "end": self._end, "evaluations": self._evaluations,
                   "stop": self.stop, "status": self.status}
        return arrays, scalars

    def restore(self, arrays, scalars):
        """Continue from a state(): copies it into this optimizer and into its x.
        The number of variables, num_memories, period and c1 must be this
        optimizer's; epsilon, delta and the line search settings are this
        optimizer's own."""
        for name, mine in (("n", self.n), ("num_memories", self.m), ("period", self.period)):
            if int(scalars.get(name, -1)) != mine:
                raise ValueError(f"the state has {name} {scalars.get(name)!r}, this optimizer {mine}")
        if float(scalars.get("c1", -1.0)) != self.c1:
            raise ValueError(f"the state has c1 {scalars.get('c1')!r}, this optimizer {self.c1}")
        shapes = {"x": (self.n,), "g": (self.n,), "d": (self.n,), "s": (self.m, self.n),
                  "y": (self.m, self.n), "ys": (self.m,), "pf": (self.period,)}
        for name, shape in shapes.items():
            if name not in arrays:
                raise ValueError(f"the state has no array {name!r}")
            have = np.shape(arrays[name])
            if have != shape:
                raise ValueError(f"the state's array {name!r} has shape {have}, this optimizer needs {shape}")
        for name in ("started", "fx", "step", "k", "end", "evaluations"):
            if name not in scalars:
                raise ValueError(f"the state has no scalar {name!r}")
        k, end = int(scalars["k"]), int(scalars["end"])
        if k < 1 or not 0 <= end < self.m:
            raise ValueError(f"the state's iteration {k} or history slot {end} is out of range")

        np.copyto(self.x, arrays["x"])
        np.copyto(self._g, arrays["g"])
        np.copyto(self._d, arrays["d"])
        np.copyto(self._s, arrays["s"])
        np.copyto(self._y, arrays["y"])
        np.copyto(self._ys, arrays["ys"])
        np.copyto(self._pf, arrays["pf"])
        if self._pg is not None:
            owlqn_pseudo_gradient(self._pg, self.x, self._g, self.c1)
        self._started = bool(scalars["started"])
        self._fx = F64(scalars["fx"])
        self._step = F64(scalars["step"])
        self._k, self._end = k, end
        self._evaluations = int(scalars["evaluations"])
        self.stop = scalars.get("stop")
        status = scalars.get("status")
        self.status = None if status is None else int(status)
