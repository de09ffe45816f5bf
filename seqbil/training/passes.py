"""The pass loop: progress, dev scores, the log, checkpoints, Ctrl-C, and the passes
on the shards of a Dask cluster."""
import json
import signal
import time
from contextlib import contextmanager

import numpy as np
import numpy.random  # noqa: F401  (imported before the corpora are read, as tqdm is: modules
from tqdm import tqdm  # first loaded mid-run would pin the memory that reading frees)

from .. import checkpoint, multitask
from ..errors import ConfigError
from ..evaluation import headline
from ..features.templates import EMB
from ..learners.base import CHUNK, OnlineLearner
from ..tagging import cpus
from ..progress import disabled
from .scoring import dev_score
from .threads import ThreadMixer




_STOPS = []  # the state of the graceful_stop in force, if any


@contextmanager
def graceful_stop():
    """The first SIGINT/SIGTERM asks the run to stop after the current pass (the
    model is then saved); a second one aborts at once. Outside the main thread
    signals cannot be caught, and the run simply goes on. Nested, the outer one's
    state is shared: a Ctrl-C while the corpus is read stops the run after its
    first pass, as one during the passes does."""
    if _STOPS:
        yield _STOPS[-1]
        return
    state = {"stop": False}
    _STOPS.append(state)

    def handler(signum, frame):
        if state["stop"]:
            raise KeyboardInterrupt
        state["stop"] = True

    try:
        old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread
        old = {}
    try:
        yield state
    finally:
        _STOPS.pop()
        for s, h in old.items():
            signal.signal(s, h)


def run_passes(run, learner, rng, history, *, echo=print, show_progress=True, log_path=None, append_log=False,
               checkpoint_every=0, checkpoint_path=None, checkpoint_record=None, score_dev=True, deadline=None,
               forecast=0, warmup=0, on_pass=None):
    """The learner's passes over run.data, from len(history) on, each appended to
    history as its record: progress bar, the log (JSON lines), dev scores after every
    pass (score_dev), checkpoints, Ctrl-C (the run stops after the pass), and the
    passes on the shards of a Dask cluster (run.mixer, which prepare() made). Past
    the deadline (a time.perf_counter() value), no pass is begun, nor when `forecast`
    passes in all, at the mean time of the passes after the first `warmup` ones (an
    online learner's first pass, with the most mistakes, is its slowest), would end
    past it: the history is then shorter than learner.passes() and its last record
    has no "stop". on_pass(learner)
    is called after each pass (what a held-out choice reads of each)."""
    data, mixer, tasks = run.data, run.mixer, run.tasks
    N = data.n_sequences if data is not None else 0
    log = open(log_path, "a" if append_log else "w", encoding="utf-8") if log_path else None
    try:
        if mixer is not None:  # the passes run on the shards, which hold their parts of the corpus
            if learner.mixing() is None:
                raise ConfigError(run.settings.origin("shards"), 0, f"learner {learner.name} with these "
                                  "settings does not support iterative parameter mixing (shards)" +
                                  ("; use rank1 = block" if run.settings.rank1 == "global" else ""))
            mixer.start(learner, epochs_run=len(history))
            N = sum(mixer.sizes)
        threads = None
        if mixer is None and isinstance(learner, OnlineLearner) and learner.supports_threads():
            n = min(int(run.settings.jobs) or cpus(), data.n_sequences)
            threads = ThreadMixer(run, learner, n) if n > 1 else None
        with graceful_stop() as stop:
            done = bool(history and history[-1].get("stop"))  # a batch learner's optimizer ended the run
            first, began = len(history), time.perf_counter()
            for k in range(len(history), 0 if done else learner.passes()):
                learner.start_pass(k)
                start, mixed = time.perf_counter(), None
                with tqdm(total=N, desc=learner.pass_name(k), unit="seq", leave=False,
                          disable=disabled(show_progress), dynamic_ncols=True) as bar:
                    if threads is not None:  # the passes run on threads, each over a part of the order
                        mistakes, parts = threads.epoch(k, rng, bar)
                        stats = {**learner.pass_record(mistakes, N), **parts}
                    elif mixer is None:
                        epoch = Epoch(run, rng, bar)
                        stats = learner.run_pass(data, k, epoch)
                    else:  # the passes run on the shards; this learner takes the mix
                        mistakes, mixed = mixer.epoch(k, bar)
                        stats = learner.pass_record(mistakes, N)
                record = {"pass": k + 1, "name": learner.pass_name(k), **stats, "seconds": time.perf_counter() - start}
                if tasks:
                    record["task_mistakes"] = epoch.task_mistakes()
                if mixed is not None:
                    record["mixing"] = mixed
                record.update(learner.end_pass(k))
                line = learner.pass_line(record)
                if tasks:
                    line += " (" + ", ".join(f"{t} {n}" for t, n in record["task_mistakes"].items()) + ")"
                if score_dev:
                    line += _score_dev(run, learner, record)
                echo(line)
                history.append(record)
                if on_pass is not None:
                    on_pass(learner)
                if log:
                    # multi-task runs: each chunk's sequences and mistakes per task, in the log only
                    log.write(json.dumps({**record, **(epoch.curves() if tasks else {})}) + "\n")
                    log.flush()
                last = k + 1 == learner.passes() or bool(record.get("stop"))
                if checkpoint_every and ((k + 1) % checkpoint_every == 0 or stop["stop"] or last):
                    checkpoint.save(checkpoint_path, checkpoint_record, learner, rng, history)
                    echo(f"checkpoint saved to {checkpoint_path}")
                if stop["stop"]:
                    echo(f"interrupted: stopping after {record['name']}")
                    run.interrupted = True
                    break
                if record.get("stop"):
                    echo(f"{learner.name}: {record['stop']} after {record['name']}")
                    break
                if deadline is not None:
                    now = time.perf_counter()
                    if k + 1 - first == warmup:
                        began = now
                    paced = k + 1 - first - warmup
                    if now > deadline or paced > 0 and \
                            now + max(forecast - k - 1, 0) * (now - began) / paced > deadline:
                        break
    finally:
        if log:
            log.close()
    return history


class Epoch:
    """A pass over run.data as the trainer gives it to the learner (Learner.run_pass):
    the order of the sequences, drawn from rng only when the learner asks for it (a
    batch learner leaves the generator as it was), CHUNK at a time; each chunk learned
    moves the progress bar and, in a multi-task run, is counted by task."""

    def __init__(self, run, rng, bar):
        self.run, self.rng, self.bar = run, rng, bar
        N = run.data.n_sequences
        if run.tasks:  # the learners flag the sequences they get wrong, counted per task and chunk
            run.data.seq_wrong = np.zeros(N, np.uint8)
            self.curve = np.zeros((2, -(-N // CHUNK), len(run.names)), np.int64)
            self.counted = 0  # chunks counted so far

    def chunks(self):
        """The training sequences in a new order (int64 indices), CHUNK at a time."""
        data = self.run.data
        order = multitask.epoch_order(self.rng, data.seq_task, self.run.settings.task_order) if self.run.tasks \
            else self.rng.permutation(data.n_sequences).astype(np.int64)
        return [order[c:c + CHUNK] for c in range(0, len(order), CHUNK)]

    def learned(self, chunk=None, mistakes=None):
        """The sequences `chunk` are learned (None: the whole corpus, at once), with
        `mistakes` in the pass so far."""
        if chunk is None:
            self.bar.update(self.run.data.n_sequences)
            return
        if self.run.tasks:
            data, n = self.run.data, len(self.run.names)
            seen = data.seq_task[chunk]
            self.curve[0, self.counted] = np.bincount(seen, minlength=n)
            self.curve[1, self.counted] = np.bincount(seen, data.seq_wrong[chunk], n)
            self.counted += 1
        self.bar.update(len(chunk))
        self.bar.set_postfix(mistakes=mistakes, refresh=False)

    def task_mistakes(self):
        """The pass's mistakes per task."""
        return dict(zip(self.run.names, self.curve[1].sum(axis=0).tolist()))

    def curves(self):
        """Each chunk's sequences and mistakes per task, in the order learned (the
        mistake curves of Cavallanti et al.)."""
        return {"chunk": CHUNK, "task_sequences_per_chunk": self.curve[0].tolist(),
                "task_mistakes_per_chunk": self.curve[1].tolist()}


def _score_dev(run, learner, record):
    """The learner's current parameters scored on the dev data, or on each task's, into
    the record; what the log line says of it."""
    if run.dev_data is not None:
        result = score_run(run, learner)
        record["dev"] = result
        name, value = headline(result)
        return f", dev {name} {value:.2f}"
    if not run.devs:
        return ""
    model = run.model
    model.kind, model.weights = learner.parameters()
    scores = {task: dev_score(model.for_task(task), d, s) for task, (s, _, d) in run.devs.items()}
    record["dev_tasks"] = scores
    return ", dev " + ", ".join(f"{task} {headline(r)[0]} {headline(r)[1]:.2f}" for task, r in scores.items())


def score_run(run, learner):
    """The dev score of the learner's current parameters (the %emb vectors as they
    are now, when the learner adapts them)."""
    model = run.model
    model.kind, model.weights = learner.parameters()
    if run.emb.learning:
        run.vectors.tables[EMB].matrix = learner.embedding().astype(np.float32)
        run.dev_data = model.encode(run.dev_sentences, run.dev_name)
    return dev_score(model, run.dev_data, run.dev_sentences, run.settings.partial)
