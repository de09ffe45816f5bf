"""Training runs: read and encode the corpora once, run the learner's passes with
progress and dev scores, save the model atomically."""
import json
import signal
import time
from contextlib import contextmanager
from importlib import resources
from pathlib import Path

import numpy as np

from . import checkpoint, params
from .corpus import make_format
from .dataset import encode
from .errors import ConfigError, InputError
from .learners import LEARNERS
from .model import Model
from .scoring import evaluation_kind, headline, score
from .templates import TemplateSet, parse_template, read_template_file

CHUNK = 256  # sequences per call into compiled code; progress and Ctrl-C are handled between calls
SAMPLES = {"conll": ("conll2000_train.txt", "conll2000_test.txt"), "sighan": ("pku_train.utf8", "pku_test.utf8")}


def sample_path(name):
    return resources.files("seqbil.samples") / name


def find_config(name):
    """A config path, or the name of a bundled config (conll2000, sighan2005, sighan2005_0order)."""
    path = Path(name)
    if path.exists() or path.suffix:
        return path
    bundled = params.bundled_config(name + ".toml")
    return Path(str(bundled)) if bundled.is_file() else path


def resolve_settings(config, overrides):
    """Defaults, then the config file, then the command-line overrides."""
    settings = params.defaults()
    if config is not None:
        settings.update(params.load_config(config))
    for key, value in overrides.items():
        if value is not None:
            param = next(p for p in params.PARAMS if p.name == key)
            settings[key] = params.check_value(param, value, "command line")
    return settings


def load_templates(settings, template_file, config):
    if template_file is not None:
        return TemplateSet(read_template_file(template_file))
    if not settings["templates"]:
        raise ConfigError(config or "<settings>", 0, "no feature templates: give --config or --template")
    return TemplateSet(parse_template(t, str(config), 0) for t in settings["templates"])


def read_corpus(fmt, path, encoding, labeled=True):
    sentences = list(fmt.read(path, labeled=labeled, encoding=encoding))
    if not sentences:
        raise InputError(path, 0, "no sentences in file")
    return sentences


@contextmanager
def graceful_stop():
    """The first SIGINT/SIGTERM asks the run to stop after the current pass (the
    model is then saved); a second one aborts at once."""
    state = {"stop": False}

    def handler(signum, frame):
        if state["stop"]:
            raise KeyboardInterrupt
        state["stop"] = True

    old = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield state
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def train(settings, train_path, model_path, dev_path=None, template_file=None, config=None, log_path=None,
          echo=print, show_progress=True, checkpoint_every=0, checkpoint_path=None, resume=None,
          resume_epochs=None):
    """Train and save a model; returns (model, history).

    checkpoint_every=N writes a checkpoint (default: model_path + ".ckpt") after every
    N passes and when the run is interrupted; resume=PATH continues from one, with
    the settings and corpora recorded in it (resume_epochs may extend the run)."""
    from tqdm import tqdm

    if resume is not None:
        saved, scalars, arrays, rng_state, history = checkpoint.load(resume)
        settings = {**saved["settings"], "epochs": resume_epochs or saved["settings"]["epochs"]}
        train_path, dev_path, template_file, config = saved["train"], saved["dev"], saved["template"], saved["config"]
        checkpoint_every = checkpoint_every or saved["checkpoint_every"]
        checkpoint_path = checkpoint_path or resume
        echo(f"resuming {resume}: {len(history)} passes done")
    checkpoint_path = checkpoint_path or f"{model_path}.ckpt"

    fmt = make_format(settings["format"], None, settings["label_column"])
    enc = settings["encoding"]
    t0 = time.perf_counter()
    sentences = read_corpus(fmt, train_path, enc)
    templates = load_templates(settings, template_file, config)
    if fmt.name == "conll":
        templates.check_columns(fmt.n_fields, fmt._label_index(fmt.n_fields), train_path, template_file or config)
    else:
        templates.check_columns(1, None, train_path, template_file or config)
    labels = list(fmt.labels) if fmt.name == "sighan" else sorted({y for s in sentences for y in s.labels})
    data, index = encode(sentences, templates, None, labels, settings["min_count"], settings["normalize"])
    A0, A1 = index.n_attributes(0), index.n_attributes(1)
    dev_sentences = read_corpus(fmt, dev_path, enc) if dev_path else None
    corpus = {"format": fmt.name, "n_fields": fmt.n_fields, "label_column": settings["label_column"],
              "encoding": enc, "normalize": settings["normalize"], "evaluation": evaluation_kind(fmt.name, labels, settings["evaluation"])}
    model = Model("linear", labels, index, corpus, {})
    dev = model.encode(dev_sentences, str(dev_path)) if dev_sentences else None
    echo(f"read {data.n_sequences} sequences, {data.n_positions} tokens, {len(labels)} labels; "
         f"{A0} 0-order and {A1} 1st-order attributes "
         f"({len(templates.by_order[0])} + {len(templates.by_order[1])} templates"
         f"{', label transitions' if templates.transition else ''}) "
         f"in {time.perf_counter() - t0:.1f} s")

    learner = LEARNERS[settings["learner"]](len(labels), A0, A1, settings, templates.transition)
    rng = np.random.default_rng(settings["seed"])
    run = {"settings": settings, "train": str(train_path), "dev": dev_path and str(dev_path),
           "template": template_file and str(template_file), "config": config and str(config),
           "checkpoint_every": checkpoint_every, "data": checkpoint.fingerprint(data)}
    if resume is not None:
        if saved["data"] != run["data"]:
            raise InputError(train_path, 0, f"the training data differs from the data of checkpoint {resume}")
        checkpoint.restore(learner, rng, resume, arrays, scalars, rng_state)
    else:
        history = []
    log = open(log_path, "a" if resume else "w", encoding="utf-8") if log_path else None
    N = data.n_sequences
    try:
        with graceful_stop() as stop:
            for k in range(len(history), learner.passes()):
                learner.start_pass(k)
                order = rng.permutation(N).astype(np.int64)
                start, mistakes = time.perf_counter(), 0
                with tqdm(total=N, desc=learner.pass_name(k), unit="seq", leave=False,
                          disable=not show_progress, dynamic_ncols=True) as bar:
                    for c in range(0, N, CHUNK):
                        mistakes += learner.train_chunk(data, order[c:c + CHUNK])
                        bar.update(min(CHUNK, N - c))
                        bar.set_postfix(mistakes=mistakes, refresh=False)
                record = {"pass": k + 1, "name": learner.pass_name(k), "mistakes": int(mistakes),
                          "error_rate": mistakes / max(N, 1), "seconds": time.perf_counter() - start}
                record.update(learner.end_pass(k))
                line = f"{record['name']}: {mistakes} mistakes ({100 * record['error_rate']:.2f}%), " \
                       f"{record['seconds']:.2f} s" + _diagnostics(record)
                if dev is not None:
                    model.kind, model.weights = learner.parameters()
                    result = _score(model, dev, dev_sentences)
                    record["dev"] = result
                    name, value = headline(result)
                    line += f", dev {name} {value:.2f}"
                echo(line)
                history.append(record)
                if log:
                    log.write(json.dumps(record) + "\n")
                    log.flush()
                last = k + 1 == learner.passes()
                if checkpoint_every and ((k + 1) % checkpoint_every == 0 or stop["stop"] or last):
                    checkpoint.save(checkpoint_path, run, learner, rng, history)
                    echo(f"checkpoint saved to {checkpoint_path}")
                if stop["stop"]:
                    echo(f"interrupted: stopping after {record['name']}")
                    break
    finally:
        if log:
            log.close()
    model.kind, model.weights = learner.parameters()
    model.training = {**{key: settings[key] for key in ("learner", "epochs", "C", "averaged", "seed", "min_count",
                                                         "rank1", "power_steps")},
                      "passes_done": len(history), "train_sequences": N, "train_tokens": data.n_positions}
    model.save(model_path)
    echo(f"model saved to {model_path}")
    return model, history


def _diagnostics(record):
    shown = [("sigma_mean", "mean sigma_a"), ("sigma_max", "max sigma_a"), ("sigma_1", "sigma_1"),
             ("sigma2_over_sigma1_mean", "mean sigma2/sigma1"), ("angle_mean", "mean angle to exact pair (deg)"),
             ("value_ratio_mean", "u'Theta v / sigma_1"),
             ("dual_objective", "D_t")]
    return "".join(f", {label} {record[key]:.4g}" for key, label in shown if key in record)


def _score(model, data, sentences):
    pred = model.decode(data)
    labels = np.array(model.labels, dtype=object)
    pred_l = [list(labels[pred[data.seq_ptr[j]:data.seq_ptr[j + 1]]]) for j in range(data.n_sequences)]
    return score(model.format, model.corpus["evaluation"], [s.labels for s in sentences], pred_l, sentences)
