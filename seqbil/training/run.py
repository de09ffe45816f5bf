"""A whole training run, its stages in order: the settings checked, what is chosen on
held-out data, the corpus read and encoded, the passes, the model made and saved
(also on Ctrl-C, and in checkpoints to resume from)."""
import json
from contextlib import ExitStack

import numpy as np

from .. import checkpoint, params
from ..errors import ConfigError, InputError, check_output
from ..model import Model
from .finishing import compact, finish, set_temperature
from .memory import large_blocks_from_mmap, return_freed_memory
from .passes import graceful_stop, run_passes
from .prepare import make_learner, prepare
from .alongside import Alongside, fits_alongside, temperature_only
from .selection import select
from .settings import check_run, cluster_arguments, run_inputs, settings_of_base


def train(*args, **kwargs):
    """Train a model (see _train), with Ctrl-C and SIGTERM stopping it after a pass
    from its start to the end of its passes (graceful_stop)."""
    with graceful_stop():
        return _train(*args, **kwargs)


def _train(settings, train_data, model_path=None, *, dev=None, template_file=None, config=None,
           init_model=None, log_path=None, echo=print, show_progress=True, checkpoint_every=0, checkpoint_path=None,
           resume=None, resume_epochs=None, cluster=None):
    """Train a model; save it when model_path is given. Returns (model, history).

    settings: params.Settings (params.resolve), or a mapping of some parameters (the
    others at the table's defaults). train_data and dev: corpus paths, or lists of
    formats.Sentence. checkpoint_every=N
    writes a checkpoint (default: model_path + ".ckpt") after every N passes and when
    the run is interrupted; resume=PATH continues from one, with the settings and
    corpora recorded in it (resume_epochs may extend the run). init_model=PATH
    continues training a saved model on this data: its templates, corpus settings,
    labels and weights are the start; new attributes and labels are added.
    cluster: with settings.shards, where the shards train (the client, scheduler
    and workers arguments of seqbil.dask.cluster.connect).

    The stages, each callable on its own: check_run (settings against each other,
    before any reading), prepare (read and encode), make_learner, run_passes,
    finish (the model and its record), compact."""
    settings = params.Settings.of(settings)
    saved, history = None, []
    if resume is not None:
        saved, state, history, settings = _resumed(resume, resume_epochs)
        train_data, dev, template_file, config = saved["train"], saved["dev"], saved["template"], saved["config"]
        init_model = saved.get("init_model")
        checkpoint_every = checkpoint_every or saved["checkpoint_every"]
        checkpoint_path = checkpoint_path or resume
        echo(f"resuming {resume}: {len(history)} passes done")
    checkpoint_path = checkpoint_path or (f"{model_path}.ckpt" if model_path else None)
    if checkpoint_every and not checkpoint_path:
        raise ConfigError("arguments", 0, "checkpoints need a model path or a checkpoint path")
    _check_outputs(run_inputs(settings, train_data, dev, template_file, config, init_model), resume,
                   model=model_path, log=log_path, checkpoint=checkpoint_path if checkpoint_every else None)
    base, settings = _continued(init_model, settings, template_file, echo)
    settings = check_run(settings, train_data, dev, base, cluster, echo)
    if not isinstance(train_data, (str, type(None))) and not hasattr(train_data, "__fspath__") and \
            checkpoint_every:
        raise ConfigError("arguments", 0, "checkpoints need the training data as a file")
    large_blocks_from_mmap()
    settings, chosen, selection, alongside = _choose(settings, saved, train_data, dev, template_file, config,
                                                    init_model, echo, show_progress)
    cluster_stack = ExitStack()  # on shards: the Dask cluster, from reading the corpus to the last pass
    with cluster_stack:
        if chosen is not None:  # the grid ran on the whole training corpus (or was interrupted): its best run
            run, learner, history, rng = chosen
        else:
            if base is not None and not base.weights:  # the held-out runs took the weights of the model continued
                base = Model.load(init_model)
            client = None
            if settings.shards:
                from ..dask.cluster import connect
                client = cluster_stack.enter_context(connect(**cluster_arguments(settings, cluster),
                                                                    echo=echo if show_progress else None))
            run = prepare(settings, train_data, dev, template_file, config, base, echo, client)
            if run.mixer is not None:
                cluster_stack.callback(run.mixer.close)
            learner = make_learner(run, base, init_model, echo)
            rng = np.random.default_rng(settings.seed)
        settings = run.settings  # (as prepare settled them: bol with nothing to factor is sp)
        record = {"settings": settings.as_dict(), "sources": dict(settings.sources), "train": None if run.tasks else run.train_name,
                  "dev": run.dev_name, "template": template_file and str(template_file),
                  "config": config and str(config),
                  "checkpoint_every": checkpoint_every, "data": run.data_fingerprint(),
                  "init_model": init_model and str(init_model), "selection": selection}
        if saved is not None:
            if saved["data"] != record["data"]:
                raise InputError(run.train_name, 0, f"the training data differs from the data of checkpoint {resume}")
            checkpoint.restore(learner, rng, resume, *state)
            if learner.passes() < len(history):
                raise ConfigError("arguments", 0, f"--epochs {settings.epochs} makes {learner.passes()} passes, "
                                  f"but checkpoint {resume} has done {len(history)}: give more epochs, or none")
        if chosen is None:
            run_passes(run, learner, rng, history, echo=echo, show_progress=show_progress, log_path=log_path,
                       append_log=resume is not None, checkpoint_every=checkpoint_every,
                       checkpoint_path=checkpoint_path, checkpoint_record=record)
        else:  # the run chosen on the dev set: its log and checkpoint as the passes would write them
            if log_path:
                with open(log_path, "w", encoding="utf-8") as log:
                    log.writelines(json.dumps(r) + "\n" for r in history)
            if checkpoint_every and not run.interrupted:  # (a held-out run cannot be resumed as this one)
                checkpoint.save(checkpoint_path, record, learner, rng, history)
                echo(f"checkpoint saved to {checkpoint_path}")
    if alongside is not None:
        selection = alongside.finish(run, echo)
    interrupted = run.interrupted and (selection.get("interrupted")
                                       or f"after {len(history)} of {learner.passes()} passes")
    model = finish(run, learner, history, base, init_model, template_file, config, echo)
    del learner
    return_freed_memory()
    if selection:
        model.training["selection"] = selection
    set_temperature(run, model, echo)
    compact(run, model, echo)
    if interrupted:  # the caller tells an interrupted run from a finished one by this
        model.training["interrupted"] = interrupted
    if model_path is not None:
        model.save(model_path)
        echo(f"model saved to {model_path}")
    return model, history


def _choose(settings, saved, train_data, dev, template_file, config, init_model, echo, show_progress):
    """What is chosen on held-out data before the run (select): (settings, the best
    run when it ran on the dev set, the record of the choice, and an Alongside when
    the temperature alone is fitted beside the run, on a core it leaves free). A run
    resumed from a checkpoint chooses again what its checkpoint has not: the
    temperature its settings lost with more epochs, or one fitted beside the run."""
    selection = (saved or {}).get("selection", {})
    unfitted = not settings.temperature and (saved["settings"].get("temperature") or temperature_only(settings, dev)) \
        if saved is not None else True
    if not unfitted:  # (a checkpoint's choice stands)
        return settings, None, selection, None
    if fits_alongside(settings, dev):
        return settings, None, selection, Alongside(settings, train_data, dev, template_file, config, init_model,
                                                    echo)
    return (*select(settings, train_data, dev, template_file, config, init_model, echo, show_progress), None)


def _continued(init_model, settings, template_file, echo):
    """(the model a run continues, or None; the settings, with the corpus settings and
    templates it was trained with)."""
    if init_model is None:
        return None, settings
    base = Model.load(init_model)
    if base.tasks:
        raise ConfigError("arguments", 0, f"{init_model} is a multi-task model: continuing one is not "
                          f"supported; train it anew with --task")
    return base, settings_of_base(base, settings, template_file, echo, init_model)


def _check_outputs(inputs, resume, **outputs):
    """Refuse, before any work, an output that cannot be written or would overwrite an
    input (the checkpoint resumed is written over by the run's later checkpoints)."""
    for what, path in outputs.items():
        check_output(path, what, inputs + ([resume] if what != "checkpoint" and resume else []))


def _resumed(resume, resume_epochs):
    """What a checkpoint brings to the run that continues it: (its record, the
    learner's state (arrays, scalars, random state), the passes' history, the
    settings, where they came from). More epochs than planned fit the temperature
    again: it was fitted to a model of the planned passes (a chosen c2 stays: the
    optimizer's state is of its objective)."""
    if resume_epochs is not None:  # a checkpoint's settings were checked when it was made; this one not
        resume_epochs = params.check_value(params.by_name()["epochs"], resume_epochs, "arguments")
    saved, scalars, arrays, rng_state, history = checkpoint.load(resume)
    settings = params.Settings.of(saved["settings"], saved.get("sources", {}))
    if resume_epochs and resume_epochs != saved["settings"]["epochs"] and settings.origin("temperature") == "<chosen>":
        settings = settings.but({"temperature": 0.0}, None)
    settings = settings.but({"epochs": resume_epochs or settings.epochs})
    return saved, (arrays, scalars, rng_state), history, settings
