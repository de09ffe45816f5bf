"""Training checkpoints: everything needed to continue a run where it stopped.

A checkpoint is a model file (modelfile.py) of format "seqbil-checkpoint": the
learner's arrays and scalars, the shuffling generator's state, the settings, the
paths of the corpora and a fingerprint of the encoded training data, so that a
resumed run produces the same model, byte for byte, as an uninterrupted one.
"""
import zlib

import numpy as np

from .errors import ModelFileError, SeqbilError
from .modelfile import read_model, write_model
from . import params

FORMAT = "seqbil-checkpoint"


def fingerprint(data):
    """CRC-32 of the encoded training corpus: resuming on other data is an error.
    The 0-order values count when present; without them the CRC is the one that
    checkpoints written before values existed hold."""
    arrays = [data.seq_ptr, data.labels, data.u_ptr, data.u_ids, "b_ptr", data.b_ids]
    if getattr(data, "u_vals", None) is not None:
        arrays.append(data.u_vals)
    if getattr(data, "seq_task", None) is not None:
        arrays.append(data.seq_task)
    crc = 0
    for array in arrays:
        if isinstance(array, str):  # the same CRC whether b_ptr was dropped or not
            for lo in range(0, data.n_positions + 1, 1 << 20):
                part = data.b_pointers(lo, min(lo + (1 << 20), data.n_positions + 1))
                crc = zlib.crc32(np.ascontiguousarray(part).data.cast("B"), crc)
            continue
        crc = zlib.crc32(np.ascontiguousarray(array).data.cast("B"), crc)
    return crc


def save(path, run, learner, rng, history):
    arrays, scalars = learner.snapshot()
    meta = {"format": FORMAT, "run": run, "scalars": scalars, "rng": rng.bit_generator.state,
            "history": history}
    write_model(path, meta, arrays)


def load(path):
    """(run, scalars, arrays, rng_state, history) of a checkpoint, its fields checked."""
    meta, arrays = read_model(path)
    if meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a training checkpoint (a model file? --resume takes the .ckpt "
                             f"written with --checkpoint-every)")
    try:
        run, scalars, rng_state, history = meta["run"], meta["scalars"], meta["rng"], meta["history"]
        for key in ("settings", "sources"):  # options renamed since the checkpoint was written
            if isinstance(run, dict) and isinstance(run.get(key), dict):
                run[key] = {params.RENAMED.get(k, k): v for k, v in run[key].items()}
        _check_run(run, path)
        if not (isinstance(scalars, dict) and isinstance(rng_state, dict) and isinstance(history, list)
                and all(isinstance(r, dict) for r in history)):
            raise ValueError("corrupt fields")
    except KeyError as exc:
        raise ModelFileError(f"{path}: checkpoint lacks {exc.args[0]!r}") from None
    except (ValueError, TypeError, SeqbilError) as exc:
        raise ModelFileError(f"{path}: corrupt checkpoint ({exc})") from None
    return run, scalars, arrays, rng_state, history


def _check_run(run, path):
    settings = run["settings"]
    # parameters added since the checkpoint was written take their defaults
    if not isinstance(settings, dict) or set(settings) - {p.name for p in params.table()}:
        raise ValueError("settings")
    for p in params.table():
        if p.name in settings:
            params.check_value(p, settings[p.name], path)
    sources = run.get("sources", {})
    if not isinstance(sources, dict) or set(sources) - set(settings) or \
            not all(isinstance(v, str) for v in sources.values()):
        raise ValueError("sources")
    if not (run.get("init_model") is None or isinstance(run["init_model"], str)):
        raise ValueError("init_model")
    if not isinstance(run.get("selection", {}), dict):
        raise ValueError("selection")
    for key in ("train", "dev", "template", "config"):  # multi-task runs read the corpora of their tasks
        if not (isinstance(run[key], str) or ((key != "train" or settings.get("tasks")) and run[key] is None)):
            raise ValueError(key)
    if type(run["checkpoint_every"]) is not int or run["checkpoint_every"] < 0 or type(run["data"]) is not int:
        raise ValueError("checkpoint_every or data")


def restore(learner, rng, path, arrays, scalars, rng_state):
    """Put a checkpoint's state into a fresh learner and generator."""
    try:
        learner.restore(arrays, scalars)
        rng.bit_generator.state = rng_state
    except (ValueError, TypeError, KeyError, OverflowError) as exc:
        raise ModelFileError(f"{path}: corrupt checkpoint ({exc})") from None
