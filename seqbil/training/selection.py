"""What is chosen on held-out data before a run: the learner's grid (a CRF's
coefficients) and the temperature of an online learner's probabilities."""
import dataclasses
import os
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError
from ..evaluation import headline, score
from ..formats import make_format
from ..calibration import fit_temperature, token_nll
from ..learners import LEARNERS, BatchLearner
from ..params import AUTO
from ..model import Model
from ..storage import dense_store
from .finishing import temperature_line
from .memory import return_freed_memory
from .candidates import candidate_grid, settled_candidates
from .passes import run_passes
from .prepare import make_learner, prepare
from .reading import corpus_of, read_sentences
from .settings import settings_header
from .scoring import gold_labels, ids_headline, segment_chars


# a training corpus of at most this many tokens chooses by 10-fold cross-validation:
# a tenth of it is too few sentences to tell settings apart (CRF++'s examples hold
# 2,000 to 9,000 tokens), and ten runs on it cost little
CV_TOKENS = 25_000
CV_FOLDS = 10
# learner = auto tries a CRF's c2 path on every fold, so it cross-validates only a
# corpus of at most this many tokens, where a tenth is a few sentences (CRF++'s example
# corpora: 965 to 4,772 tokens), and chooses on the held-out tenth above: on the
# development suite's small corpora (7,500 to 23,000 tokens, dev splits), 10 folds cost
# 1.5 to 5 times the tenth and, within the budget, chose the online learner everywhere:
# behind the tenth's choice by 1.85 and 0.23 on two corpora of five, ahead by 0.40 on
# one, level on two
AUTO_CV_TOKENS = 5_000
# learner = auto may always take this many seconds, and on a corpus it cross-validates
# CV_BUDGET_FLOOR. On CRF++'s example corpora (cross-validated) a CRF's c2 path took 2 to
# 20 s where the online learners take a second or two, and the CRF won on three of four;
# on samples of 2,000 and 4,500 tokens of the development suite's corpora the candidate
# chosen so scored above the best of the other kind on the dev split in 46 of 52 samples
# (results/small_corpora). A corpus of many labels (pos-more's, 24 to 62 tags) needs the
# time: given 30 s, the CRF's first point was left unfinished in 15 of those samples;
# given 120 s, the CRF was chosen in all 15 and scored higher on the dev split in 14.
# On a held-out tenth the budget (a multiple of the first candidate's time) bounds it
# alone: on the development suite's six corpora of 7,500 to 23,000 tokens the CRF, given
# a larger floor, never scored above the best online candidate on the tenth (0.2 to 2.0
# below on five, level on one; its path cut short on two), and on the bundled CoNLL-2000
# sample a floor of 10 s took 9 of the run's 9.4 s for a CRF that lost
BUDGET_FLOOR = 1.0
CV_BUDGET_FLOOR = 120.0
# a candidate is stopped as soon as this many passes (or its own number, if fewer) would
# end past the budget at its pace so far: a CRF's first point takes 50 to 130 L-BFGS
# iterations on the development suite, a warm-started one 40 or more, so a CRF that
# cannot reach a useful point in time does not spend the budget trying
FORECAST_PASSES = 40
# the held-out decode after each pass of learner = auto reads a dense copy of the weights
# of the attributes its part has (held_out_rows) up to this size: scanning the weights for
# their non-zero cells took more time than the decode on small corpora (wtb: 0.6 of 1.0 s
# per candidate); above it, the sparse rows cost less memory than the copy
DENSE_DECODE_BYTES = 64 << 20


@dataclass
class Trial:
    """One setting of the grid (`point`) trained on every fold: the learner each fold
    left, each fold's (history, rng), and what ranks it: its score on the held-out
    data, then the held-out log-likelihood (a CRF's), then coming first."""
    point: dict
    learners: list
    passes: list = field(default_factory=list)
    key: tuple = ()
    over_budget: bool = False  # stopped by the deadline of learner = auto: not comparable
    # learner = auto's online learners: each fold's held-out label ids after each pass,
    # from which the trial takes its best number of passes (early stopping)
    curve: list = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)  # its training and scoring time is shown
    # each fold's (kind, Store) once its learner is let go (_freeze)
    frozen: list = field(default_factory=list)


@dataclass
class Choice:
    """What select() plans: the grid, whether the temperature is fitted, which keys of
    the grid vary, and how the choice is named in messages. With learner = auto
    (`auto`), each point names its learner, and `budget` bounds the time the trials
    after the first may take, as a multiple of the first's."""
    grid: list
    fit: bool
    varies: list
    what: str
    auto: bool = False
    budget: float | None = None


def select(settings, train_data, dev, template_file, config, init_model, echo, show_progress=False):
    """What is chosen on held-out data before the run: the learner's grid (a CRF's
    coefficients when none is given: Learner.grid), the learner itself (learner =
    auto: each candidate with its grid, within the time budget) and, when the
    temperature is to be fitted and there is no dev set, the temperature of an
    online learner's probabilities.

    On the dev set when there is one: the grid then runs on the whole training
    corpus and its best run is the model, returned as (run, learner, history, rng).
    Without one, on the last tenth of the training sentences (a small corpus, up to
    CV_TOKENS tokens, or AUTO_CV_TOKENS with learner = auto: each tenth in turn,
    10-fold cross-validation, scored over all the held-out predictions together): the models trained on the rest fix the
    settings, which the run on all the data then keeps. A setting wins by its score
    (the dev metric), then by the held-out log-likelihood for a CRF, then by coming
    first (the stronger regularisation; with learner = auto, the earlier
    candidate). Returns (settings, that best run or None, the record of the
    choice)."""
    choice = plan(settings, dev)
    if choice is None:
        return settings, None, {}
    fmt = make_format(settings.format, None, settings.label_column)
    folds = _folds(choice, settings, fmt, train_data, dev, echo)
    if folds is None:
        return (settings.but(choice.grid[0], "<chosen>") if choice.auto else settings), None, {}
    where, folds = folds
    first = settings.but(choice.grid[0], "<chosen>") if choice.auto else settings
    # (on the dev set the run is the model's: what it read is said, and with learner =
    # auto its settings once they are chosen, not the first candidate's)
    runs, bases = _prepare_folds(folds, echo if where == "dev" else lambda line: None, not choice.auto, first,
                                 train_data, template_file, config, init_model)
    del folds  # (encoded now: a Corpus given is not needed again)
    planned = runs[0].settings  # (prepare may settle the learner: bol with nothing to factor is sp)
    if choice.auto:
        choice.grid = settled_candidates(choice.grid, planned, runs[0].templates, echo)
    best, tried, learners, stopped = _try_grid(choice, runs, bases, planned, where, settings.seed, init_model,
                                               show_progress, echo)
    if stopped is not None:  # interrupted: what there is, this held-out run's model
        _finish_all(other for other in learners if other is not stopped[1])
        return _interrupted(stopped, choice, settings, echo)
    _finish_all(learner for learner in learners if learner not in best.learners)
    point = best.point
    ran = len(best.passes[0][0]) if best.passes else 0
    # (_score_trial gives a point epochs only where the curve stopped it early)
    if best.curve and point.get("epochs", ran) < ran and (where == "dev" or choice.fit):
        # an online learner best after fewer passes than it ran: the model it makes (on the
        # dev set) or the temperature its folds fit is that of the run of those passes
        _finish_all(best.learners)
        best = Trial(point, [None] * len(runs))
        stopped = _train_folds(best, runs, bases, planned, None, settings.seed, init_model, True, show_progress)
        if stopped is not None:
            return _interrupted(stopped, choice, settings, echo)
    settings = settings.but(point, "<chosen>")
    record = {"on": where, "tried": tried, "chosen": point} if choice.grid else {}
    if choice.grid:
        echo(f"chose {_point_text(point, choice, ' = ', ', ')}")
    if where == "dev":
        runs[0].settings = planned.but(point, "<chosen>")
        if choice.auto:
            echo(settings_header(runs[0].settings))
        return settings, (runs[0], best.learners[0], *best.passes[0]), record
    if choice.fit and not LEARNERS[settings.learner].probabilistic:
        temperature = _fit_temperature(runs, best, bool(choice.grid), where, record, echo)
        settings = settings.but({"temperature": temperature}, "<chosen>")
    _finish_all(best.learners)
    return settings, None, record


def _interrupted(stopped, choice, settings, echo):
    """What select() returns when a Ctrl-C stopped a held-out run (run, learner,
    history, rng): that run's model, at temperature 1 unless one was given."""
    run, learner, history, _ = stopped
    echo(f"interrupted while choosing {choice.what}: the model is that of the run on part of the training "
         f"corpus ({len(history)} of {learner.passes()} passes)")
    run.settings = run.settings.but({"temperature": run.settings.temperature or 1.0})
    return settings, stopped, {"interrupted": f"while choosing {choice.what}"}


def _try_grid(choice, runs, bases, planned, where, seed, init_model, show_progress, echo):
    """Each point of the grid trained on the folds and scored, along each learner's
    path until two points past its best, and (learner = auto) until the budget is
    spent. Returns (the best Trial, the record's rows, the learners of the last
    trial, the stopped run of a Ctrl-C or None)."""
    tried, best, learners, path, deadline, deadline_base = [], None, [None] * len(runs), None, None, 0.0
    quickest = np.inf  # the shortest training of a trial so far
    floor = CV_BUDGET_FLOOR if len(runs) > 1 else BUDGET_FLOOR
    for i, point in enumerate(choice.grid or [{}]):
        if path is not None and point.get("learner") == path[0] and path[2] >= 2:
            continue  # two steps past the best along this learner's path
        if best is not None and where != "dev" and (best.learners is not learners or
                                                    point.get("learner") != best.point.get("learner")):
            _freeze(best, runs)  # (nothing continues it: the next point starts anew)
        if deadline is not None and point.get("learner") != (path or [None])[0] and \
                issubclass(LEARNERS[point["learner"]], BatchLearner) and deadline - time.perf_counter() < quickest:
            # a CRF's first point is 40 or more iterations, each a forward-backward pass over
            # every sentence: more than the epochs of an online learner, one Viterbi pass each
            echo(f"  {_point_text(point, choice)}: not started, over the budget: the "
                 f"{max(deadline - time.perf_counter(), 0):.1f} s left are less than the quickest candidate's "
                 f"{quickest:.1f} s; the points after it are not tried")
            tried.append({**point, "stopped": "over the budget"})
            break
        trial, learners = Trial(point, learners), None  # (the trial holds the learners it may continue)
        stopped = _train_folds(trial, runs, bases, planned, best, seed, init_model, bool(choice.grid), show_progress,
                               deadline, early=choice.auto)
        if stopped is not None:
            return best, tried, trial.learners, stopped
        learners, quickest = trial.learners, min(quickest, time.perf_counter() - trial.started)
        if not choice.grid:  # one setting: nothing to compare
            return trial, tried, learners, None
        if trial.over_budget:
            echo(f"  {_point_text(point, choice)}: stopped, over the budget: at its pace it would not finish within "
                 f"the greater of {floor:g} s and {choice.budget:g} x the first candidate's "
                 f"{deadline_base:.1f} s; the points after it are not tried")
            tried.append({**point, "stopped": "over the budget"})
            _finish_all(new for new in learners if new is not None and not (best and new in best.learners))
            learners = best.learners
            break
        if choice.auto and i == 0:
            deadline_base = time.perf_counter() - trial.started
            deadline = trial.started + max(choice.budget * deadline_base, floor)
        tried.append(_score_trial(trial, runs, choice, where, echo))
        if path is None or point.get("learner") != path[0]:
            path = [point.get("learner"), None, 0]  # (learner, its best key, points past it)
        if path[1] is None or trial.key > path[1]:
            path[1], path[2] = trial.key, 0
        else:
            path[2] += 1 if len(choice.varies) == 1 or choice.auto else 0
        if best is None or trial.key > best.key:
            _finish_all(old for old in (best.learners if best is not None else ()) if old not in learners)
            best = trial
        elif not choice.auto and path[2] >= 2:
            break
    return best, tried, learners, None


def _point_text(point, choice, sep=" ", join=" "):
    """A grid point for people: "c2 = 0.1"; with learner = auto, "crf c2 = 0.1"."""
    shown = join.join(f"{k}{sep}{point[k]:g}" for k in choice.varies if k in point and k != "learner")
    return f"{point['learner']} {shown}".strip() if choice.auto else shown


def plan(settings, dev):
    """The Choice to make, or None when there is none (a multi-task run's learner
    cannot be a CRF; a temperature given, or fitted on the dev set after the run)."""
    if settings.learner == AUTO:
        grid = candidate_grid(settings)
        # what varies along a candidate's own path (a CRF's c2), in the order of its points
        varies = [k for k in dict.fromkeys(k for point in grid for k in point if k != "learner")
                  if any(len({repr(p.get(k)) for p in grid if p["learner"] == name}) > 1 for name in settings.candidates)]
        fit = settings.temperature == 0 and dev is None
        return Choice(grid, fit, ["learner", *varies], "the learner" + (" and the temperature" if fit else ""),
                      auto=True, budget=settings.budget)
    learner_class = LEARNERS[settings.learner]
    grid = learner_class.grid(settings)
    fit = settings.temperature == 0 and not learner_class.probabilistic
    if settings.tasks or not grid and (not fit or dev is not None or settings.shards):
        return None
    varies = [key for key in (grid[0] if grid else ()) if any(point[key] != grid[0][key] for point in grid)]
    return Choice(grid, fit, varies, " and ".join([*varies, *(["the temperature"] if fit else [])]))


def _folds(choice, settings, fmt, train_data, dev, echo):
    """(where, [(training part, held-out part)]): the dev set; or, without one, the
    last tenth of the training sentences, or each tenth in turn for a small corpus.
    None when there are too few sentences to hold out a tenth."""
    grid, what = choice.grid, choice.what
    if dev is not None:
        echo(f"choosing {what} on the dev set from {len(grid)} settings")
        return "dev", [(train_data, dev)]
    # a file is read into a Corpus (its strings once per distinct value), the sentences
    # held out from it read again; sentences given in memory are sliced as they are
    enc = settings.encoding
    if isinstance(train_data, list):
        sentences, whole = read_sentences(fmt, train_data, enc)[0], None
        n, tokens = len(sentences), sum(map(len, sentences))
    else:
        sentences, whole = None, corpus_of(fmt, train_data, enc)[0]
        n, tokens = len(whole), whole.n_tokens
    if n < 10:
        echo(f"{n} training sentences: too few to hold out a tenth; " +
             (f"learner {choice.grid[0]['learner']}, the first candidate" + (", temperature 1" if choice.fit else "")
              if choice.auto else "temperature 1" if choice.fit else f"{' and '.join(choice.varies)} at the defaults"))
        return None
    small = tokens <= (AUTO_CV_TOKENS if choice.auto else CV_TOKENS)
    if sentences is None and (small or whole.items is not None):
        sentences, whole = read_sentences(fmt, train_data, enc)[0], None
    if small:
        cuts = np.linspace(0, n, CV_FOLDS + 1).astype(int)
        where = f"{CV_FOLDS}-fold cross-validation"
        echo(f"choosing {what} by {where} on the {n} training sentences ({tokens} tokens)" +
             (f" from {len(grid)} settings" if grid else ""))
        return where, [(sentences[:a] + sentences[b:], sentences[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    k = n // 10
    echo(f"choosing {what} on the last tenth of the training sentences ({k} of {n}), training on the "
         f"other {n - k}" + (f", from {len(grid)} settings" if grid else ""))
    # (a file's held-out tenth stays a Corpus too: as Sentence objects it would be some
    # hundred bytes a token through the whole choice)
    return "held-out", [(sentences[:-k], sentences[-k:])] if sentences is not None else \
        [(whole.head(n - k), whole.part(n - k, n))]


def _prepare_folds(folds, echo, header, settings, train_data, template_file, config, init_model):
    """(runs, bases): each fold read and encoded (what prepare says goes to echo, the
    learner's settings with header), and the model it continues."""
    runs, bases = [], []
    for part, held in folds:
        bases.append(Model.load(init_model) if init_model is not None else None)
        try:
            runs.append(prepare(settings, part, held, template_file, config, bases[-1], echo, header=header))
        except InputError as exc:  # a part held out of a file is that file for the user
            if exc.path != "<memory>" or not isinstance(train_data, (str, os.PathLike)):
                raise
            raise type(exc)(str(train_data), exc.line, exc.message) from None
    return runs, bases


def _train_folds(trial, runs, bases, planned, best, seed, init_model, scored, show_progress, deadline=None,
                 early=False):
    """The trial's setting trained on every fold, each fold's learner starting where
    the fold's previous one ended (a batch learner of the same kind: a path); the
    trial keeps the learners and passes. Returns None, or (run, learner, history,
    rng) of the fold a Ctrl-C stopped. Unless the trial is to be scored against
    others, each fold's model keeps only the sparse rows of its final weights. Past
    the deadline (learner = auto's budget), the trial stops, over_budget. With early,
    an online learner's held-out labels after each pass go to trial.curve."""
    learners = trial.learners = list(trial.learners)
    for f, run in enumerate(runs):
        run.settings = planned.but(trial.point, "<chosen>")
        previous, base = learners[f], bases[f] if learners[f] is None else None  # (the first setting continues it)
        # a batch learner's path: each setting starts where the last ended; a learner
        # nothing continues goes before the next is made (the peak memory of the choice)
        if previous is not None and not (issubclass(LEARNERS[run.settings.learner], BatchLearner) and
                                         type(previous) is LEARNERS[run.settings.learner]):
            _finish_all([previous] if not (best and previous in best.learners) else [])
            previous = learners[f] = None
            return_freed_memory()
        learner = learners[f] = make_learner(run, base, init_model, lambda line: None)
        if previous is not None:
            learner.warm_start(previous.parameters()[1])
            if not (best and previous in best.learners):
                previous.finish()
        rng = np.random.default_rng(seed)
        # (each fold left gets an even share of the time left, so that the forecast of
        # the first folds keeps the time the later ones need)
        share = None if deadline is None else time.perf_counter() + (deadline - time.perf_counter()) / (len(runs) - f)
        ids = [] if early and not isinstance(learner, BatchLearner) and not run.emb.learning else None
        history = run_passes(run, learner, rng, [], echo=lambda line: None, show_progress=show_progress,
                             score_dev=False, deadline=share, forecast=min(learner.passes(), FORECAST_PASSES),
                             warmup=0 if isinstance(learner, BatchLearner) else 1,
                             on_pass=None if ids is None else lambda learner, run=run, ids=ids: ids.append(
                                 _held_out_ids(run, learner)))
        if run.interrupted:
            return run, learner, history, rng
        if len(history) < learner.passes() and not (history and history[-1].get("stop")):
            trial.over_budget = True
            return None
        trial.passes.append((history, rng))
        if ids is not None:
            trial.curve.append(ids)
        if scored:
            run.model.kind, run.model.weights = learner.parameters()
        else:  # the one setting: the learner is done, and only its model's sparse rows are needed
            run.data = None  # (as finish() lets the training corpus go before the weights are made)
            learner.finish()
            return_freed_memory()
            run.model.kind, run.model.weights = learner.final_parameters()
            run.model.keep_sparse()
    return None


def _held_out_ids(run, learner):
    """The label ids the learner's current parameters give the run's held-out part:
    decoded from a dense copy of the rows of the attributes that part has
    (held_out_rows), or where that copy would be large, from all the weights' sparse
    rows."""
    if run.held_out_rows is None:
        run.held_out_rows = held_out_rows(run.dev_data)
    rows0, rows1, data = run.held_out_rows
    kind, weights = learner.decode_parameters(rows0, rows1)
    if sum(np.size(w) for w in weights.values() if isinstance(w, np.ndarray)) * 4 <= DENSE_DECODE_BYTES:
        run.model.use_store(kind, dense_store(kind, weights, len(run.model.labels), run.model.precision))
    else:
        weights, data = None, run.dev_data
        run.model.weights = learner.parameters()[1]
    del weights
    ids = run.model.decode(data)
    run.model.weights = {}  # (this pass's copy of the weights goes before the next pass makes one)
    return ids


def held_out_rows(data):
    """(rows0, rows1, data cut): the 0-order and 1st-order attributes an encoded
    held-out part has, and the part with its attribute ids renumbered to their places
    there, so that a decode reads weights made for those rows only (a tenth of a corpus
    has a fraction of its attributes; making all of them after each pass took as long
    as the pass itself on small corpora: wtb, under cProfile, 13 ms a pass against 10 to
    13 ms of training)."""
    rows0, u_ids = np.unique(data.u_ids, return_inverse=True)
    rows1, b_ids = np.unique(data.b_ids, return_inverse=True)
    return rows0, rows1, dataclasses.replace(data, u_ids=u_ids.astype(np.int32).reshape(-1),
                                             b_ids=b_ids.astype(np.int32).reshape(-1))


def _pooled_score(runs, pred, gold=None):
    """(metric name, value) of predicted label sequences over all the folds' held-out
    parts together (whose gold label sequences may be given)."""
    gold = gold if gold is not None else [labels for run in runs
                                          for labels in gold_labels(run.dev_sentences, run.settings.partial)]
    metric = runs[0].model.corpus["metric"]
    result = score(metric, gold, pred, scheme=runs[0].model.corpus.get("scheme", "auto"),
                   chars=[c for run in runs for c in segment_chars(run)] if metric == "segment" else None)
    return headline(result)


def _best_pass(trial, runs):
    """(name, value, its number of passes, the value after each pass) of an online
    learner's trial, at the last pass whose pooled held-out score is within one
    standard error of the best (Breiman et al.'s one-standard-error rule, here for the
    noise of a score on n held-out tokens, sqrt(p (1 - p) / n)): an averaged online
    learner's curve is flat near its top, where the first maximum is noise (on the
    development suite's en-npschat, 5 epochs of 20 by the maximum, 0.26 accuracy
    below the 20 on the dev split), so the passes stop early only where the score
    falls clearly."""
    values = []
    gold = [labels for run in runs for labels in gold_labels(run.dev_sentences, run.settings.partial)]
    fast = ids_headline(runs)
    for k in range(min(len(ids) for ids in trial.curve)):
        if fast is not None:
            name, value = fast([ids[k] for ids in trial.curve])
            values.append(value)
            continue
        pred = []
        for run, ids in zip(runs, trial.curve):
            labels, ptr = run.model.label_array(), run.dev_data.seq_ptr
            pred += [list(labels[ids[k][ptr[j]:ptr[j + 1]]]) for j in range(run.dev_data.n_sequences)]
        name, value = _pooled_score(runs, pred, gold)
        values.append(value)
    n = sum(int(run.dev_data.seq_ptr[-1]) for run in runs)
    p = min(max(max(values) / 100.0, 0.0), 1.0)
    floor = max(values) - 100.0 * np.sqrt(p * (1.0 - p) / max(n, 1))
    k = max(i for i, v in enumerate(values) if v >= floor)
    return name, values[k], k + 1, values


def _score_trial(trial, runs, choice, where, echo):
    """Score the trial over all the folds' held-out predictions together (and their
    log-likelihood, for a CRF); an online learner's trial after each of its passes,
    the best number of passes then joining its point (early stopping). Its row of the
    record."""
    pred, nll, row = [], 0.0, {}
    if trial.curve:
        name, value, best, values = _best_pass(trial, runs)
        row["curve"] = [round(v, 4) for v in values]
        if best < len(values):
            trial.point = {**trial.point, "epochs": best}
    else:
        for run in runs:
            pred += run.model.predict_data(run.dev_data)
            if trial.learners[0].probabilistic:
                nll += token_nll(run.model, run.dev_data, 1.0)[0]
        name, value = _pooled_score(runs, pred)
    seconds = time.perf_counter() - trial.started  # (not in the record: the same run gives the same model bytes)
    row = {**trial.point, "metric": name, "value": value, "passes": [len(h) for h, _ in trial.passes], **row}
    probabilistic, batch = trial.learners[0].probabilistic, isinstance(trial.learners[0], BatchLearner)
    if probabilistic:
        row["nll"] = nll
    echo("  " + _point_text(trial.point, choice, " ", ", ") + f": {where} {name} {value:.2f}" +
         (f", log-likelihood {-nll:.1f}" if probabilistic else "") +
         (f", best after {trial.point.get('epochs', len(row['curve']))} of {len(row['curve'])} epochs"
          if trial.curve else "") +
         f" ({', '.join(str(len(h)) for h, _ in trial.passes)} {'iterations' if batch else 'passes'}, "
         f"{seconds:.1f} s)")
    trial.key = (value, -nll)
    return row


def _fit_temperature(runs, trial, grid, where, record, echo):
    """The temperature fitted to the held-out models' marginals; the learners' arrays
    go as soon as their models have weights."""
    learners = trial.learners
    for f, run in enumerate(runs):
        if trial.frozen:
            run.model.use_store(*trial.frozen[f])
        elif grid:  # (without a grid, the runs' models have their weights already)
            learners[f].finish()
            run.model.kind, run.model.weights = learners[f].final_parameters()
            run.model.keep_sparse()
        learners[f] = None
    temperature, info = fit_temperature([(run.model, run.dev_data) for run in runs])
    record["temperature"] = {"on": where, "value": temperature, **info}
    echo(temperature_line(temperature, info, "the held-out tenth" if where == "held-out" else where))
    return temperature


def _freeze(trial, runs):
    """Let the trial's learners go, keeping each fold's final weights as the sparse rows
    the temperature is fitted to (trial.frozen): on a held-out choice, the best
    candidate so far need not keep its working arrays (a linear learner's 1st-order
    block, its sums for averaging) beside the next candidate's, the peak memory of
    the choice on a large corpus."""
    if trial.frozen:
        return
    for f, learner in enumerate(trial.learners):
        learner.finish()
        model = runs[f].model
        model.kind, model.weights = learner.final_parameters()
        model.keep_sparse()
        trial.frozen.append((model.kind, model.store))
    trial.learners[:] = [None] * len(trial.learners)
    return_freed_memory()


def _finish_all(learners):
    for learner in learners:
        if learner is not None:
            learner.finish()
