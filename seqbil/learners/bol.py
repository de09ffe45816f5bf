"""`bol`: online learning of the rank-1 bilinear model (Wu & Sun, Algorithm 2).

Block mode (default): the dual Theta is block diagonal with one S x (S+1) block per
1st-order attribute, and each block keeps its own rank-1 triple W_a = sigma_a u_a
v_a^T, refreshed by R power steps on every mistake that touches it (see
cython_ext/bol.pyx). The literal global reading, one sigma_1 over the whole
block-diagonal Theta (`rank1 = "global"`, cython_ext/bol_global.pyx), keeps
alpha = s_a * a_raw and beta = s_b * b_raw with scalar scales, starts from the
paper's alpha = beta = 1 / |1|, and shows the degenerate behaviour this reading
has (a single block holds the top singular pair of a block-diagonal matrix).

0-order attributes and the end scores form a linear part updated as in the paper's
section 4.3 (w += C dPhi-hat; a 0-order entry with value x counts x in dPhi-hat,
see chain.pxd: linear_update). With averaging, alpha (= sigma u) and beta (= v) are
averaged individually, lazily.
"""
import numpy as np

from .._kernels.bol import BlockKernel, mix_blocks, refresh_blocks
from .._kernels.bol_global import GlobalKernel
from ..parameter import Param
from .base import OnlineLearner, register, slots_to_attributes

# the slots of `state`, the numbers of the global mode, which its kernel reads and
# updates in place (bol_global.pyx): sigma_1, the scales s_a and s_b of the raw
# vectors, their squared norms |alpha|^2 and |beta|^2, and the running sums G_a and
# G_b that averaging multiplies the raw vectors by
SIGMA, SCALE_A, SCALE_B, NORM_A, NORM_B, SUM_A, SUM_B = range(7)
STATE_SLOTS = 7


class BlockPool:
    """Dense storage of the Theta blocks (float32, see cython_ext/blocks.pxd) of the
    attributes touched so far, in order of first touch: attribute a's block is
    pool[slot[a]]. The pool is one zero-filled allocation for all attributes: the
    operating system maps its pages on first write, so memory grows with the blocks
    in use and no block is ever copied."""

    def __init__(self, n_attributes, S):
        self.slot = np.full(n_attributes, -1, dtype=np.int32)
        self.pool = np.zeros((max(n_attributes, 1), S, S + 1), dtype=np.float32)
        self.used = 0

    def attributes(self):
        """The attributes that hold a slot, in slot order."""
        attrs = np.flatnonzero(self.slot >= 0)
        return attrs[np.argsort(self.slot[attrs])]

    def state(self):
        """(arrays, scalars) of the slots and the blocks in use, for checkpoints."""
        return {"slot": self.slot, "pool": self.pool[:self.used]}, {"used": self.used}

    def hold(self, attributes):
        """Give the attributes without a block the next slots."""
        new = attributes[self.slot[attributes] < 0]
        self.slot[new] = self.used + np.arange(len(new), dtype=np.int32)
        self.used += len(new)

    def restore(self, arrays, scalars):
        """Take over a state(), after checking that it fits these blocks."""
        used, slot, pool = scalars.get("used"), arrays.get("slot"), arrays.get("pool")
        fits = type(used) is int and 0 <= used <= len(self.pool) and slot is not None and pool is not None
        fits = fits and (slot.shape, slot.dtype, pool.shape, pool.dtype) == \
            (self.slot.shape, self.slot.dtype, (used,) + self.pool.shape[1:], self.pool.dtype)
        if not fits or np.any((slot < -1) | (slot >= used)):  # slots index the pool in the kernels
            raise ValueError("the checkpoint's Theta blocks do not fit this learner")
        self.used = used
        np.copyto(self.slot, slot)
        self.pool[:used] = pool


@register
class Bilinear(OnlineLearner):
    name = "bol"
    summary = "online bilinear learner (Wu & Sun 2015, Algorithm 2), power-iteration updates"
    bilinear = True
    multitask = True  # block mode: a task copy of a 1st-order attribute is a block of its own
    mixes = True      # block mode (mixing() is None in global mode)
    options = (
        Param("rank1", str, "block", "rank-1 per attribute block, or the paper's literal global rank-1",
              choices=("block", "global")),
        Param("power_steps", int, 4, "power-iteration steps per update (R)", minimum=0, maximum=10 ** 4),
        Param("diagnose", bool, False, "after each epoch, exact SVD of every Theta block for sigma_2/sigma_1, "
              "the angle of the R-step pairs to the exact ones and the dual objective (about 1 s per million "
              "blocks)"),
    )
    # (Ua and Ub: Uab itself without averaging, views of it with averaging; the blocks in
    # use are the pool's part, BlockPool.state)
    checkpointed = OnlineLearner.checkpointed.plus(
        arrays=("W0", "end", "ab", "sigma", "state", "U0", "Utrans", "Uend", "Uab", "Ua", "Ub", "mark"),
        numbers=("R", "mode", "counter", "updated", "mistakes"), progress={"counter": 1, "updated": 0, "mistakes": 0},
        parts={"blocks.": "blocks"})
    # the log line: the sizes of the factors (end_pass) and what diagnose finds
    shown = (("sigma_mean", "mean sigma_a {:.4g}"), ("sigma_max", "max sigma_a {:.4g}"),
             ("sigma_1", "sigma_1 {:.4g}"), ("sigma2_over_sigma1_mean", "mean sigma2/sigma1 {:.4g}"),
             ("angle_mean", "mean angle to exact pair (deg) {:.4g}"),
             ("value_ratio_mean", "u'Theta v / sigma_1 {:.4g}"), ("dual_objective", "D_t {:.4g}"))

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        S, A1 = self.S, self.A1
        self.R = int(settings.power_steps)
        self.mode = settings.rank1
        if tasks is not None and self.mode == "global":
            raise ValueError("rank1 = global does not learn several tasks; use rank1 = block")
        self.W0, self.end = np.zeros((self.A0, S)), np.zeros(self.copies * S)
        # alpha and beta side by side in memory (see chain.pxd: score_pair_bilinear). In
        # block mode row s belongs to the attribute with slot s, like sigma and the
        # averaging sums, so that like the pool they take memory only as attributes
        # take part in mistakes; the global mode keeps a row per attribute.
        self.ab = np.zeros((A1, 2 * S + 1))
        self.alpha, self.beta = self.ab[:, :S], self.ab[:, S:]
        self.sigma = np.zeros(A1 if self.mode == "block" else 0)
        self.state = np.zeros(STATE_SLOTS)
        if self.mode == "global":  # the paper's start: alpha = beta = 1/|1| (unit norm over all attributes)
            self.ab[:] = 1.0
            # the raw vectors hold ones, of squared norm 1 once scaled; the running
            # sums G start with the initial parameters, as the counter c = 1 does
            s_a, s_b = 1 / np.sqrt(max(A1 * S, 1)), 1 / np.sqrt(max(A1 * (S + 1), 1))
            state = self.state
            state[SCALE_A], state[SCALE_B], state[NORM_A], state[NORM_B], state[SUM_B] = s_a, s_b, 1.0, 1.0, s_b
        avg = (lambda a: np.zeros(a.shape)) if self.averaged else (lambda a: np.zeros((0,) * a.ndim))
        self.U0, self.Utrans, self.Uend, Uab = (avg(a) for a in (self.W0, self.trans, self.end, self.ab))
        self.Uab = Uab
        self.Ua, self.Ub = (Uab[:, :S], Uab[:, S:]) if self.averaged else (Uab, Uab)
        self.blocks = BlockPool(A1, S)
        self.mark = np.full(A1, -1, dtype=np.int32)
        self.counter = 1
        self.updated = 0
        self.mistakes = 0  # so far: the dual's sum of eta_j is C times this
        # the kernel works on these arrays in place: they are never replaced, only updated
        b = self.blocks
        scalars = dict(C=self.C, R=self.R, averaged=self.averaged, transitions=self.transitions)
        if self.mode == "block":
            self.kernel = BlockKernel(self.W0, self.trans, self.end, self.U0, self.Utrans, self.Uend, self.alpha,
                                      self.beta, self.sigma, self.Ua, self.Ub, b.slot, b.pool, self.mark,
                                      **scalars, tasks=tasks)
        else:  # alpha and beta hold the raw vectors, scaled by state[SCALE_A] and state[SCALE_B]
            self.kernel = GlobalKernel(self.W0, self.trans, self.end, self.U0, self.Utrans, self.Uend, self.alpha,
                                       self.beta, self.state, self.Ua, self.Ub, b.slot, b.pool, self.mark, **scalars)

    def train_chunk(self, data, order):
        b = self.blocks
        mistakes, self.counter, b.used, updated = self.kernel.train_chunk(data, order, self.counter, b.used)
        if self.mode == "global":
            self._fold_scales()
        self.updated += updated
        self.mistakes += mistakes
        return mistakes

    def warm_start(self, weights):
        """Start from a saved bilinear model: each block gets the rank-1 dual Theta_a =
        alpha_a beta_a^T, whose top triple the saved factors are, so the first power
        steps refine the saved W_a instead of starting afresh. The factors are put in
        the learner's form alpha_a = sigma_a u_a, beta_a = v_a with unit u_a, v_a (an
        averaged model's are not), each live attribute at a slot of its own."""
        if self.mode == "global":
            raise ValueError("rank1 = global cannot continue a model; use rank1 = block")
        weights = dict(weights)
        alpha, beta = np.asarray(weights.pop("alpha")), np.asarray(weights.pop("beta"))
        if alpha.shape != self.alpha.shape or beta.shape != self.beta.shape:
            raise ValueError(f"alpha, beta: shapes {alpha.shape}, {beta.shape}, the learner has "
                             f"{self.alpha.shape}, {self.beta.shape}")
        super().warm_start(weights)
        na, nb = np.linalg.norm(alpha, axis=1), np.linalg.norm(beta, axis=1)
        live = np.flatnonzero((na > 0) & (nb > 0))
        n = len(live)
        self.alpha[:n] = alpha[live] * nb[live, None]
        self.beta[:n] = beta[live] / nb[live, None]
        self.sigma[:n] = na[live] * nb[live]
        b = self.blocks
        b.slot[live] = np.arange(n)
        b.used = n
        b.pool[:n] = self.alpha[:n, :, None] * self.beta[:n, None, :]

    # --- iterative parameter mixing (block mode): the blocks and their factors by attribute
    _BY_SLOT = frozenset(("theta", "alpha", "beta", "sigma", "Ua", "Ub"))
    own_mix = _BY_SLOT  # on threads, mixed and refreshed by mix_blocks (bol.pyx)

    def mixing(self):
        if self.mode != "block":
            return None
        names = {"W0": 0, "trans": None, "end": None, "theta": 1, "alpha": 1, "beta": 1, "sigma": 1}
        if self.averaged:
            names.update({"U0": 0, "Utrans": None, "Uend": None, "Ua": 1, "Ub": 1})
        return names, ["counter", "mistakes"]

    def _by_slot(self, name):
        return self.blocks.pool if name == "theta" else getattr(self, name)

    def get_rows(self, name, rows):
        if name not in self._BY_SLOT or rows is None:
            return super().get_rows(name, rows)
        source, slots = self._by_slot(name), self.blocks.slot[rows]
        out = np.zeros((len(rows),) + source.shape[1:], source.dtype)  # an attribute without a block: zeros
        has = slots >= 0
        out[has] = source[slots[has]]
        return out

    def set_rows(self, name, rows, values):
        if name not in self._BY_SLOT or rows is None:
            return super().set_rows(name, rows, values)
        self.blocks.hold(rows)
        self._by_slot(name)[self.blocks.slot[rows]] = values

    def mixed(self, mix, shards):
        """A mixed block is not rank-1 in the factors mixed with it: its factors are
        refreshed by R power steps from the mixed ones (the kernel's update on a
        block), and the averaging sums take the jump as a step at the current
        counter; the refreshed rows go back whole. One shard's blocks come back as
        they were."""
        if shards == 1:
            return
        factors = ("alpha", "beta", "sigma") + (("Ua", "Ub") if self.averaged else ())
        sizes = {name: self.row_size(name) for name in ("theta",) + factors}
        rows = np.sort(np.concatenate([mix[name][0] // sizes[name] for name in sizes]))
        rows = rows[np.concatenate([[True], rows[1:] != rows[:-1]])] if len(rows) else rows
        if not len(rows):
            return
        full = {}
        for name in sizes:  # the blocks' rows as the epoch began, with the mixed entries
            block = self.get_rows(name, rows).reshape(len(rows), sizes[name]).astype(np.float64)
            r, c = np.divmod(mix[name][0], sizes[name])
            block[np.searchsorted(rows, r), c] = mix[name][1]
            full[name] = block
        S = self.S
        theta = np.ascontiguousarray(full["theta"].reshape(len(rows), S, S + 1), dtype=np.float32)
        alpha, beta = np.ascontiguousarray(full["alpha"]), np.ascontiguousarray(full["beta"])
        sigma = np.ascontiguousarray(full["sigma"][:, 0])
        old_alpha, old_beta = alpha.copy(), beta.copy()
        refresh_blocks(theta, alpha, beta, sigma, self.R)
        full.update(alpha=alpha, beta=beta, sigma=sigma[:, None])
        if self.averaged:
            full["Ua"] = full["Ua"] + mix["counter"] * (alpha - old_alpha)
            full["Ub"] = full["Ub"] + mix["counter"] * (beta - old_beta)
        for name in factors:
            size = sizes[name]
            mix[name] = ((rows[:, None] * size + np.arange(size)).ravel(), full[name].ravel())

    def mix_own(self, copies, touched, mu, mixed, parallel):
        """The blocks of the 1st-order attributes touched, their factors and sums,
        mixed in the copies' own memory and refreshed as mixed() refreshes them."""
        rows = touched[1]
        for copy in copies:
            copy.blocks.hold(rows)
        arrays = ([c.blocks.pool for c in copies], [c.ab for c in copies], [c.sigma for c in copies],
                  [c.Uab for c in copies], [c.blocks.slot for c in copies])
        counter, mu = float(mixed["counter"]), np.asarray(mu, dtype=np.float64)
        parallel(lambda part: mix_blocks(*arrays, part, mu, counter, self.R, self.averaged), rows)

    def row_pool(self, name):
        """W0 and U0 (dense, a row per attribute) are mixed in place on threads."""
        return (getattr(self, name), None) if name in ("W0", "U0") else None

    def _fold_scales(self):
        """Move a global scale into the raw vectors before it under- or overflows; the
        running sums G for averaging move the other way (G * raw is unchanged)."""
        for i, raw, G in ((SCALE_A, self.alpha, SUM_A), (SCALE_B, self.beta, SUM_B)):
            scale = self.state[i]
            if not 1e-50 < scale < 1e50:
                raw *= scale
                self.state[G] /= scale
                self.state[i] = 1.0

    def snapshot(self):
        """As every learner's; the driver of mixing, whose marks went (only_mixing),
        gives them at rest, as a learner that makes passes has them."""
        arrays, scalars = super().snapshot()
        if self.kernel is None and self.mark is not None and len(self.mark) != self.A1:  # (only_mixing)
            arrays["mark"] = np.full(self.A1, -1, dtype=np.int32)  # at rest, as the passes leave it
        return arrays, scalars

    def end_pass(self, k):
        if self.mode == "block":
            # (the slots in use only, and no copy of them: sigma >= 0, a block at 0 left out)
            used = self.sigma[:self.blocks.used]
            n = int(np.count_nonzero(used))
            sig = {"sigma_mean": float(used.sum()) / n if n else 0.0, "sigma_max": float(used.max()) if n else 0.0}
        else:
            sig = {"sigma_1": float(self.state[SIGMA])}
        stats = {"blocks": int(self.blocks.used), "block_updates": self.updated, **sig}
        if self.settings.diagnose:
            stats.update(self.diagnose())
        self.updated = 0
        return stats

    def diagnose(self, batch=100_000, tie=0.9):
        """Exact spectra of the Theta blocks (dense SVD: slow on large data) against the
        learner's state:
        - sigma_2 / sigma_1 per block (mean and max);
        - angle_mean: the angle in degrees between the R-step pair and the exact top
          singular pair (u_1, v_1), the larger of the two, averaged over the blocks
          whose top pair is well defined (sigma_2 <= tie * sigma_1; their share is
          gapped_share); in global mode, of the global pair against the top pair of
          the whole Theta (which lies in one block);
        - value_ratio_mean: u^T Theta_a v / sigma_1 with the R-step pair normalised,
          over all blocks (1 when the pair is a top pair, ties included);
        - the dual objective D_t = sum of eta_j - F*(Theta_t), with F* = sum_a
          sigma_1(Theta_a)^2 / 2 (block mode) or sigma_1(Theta)^2 / 2 (global)."""
        used = self.blocks.used
        if not used:
            return {}
        attrs = self.blocks.attributes()  # attrs[i] owns pool slot i
        top, ratio, angles, values = (np.empty(used) for _ in range(4))
        best = (-1.0, None, None, -1)
        for lo in range(0, used, batch):
            hi = min(lo + batch, used)
            theta = self.blocks.pool[lo:hi].astype(np.float64)
            u, s, vt = np.linalg.svd(theta)
            top[lo:hi] = s[:, 0]
            ratio[lo:hi] = np.divide(s[:, 1], s[:, 0], out=np.zeros(hi - lo), where=s[:, 0] > 0)
            a = attrs[lo:hi]
            rows = slice(lo, hi) if self.mode == "block" else a  # block mode keeps the factors by slot
            x, y = _unit(self.alpha[rows]), _unit(self.beta[rows])
            angles[lo:hi] = np.maximum(_angle(x, u[:, :, 0]), _angle(y, vt[:, 0, :]))
            values[lo:hi] = np.divide(np.einsum("bi,bij,bj->b", x, theta, y), s[:, 0], out=np.zeros(hi - lo),
                                      where=s[:, 0] > 0)
            i = int(np.argmax(s[:, 0]))
            if s[i, 0] > best[0]:
                best = (s[i, 0], u[i, :, 0], vt[i, 0, :], a[i])
        live = top > 0
        gapped = live & (ratio <= tie)
        out = {"sigma2_over_sigma1_mean": float(ratio[live].mean()) if live.any() else 0.0,
               "sigma2_over_sigma1_max": float(ratio.max()),
               "value_ratio_mean": float(np.abs(values[live]).mean()) if live.any() else 0.0,
               "gapped_share": float(gapped.sum() / max(live.sum(), 1))}
        if self.mode == "block":
            out["angle_mean"] = float(angles[gapped].mean()) if gapped.any() else 0.0
            f_star = 0.5 * (top ** 2).sum()
        else:  # the global pair against the top pair of the block-diagonal Theta (one block)
            _, u1, v1, a = best
            cos_a = abs(self.alpha[a] @ u1) / max(np.linalg.norm(self.alpha), 1e-300)
            cos_b = abs(self.beta[a] @ v1) / max(np.linalg.norm(self.beta), 1e-300)
            out["angle_mean"] = float(np.degrees(np.arccos(min(1.0, min(cos_a, cos_b)))))
            f_star = 0.5 * top.max() ** 2
        out["dual_objective"] = float(self.C * self.mistakes - f_star)
        return out

    def only_mixing(self):
        """The kernel and its marks (an int per attribute) are for the passes."""
        self.kernel, self.mark = None, np.zeros(0, dtype=np.int32)

    def finish(self):
        """The Theta blocks and the kernel are done with; the factors stay."""
        self.kernel = None
        self.blocks.pool = np.zeros((0,) + self.blocks.pool.shape[1:], dtype=np.float32)
        self.mark = None

    def parameters(self):
        """Scoring weights, a row per attribute: alpha folds in sigma (sigma_a u_a, or
        sigma_1 s_a a_raw)."""
        if self.mode == "block":
            b, S = self.blocks, self.S
            attrs = b.attributes()
            rows = self.ab[:len(attrs)]
            if self.averaged:
                rows = rows - self.Uab[:len(attrs)] / float(self.counter)
            alpha, beta = np.zeros((self.A1, S)), np.zeros((self.A1, S + 1))
            alpha[attrs], beta[attrs] = rows[:, :S], rows[:, S:]
        else:
            state = self.state
            if self.averaged:  # means of (sigma s_a a_raw) and (s_b b_raw), initial values included
                c = float(self.counter)
                alpha, beta = (state[SUM_A] * self.alpha - self.Ua) / c, (state[SUM_B] * self.beta - self.Ub) / c
            else:
                alpha, beta = state[SIGMA] * state[SCALE_A] * self.alpha, state[SCALE_B] * self.beta
        return "bilinear", {**self._linear_part(None), "alpha": alpha, "beta": beta}

    def decode_parameters(self, rows0, rows1):
        """parameters() at the rows only: in block mode the factors of those attributes'
        slots, not every attribute's (the same values)."""
        if self.mode != "block":
            return super().decode_parameters(rows0, rows1)
        S, slot = self.S, self.blocks.slot[rows1]
        held = slot >= 0
        rows = self.ab[slot[held]]
        if self.averaged:
            rows = rows - self.Uab[slot[held]] / float(self.counter)
        alpha, beta = np.zeros((len(rows1), S)), np.zeros((len(rows1), S + 1))
        alpha[held], beta[held] = rows[:, :S], rows[:, S:]
        return "bilinear", {**self._linear_part(rows0), "alpha": alpha, "beta": beta}

    def _linear_part(self, rows0):
        """W0 (at the attributes rows0; None: all of them), trans and end, averaged
        when averaging: W - U / counter."""
        W0 = self.W0 if rows0 is None else self.W0[rows0]
        if not self.averaged:
            return {"W0": W0, "trans": self.trans, "end": self.end}
        c, U0 = float(self.counter), self.U0 if rows0 is None else self.U0[rows0]
        return {"W0": W0 - U0 / c, "trans": self.trans - self.Utrans / c, "end": self.end - self.Uend / c}

    def final_parameters(self):
        """parameters() once training is over: in block mode the factor rows, averaged,
        at the model's precision and in attribute order without a second float64 copy
        of them (slots_to_attributes); alpha and beta are views of one array."""
        if self.mode != "block":
            return self.parameters()
        S, ab, U = self.S, self.ab, self.Uab if self.averaged else None
        attrs = np.asarray(self.blocks.attributes(), dtype=np.int32)
        self.kernel = self.ab = self.alpha = self.beta = self.Uab = self.Ua = self.Ub = None
        dtype = np.float32 if self.settings.precision == "float32" else np.float64
        ab = slots_to_attributes(ab, U, self.counter, attrs, self.A1, dtype)
        alpha, beta = ab[:, :S], ab[:, S:]
        return "bilinear", {**self._linear_part(None), "alpha": alpha, "beta": beta}


def _unit(x):
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-300)


def _angle(x, y):
    """Angles in degrees between the rows of the unit vectors x and y, up to sign."""
    return np.degrees(np.arccos(np.minimum(np.abs(np.einsum("ij,ij->i", x, y)), 1.0)))
