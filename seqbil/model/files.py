"""A model's file: what Model.save writes and Model.load reads and checks, in the
container of modelfile.py (versioned, checksummed, no pickle, atomic writes)."""

import json

import numpy as np

from .._version import __version__
from ..calibration import T_MAX, T_MIN
from ..params import by_name, check_value
from ..errors import ConfigError, ModelFileError, SeqbilError
from ..features.dictionaries import Lexicon
from ..features.index import (LAYOUTS, NORMALIZERS, FeatureIndex, attribute_arrays, read_attributes,
                              read_vocabularies, vocabulary_arrays)
from ..features.structure import Structure, StructureFeatures
from ..features.templates import TemplateSet, parse_template
from ..features.vectors import VectorFeatures, VectorTable
from ..formats import FORMATS, make_format
from ..formats.textio import encoding_problem
from ..modelfile import read_model, write_model
from ..storage import PRECISIONS, Rows, Store, first_order_block
from .constraints import check_lengths

KINDS = {"linear": ("W0", "W1", "trans", "end"), "bilinear": ("W0", "alpha", "beta", "trans", "end")}


def write(model, path):
    """Write the model file atomically (Model.save)."""
    if model.task is not None:
        raise SeqbilError("save the multi-task model itself, not the model of one of its tasks")
    if model.holds_dense:
        model.compact()
    meta = {"format": "seqbil-model", "seqbil_version": __version__, "kind": model.kind,
            "labels": model.labels, "templates": [t.text for t in model.templates.templates],
            "corpus": model.corpus, "training": model.training, "temperature": model.temperature}
    if model.tasks:
        meta["tasks"] = model.tasks
        if model.task_labels:
            meta["task_labels"] = model.task_labels
    if model.index.layout != "values-first":
        meta["index_layout"] = model.index.layout
    if model.sums32:
        meta["scores"] = "float32 sums"
    meta["weights"] = {"layout": "sparse rows", "precision": model.precision}
    arrays = model.store.arrays()
    if model.rules is not None:  # what a labelling may not have (train --well-formed, --forbid)
        meta["rules"] = True
        arrays["rules_allowed"], arrays["rules_end"] = (np.asarray(r, dtype=np.uint8) for r in model.rules)
    arrays.update(vocabulary_arrays(model.index))
    arrays.update(attribute_arrays(model.index))
    for order, (table, ptr) in enumerate(model.index.tables):
        arrays[f"table{order}"], arrays[f"table{order}_ptr"] = table, ptr
    if model.index.lexicons:  # the dictionaries travel with the model
        unit = model.lexicon_unit
        meta["lexicons"] = {"unit": unit, "length_cap": model.index.length_cap,
                            "names": {name: {"entries": len(lex), "sha256": lex.sha256()}
                                      for name, lex in sorted(model.index.lexicons.items())}}
        for name, lex in model.index.lexicons.items():
            arrays[f"lexicon:{name}"] = np.frombuffer(lex.text().encode("utf-8"), dtype=np.uint8)
    vectors = model.index.vectors
    if vectors is not None:  # the rows of the vector tables the model keeps
        meta["vectors"] = {"unknown": vectors.unknown, "scale": vectors.scale,
                           "names": {n: {"dim": t.dim, "rows": len(t)} for n, t in sorted(vectors.tables.items())}}
        for name, table in vectors.tables.items():
            arrays[f"vectors:{name}"] = table.matrix
            arrays[f"vectors:{name}:words"] = np.frombuffer("\n".join(table.words).encode("utf-8"), dtype=np.uint8)
    structure = model.index.structure
    if structure is not None:  # Theta and the split indexes travel with the model
        meta["structure"] = {"window": structure.window, "scale": structure.scale, **structure.structure.meta()}
        arrays.update(structure.structure.arrays())
    try:  # what every reader will check: a model written is a model read (a conversion too)
        check_meta(json.loads(json.dumps(meta)))
    except ValueError as exc:
        raise SeqbilError(f"{path}: the model would not be readable ({exc}); nothing written") from None
    write_model(path, meta, arrays)


def read(cls, path, verify=True):
    """The Model (of class cls) of a model file (Model.load). What the file holds is
    checked before it is used: a file whose contents do not make a model gives a
    ModelFileError naming what is wrong."""
    # the payload's checksum is computed beside the checks of what it means; a damaged
    # file is said to be damaged before anything is said of its contents
    meta, arrays, payload_checked = read_model(path, verify, background=True)
    verified = payload_checked or (lambda: None)
    if meta.get("format") == "seqbil-structure":  # same container, another kind of file
        verified()
        raise ModelFileError(f"{path}: a structure (seqbil aso), not a model: give it to "
                             "seqbil train --structure")
    try:
        check_meta(meta)
        templates = TemplateSet(parse_template(t) for t in meta["templates"])
        if templates.ranged:  # (training keeps one template per column of a range)
            raise ValueError(f"template {templates.ranged[0].text!r} reads a range of columns")
        corpus = meta["corpus"]
        _check_columns(templates, make_format(corpus["format"], corpus.get("n_fields"), corpus.get("label_column", -1)))
        index = _index(meta, arrays, templates)
        if "W0" in arrays:  # a file of seqbil 0.2 or older: dense float64 blocks
            weights = {name: arrays[name] for name in KINDS[meta["kind"]]}
            model = cls(meta["kind"], meta["labels"], index, meta["corpus"], weights, meta.get("training"),
                        precision="float64")
            check_shapes(model)
            verified()
            model.compact()
            return model
        store, precision = _store(meta, arrays)
        model = cls(meta["kind"], meta["labels"], index, meta["corpus"], None, meta.get("training"), store,
                    precision, *_tasks(meta, templates), _temperature(meta), sums32=_sums32(meta))
        check_shapes(model)
        model.rules = _rules(meta, arrays, len(model.labels))
    except (KeyError, IndexError, AttributeError, ValueError, TypeError, UnicodeDecodeError, SeqbilError) as exc:
        # (the header is JSON of any shape: a missing key, a value of the wrong type)
        verified()
        raise ModelFileError(f"{path}: inconsistent model contents ({exc})") from None
    verified()
    return model


def _rules(meta, arrays, S):
    """The rules a model keeps (allowed S x (S + 1), end_allowed S, bool), or None: two
    arrays of 0 and 1 that leave every sentence length a labelling."""
    if not meta.get("rules"):
        return None
    allowed, end = arrays["rules_allowed"], arrays["rules_end"]
    if allowed.shape != (S, S + 1) or end.shape != (S,) or allowed.dtype != np.uint8 or end.dtype != np.uint8 \
            or allowed.max(initial=0) > 1 or end.max(initial=0) > 1:
        raise ValueError("the rules are not two arrays of 0 and 1 over the labels")
    rules = (allowed.astype(bool), end.astype(bool))
    check_lengths(*rules)
    return rules


def _index(meta, arrays, templates):
    """The FeatureIndex of the file, with its dictionaries, vectors and structure."""
    fields = read_vocabularies(templates, arrays)
    tables = [(arrays[f"table{o}"], arrays[f"table{o}_ptr"]) for o in (0, 1)]
    layout = meta.get("index_layout", "values-first")
    if layout not in LAYOUTS:
        raise ValueError("index layout")
    lexicons, cap = {}, 6
    if templates.dictionaries:
        info = meta["lexicons"]
        cap = info["length_cap"]
        # (the table's range holds for a file's value too: each tag builds strings up to the cap)
        check_value(by_name()["dict_length_cap"], cap, "the model's lexicons")
        for name in templates.dictionaries:
            text = arrays[f"lexicon:{name}"].tobytes().decode("utf-8")
            lexicons[name] = Lexicon.from_text(text)
            if lexicons[name].sha256() != info["names"][name]["sha256"]:
                raise ValueError(f"dictionary {name} does not match its checksum")
    index = FeatureIndex(templates, fields, tables, meta["corpus"]["normalize"], layout, lexicons, cap,
                         read_attributes(arrays) if templates.items else None)
    if templates.vector_templates:
        info = meta["vectors"]
        vector_tables = {}
        for name in templates.vectors:
            text = arrays[f"vectors:{name}:words"].tobytes().decode("utf-8")
            vector_tables[name] = VectorTable(text.split("\n") if text else [], arrays[f"vectors:{name}"])
            if not np.isfinite(vector_tables[name].matrix).all():
                raise ValueError(f"vectors {name} are not all finite")
        table = by_name()
        index.vectors = VectorFeatures(templates.vector_templates, vector_tables,
                                       check_value(table["vector_unknown"], info["unknown"], "the model's vectors"),
                                       check_value(table["vector_scale"], info["scale"], "the model's vectors"))
    if "structure" in meta:
        info = meta["structure"]
        index.structure = StructureFeatures(Structure.from_arrays(info, arrays),
                                            [int(w) for w in info["window"]], float(info["scale"]))
    return index


def _store(meta, arrays):
    """(the sparse rows of the weights, their precision)."""
    info = meta["weights"]
    if info.get("layout") != "sparse rows" or info.get("precision") not in PRECISIONS:
        raise ValueError("weights layout")
    S = len(meta["labels"])
    first, width = first_order_block(meta["kind"], S)
    w0, w1 = Rows.from_arrays(arrays, "W0", S), Rows.from_arrays(arrays, first, width)
    if not w0.val.dtype == w1.val.dtype == PRECISIONS[info["precision"]]:
        raise ValueError(f"the weight blocks are not all {info['precision']}, the precision the file gives")
    store = Store(w0, w1, arrays["trans"], arrays["end"], bilinear=meta["kind"] != "linear")
    if not store.finite():
        raise ValueError("weights that are not all finite")
    return store, info["precision"]


def _tasks(meta, templates):
    """(task names or None, {task: its labels}) of a multi-task model."""
    tasks = meta.get("tasks")
    if tasks is not None and not (isinstance(tasks, list) and len(tasks) > 1 and
                                  all(isinstance(n, str) and n for n in tasks) and
                                  len(set(tasks)) == len(tasks) and templates.tasks):
        raise ValueError("tasks")
    if tasks is None and templates.tasks:
        raise ValueError("templates read %task in a model without tasks")
    task_labels = meta.get("task_labels", {})
    if not (isinstance(task_labels, dict) and set(task_labels) <= set(tasks or []) and
            all(isinstance(v, list) and v and set(v) <= set(meta["labels"]) for v in task_labels.values())):
        raise ValueError("task labels")
    return tasks, task_labels


def _temperature(meta):
    temperature = meta.get("temperature", 1.0)
    if isinstance(temperature, bool) or not isinstance(temperature, (int, float)) or \
            not T_MIN <= temperature <= T_MAX:
        raise ValueError("temperature")
    return temperature


def _sums32(meta):
    if meta.get("scores", "float64 sums") not in ("float64 sums", "float32 sums"):
        raise ValueError("scores")
    return meta.get("scores") == "float32 sums"


def _utf8(text):
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_meta(meta):
    """The header fields a model needs, with their types, before anything uses them."""
    def need(ok, what):
        if not ok:
            raise ValueError(what)
    need(meta.get("format") == "seqbil-model" and meta.get("kind") in KINDS, "not a seqbil model")
    labels, corpus = meta.get("labels"), meta.get("corpus")
    need(isinstance(corpus, dict) and corpus.get("format") in FORMATS, "corpus format")
    spaced = FORMATS[corpus["format"]].spaced_labels
    need(isinstance(labels, list) and labels and all(isinstance(y, str) and y and (spaced or not any(
        ch.isspace() for ch in y)) for y in labels) and len(set(labels)) == len(labels), "labels")
    need(isinstance(meta.get("templates"), list) and all(isinstance(t, str) for t in meta["templates"]), "templates")
    # (a lone surrogate reads from JSON but cannot be written out)
    need(all(_utf8(s) for s in labels + meta["templates"]), "labels or templates that are not text")
    fixed = FORMATS[corpus["format"]].labels
    need(fixed is None or labels == list(fixed), f"labels: a {corpus['format']} model's are {fixed}")
    FORMATS[corpus["format"]].check_corpus_record(corpus)
    need(corpus.get("normalize", "none") in NORMALIZERS, "corpus normalize")
    corpus.setdefault("normalize", "none")
    need(isinstance(corpus.get("encoding", "utf-8"), str), "corpus encoding")
    need(encoding_problem(corpus.get("encoding", "utf-8")) is None, "corpus encoding")
    if "metric" not in corpus and "evaluation" in corpus:  # files of seqbil 0.1.0
        corpus["metric"], corpus["scheme"] = corpus.pop("evaluation"), "auto"
    need(corpus.get("metric") in ("chunk", "segment", "accuracy"), "corpus metric")
    need(corpus.get("scheme", "auto") in ("auto", "iob1", "iob2", "iobes", "bilou"), "corpus scheme")
    for key in ("training", "weights", "lexicons", "vectors", "structure"):
        need(isinstance(meta.get(key, {}), dict), key)
    need(isinstance(meta.get("rules", False), bool), "rules")
    training = meta.get("training") or {}
    # the fields seqbil inspect and --init-model read, of the types they read
    kinds = {"params": dict, "sources": dict, "selection": dict, "history": list, "tasks": dict}
    for key, kind in kinds.items():
        need(isinstance(training.get(key, kind()), kind), f"training {key}")
    need(all(isinstance(k, str) for k in training.get("params", {})), "training params")
    need(training.get("learner") is None or isinstance(training["learner"], str), "training learner")
    need(all(isinstance(r, dict) for r in training.get("history", [])), "training history")
    tried = training.get("selection", {}).get("tried", [])
    need(isinstance(tried, list) and all(isinstance(r, dict) for r in tried)
         and isinstance(training.get("selection", {}).get("chosen", {}), dict), "training selection")


def _check_columns(templates, fmt):
    """Raise ValueError naming a template that reads a column the format does not have."""
    try:
        templates.check_columns(*fmt.layout(), fmt.name, "the model")
    except ConfigError as exc:
        raise ValueError(f"{exc.message} ({fmt.name} data)") from None


def check_shapes(model):
    """Raise ValueError when the weights, tables and templates do not fit together."""
    S = len(model.labels)
    A0, A1 = model.index.n_attributes(0), model.index.n_attributes(1)
    for o, (table, ptr) in enumerate(model.index.tables):
        if table.dtype != np.int64 or ptr.dtype != np.int64 or len(ptr) != len(model.index.specs[o][0]) \
                or ptr[0] != 0 or ptr[-1] != len(table) or np.any(np.diff(ptr) < 0):
            raise ValueError(f"attribute table {o} is inconsistent")
    model.index.check_keys()
    task_field = next((f for f in model.templates.fields if f.kind == "task"), None)
    if task_field is not None and sorted(model.index.fields[task_field].strings) != sorted(model.tasks or []):
        raise ValueError("the task field's values are not the model's tasks")
    copies = 1 if model.task is not None else len(model.tasks) + 1 if model.tasks else 1
    if model.holds_dense:
        w = model.weights
        expected = {"W0": (A0, S), "end": (copies * S,), "W1": (A1, S, S + 1), "alpha": (A1, S),
                    "beta": (A1, S + 1), "trans": (copies * S, S + 1)}
        shapes = {name: (tuple(w[name].shape), expected[name]) for name in KINDS[model.kind]}
    else:
        w = model.store
        first, width = first_order_block(model.kind, S)
        shapes = {"trans": (w.trans.shape, (copies * S, S + 1)), "end": (w.end.shape, (copies * S,)),
                  "W0": ((w.w0.n_rows, w.w0.width), (A0, S)), first: ((w.w1.n_rows, w.w1.width), (A1, width))}
        if w.trans.dtype != np.float64 or w.end.dtype != np.float64:
            raise ValueError("trans and end must be float64")
    for name, (got, want) in shapes.items():
        if tuple(got) != want:
            raise ValueError(f"array {name} has shape {tuple(got)}, expected {want}")
    if S == 0:
        raise ValueError("empty label set")
