"""What is chosen on held-out data before a run: the learner's grid (a CRF's
coefficients) and the temperature of an online learner's probabilities."""
import os
import time

import numpy as np

from ..errors import InputError
from ..evaluation import headline, score
from ..formats import make_format
from ..calibration import fit_temperature, token_nll
from ..learners import LEARNERS
from ..model import Model
from .finishing import temperature_line
from .memory import return_freed_memory
from .passes import run_passes
from .prepare import make_learner, prepare
from .reading import corpus_of, read_sentences
from .scoring import gold_labels, predict_labels, segment_chars


# a training corpus of at most this many tokens chooses by 10-fold cross-validation:
# a tenth of it is too few sentences to tell settings apart (CRF++'s examples hold
# 2,000 to 9,000 tokens), and ten runs on it cost little
CV_TOKENS = 25_000


CV_FOLDS = 10


def select(settings, sources, train_data, dev, template_file, config, init_model, echo, show_progress=False):
    """What is chosen on held-out data before the run: the learner's grid (a CRF's
    coefficients when none is given: Learner.grid) and, when the temperature is to
    be fitted and there is no dev set, the temperature of an online learner's
    probabilities.

    On the dev set when there is one: the grid then runs on the whole training
    corpus and its best run is the model, returned as (run, learner, history, rng).
    Without one, on the last tenth of the training sentences (a small corpus, up to
    CV_TOKENS tokens: each tenth in turn, 10-fold cross-validation, scored over all
    the held-out predictions together): the models trained on the rest fix the
    settings, which the run on all the data then keeps. A setting wins by its score
    (the dev metric), then by the held-out log-likelihood for a CRF, then by coming
    first (the stronger regularisation). Returns (settings, sources, that best run
    or None, the record of the choice)."""
    learner_class = LEARNERS[settings["learner"]]
    grid = learner_class.grid(settings, sources)
    fit = settings["temperature"] == 0 and not learner_class.probabilistic
    if settings["tasks"] or not grid and (not fit or dev is not None or settings["shards"]):
        return settings, sources, None, {}  # (a multi-task run's learner cannot be a CRF)
    fmt = make_format(settings["format"], None, settings["label_column"])
    varies = [key for key in (grid[0] if grid else ()) if any(point[key] != grid[0][key] for point in grid)]
    what = " and ".join([*varies, *(["the temperature"] if fit else [])])
    if dev is not None:
        where, folds = "dev", [(train_data, dev)]
        echo(f"choosing {what} on the dev set from {len(grid)} settings")
    else:
        # a file is read into a Corpus (its strings once per distinct value), the sentences
        # held out from it read again; sentences given in memory are sliced as they are
        enc = settings["encoding"]
        if isinstance(train_data, list):
            sentences, whole = read_sentences(fmt, train_data, enc)[0], None
            n, tokens = len(sentences), sum(map(len, sentences))
        else:
            sentences, whole = None, corpus_of(fmt, train_data, enc)[0]
            n, tokens = len(whole), whole.n_tokens
        if n < 10:
            echo(f"{n} training sentences: too few to hold out a tenth; " +
                 ("temperature 1" if fit else f"{' and '.join(varies)} at the defaults"))
            return settings, sources, None, {}
        if sentences is None and (tokens <= CV_TOKENS or whole.items is not None):
            sentences, whole = read_sentences(fmt, train_data, enc)[0], None
        if tokens <= CV_TOKENS:
            cuts = np.linspace(0, n, CV_FOLDS + 1).astype(int)
            where = f"{CV_FOLDS}-fold cross-validation"
            folds = [(sentences[:a] + sentences[b:], sentences[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
            echo(f"choosing {what} by {where} on the {n} training sentences ({tokens} tokens)" +
                 (f" from {len(grid)} settings" if grid else ""))
        else:
            k = n // 10
            where = "held-out"
            # (a file's held-out tenth stays a Corpus too: as Sentence objects it would be some
            # hundred bytes a token through the whole choice)
            folds = [(sentences[:-k], sentences[-k:])] if sentences is not None else \
                [(whole.head(n - k), whole.part(n - k, n))]
            echo(f"choosing {what} on the last tenth of the training sentences ({k} of {n}), training on the "
                 f"other {n - k}" + (f", from {len(grid)} settings" if grid else ""))
        del sentences, whole
    runs, bases = [], []
    for part, held in folds:
        bases.append(Model.load(init_model) if init_model is not None else None)
        try:
            runs.append(prepare(dict(settings), sources, part, held, template_file, config, bases[-1],
                                echo if where == "dev" else lambda line: None))
        except InputError as exc:  # a part held out of a file is that file for the user
            if exc.path != "<memory>" or not isinstance(train_data, (str, os.PathLike)):
                raise
            raise type(exc)(str(train_data), exc.line, exc.message) from None
    del folds, part, held  # (encoded now: a Corpus given is not needed again)
    planned = runs[0].settings  # (prepare may settle the learner: bol with nothing to factor is sp)
    tried, best, worse, learners = [], None, 0, [None] * len(runs)
    for point in grid or [{}]:
        start, passes, gold, pred, nll = time.perf_counter(), [], [], [], 0.0
        for f, run in enumerate(runs):
            run.settings = {**planned, **point}
            previous = learners[f]
            learner = learners[f] = make_learner(run, bases[f] if previous is None else None, init_model,
                                                 lambda line: None)
            if previous is not None and learner.batch:  # a path: each setting starts where the last ended
                learner.warm_start(previous.parameters()[1])
            if previous is not None and not (best and previous in best[2]):
                previous.finish()
            rng = np.random.default_rng(settings["seed"])
            history = run_passes(run, learner, rng, [], echo=lambda line: None, show_progress=show_progress,
                                 score_dev=False)
            if run.interrupted:  # what there is: this held-out run's model, at temperature 1
                echo(f"interrupted while choosing {what}: the model is that of the run on part of the training "
                     f"corpus ({len(history)} of {learner.passes()} passes)")
                for other in learners:
                    if other is not None and other is not learner:
                        other.finish()
                run.settings = {**run.settings, "temperature": run.settings["temperature"] or 1.0}
                return settings, sources, (run, learner, history, rng), {"interrupted": f"while choosing {what}"}
            passes.append((history, rng))
            if grid:
                run.model.kind, run.model.weights = learner.parameters()
            else:  # the one setting: the learner is done, and only its model's sparse rows are needed
                run.data = None  # (as finish() lets the training corpus go before the weights are made)
                learner.finish()
                return_freed_memory()
                run.model.kind, run.model.weights = learner.final_parameters()
                run.model.store
                run.model._weights = None
            if grid:  # (the temperature alone needs no score: the fit reads the marginals)
                gold += gold_labels(run.dev_sentences)
                pred += predict_labels(run.model, run.dev_data)
            if learner.probabilistic:
                nll += token_nll(run.model, run.dev_data, 1.0)[0]
        if not grid:  # one setting: nothing to compare
            best = (None, point, list(learners), passes)
            break
        result = score(runs[0].model.corpus["metric"], gold, pred, scheme=runs[0].model.corpus.get("scheme", "auto"),
                       chars=[c for run in runs for c in segment_chars(run)] if runs[0].model.corpus["metric"] == "segment"
                       else None)
        name, value = headline(result)
        seconds = time.perf_counter() - start  # (not in the record: the same run gives the same model bytes)
        tried.append({**point, "metric": name, "value": value, "passes": [len(h) for h, _ in passes]})
        if learners[0].probabilistic:
            tried[-1]["nll"] = nll
        if point:
            echo("  " + ", ".join(f"{k} {point[k]:g}" for k in varies) + f": {where} {name} {value:.2f}" +
                 (f", log-likelihood {-nll:.1f}" if learners[0].probabilistic else "") +
                 f" ({', '.join(str(len(h)) for h, _ in passes)} {'iterations' if learners[0].batch else 'passes'}, "
                 f"{seconds:.1f} s)")
        key = (value, -nll)
        if best is None or key > best[0]:
            for old in best[2] if best is not None else ():
                if old not in learners:
                    old.finish()
            best, worse = (key, point, list(learners), passes), 0
        else:
            worse += 1
            if len(varies) == 1 and worse == 2:  # two steps past the best along the path
                break
    for learner in learners:
        if learner not in best[2]:
            learner.finish()
    _, point, learners, passes = best
    settings, sources = {**settings, **point}, {**sources, **{k: "<chosen>" for k in point}}
    record = {"on": where, "tried": tried, "chosen": point} if grid else {}
    if grid:
        echo(f"chose {', '.join(f'{k} = {point[k]:g}' for k in varies)}")
    if where == "dev":
        runs[0].settings = {**planned, **point}
        return settings, sources, (runs[0], learners[0], *passes[0]), record
    if fit:
        learner = previous = best = None  # (the learners' arrays go as soon as their models have weights)
        for f, run in enumerate(runs):
            if grid:  # (without a grid, the runs' models have their weights already)
                learners[f].finish()
                run.model.kind, run.model.weights = learners[f].final_parameters()
                run.model.store  # the sparse rows that decoding reads, made from the dense weights...
                run.model._weights = None  # ...which then go
            learners[f] = None
        temperature, info = fit_temperature([(run.model, run.dev_data) for run in runs])
        settings, sources = {**settings, "temperature": temperature}, {**sources, "temperature": "<chosen>"}
        record["temperature"] = {"on": where, "value": temperature, **info}
        echo(temperature_line(temperature, info, "the held-out tenth" if where == "held-out" else where))
    for learner in learners:
        if learner is not None:
            learner.finish()
    return settings, sources, None, record
