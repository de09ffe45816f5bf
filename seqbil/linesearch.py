"""liblbfgs's line searches for a smooth objective, ported to numpy with the
optimizer (optimize.py): More & Thuente's (1994), with liblbfgs's
``update_trial_interval``, and the backtracking search with the Armijo, the
regular Wolfe or the strong Wolfe conditions.  OWL-QN's backtracking search,
which projects its trial points onto an orthant, is the optimizer's own.

A search moves the optimizer (optimize.LBFGS) from the point xp along its
direction: opt.trial(stp, xp) puts x at xp + stp * d, opt.value() evaluates
the objective there and opt.slope() is its derivative along d.  The dot
products are thus the optimizer's, summed in the order it sums all of its own.
A search returns (count, f, stp): the number of evaluations, or one of
liblbfgs's error codes (negative), with the objective and step it ended at.
"""
import numpy as np

# liblbfgs's return codes for a line search that fails (lbfgs.h).
LBFGSERR_LOGICERROR = -1023
LBFGSERR_OUTOFINTERVAL = -1003
LBFGSERR_INCORRECT_TMINMAX = -1002
LBFGSERR_ROUNDING_ERROR = -1001
LBFGSERR_MINIMUMSTEP = -1000
LBFGSERR_MAXIMUMSTEP = -999
LBFGSERR_MAXIMUMLINESEARCH = -998
LBFGSERR_WIDTHTOOSMALL = -996
LBFGSERR_INVALIDPARAMETERS = -995
LBFGSERR_INCREASEGRADIENT = -994

LINE_SEARCH_ERRORS = {
    LBFGSERR_LOGICERROR: "logic error",
    LBFGSERR_ROUNDING_ERROR: "rounding errors prevent further progress "
                             "(no step satisfies the sufficient decrease and curvature conditions)",
    LBFGSERR_MINIMUMSTEP: "the step became smaller than min_step",
    LBFGSERR_MAXIMUMSTEP: "the step became larger than max_step",
    LBFGSERR_MAXIMUMLINESEARCH: "the maximum number of evaluations (max_linesearch) was reached",
    LBFGSERR_WIDTHTOOSMALL: "the interval of uncertainty became narrower than xtol",
    LBFGSERR_INVALIDPARAMETERS: "a negative step",
    LBFGSERR_INCREASEGRADIENT: "the search direction increases the objective",
}


MORETHUENTE = 0
BACKTRACKING_ARMIJO = 1
BACKTRACKING_WOLFE = 2  # = LBFGS_LINESEARCH_BACKTRACKING
BACKTRACKING_STRONG_WOLFE = 3

# The names of CRFsuite's train_lbfgs.c ("Backtracking" is
# LBFGS_LINESEARCH_BACKTRACKING, the regular Wolfe conditions), and "Armijo",
# liblbfgs's backtracking with the sufficient decrease condition alone, which
# CRFsuite has no name for.
LINESEARCHES = {
    "MoreThuente": MORETHUENTE,
    "Backtracking": BACKTRACKING_WOLFE,
    "StrongBacktracking": BACKTRACKING_STRONG_WOLFE,
    "Armijo": BACKTRACKING_ARMIJO,
}

F64 = np.float64  # the line searches' scalars: IEEE arithmetic, as in C


def _min2(a, b):
    return a if a <= b else b


def _max2(a, b):
    return a if a >= b else b


# The minimizers of liblbfgs's macros CUBIC_MINIMIZER, CUBIC_MINIMIZER2,
# QUARD_MINIMIZER and QUARD_MINIMIZER2, operation for operation.

def _cubic(u, fu, du, v, fv, dv):
    """What both cubic minimizers compute first: d = v - u, theta, the scale s
    (the largest of |theta|, |du| and |dv|: no overflow in the squares),
    a = theta / s and (gamma / s) ** 2."""
    d = v - u
    theta = (fu - fv) * 3 / d + du + dv
    p = abs(theta)
    q = abs(du)
    r = abs(dv)
    s = _max2(_max2(p, q), r)
    a = theta / s
    return d, theta, s, a, a * a - (du / s) * (dv / s)


def _cubic_minimizer(u, fu, du, v, fv, dv):
    d, theta, s, a, square = _cubic(u, fu, du, v, fv, dv)
    gamma = s * np.sqrt(square)
    if v < u:
        gamma = -gamma
    p = gamma - du + theta
    q = gamma - du + gamma + dv
    r = p / q
    return u + r * d


def _cubic_minimizer2(u, fu, du, v, fv, dv, xmin, xmax):
    d, theta, s, a, square = _cubic(u, fu, du, v, fv, dv)
    gamma = s * np.sqrt(_max2(F64(0.0), square))
    if u < v:
        gamma = -gamma
    p = gamma - dv + theta
    q = gamma - dv + gamma + du
    r = p / q
    if r < 0. and gamma != 0.:
        return v - r * d
    if a < 0:
        return xmax
    return xmin


def _quard_minimizer(u, fu, du, v, fv):
    a = v - u
    return u + du / ((fu - fv) / a + du) / 2 * a


def _quard_minimizer2(u, du, v, dv):
    a = u - v
    return v + dv / (dv - du) * a


def update_trial_interval(x, fx, dx, y, fy, dy, t, ft, dt, tmin, tmax, brackt):
    """liblbfgs's update_trial_interval (More & Thuente's dcstep): the new
    trial step and interval of uncertainty.  Returns (info, x, fx, dx, y, fy,
    dy, t, brackt), info 0 or an error code; on an error nothing has changed.
    The arithmetic is np.float64's, divisions by zero included, as in C."""
    x, fx, dx, y, fy, dy, t, ft, dt, tmin, tmax = (
        F64(v) for v in (x, fx, dx, y, fy, dy, t, ft, dt, tmin, tmax))
    with np.errstate(all="ignore"):
        # fsigndiff(dt, dx) for doubles: *dt * (*dx / fabs(*dx)) < 0.
        dsign = bool(dt * (dx / abs(dx)) < 0.)

        if brackt:
            if t <= _min2(x, y) or _max2(x, y) <= t:
                return LBFGSERR_OUTOFINTERVAL, x, fx, dx, y, fy, dy, t, brackt
            if 0. <= dx * (t - x):
                return LBFGSERR_INCREASEGRADIENT, x, fx, dx, y, fy, dy, t, brackt
            if tmax < tmin:
                return LBFGSERR_INCORRECT_TMINMAX, x, fx, dx, y, fy, dy, t, brackt

        if fx < ft:
            # Case 1: a higher function value; the minimum is bracketed.
            brackt = True
            bound = True
            mc = _cubic_minimizer(x, fx, dx, t, ft, dt)
            mq = _quard_minimizer(x, fx, dx, t, ft)
            if abs(mc - x) < abs(mq - x):
                newt = mc
            else:
                newt = mc + 0.5 * (mq - mc)
        elif dsign:
            # Case 2: a lower function value and derivatives of opposite sign.
            brackt = True
            bound = False
            mc = _cubic_minimizer(x, fx, dx, t, ft, dt)
            mq = _quard_minimizer2(x, dx, t, dt)
            if abs(mc - t) > abs(mq - t):
                newt = mc
            else:
                newt = mq
        elif abs(dt) < abs(dx):
            # Case 3: a lower function value, derivatives of the same sign,
            # and the magnitude of the derivative decreases.
            bound = True
            mc = _cubic_minimizer2(x, fx, dx, t, ft, dt, tmin, tmax)
            mq = _quard_minimizer2(x, dx, t, dt)
            if brackt:
                if abs(t - mc) < abs(t - mq):
                    newt = mc
                else:
                    newt = mq
            else:
                if abs(t - mc) > abs(t - mq):
                    newt = mc
                else:
                    newt = mq
        else:
            # Case 4: a lower function value, derivatives of the same sign,
            # and the magnitude of the derivative does not decrease.
            bound = False
            if brackt:
                newt = _cubic_minimizer(t, ft, dt, y, fy, dy)
            elif x < t:
                newt = tmax
            else:
                newt = tmin

        # Update the interval of uncertainty.
        if fx < ft:
            y, fy, dy = t, ft, dt
        else:
            if dsign:
                y, fy, dy = x, fx, dx
            x, fx, dx = t, ft, dt

        # Clip the new trial value in [tmin, tmax].
        if tmax < newt:
            newt = tmax
        if newt < tmin:
            newt = tmin

        # Redefine the new trial value if it is close to the upper bound.
        if brackt and bound:
            mq = x + 0.66 * (y - x)
            if x < y:
                if mq < newt:
                    newt = mq
            else:
                if newt < mq:
                    newt = mq

        return 0, x, fx, dx, y, fy, dy, F64(newt), brackt


def _initial_slope(opt, stp):
    """(error, dginit): the initial gradient in the search direction, and an
    error code for a step that is not positive or a direction along which the
    objective increases (0 if neither)."""
    if stp <= 0.:
        return LBFGSERR_INVALIDPARAMETERS, None
    dginit = opt.slope()
    if 0 < dginit:
        return LBFGSERR_INCREASEGRADIENT, dginit
    return 0, dginit


def backtracking(opt, f, stp, xp, condition):
    """liblbfgs's line_search_backtracking: halve the step until the sufficient
    decrease holds and, unless condition is BACKTRACKING_ARMIJO, grow it by
    2.1 until the (regular or strong) Wolfe condition holds too."""
    count = 0
    dec, inc = 0.5, 2.1
    error, dginit = _initial_slope(opt, stp)
    if error:
        return error, f, stp
    finit = f
    dgtest = opt.ftol * dginit
    while True:
        opt.trial(stp, xp)
        f = opt.value()
        count += 1
        if f > finit + stp * dgtest:
            width = dec
        else:
            # The sufficient decrease condition (Armijo condition).
            if condition == BACKTRACKING_ARMIJO:
                return count, f, stp
            # The Wolfe condition.
            dg = opt.slope()
            if dg < opt.wolfe * dginit:
                width = inc
            else:
                if condition == BACKTRACKING_WOLFE:
                    return count, f, stp
                # The strong Wolfe condition.
                if dg > -opt.wolfe * dginit:
                    width = dec
                else:
                    return count, f, stp
        error = backtracking_failure(opt, count, stp)
        if error:
            return error, f, stp
        stp = stp * width


def backtracking_failure(opt, count, stp):
    """Why a backtracking search may not try another step after count
    evaluations at step stp: an error code, or 0 if it may."""
    if stp < opt.min_step:
        return LBFGSERR_MINIMUMSTEP
    if stp > opt.max_step:
        return LBFGSERR_MAXIMUMSTEP
    if opt.max_linesearch <= count:
        return LBFGSERR_MAXIMUMLINESEARCH
    return 0


def more_thuente(opt, f, stp, xp):
    """liblbfgs's line_search_morethuente, More & Thuente's search."""
    ftol, gtol, xtol = opt.ftol, opt.gtol, opt.xtol
    min_step, max_step = opt.min_step, opt.max_step
    count = 0
    uinfo = 0
    error, dginit = _initial_slope(opt, stp)
    if error:
        return error, f, stp

    brackt = False
    stage1 = True
    finit = f
    dgtest = ftol * dginit
    width = max_step - min_step
    prev_width = 2.0 * width

    # (stx, fx, dgx): the best step so far; (sty, fy, dgy): the other end
    # of the interval of uncertainty; (stp, f, dg): the current step.
    stx = sty = F64(0.)
    fx = fy = finit
    dgx = dgy = dginit

    while True:
        # The minimum and maximum steps of the present interval.
        if brackt:
            stmin = _min2(stx, sty)
            stmax = _max2(stx, sty)
        else:
            stmin = stx
            stmax = stp + 4.0 * (stp - stx)

        # Clip the step in [min_step, max_step].
        if stp < min_step:
            stp = F64(min_step)
        if max_step < stp:
            stp = F64(max_step)

        # If an unusual termination is to occur, let stp be the lowest
        # point obtained so far.
        if ((brackt and (stp <= stmin or stmax <= stp or opt.max_linesearch <= count + 1 or uinfo != 0))
                or (brackt and stmax - stmin <= xtol * stmax)):
            stp = stx

        opt.trial(stp, xp)
        f = opt.value()
        dg = opt.slope()

        ftest1 = finit + stp * dgtest
        count += 1

        # Tests for errors and convergence.
        if brackt and (stp <= stmin or stmax <= stp or uinfo != 0):
            return LBFGSERR_ROUNDING_ERROR, f, stp
        if stp == max_step and f <= ftest1 and dg <= dgtest:
            return LBFGSERR_MAXIMUMSTEP, f, stp
        if stp == min_step and (ftest1 < f or dgtest <= dg):
            return LBFGSERR_MINIMUMSTEP, f, stp
        if brackt and (stmax - stmin) <= xtol * stmax:
            return LBFGSERR_WIDTHTOOSMALL, f, stp
        if opt.max_linesearch <= count:
            return LBFGSERR_MAXIMUMLINESEARCH, f, stp
        if f <= ftest1 and abs(dg) <= gtol * (-dginit):
            # The sufficient decrease and the directional derivative conditions hold.
            return count, f, stp

        # In the first stage, seek a step for which the modified function
        # has a nonpositive value and a nonnegative derivative.
        if stage1 and f <= ftest1 and _min2(ftol, gtol) * dginit <= dg:
            stage1 = False

        if stage1 and ftest1 < f and f <= fx:
            # The modified function and its derivative.
            fm = f - stp * dgtest
            fxm = fx - stx * dgtest
            fym = fy - sty * dgtest
            dgm = dg - dgtest
            dgxm = dgx - dgtest
            dgym = dgy - dgtest
            uinfo, stx, fxm, dgxm, sty, fym, dgym, stp, brackt = update_trial_interval(
                stx, fxm, dgxm, sty, fym, dgym, stp, fm, dgm, stmin, stmax, brackt)
            # Reset the function and gradient values for f.
            fx = fxm + stx * dgtest
            fy = fym + sty * dgtest
            dgx = dgxm + dgtest
            dgy = dgym + dgtest
        else:
            uinfo, stx, fx, dgx, sty, fy, dgy, stp, brackt = update_trial_interval(
                stx, fx, dgx, sty, fy, dgy, stp, f, dg, stmin, stmax, brackt)

        # Force a sufficient decrease in the interval of uncertainty.
        if brackt:
            if 0.66 * prev_width <= abs(sty - stx):
                stp = stx + 0.5 * (sty - stx)
            prev_width = width
            width = abs(sty - stx)
