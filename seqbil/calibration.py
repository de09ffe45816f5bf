"""Calibrating the probabilities of a model whose scores are not log-probabilities.

An online learner's scores (perceptron, bilinear, PA) define p(y | x) proportional to
exp(score(y) / T) only up to the scale T; the CRF's are log-probabilities (T = 1).
Temperature scaling (Guo et al., "On Calibration of Modern Neural Networks", ICML
2017, section 4.2) fixes T by the least negative log-likelihood of held-out gold
labels, here the token marginals p(y_i | x) of the sum-product forward-backward
(cython_ext/fb.pxd), so the labelling's decisions (Viterbi) do not change.
"""
import math

import numpy as np

# log T is searched in [-LOG_RANGE, LOG_RANGE]: perceptron scores run to the hundreds.
# A temperature given or kept in a model lies in [T_MIN, T_MAX] too: scores divided by a
# smaller one (scores of 1e3 by 1e-30) leave float64's range of exact differences, and
# the marginals come out 0 on the best path while its probability is 1
T_MIN, T_MAX = 1e-4, 1e4
LOG_RANGE = math.log(T_MAX)


def token_nll(model, data, temperature):
    """(sum of -log p(gold_i | x) over the tokens with a known gold label, their
    number) under model.temperature = temperature; data: an encoded labelled corpus."""
    gold = data.labels
    known = np.flatnonzero(gold >= 0)
    saved = model.temperature
    model.temperature = float(temperature)
    try:
        marginals = model.decode_marginals(data)[2]
    finally:
        model.temperature = saved
    p = marginals[known, gold[known]]
    return float(-np.log(np.maximum(p, 1e-300)).sum()), len(known)


def fit_temperature(pairs, data=None):
    """The temperature of the least token negative log-likelihood (bounded Brent
    search over log T) on one encoded labelled corpus (fit_temperature(model, data))
    or summed over several (model, data) pairs (the folds of a cross-validation), with
    the per-token NLL at T = 1 and at the fit."""
    if data is not None:
        pairs = [(pairs, data)]
    if not any((d.labels >= 0).any() for _, d in pairs):
        raise ValueError("no token with a known gold label to fit a temperature on")

    def total(t):
        parts = [token_nll(m, d, t) for m, d in pairs]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    log_t = minimize_bounded(lambda t: total(math.exp(t))[0], -LOG_RANGE, LOG_RANGE, xatol=1e-4)
    temperature = min(max(math.exp(log_t), T_MIN), T_MAX)
    before, n = total(1.0)
    after, _ = total(temperature)
    return temperature, {"tokens": n, "nll_at_1": before / n, "nll": after / n,
                         "at_bound": bool(abs(abs(log_t) - LOG_RANGE) < 1e-2)}


def minimize_bounded(f, a, b, xatol=1e-5, maxiter=500):
    """The x in [a, b] that minimizes f, by Brent's method (Brent 1973, Algorithms for
    Minimization without Derivatives, ch. 5, procedure fmin): golden-section steps,
    and parabolic ones through the last three points where they fall inside and
    shrink; stops once x is within xatol of the minimum of a unimodal f. (scipy's
    bounded minimize_scalar is the same method; importing scipy.optimize adds some
    50 MiB to a training process.)"""
    golden = 0.5 * (3.0 - math.sqrt(5.0))
    eps = math.sqrt(2.2e-16)
    x = w = v = a + golden * (b - a)
    fx = fw = fv = f(x)
    d = e = 0.0
    for _ in range(maxiter):
        m = 0.5 * (a + b)
        tol1 = eps * abs(x) + xatol / 3.0
        tol2 = 2.0 * tol1
        if abs(x - m) <= tol2 - 0.5 * (b - a):
            break
        parabolic = False
        if abs(e) > tol1:  # a parabola through x, w and v
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            last, e = e, d
            if abs(p) < abs(0.5 * q * last) and q * (a - x) < p < q * (b - x):
                d = p / q
                parabolic = True
                if (x + d) - a < tol2 or b - (x + d) < tol2:
                    d = tol1 if x < m else -tol1
        if not parabolic:
            e = (b - x) if x < m else (a - x)
            d = golden * e
        u = x + (d if abs(d) >= tol1 else math.copysign(tol1, d))
        fu = f(u)
        if fu <= fx:
            if u < x:
                b = x
            else:
                a = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
    return x


def expected_calibration_error(confidence, correct, bins=15):
    """ECE (Naeini et al. 2015; Guo et al. 2017, eq. 3): predictions grouped into
    `bins` equal-width confidence bins, sum over bins of |accuracy - mean confidence|
    weighted by the bin's share of predictions. A confidence of exactly 1 falls in
    the last bin, 0 in the first."""
    confidence = np.asarray(confidence, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    if not len(confidence):
        return 0.0
    if not (np.isfinite(confidence).all() and (confidence >= -1e-9).all() and (confidence <= 1 + 1e-9).all()):
        raise ValueError("confidences must be probabilities, in [0, 1]")
    confidence = np.clip(confidence, 0.0, 1.0)  # (sums of products: 1 may come out as 1 + 2e-16)
    which = np.minimum((confidence * bins).astype(np.int64), bins - 1)
    gap = np.abs(np.bincount(which, correct, bins) - np.bincount(which, confidence, bins))
    return float(gap.sum() / len(confidence))
