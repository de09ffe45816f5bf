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
from .scoring import dev_score


CHUNK = 256  # sequences per call into compiled code; progress and Ctrl-C are handled between calls


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
               checkpoint_every=0, checkpoint_path=None, checkpoint_record=None, score_dev=True):
    """The learner's passes over run.data, from len(history) on, each appended to
    history as its record: progress bar, the log (JSON lines), dev scores after every
    pass (score_dev), checkpoints, Ctrl-C (the run stops after the pass), and the
    passes on the shards of a Dask cluster (run.mixer, which prepare() made)."""
    settings, data, model, names = run.settings, run.data, run.model, run.names
    tasks = run.tasks
    N = data.n_sequences if data is not None else 0
    log = open(log_path, "a" if append_log else "w", encoding="utf-8") if log_path else None
    try:
        mixer = run.mixer
        if mixer is not None:  # the passes run on the shards, which hold their parts of the corpus
            if learner.mixing() is None:
                raise ConfigError(run.sources.get("shards", "<settings>"), 0, f"learner {learner.name} with these "
                                  "settings does not support iterative parameter mixing (shards)" +
                                  ("; use rank1 = block" if settings.get("rank1") == "global" else ""))
            mixer.start(learner, epochs_run=len(history))
            N = sum(mixer.sizes)
        with graceful_stop() as stop:
            done = bool(history and history[-1].get("stop"))  # a batch learner's optimizer ended the run
            for k in range(len(history), 0 if done else learner.passes()):
                learner.start_pass(k)
                start, mistakes, mixed = time.perf_counter(), 0, None
                if tasks:  # the learners flag the sequences they get wrong, counted per task and chunk
                    data.seq_wrong = np.zeros(N, np.uint8)
                    curve = np.zeros((2, -(-N // CHUNK), len(names)), np.int64)
                with tqdm(total=N, desc=learner.pass_name(k), unit="seq", leave=False,
                          disable=not show_progress, dynamic_ncols=True) as bar:
                    if learner.batch:
                        order, stats = (), learner.train_pass(data, k)
                        bar.update(N)
                    elif mixer is not None:  # the passes run on the shards; this learner takes the mix
                        mistakes, mixed = mixer.epoch(k, bar)
                        order = ()
                    else:
                        order = multitask.epoch_order(rng, data.seq_task, settings["task_order"]) if tasks else \
                            rng.permutation(N).astype(np.int64)
                    for c in range(0, len(order), CHUNK):
                        mistakes += learner.train_chunk(data, order[c:c + CHUNK])
                        if tasks:
                            seen = data.seq_task[order[c:c + CHUNK]]
                            curve[0, c // CHUNK] = np.bincount(seen, minlength=len(names))
                            curve[1, c // CHUNK] = np.bincount(seen, data.seq_wrong[order[c:c + CHUNK]],
                                                               len(names))
                        bar.update(min(CHUNK, N - c))
                        bar.set_postfix(mistakes=mistakes, refresh=False)
                if learner.batch:
                    record = {"pass": k + 1, "name": learner.pass_name(k), **stats,
                              "seconds": time.perf_counter() - start}
                else:
                    record = {"pass": k + 1, "name": learner.pass_name(k), "mistakes": int(mistakes),
                              "error_rate": mistakes / max(N, 1), "seconds": time.perf_counter() - start}
                if tasks:
                    record["task_mistakes"] = dict(zip(names, curve[1].sum(axis=0).tolist()))
                if mixed is not None:
                    record["mixing"] = mixed
                record.update(learner.end_pass(k))
                if learner.batch:  # the fields the learner names (Learner.shown)
                    shown = [fmt.format(record[key]) if isinstance(fmt, str) else fmt(record[key])
                             for key, fmt in learner.shown if record.get(key) is not None]
                    line = f"{record['name']}: " + ", ".join([*shown, f"{record['seconds']:.2f} s"])
                else:
                    line = f"{record['name']}: {mistakes} mistakes ({100 * record['error_rate']:.2f}%), " \
                           f"{record['seconds']:.2f} s" + _diagnostics(record)
                if tasks:
                    line += " (" + ", ".join(f"{t} {n}" for t, n in record["task_mistakes"].items()) + ")"
                if score_dev and run.dev_data is not None:
                    result = score_run(run, learner)
                    record["dev"] = result
                    name, value = headline(result)
                    line += f", dev {name} {value:.2f}"
                elif score_dev and run.devs:
                    model.kind, model.weights = learner.parameters()
                    scores = {task: dev_score(model.for_task(task), d, s) for task, (s, _, d) in run.devs.items()}
                    record["dev_tasks"] = scores
                    line += ", dev " + ", ".join(f"{task} {headline(r)[0]} {headline(r)[1]:.2f}"
                                                 for task, r in scores.items())
                echo(line)
                history.append(record)
                if log:
                    # multi-task runs: each chunk's sequences and mistakes per task, in the
                    # order learned (the mistake curves of Cavallanti et al.), in the log only
                    extra = {"chunk": CHUNK, "task_sequences_per_chunk": curve[0].tolist(),
                             "task_mistakes_per_chunk": curve[1].tolist()} if tasks else {}
                    log.write(json.dumps({**record, **extra}) + "\n")
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
    finally:
        if log:
            log.close()
    return history


def score_run(run, learner):
    """The dev score of the learner's current parameters (the %emb vectors as they
    are now, when the learner adapts them)."""
    model = run.model
    model.kind, model.weights = learner.parameters()
    if run.learning:
        run.vectors.tables[EMB].matrix = learner.embedding().astype(np.float32)
        run.dev_data = model.encode(run.dev_sentences, run.dev_name)
    return dev_score(model, run.dev_data, run.dev_sentences)


def _diagnostics(record):
    shown = [("sigma_mean", "mean sigma_a"), ("sigma_max", "max sigma_a"), ("sigma_1", "sigma_1"),
             ("sigma2_over_sigma1_mean", "mean sigma2/sigma1"), ("angle_mean", "mean angle to exact pair (deg)"),
             ("value_ratio_mean", "u'Theta v / sigma_1"),
             ("dual_objective", "D_t")]
    return "".join(f", {label} {record[key]:.4g}" for key, label in shown if key in record)
