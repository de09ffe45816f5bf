"""The settings of a run checked against each other, the templates and the learner,
before anything is read; and those a continued model brings."""
import os

from .. import params
from ..errors import ConfigError
from ..features.patterns import read_template_file
from ..features.templates import TemplateSet, parse_template
from ..learners import LEARNERS
from ..tagging import cpus


def load_templates(settings, template_file, config):
    if template_file is not None:
        return TemplateSet(read_template_file(template_file))
    if not settings.templates:
        raise ConfigError(config or "<settings>", 0, "no feature templates: give --config or --template")
    return TemplateSet(parse_template(t, str(config), 0) for t in settings.templates)


def check_settings(settings, templates, echo):
    """Settings that cannot do what they say: errors, or warnings naming the key.
    Returns the settings, settled (bol with nothing to factor is sp)."""
    learner = LEARNERS[settings.learner]
    table = params.by_name()
    for name, source in settings.sources.items():
        p = table[name]
        # a config written for several learners is fine when the learner is chosen elsewhere
        # (or by learner = auto, whose choice reads the candidates and the budget)
        # (or a config's learner = auto that could not choose: its own first candidate)
        chosen_elsewhere = source != "arguments" and settings.origin("learner") in ("arguments", "<chosen>") or \
            table[name].learners == (params.AUTO,) and (settings.origin("learner") == "<chosen>" or
                                                        source != "arguments")
        if not p.used_by(learner.name) and not chosen_elsewhere:
            echo(f"warning: [{p.section}] {name} (from {source}) is not used by learner {learner.name} "
                 f"(it is read by {', '.join(p.learners) or 'no learner'})")
    if settings.partial:
        without = ("multi-task training" if settings.tasks else "training on shards" if settings.shards else
                   "learner l2sgd (crf and the online learners learn from partial labels)"
                   if learner.name == "l2sgd" else None)
        if without:
            raise ConfigError(settings.origin("partial"), 0, f"[corpus] partial = true: not with {without}")
    refused = learner.refuse(settings)
    if refused:
        name, why = refused
        raise ConfigError(settings.origin(name), 0, f"[{table[name].section}] {name} = {getattr(settings, name)!r}: "
                          f"{why}")
    if learner.name == "bcd" and settings.origin("epochs") == "arguments":
        echo(f"warning: bcd does not read epochs: its passes are 2 x bcd_rounds x bcd_epochs "
             f"= {2 * settings.bcd_rounds * settings.bcd_epochs}")
    for name in ("coupling", "interaction", "task_order"):
        if settings.given(name) and not settings.tasks:
            echo(f"warning: {name} (from {settings.origin(name)}) is read by multi-task training only (--task)")
    if learner.bilinear and not templates.by_order[1]:
        if learner.name == "bol":
            # bol's 0-order part, transitions and end scores take the perceptron's steps
            # (blocks.pxd: bilinear_mistake and sp.pyx both call chain.pxd: linear_update),
            # so with nothing to factor bol learns sp's weights exactly: train them as sp
            echo("bol: no 1st-order templates with %x macros to factor; training the linear model (as sp)")
            return settings.but({"learner": "sp"}, None)
        what = ("no 1st-order attributes are given (a B:%attr template; seqbil.sklearn.CRF: first_order=KEYS or "
                "'all')" if templates.items else "no B template with %x macros is given")
        raise ConfigError(settings.origin("learner"), 0,
                          f"[train] learner = {learner.name!r} factors the 1st-order features, but {what}; use "
                          f"learner = \"sp\" or add 1st-order templates")
    if learner.bilinear:
        # dictionary and type features as factored 1st-order features made bol unstable on
        # segmentation (F1 falling over the epochs); as 0-order features they are safe
        risky = [t.text for t in templates.by_order[1]
                 if any(f.source or any(name == "chartype" for name, _ in f.chain) for _, f in t.refs)]
        if risky:
            echo(f"warning: learner {learner.name} factors the 1st-order template {risky[0]}"
                 f"{f' (and {len(risky) - 1} more)' if len(risky) > 1 else ''}, which reads a dictionary or "
                 f"character types: such features are more stable as U (0-order) templates")
    return settings


def settings_header(settings):
    """One line per run: the learner and every parameter it reads, with where the
    values that are not defaults came from."""
    learner, table, shown = settings.learner, params.by_name(), []

    def origin(name):
        source = settings.sources.get(name)
        return "" if source is None else " (argument)" if source == "arguments" else \
            " (chosen on held-out data)" if source == "<chosen>" else " (config)"
    for name in ("epochs", "C", "averaged", "seed", "min_count", "c1", "c2", "all_possible_states", "period", "delta",
                 "jobs", *(p.name for p in LEARNERS[learner].options)):
        if not table[name].used_by(learner) or (name == "epochs" and learner == "bcd"):  # bcd: its own passes
            continue
        value = getattr(settings, name)
        value = str(value).lower() if isinstance(value, bool) else value
        shown.append(f"{name} {value}{origin(name)}")
    if not LEARNERS[learner].averages:
        shown.append("no averaging")
    return f"learner {learner}{origin('learner')}: " + ", ".join(shown)


def check_shards(settings, train_data, tasks, base):
    """What iterative parameter mixing (shards) needs, as ConfigErrors before reading."""
    where = settings.origin("shards")
    learner = LEARNERS[settings.learner]
    if not learner.supports_mixing():
        able = ", ".join(p for p in params.by_name()["shards"].learners)
        raise ConfigError(where, 0, f"learner {learner.name} does not support iterative parameter mixing "
                          f"(shards); learners that do: {able}")
    why = "multi-task training" if tasks else "continuing a model (--init-model)" if base is not None else None
    if why:
        raise ConfigError(where, 0, f"iterative parameter mixing (shards) does not support {why}")
    if not isinstance(train_data, (str, os.PathLike)) or not os.path.isfile(train_data):
        raise ConfigError(where, 0, "iterative parameter mixing (shards) reads the training corpus from a file "
                          "on every worker: give it as a path")


def task_list(entries, origin="<settings>"):
    """[(name, train, dev or None)] of the `tasks` parameter: NAME=TRAIN[,DEV] entries."""
    out = []
    for entry in entries:
        name, eq, files = str(entry).partition("=")
        name, paths = name.strip(), [p.strip() for p in files.split(",")]
        if not eq or not name or not paths[0] or len(paths) > 2 or (len(paths) == 2 and not paths[1]):
            raise ConfigError(origin, 0, f"task {entry!r}: write NAME=TRAIN_FILE or NAME=TRAIN_FILE,DEV_FILE")
        if any(ch.isspace() for ch in name) or name in [n for n, _, _ in out]:
            raise ConfigError(origin, 0, f"task {entry!r}: task names are single words, each given once")
        out.append((name, paths[0], paths[1] if len(paths) == 2 else None))
    if len(out) == 1:
        raise ConfigError(origin, 0, "multi-task training needs two tasks or more")
    return out


def run_inputs(settings, *given):
    """The files a training run reads: those given, and every setting that names a
    file (dictionaries, vectors, a structure, the tasks' corpora, ...)."""
    found = [g for g in given if isinstance(g, (str, os.PathLike))]
    for value in settings.as_dict().values():
        for v in (value if isinstance(value, (list, tuple)) else [value]):
            if isinstance(v, str) and "=" in v and settings.tasks and v in settings.tasks:
                found.extend(v.split("=", 1)[1].split(","))  # NAME=TRAIN[,DEV]
            elif isinstance(v, str) and v and os.path.isfile(v):
                found.append(v)
    return found


def check_run(settings, train_data, dev, base, cluster, echo=print):
    """The settings that cannot go together, as ConfigErrors before anything is read;
    the settings to run (a config's learner = auto where nothing can be chosen: its
    first candidate, said)."""
    tasks = task_list(settings.tasks, settings.origin("tasks")) if settings.tasks else None
    if tasks and (train_data is not None or dev is not None or base is not None):
        raise ConfigError(settings.origin("tasks"), 0, "multi-task training reads each task's corpora "
                          "from its NAME=TRAIN[,DEV] entry: give no other training or dev corpus, nor a model "
                          "to continue")
    if not settings.shards and any(v is not None for v in (cluster or {}).values()):
        raise ConfigError("arguments", 0, "a Dask client, scheduler or workers are for iterative parameter "
                          "mixing: give shards too")
    why = "multi-task training" if tasks else "continuing a model (--init-model)" if base is not None else \
        "iterative parameter mixing (shards)" if settings.shards else None
    if settings.learner == params.AUTO and why:
        if settings.origin("learner") == "arguments":
            raise ConfigError("arguments", 0, f"learner {params.AUTO!r} is not for {why}: name the learner")
        first = settings.candidates[0]
        echo(f"learner {first}, the config's first candidate: learner = {params.AUTO} cannot choose for {why}")
        settings = settings.but({"learner": first, **{k: v for k, v in LEARNERS[first].defaults.items()
                                                      if not settings.given(k)}}, settings.origin("learner"))
    if settings.shards:
        check_shards(settings, train_data, tasks, base)
    return settings


def cluster_arguments(settings, cluster):
    """The arguments of dask.cluster.connect for a training on shards: those given,
    or a local cluster of a worker per shard, at most one per core."""
    where = {k: v for k, v in (cluster or {}).items() if v is not None}
    if not where:
        where = {"workers": min(settings.shards, cpus())}
    return where


def settings_of_base(base, settings, template_file, echo, path):
    """A continued model keeps the corpus settings and templates it was trained with."""
    if template_file is not None or settings.given("templates"):
        echo(f"warning: the templates of {path} are used, not those given")
    given, carried = settings.as_dict(), {}
    for key in ("format", "label_column", "encoding", "normalize"):
        if settings.given(key) and given[key] != base.corpus.get(key, given[key]):
            echo(f"warning: [corpus] {key} = {base.corpus[key]!r} of {path} is used, not {given[key]!r}")
        carried[key] = base.corpus.get(key, given[key])
    if not settings.given("metric"):
        carried["metric"] = base.corpus["metric"]
    if not settings.given("scheme"):
        carried["scheme"] = base.corpus.get("scheme", "auto")
    table = params.by_name()
    # the model's learner and options, and how its dictionaries and vectors were made, by default
    made = {"dictionaries", "dict_folds", "dict_min_length", "dict_length_cap", "vectors", "vector_unknown",
            "vector_rows", "vector_scale"}
    for key, value in base.training.get("params", {}).items():
        if not settings.given(key) and key in table and (table[key].section == "train" or key in made) and \
                key != "temperature":  # fitted anew for the continued model
            carried[key] = params.check_value(table[key], value, str(path))  # (a file's values: the table's ranges)
    if settings.learner == params.AUTO and settings.origin("learner") != "arguments":  # (a config's choice)
        carried["learner"] = params.check_value(table["learner"], base.training.get("learner") or settings.learner,
                                                str(path))
    return settings.but(carried)
