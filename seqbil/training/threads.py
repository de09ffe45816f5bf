"""`--jobs N` for an online learner: iterative parameter mixing (McDonald, Hall & Mann
2010, "Distributed training strategies for the structured perceptron", Algorithm 4)
on N threads of this process.

Each epoch the trainer's order of the sentences is cut into N consecutive parts; N
copies of the learner, set to the same parameters, each make a pass over their part at
once (the kernels run without the GIL), and their parameters are mixed into the run's
learner (the first copy), and the mix goes back to every copy. The mix is that of
the shards of a Dask cluster (seqbil/dask/ipm_mix.py), made in place: the rows of the
attributes at the positions the kernels flagged, weighted uniformly or by the copies'
mistakes (`mixing`). A learner whose mix is not that one mixes those parameters
itself (OnlineLearner.own_mix, mix_own): bol refreshes the rank-1 factors of a mixed
block, arow combines means and variances as Gaussians, rpa mixes the weight rows its
%emb templates read. The rows are mixed on the N threads, a part each. Every online
learner trains so (OnlineLearner.supports_threads: sp, pa, bol, arow, rpa, bcd); a
given N gives the same model every time; N = 1 is the one-thread run exactly.

The memory is N copies of the learner's parameters."""
import threading
import time

import numpy as np

from ..dask.ipm_mix import apply, full_state, ids_at, mix_dense
from ..errors import ConfigError
from .._kernels.mix import mix_rows
from ..learners.base import CHUNK


class ThreadMixer:
    """The passes of `learner` on `n` threads: the learner and n - 1 copies of it."""

    def __init__(self, run, learner, n):
        settings, data = run.settings, run.data
        why = ("multi-task training" if run.tasks else "partial labels" if data.known is not None else
               None if learner.mixing() is not None else f"learner {learner.name} with these settings")
        if why is not None:
            raise ConfigError(settings.origin("jobs"), 0, f"--jobs {settings.jobs}: {why} trains on one thread "
                              "(--jobs 1)")
        self.run, self.learner, self.n = run, learner, n
        self.by_mistakes = settings.mixing == "mistakes"
        # the copies start from the learner's parameters: its non-zero entries, or, where
        # few are zero (OnlineLearner.dense_rows), its arrays whole
        state = full_state(learner) if n > 1 and not learner.dense_rows else None
        self.copies = [learner]  # (the learner trains on the first part itself)
        for _ in range(n - 1):
            copy = learner.twin()
            if state is not None:
                apply(copy, state)
            else:
                for name in learner.mixing()[0]:
                    copy.set_rows(name, None, learner.get_rows(name, None))
            self.copies.append(copy)
        del state
        data.pos_diff = np.zeros(data.n_positions, np.uint8)  # the kernels flag where they update

    def epoch(self, k, rng, bar):
        """One pass: the order drawn from rng (as one thread draws it), a part per
        copy, trained at once, then mixed. Returns (mistakes, the record's stats: each
        copy's mistakes, the seconds of the passes and of the mix)."""
        data = self.run.data
        order = rng.permutation(data.n_sequences).astype(np.int64)
        parts = np.array_split(order, self.n)
        data.pos_diff[:] = 0
        mistakes = [0] * self.n

        def work(i):
            copy = self.copies[i]
            if i:  # (the trainer starts and ends the learner's own pass)
                copy.start_pass(k)
            for c in range(0, len(parts[i]), CHUNK):
                chunk = parts[i][c:c + CHUNK]
                mistakes[i] += copy.train_chunk(data, chunk)
                bar.update(len(chunk))
            if i:
                copy.end_pass(k)

        start = time.perf_counter()
        at_once(work, self.n)
        passing = time.perf_counter()
        total = sum(mistakes)
        mu = [m / total for m in mistakes] if self.by_mistakes and total else [1.0 / self.n] * self.n
        touched = (ids_at(data.u_ptr, data.u_ids, data.pos_diff, self.learner.A0),
                   ids_at(data.b_pointers(), data.b_ids, data.pos_diff, self.learner.A1))
        self._mix(touched, mu)
        return total, {"thread_mistakes": mistakes, "pass_s": passing - start, "mix_s": time.perf_counter() - passing}

    def _mix(self, touched, mu):
        """The copies' parameters mixed, and the mix written into every copy. A row no
        pass touched is the epoch's start in every copy; a touched one is mixed whole:
        the sum of mu_i times copy i's row (an entry a copy left as it was is the
        start's, so this is the mix of the changed entries that shards send), in the
        copies' own memory where the learner keeps its rows in a pool (mix.pyx), else
        through get_rows and set_rows."""
        names, scalars = self.learner.mixing()
        # (mix_dense reads the dense parameters and the scalars of each copy's message)
        mixed = mix_dense(self.learner, [{**{name: copy.get_rows(name, None) for name, order in names.items()
                                             if order is None}, **{name: getattr(copy, name) for name in scalars}}
                                         for copy in self.copies], mu)
        for name, order in names.items():
            if order is None or name in self.learner.own_mix:
                continue
            at = touched[order]
            for copy in self.copies:
                copy.hold_rows(order, at)
            pools = [copy.row_pool(name) for copy in self.copies]
            if all(pool is not None for pool in pools):
                arrays, slots = [p for p, _ in pools], [slot for _, slot in pools]
                self._parallel(lambda part: mix_rows(arrays, slots, part, np.asarray(mu, dtype=np.float64)), at)
                continue
            acc = None
            for m, copy in zip(mu, self.copies):
                block = copy.get_rows(name, at)
                acc = block * m if acc is None else acc + block * m
            for copy in self.copies:
                copy.set_rows(name, at, acc)
        self.learner.mix_own(self.copies, touched, mu, mixed, self._parallel)
        for holder in self.copies:
            apply(holder, mixed)

    def _parallel(self, fn, rows, least=1 << 14):
        """fn on n consecutive parts of `rows` at once (fn releases the GIL); on this
        thread alone when the rows are few."""
        parts = np.array_split(rows, self.n) if len(rows) >= least else [rows]
        at_once(lambda i: fn(parts[i]), len(parts))


def at_once(work, n):
    """work(0) on this thread and work(1) .. work(n - 1) on threads of their own, at
    once; the first error of any is raised here once all have ended."""
    failed = [None] * n

    def run(i):
        try:
            work(i)
        except BaseException as exc:  # (raised again in the calling thread)
            failed[i] = exc

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(1, n)]
    for t in threads:
        t.start()
    run(0)
    for t in threads:
        t.join()
    for exc in failed:
        if exc is not None:
            raise exc
