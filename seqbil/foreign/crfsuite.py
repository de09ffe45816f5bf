"""CRFsuite model files (`crfsuite learn -m`, python-crfsuite's Trainer.train, the model
file of sklearn-crfsuite), read into seqbil models that tag as CRFsuite does.

The format (CRFsuite 0.12, `crf1d_model.c`), little-endian: a header of 48 bytes (magic
"lCRF", file size, type "FOMC", version 100, numbers of features, labels and
attributes, offsets of the feature chunk, of the label and attribute databases and of
their feature references); the feature chunk "FEAT" (size, count, then 20 bytes a
feature: type, src, dst as uint32 and the weight as a float64); labels and attributes
each a CQDB database (`cqdb.c`: "CQDB", size, flag, byte-order mark 0x62445371, the size
and offset of the backward array, 256 hash tables; the backward array gives for each
id the offset of its record: id, size, the NUL-terminated string). A feature of type 0
is a state feature (attribute src, label dst), of type 1 a transition (label src, the
previous one, to label dst). An item's score for a label is the sum of its attributes'
values times their state weights, and a labelling's the sum of its items' and
transitions'; there is no start or end score.

A seqbil model with the templates U:%attr and B scores the same way: each attribute
name is a 0-order attribute with its value, and B is the transitions.
"""
import hashlib
import struct

import numpy as np

from ..errors import ModelFileError
from ..evaluation import choose_metric
from ..features.index import LAYOUT, FeatureIndex, Vocabulary
from ..features.templates import TemplateSet, parse_template
from ..model import Model
from ..modelfile import is_crfsuite
from ..storage import PRECISIONS, Rows, Store

MAGIC, TYPE = b"lCRF", b"FOMC"
_HEADER = struct.Struct("<4sI4s9I")
_CQDB = struct.Struct("<4sIIIII")
_BYTEORDER = 0x62445371
_FEATURE = np.dtype([("type", "<u4"), ("src", "<u4"), ("dst", "<u4"), ("weight", "<f8")])
TEMPLATES = ("U:%attr", "B")


class CrfsuiteModel:
    def __init__(self, version, labels, attributes, features):
        self.version, self.labels, self.attributes, self.features = version, labels, attributes, features


def read(path):
    """The CrfsuiteModel of a CRFsuite model file (labels and attribute names as
    bytes, features as a structured array)."""
    with open(path, "rb") as f:
        data = f.read()

    def broken(what):
        return ModelFileError(f"{path}: a damaged or truncated CRFsuite model ({what})")

    if not is_crfsuite(data[:12]):
        raise ModelFileError(f"{path}: not a CRFsuite model file (no lCRF/FOMC header)")
    if len(data) < _HEADER.size:
        raise broken("header")
    (_, size, _, version, _, n_labels, n_attrs, off_features, off_labels, off_attrs, _, _) = \
        _HEADER.unpack_from(data)
    if version != 100:
        raise ModelFileError(f"{path}: a CRFsuite model of version {version}; this reader knows version 100")
    if size != len(data):
        raise broken(f"{len(data)} bytes where its header says {size}")
    try:
        # (the header's count of features is 0 in the files CRFsuite writes: the chunk's is the one)
        chunk, chunk_size, count = struct.unpack_from("<4sII", data, off_features)
        if chunk != b"FEAT" or chunk_size != 12 + _FEATURE.itemsize * count or off_features + chunk_size > size:
            raise broken("feature chunk")
        features = np.frombuffer(data, dtype=_FEATURE, count=count, offset=off_features + 12)
        labels = _cqdb(data, off_labels, n_labels, broken)
        attributes = _cqdb(data, off_attrs, n_attrs, broken)
    except (struct.error, ValueError):
        raise broken("a chunk runs past the end") from None
    return CrfsuiteModel(version, labels, attributes, features)


def _cqdb(data, at, n, broken):
    """The strings of ids 0..n-1 of the CQDB database at offset `at`."""
    chunk, size, _, byteorder, bwd_size, bwd_offset = _CQDB.unpack_from(data, at)
    if chunk != b"CQDB" or byteorder != _BYTEORDER or at + size > len(data) or (n and bwd_size < n):
        raise broken("string database")
    if not n:
        return []
    offsets = np.frombuffer(data, dtype="<u4", count=n, offset=at + bwd_offset).tolist()
    out = []
    for i, off in enumerate(offsets):
        rid, ksize = struct.unpack_from("<II", data, at + off)
        if rid != i or ksize < 1 or off + 8 + ksize > size or data[at + off + 7 + ksize] != 0:
            raise broken(f"string {i}")
        out.append(data[at + off + 8:at + off + 7 + ksize])
    return out


# the most labels a converted model may have: its transitions are a dense S x (S + 1)
# block (128 MiB at 4,096), which a file of a few bytes per label could otherwise claim
MAX_LABELS = 4096


def to_model(crf, path, precision=None):
    """A seqbil Model (templates U:%attr and B, corpus format crfsuite) that scores
    every labelling as CRFsuite scores it. precision: of the stored weights (default
    float64, CRFsuite's)."""

    try:  # (attribute names are matched as bytes and may hold any; labels are printed)
        labels = [y.decode("utf-8") for y in crf.labels]
    except UnicodeDecodeError as exc:
        raise ModelFileError(f"{path}: a label that is not UTF-8 text ({exc.object[:40]!r})") from None
    if not labels or len(set(labels)) != len(labels):
        raise ModelFileError(f"{path}: a CRFsuite model with {'duplicate' if labels else 'no'} labels")
    S, A = len(labels), len(crf.attributes)
    if S > MAX_LABELS:
        raise ModelFileError(f"{path}: a CRFsuite model of {S} labels; seqbil reads at most {MAX_LABELS} (its "
                             f"transition weights alone would take {S * (S + 1) * 8 / 2 ** 30:.1f} GiB)")
    f = crf.features
    kind, src, dst = f["type"].astype(np.int64), f["src"].astype(np.int64), f["dst"].astype(np.int64)
    state, trans_f = kind == 0, kind == 1
    if np.any(~(state | trans_f)) or np.any(dst >= S) or np.any(src[state] >= A) or np.any(src[trans_f] >= S):
        raise ModelFileError(f"{path}: a CRFsuite model with a feature of unknown type or out of range")
    if not np.all(np.isfinite(f["weight"])):
        raise ModelFileError(f"{path}: a CRFsuite model with a weight that is not finite")
    # the state weights as the sparse rows they are, each (attribute, label) summed once
    # in the file's order: a dense A x S block is sized by the header's counts, not by
    # the features the file holds (30,000 labels and attributes in 1.1 MB made 7 GiB)
    keys, inverse = np.unique(src[state] * S + dst[state], return_inverse=True)
    sums = np.bincount(inverse, weights=f["weight"][state], minlength=len(keys))
    dtype = PRECISIONS[precision or "float64"]
    kept = sums.astype(dtype) != 0  # (a weight that rounds to 0 is not kept, as from_dense)
    keys, values = keys[kept], sums[kept].astype(dtype)
    ptr = np.zeros(A + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys // S, minlength=A), out=ptr[1:])
    w0 = Rows(ptr, (keys % S).astype(np.int32), values, S)
    trans = np.zeros((S, S + 1))
    np.add.at(trans, (dst[trans_f], src[trans_f]), f["weight"][trans_f])  # trans[y, y']
    names = Vocabulary(a.decode("utf-8", "surrogateescape") for a in crf.attributes)
    if len(names) != A:
        raise ModelFileError(f"{path}: a CRFsuite model with an attribute name twice")
    tset = TemplateSet(parse_template(t) for t in TEMPLATES)
    index = FeatureIndex(tset, {}, [(np.arange(A, dtype=np.int64), np.array([0, A], np.int64)),
                                    (np.zeros(0, np.int64), np.zeros(1, np.int64))],
                         "none", LAYOUT, attributes=names)
    metric, _ = choose_metric(labels)
    corpus = {"format": "crfsuite", "n_fields": None, "label_column": -1, "encoding": "utf-8", "normalize": "none",
              "metric": metric, "scheme": "auto"}
    with open(path, "rb") as fh:
        digest = hashlib.sha256(fh.read()).hexdigest()
    training = {"learner": None, "converted_from": {
        "format": "crfsuite", "version": crf.version, "file": str(path), "sha256": digest,
        "features": int(len(f)), "attributes": A}}
    w1 = Rows(np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0, dtype=dtype), S * (S + 1))
    model = Model("linear", labels, index, corpus, None, training, Store(w0, w1, trans, np.zeros(S)),
                  precision=precision or "float64")
    model.compact()
    return model
