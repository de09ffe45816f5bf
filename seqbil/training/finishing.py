"""The end of a run: the model made from the learner, its training record, the
temperature of its probabilities, compaction and pruning."""
import numpy as np

from .. import params
from .._version import __version__
from ..evaluation import headline
from ..features.templates import EMB
from ..calibration import fit_temperature
from ..learners import LEARNERS
from .memory import return_freed_memory
from .reading import file_record


def set_temperature(run, model, echo=print):
    """The temperature of the model's probabilities: given, chosen on held-out data
    (select), 1 for a CRF, or fitted now on the dev set."""
    settings = run.settings
    if settings.temperature > 0:
        model.temperature = settings.temperature
        return
    if LEARNERS[settings.learner].probabilistic:
        model.temperature = 1.0
        return
    if run.dev_data is None and run.tasks and run.devs:
        # one temperature for the model: the least NLL summed over the tasks' dev sets, each
        # scored by its task's head (the tasks without a dev set do not take part)
        temperature, info = fit_temperature([(model.for_task(name), d) for name, (_, _, d) in run.devs.items()])
        model.temperature = temperature
        model.training["temperature"] = {"on": "dev", "value": temperature, "tasks": list(run.devs), **info}
        echo(temperature_line(temperature, info, "the dev sets of " + ", ".join(run.devs)))
        return
    if run.dev_data is None:
        model.temperature = 1.0
        why = "multi-task training without dev sets" if run.tasks else \
            "iterative parameter mixing" if settings.shards else None
        echo("temperature 1: not fitted" + (f" ({why} has no held-out tenth: give a dev set or a temperature)"
                                            if why else ""))
        return
    temperature, info = fit_temperature(model, run.dev_data)
    model.temperature = temperature
    model.training["temperature"] = {"on": "dev", "value": temperature, **info}
    echo(temperature_line(temperature, info, "the dev set"))


def temperature_line(temperature, info, where):
    return (f"temperature {temperature:.4g} fitted on {where}: token negative log-likelihood {info['nll_at_1']:.4f} "
            f"at 1, {info['nll']:.4f} fitted ({info['tokens']} tokens)" +
            ("; at the edge of the search: the scores are far from probabilities" if info["at_bound"] else ""))


def finish(run, learner, history, base=None, init_model=None, template_file=None, config=None, echo=print):
    """The trained model of a run: the learner's parameters, the training record,
    compacted (and pruned) as the settings say. The encoded corpus and the learner's
    working state are released first, so that making the model does not raise the
    peak memory of the run."""
    settings, model, vectors = run.settings, run.model, run.vectors
    run.data = None
    learner.finish()
    return_freed_memory()
    model.kind, model.weights = learner.final_parameters()
    if run.emb.learning:
        final = learner.embedding()
        vectors.tables[EMB].matrix = final.astype(np.float32)
        moved = np.linalg.norm(final - run.emb.start, axis=1)
        counts = run.emb.counts
        emb_moved = {"mean_moved": float(moved[counts > 0].mean()) if (counts > 0).any() else 0.0}
        for name, rows in (("frequent", counts >= 10), ("rare", (counts > 0) & (counts < 2))):
            emb_moved[f"{name}_words"] = int(rows.sum())
            emb_moved[f"{name}_mean_moved"] = float(moved[rows].mean()) if rows.any() else 0.0
    model.training = _training_record(settings, learner, history, run.train_record, run.dev_sentences,
                                      run.dev_name, template_file, config)
    if run.tasks:
        model.training["train"] = None
        model.training["tasks"] = {name: _task_record(name, run.train_record["tasks"][name], run.devs.get(name),
                                                      history) for name in run.names}
    if run.emb.learning:  # how far the learner moved the %emb vectors of the training words
        model.training["moved"] = emb_moved
    if base is not None:
        model.training["init_model"] = {"path": str(init_model), "sha256": file_record(init_model, [])["sha256"],
                                        "labels": len(base.labels), "training": base.training}
    return model


def compact(run, model, echo=print):
    """Compaction and pruning as the settings say (Model.compact), and the records of
    the run's dictionaries, vectors and structure. Called once the learner is gone."""
    settings, vectors = run.settings, run.vectors
    kept = model.compact(settings.prune)
    echo(_compaction_line(kept, settings))
    model.training["compaction"] = {"prune": settings.prune, "precision": settings.precision,
                                    **{f"order{o}": kept[o] for o in (0, 1)}}
    if run.records.dictionaries:
        model.training["dictionaries"] = run.records.dictionaries
    if run.structure is not None:
        model.training["structure"] = run.records.structure
    if vectors is not None:
        model.training["vectors"] = {name: {**run.records.vectors[name], "rows_kept": len(t)}
                                     for name, t in sorted(vectors.tables.items())}
        if "moved" in model.training:
            model.training["vectors"][EMB]["moved"] = model.training.pop("moved")
    return model


def _compaction_line(kept, settings):
    """What the model keeps of the trained weights (Model.compact)."""
    attrs = [sum(kept[o]["attributes"][i] for o in (0, 1)) for i in (0, 1)]
    weights = [sum(kept[o]["weights"][i] for o in (0, 1)) for i in (0, 1)]
    return (f"model: {attrs[1]:,} of {attrs[0]:,} attributes hold weights; {weights[1]:,} non-zero weights"
            + (f" of {weights[0]:,} after pruning |w| <= {settings.prune:g}" if settings.prune else "")
            + f", stored as {settings.precision}")


def _training_record(settings, learner, history, train_record, dev_sentences, dev_name, template_file, config):
    """What inspect shows: every parameter, the data with checksums, the passes run
    and the best dev score. No dates or timings: the same run gives the same bytes."""
    dev_scores = [(r["pass"], *headline(r["dev"])) for r in history if "dev" in r]
    table = params.by_name()  # what seqbil aso reads (the [structure] section) is not the run's
    best = max(dev_scores, key=lambda t: t[2]) if dev_scores else None
    return {
        "learner": settings.learner,
        "params": {k: v for k, v in settings.as_dict().items() if k != "templates" and table[k].section != "structure"},
        "config": config and str(config), "template_file": template_file and str(template_file),
        "train": train_record,
        "dev": file_record(dev_name, dev_sentences) if dev_sentences else None,
        "passes_run": len(history), "passes_planned": learner.passes(),
        "best_dev": {"pass": best[0], "metric": best[1], "value": best[2]} if best else None,
        "last_dev": {"pass": dev_scores[-1][0], "metric": dev_scores[-1][1], "value": dev_scores[-1][2]}
        if dev_scores else None,
        "seqbil_version": __version__,
    }


def _task_record(name, train, dev, history):
    """What inspect shows of one task of a multi-task run."""
    out = {"train": train, "dev": file_record(dev[1], dev[0]) if dev else None}
    scores = [(r["pass"], *headline(r["dev_tasks"][name])) for r in history if name in r.get("dev_tasks", {})]
    if scores:
        best = max(scores, key=lambda t: t[2])
        out["best_dev"] = {"pass": best[0], "metric": best[1], "value": best[2]}
        out["last_dev"] = {"pass": scores[-1][0], "metric": scores[-1][1], "value": scores[-1][2]}
    return out
