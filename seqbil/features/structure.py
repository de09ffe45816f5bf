"""Structure learned from unlabeled text: the real-valued features Theta phi(x) of
alternating structure optimization (Ando & Zhang 2005; `seqbil aso`, seqbil/aso.py).

A *split* is a group of 0-order templates over the text's first column (the word,
or the character in segmentation), e.g. the words at -1 and -2, and the offsets of
the tokens its auxiliary problems predict. Learning gives each split a matrix Theta
(h x d, d its attributes); at a token, the split's h features are Theta phi(x), the
sum of Theta's columns of the split's attributes there. seqbil keeps Theta^T (d x h,
float32, a row per attribute) and the split's feature index, so any text, including
words the labelled corpus never saw, gets its vectors.

A structure file (.sbs) is the model container (modelfile.py: magic, version, JSON
header, CRC-32, atomic writes) with meta["format"] = "seqbil-structure": the splits
(templates, offsets predicted, h, RMS of the features on the unlabeled text), their
vocabularies, key tables and Theta, and the provenance (unlabeled files with sha256,
targets, settings, times). A model trained with it keeps the same arrays.
"""
import re

import numpy as np

from .._kernels.features import append_dense
from .._version import __version__
from ..errors import ConfigError, ModelFileError
from ..formats.sentence import Corpus
from ..modelfile import read_model, write_model
from .index import LAYOUT, LAYOUTS, FeatureIndex, read_vocabularies, vocabulary_arrays
from .templates import MAX_COLUMN, MAX_ROW, TemplateSet, parse_template

FORMAT = "seqbil-structure"
VERSION = 1

# The default splits (Ando & Zhang's chunking splits, section 7 of the JMLR paper, on
# the word column only, as raw text has no other): left context, right context, and
# the word's own spelling predicting its neighbours. Characters likewise.
DEFAULT_SPLITS = {
    "conll": [
        "left: %x[-1,0]|lower %x[-2,0]|lower -> 0",
        "right: %x[1,0]|lower %x[2,0]|lower -> 0",
        "word: %x[0,0] %x[0,0]|lower %x[0,0]|prefix:1 %x[0,0]|prefix:2 %x[0,0]|prefix:3 %x[0,0]|suffix:1 "
        "%x[0,0]|suffix:2 %x[0,0]|suffix:3 %x[0,0]|suffix:4 %x[0,0]|shape -> -1 1",
    ],
    "sighan": [
        "left: %x[-1,0] %x[-2,0] -> 0",
        "right: %x[1,0] %x[2,0] -> 0",
        "char: %x[0,0] %x[0,0]|chartype -> -1 1",
    ],
}


def parse_split(text, origin="<settings>"):
    """(name, [template texts], [offsets], column) of "NAME: MACRO ... -> OFFSET ... [@COLUMN]":
    each MACRO (no spaces inside) becomes a 0-order template; the offsets are those of
    the tokens whose value in COLUMN (default 0: the word, lower-cased, digits as 0) the
    split's problems predict. A split never reads what it predicts (the target's own
    features are masked, as Ando & Zhang do)."""
    m = re.fullmatch(r"\s*([A-Za-z_][\w.-]*)\s*:(.*)->(.*)", text)
    if not m:
        raise ConfigError(origin, 0, f"[structure] split {text!r} is not NAME: MACRO ... -> OFFSET ... [@COLUMN]")
    name, macros, offsets = m.group(1), m.group(2).split(), m.group(3).split()
    column = 0
    if offsets and offsets[-1].startswith("@"):
        try:
            column = int(offsets.pop()[1:])
        except ValueError:
            column = -1
        if column < 0:
            raise ConfigError(origin, 0, f"[structure] split {text!r}: @COLUMN is a column number (0, 1, ...)")
    if not macros or not offsets:
        raise ConfigError(origin, 0, f"[structure] split {text!r}: give at least one macro and one offset")
    try:
        offsets = [int(o) for o in offsets]
    except ValueError:
        raise ConfigError(origin, 0, f"[structure] split {text!r}: offsets are integers") from None
    texts = [f"U{k:02d}:{macro}" for k, macro in enumerate(macros)]
    templates = TemplateSet(parse_template(t, origin) for t in texts)
    for t in templates.templates:
        for row, field in t.refs:
            if field.kind or field.source:
                raise ConfigError(origin, 0, f"[structure] split {name}: {t.text[4:]!r} reads a dictionary, vectors "
                                  f"or the task; a split reads the text's columns (%x[r,c] with functions)")
            if row in offsets and field.column == column:
                raise ConfigError(origin, 0, f"[structure] split {name}: {t.text[4:]!r} reads column {column} of "
                                  f"the token at {row}, which the split predicts")
    if len(set(offsets)) != len(offsets):
        raise ConfigError(origin, 0, f"[structure] split {name}: an offset is given twice")
    return name, texts, offsets, column


class Split:
    """One feature split: its templates, the offsets its problems predicted, its
    feature index over the unlabeled text, and Theta^T (d x h float32)."""

    def __init__(self, name, offsets, index, theta, rms, column=0):
        self.name, self.offsets, self.index, self.column = name, list(offsets), index, column
        self.theta = np.ascontiguousarray(theta, dtype=np.float32)
        self.rms = float(rms)
        if self.theta.shape[0] != index.n_keyed(0):
            raise ValueError(f"split {name}: Theta has {self.theta.shape[0]} rows for {index.n_keyed(0)} attributes")

    @property
    def dim(self):
        return self.theta.shape[1]

    @property
    def templates(self):
        return [t.text for t in self.index.templates.templates]

    def spec(self):
        return f"{self.name}: {' '.join(t.split(':', 1)[1] for t in self.templates)} -> " + \
            " ".join(map(str, self.offsets)) + (f" @{self.column}" if self.column else "")

    def features(self, corpus):
        """phi: the split's attributes at every token (CSR, P x d, binary)."""
        import scipy.sparse as sp  # imported here: scipy is slow to import, and most tagging never needs it
        u_ptr, u_ids = self.index.encode(corpus)[:2]
        return sp.csr_matrix((np.ones(len(u_ids), np.float32), u_ids, u_ptr),
                             shape=(len(u_ptr) - 1, self.index.n_keyed(0)))

    def vectors(self, corpus):
        """Theta phi(x) at every token (P x h float32)."""
        return np.asarray(self.features(corpus) @ self.theta, dtype=np.float32)


def _check_split_record(info):
    """Raise ValueError unless a split's record holds what from_arrays reads, typed."""
    def number(x):
        return type(x) in (int, float) and np.isfinite(x)
    if not (isinstance(info.get("name"), str) and isinstance(info.get("templates"), list)
            and all(isinstance(t, str) for t in info["templates"]) and isinstance(info.get("offsets"), list)
            and all(type(o) is int and abs(o) <= MAX_ROW for o in info["offsets"])
            and type(info.get("dim")) is int and info["dim"] > 0 and number(info.get("rms")) and info["rms"] >= 0
            and type(info.get("column", 0)) is int and 0 <= info.get("column", 0) <= MAX_COLUMN):
        raise ValueError(f"split record {str(info.get('name'))[:40]!r}")


class Structure:
    """The splits learned from unlabeled text and where they came from."""

    def __init__(self, splits, unit, provenance=None):
        self.splits, self.unit, self.provenance = list(splits), unit, dict(provenance or {})

    @property
    def dim(self):
        return sum(s.dim for s in self.splits)

    @classmethod
    def merged(cls, structures, sources):
        """One structure of the splits of several (of the same unit), their provenance
        listed with their sources (file records)."""
        units = {s.unit for s in structures}
        if len(units) != 1:
            raise ValueError(f"structures of {' and '.join(sorted(units))} cannot be used together")
        if len(structures) == 1:
            return structures[0]
        return cls([sp for s in structures for sp in s.splits], units.pop(),
                   {"parts": [{**src, **s.provenance} for s, src in zip(structures, sources)]})

    def vectors(self, corpus, normalized=True):
        """[Theta_s phi_s(x)] of every split side by side (P x dim float32), each split
        divided by its RMS on the unlabeled text when normalized."""
        corpus = Corpus.of(corpus)
        parts = [s.vectors(corpus) / (s.rms if normalized and s.rms > 0 else 1.0) for s in self.splits]
        return np.hstack(parts).astype(np.float32, copy=False) if parts else \
            np.zeros((corpus.n_tokens, 0), np.float32)

    # --- files --------------------------------------------------------------------
    def meta(self):
        return {"unit": self.unit,
                "splits": [{"name": s.name, "templates": s.templates, "offsets": s.offsets, "column": s.column,
                            "dim": s.dim, "attributes": s.theta.shape[0], "rms": s.rms, "index_layout": s.index.layout}
                           for s in self.splits],
                "provenance": self.provenance}

    def arrays(self, prefix="structure:"):
        out = {}
        for k, s in enumerate(self.splits):
            p = f"{prefix}{k}:"
            out.update(vocabulary_arrays(s.index, p))
            out[f"{p}table"], out[f"{p}table_ptr"] = s.index.tables[0]
            out[f"{p}theta"] = s.theta
        return out

    @classmethod
    def from_arrays(cls, meta, arrays, prefix="structure:"):
        """The structure of a file's meta and arrays (ValueError/KeyError/TypeError on
        inconsistent contents)."""
        splits = []
        if not isinstance(meta["splits"], list) or not all(isinstance(info, dict) for info in meta["splits"]):
            raise ValueError("splits")
        for k, info in enumerate(meta["splits"]):
            p = f"{prefix}{k}:"
            _check_split_record(info)
            templates = TemplateSet(parse_template(t) for t in info["templates"])
            if templates.by_order[1] or templates.transition:
                raise ValueError("a split has 1st-order templates")
            fields = read_vocabularies(templates, arrays, p)
            table, ptr = arrays[f"{p}table"], arrays[f"{p}table_ptr"]
            if table.dtype != np.int64 or ptr.dtype != np.int64 or len(ptr) != len(templates.by_order[0]) + 1 or \
                    ptr[0] != 0 or ptr[-1] != len(table) or np.any(np.diff(ptr) < 0):
                raise ValueError(f"split {info['name']}: key table")
            empty = (np.zeros(0, np.int64), np.zeros(1, np.int64))
            layout = info.get("index_layout", meta.get("index_layout", LAYOUT))
            if layout not in LAYOUTS:
                raise ValueError("index layout")
            index = FeatureIndex(templates, fields, [(table, ptr), empty], "none", layout)
            index.check_keys()
            theta = arrays[f"{p}theta"]
            if theta.dtype != np.float32 or theta.ndim != 2 or theta.shape[1] != info["dim"] or \
                    not np.isfinite(theta).all():
                raise ValueError(f"split {info['name']}: Theta")
            splits.append(Split(info["name"], [int(o) for o in info["offsets"]], index, theta, info["rms"],
                                int(info.get("column", 0))))
        if meta["unit"] not in ("token", "char"):
            raise ValueError("unit")
        return cls(splits, meta["unit"], meta.get("provenance", {}))

    def save(self, path):
        """Write the structure file (atomically)."""
        meta = {"format": FORMAT, "structure_version": VERSION, "seqbil_version": __version__, **self.meta()}
        write_model(path, meta, self.arrays())

    @classmethod
    def load(cls, path, verify=True):
        meta, arrays = read_model(path, verify)
        if meta.get("format") != FORMAT:
            what = "a seqbil model, not a structure" if meta.get("format") == "seqbil-model" else "not a structure"
            raise ModelFileError(f"{path}: {what} file (seqbil aso writes those)")
        if meta.get("structure_version") != VERSION:
            raise ModelFileError(f"{path}: structure file version {meta.get('structure_version')!r}; this seqbil "
                                 f"reads version {VERSION}")
        try:
            return cls.from_arrays(meta, arrays)
        except (KeyError, IndexError, AttributeError, ValueError, TypeError, UnicodeDecodeError, ConfigError) as exc:
            # (the header is JSON of any shape: a missing key, a value of the wrong type)
            raise ModelFileError(f"{path}: inconsistent structure contents ({exc})") from None


class StructureFeatures:
    """The structure's features in a model: at every token, for each offset of the
    window, the structure's vectors of the token that far away (none outside the
    sentence), times scale; real-valued 0-order attributes after the keyed ones and
    the %vec ones."""

    def __init__(self, structure, window=(0,), scale=1.0):
        self.structure, self.window, self.scale = structure, [int(w) for w in window], float(scale)

    @property
    def n_attributes(self):
        return self.structure.dim * len(self.window)

    def append(self, corpus, ptr, ids, vals, first):
        """(ptr, ids, vals): the 0-order CSR entries of the corpus's tokens (vals None:
        every value 1) with these features appended at every token, ids from `first`."""
        corpus = Corpus.of(corpus)
        vec = self.structure.vectors(corpus)
        vec *= np.float32(self.scale)
        return append_dense(np.ascontiguousarray(ptr, dtype=np.int64), np.ascontiguousarray(ids, dtype=np.int32),
                            None if vals is None else np.ascontiguousarray(vals, dtype=np.float32), vec,
                            corpus.offsets(), np.array(self.window, dtype=np.int32), first)
