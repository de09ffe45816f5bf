"""Training checkpoints: everything needed to continue a run where it stopped.

A checkpoint is a model file (modelfile.py) of format "seqbil-checkpoint": the
learner's arrays and scalars, the shuffling generator's state, the settings, the
paths of the corpora and a fingerprint of the encoded training data, so that a
resumed run produces the same model, byte for byte, as an uninterrupted one.
"""
import zlib

import numpy as np

from .errors import ModelFileError
from .modelfile import read_model, write_model

FORMAT = "seqbil-checkpoint"


def fingerprint(data):
    """CRC-32 of the encoded training corpus: resuming on other data is an error."""
    crc = 0
    for array in (data.seq_ptr, data.labels, data.u_ptr, data.u_ids, data.b_ptr, data.b_ids):
        crc = zlib.crc32(np.ascontiguousarray(array).data.cast("B"), crc)
    return crc


def save(path, run, learner, rng, history):
    arrays, scalars = learner.snapshot()
    meta = {"format": FORMAT, "run": run, "scalars": scalars, "rng": rng.bit_generator.state,
            "history": history}
    write_model(path, meta, arrays)


def load(path):
    """(run, scalars, arrays, rng_state, history) of a checkpoint."""
    meta, arrays = read_model(path)
    if meta.get("format") != FORMAT:
        raise ModelFileError(f"{path}: not a training checkpoint (a model file? --resume takes the .ckpt "
                             f"written with --checkpoint-every)")
    try:
        return meta["run"], meta["scalars"], arrays, meta["rng"], meta["history"]
    except KeyError as exc:
        raise ModelFileError(f"{path}: checkpoint lacks {exc.args[0]!r}") from None
