"""What a model is and how it was made (`seqbil inspect`): everything needed to
reproduce it, as a dict (JSON) or as text for people."""
import os

import numpy as np

from ._version import __version__
from .modelfile import file_version


def _count_nonzero(a):
    return int(np.count_nonzero(np.asarray(a)))


def task_attributes(model):
    """{task: its own attributes that hold weights}, of a multi-task model: the
    attributes of the templates reading %task (their last macro, of multiplier 1 in
    the key; None when a template's keys are hashed)."""
    counts = {name: 0 for name in model.tasks}
    store, index = model.store, model.index
    K = index.K
    for order, (templates, (table, ptr)) in enumerate(zip(model.templates.by_order, index.tables)):
        rows = store.block(order)
        t_ptr, _, _, mults = index.specs[order]
        for t, template in enumerate(templates):
            if not template.refs or template.refs[-1][1].kind != "task":
                continue
            if mults[t_ptr[t]] == 0:
                return None
            lo, hi = int(ptr[t]), int(ptr[t + 1])
            field = template.refs[-1][1]
            radix = len(index.fields[field]) + 2 * K + 1
            value = table[lo:hi] % radix - (2 * K + 1 if index.layout == "boundaries-first" else 0)
            held = rows.nonempty()[lo:hi]
            strings = index.fields[field].strings
            for v in np.unique(value[held]):
                if 0 <= v < len(strings) and strings[v] in counts:
                    counts[strings[v]] += int(np.count_nonzero(held & (value == v)))
    return counts


def model_info(model, path=None):
    """The model's description; path adds the file's size and format version."""
    training = dict(model.training)
    features = []
    store = model.store
    for order, (templates, (table, ptr)) in enumerate(zip(model.templates.by_order, model.index.tables)):
        rows = store.block(order)
        for t, template in enumerate(templates):
            lo, hi = int(ptr[t]), int(ptr[t + 1])
            features.append({"template": template.text, "order": order, "attributes": hi - lo,
                             "nonzero_weights": rows.count(lo, hi)})
    vectors = model.index.vectors
    if vectors is not None:  # real-valued 0-order attributes, after the keyed ones
        lo = model.index.n_keyed(0)
        for template, size in zip(vectors.templates, vectors.sizes):
            features.append({"template": template.text, "order": 0, "attributes": size,
                             "nonzero_weights": store.w0.count(lo, lo + size)})
            lo += size
    structure = model.index.structure
    if structure is not None:  # and the structure's, after them
        lo = model.index.n_attributes(0) - structure.n_attributes
        for w in structure.window:
            for split in structure.structure.splits:
                features.append({"template": f"(structure: {split.name} at {w:+d})", "order": 0,
                                 "attributes": split.dim, "nonzero_weights": store.w0.count(lo, lo + split.dim)})
                lo += split.dim
    if model.templates.transition:
        features.append({"template": "B", "order": 1, "attributes": 1,
                         "nonzero_weights": _count_nonzero(store.trans)})
    features.append({"template": "(end of sequence)", "order": 0, "attributes": 1,
                     "nonzero_weights": _count_nonzero(store.end)})
    arrays = {k: list(v.shape) for k, v in store.arrays().items()}
    info = {
        "learner": training.get("learner"),
        "params": training.get("params", {}),
        "templates": [t.text for t in model.templates.templates],
        "labels": list(model.labels),
        "task_kind": {"format": model.corpus["format"], "metric": model.corpus["metric"],
                      "scheme": model.corpus.get("scheme", "auto")},
        "model_kind": model.kind,
        "temperature": model.temperature,
        "rules": None if model.rules is None else {
            "forbidden_transitions": int((~model.rules[0][:, :-1]).sum()),
            "forbidden_first": [model.labels[y] for y in np.flatnonzero(~model.rules[0][:, -1])],
            "forbidden_last": [model.labels[y] for y in np.flatnonzero(~model.rules[1])]},
        "scores": "float32 sums" if model.sums32 else "float64 sums",
        "corpus": {k: model.corpus.get(k) for k in ("format", "n_fields", "label_column", "encoding", "normalize")},
        "training": {k: v for k, v in training.items() if k not in ("learner", "params")},
        "features": features,
        "file": {"path": str(path) if path else None, "size_bytes": os.path.getsize(path) if path else None,
                 "format_version": file_version(path) if path else None,
                 "weights": {"layout": "sparse rows", "precision": model.precision}, "arrays": arrays},
        "seqbil_version": training.get("seqbil_version", __version__),
    }
    if model.tasks:
        own = task_attributes(model)
        info["tasks"] = [{"name": name, "own_attributes": own[name] if own else None,
                          **training.get("tasks", {}).get(name, {})} for name in model.tasks]
        info["training"].pop("tasks", None)
    return info


def _selection_line(selection):
    """What was chosen on held-out data, and every setting tried with its score (or why
    it was stopped: learner = auto's budget)."""
    rows = selection["tried"]
    keys = [k for k in dict.fromkeys(k for r in rows for k in r) if k not in ("metric", "value", "passes", "nll",
                                                                                "stopped", "curve")]
    varies = [k for k in keys if len({repr(r.get(k)) for r in rows}) > 1]

    def text(row, sep):
        return ", ".join(f"{k}{sep}{row[k]:g}" if isinstance(row[k], (int, float)) else f"{k}{sep}{row[k]}"
                         for k in varies if k in row)
    tried = "; ".join(text(r, " ") + (f": {r['value']:.2f}" if "value" in r else f": {r['stopped']}") for r in rows)
    metric = next(r["metric"] for r in rows if "metric" in r)
    return f"chosen {_where(selection['on'])}: {text(selection['chosen'], ' = ')} (by {metric}; tried {tried})"


def _where(on):
    """Where a setting was chosen, with its preposition."""
    return {"dev": "on the dev set", "held-out": "on the last tenth of the training data"}.get(on, f"by {on}")


def _structure_lines(st):
    """describe()'s lines on the structure from unlabeled text that a model reads."""
    lines = []
    files = st.get("files") or ([{"path": st["path"], "sha256": st["sha256"]}] if st.get("path") else [])
    where = ", ".join(f"{f['path']} (sha256 {f['sha256'][:16]}...)" for f in files) or st.get("source")
    lines.append(f"structure: {where}, {st.get('dim', '?')} features per token at offsets "
                 f"{st.get('window', '?')}, scale {st.get('scale', '?')}")
    prov = st.get("provenance") or {}
    for part in prov.get("parts", [prov] if prov else []):
        text = part.get("unlabeled", [])
        if len(files) > 1:
            lines.append(f"  {part.get('path')}:")
        lines.append(f"  learned from {sum(f['units'] for f in text):,} units of unlabeled text: "
                     + ", ".join(f"{f['path']} ({f['units']:,}, sha256 {f['sha256'][:16]}...)" for f in text))
        lines.append(f"  {part.get('targets')} targets ({100 * part.get('target_coverage', 0):.1f}% of the "
                     f"text), h = {part.get('dim')}, {part.get('loss')} loss, lambda {part.get('lambda')}, "
                     f"{part.get('epochs')} epochs, {part.get('rounds')} round(s), {part.get('seconds')} s")
        for sp in part.get("splits", []):
            lines.append(f"  split {sp['name']}: {sp['attributes']:,} features, {sp['problems']} problems "
                         f"({sp['method']})")
    return lines


def _embedding_lines(emb):
    """describe()'s lines on the embeddings of a model's %emb templates."""
    lines = []
    lines.append(f"embeddings (%emb): {emb.get('source')}" + (f" (sha256 {emb['sha256'][:16]}...)"
                                                              if emb.get("sha256") else "")
                 + f", k = {emb.get('dim')}, {emb.get('rows_kept', 0):,} rows kept ({emb.get('training_words', 0):,}"
                 + " training words" + (f", {emb['training_words_in_file']:,} of them in the file"
                                        if "training_words_in_file" in emb else "") + ")")
    mv = emb.get("moved")
    if mv:
        lines.append(f"  re-embedded: mean |Phi - Phi0| per word {mv['mean_moved']:.3f}; words seen 10 times or "
                     f"more {mv['frequent_mean_moved']:.3f} ({mv['frequent_words']:,}), seen once "
                     f"{mv['rare_mean_moved']:.3f} ({mv['rare_words']:,})")
    return lines


def describe(info):
    """The text form of model_info, for people."""
    t = info["training"]
    source = t.get("converted_from")
    tool = {"crfpp": "CRF++", "crfsuite": "CRFsuite", "wapiti": "Wapiti"}.get((source or {}).get("format"))
    trained = f"trained by {tool}" if source else f"learner {info['learner']}"
    lines = [f"model {info['file']['path'] or ''}: {info['model_kind']} model, {trained}, "
             f"seqbil {info['seqbil_version']}, file format {info['file']['format_version']}, "
             f"{info['file']['weights']['precision']} weights, "
             f"{(info['file']['size_bytes'] or 0) / 2 ** 20:.1f} MiB"]
    task = info["task_kind"]
    lines.append(f"task: {task['format']} corpus, metric {task['metric']}"
                 + (f" ({task['scheme']})" if task["metric"] == "chunk" else "")
                 + f"; {len(info['labels'])} labels: {' '.join(info['labels'][:30])}"
                 + (" ..." if len(info["labels"]) > 30 else ""))
    if source:
        lines.append(f"converted from: {source['file']}, a {tool} model"
                     + (f" ({source['form']})" if source.get("form") else "")
                     + (f" of format version {source['version']}" if "version" in source else "")
                     + (f" ({source['type']})" if "type" in source else "")
                     + f", sha256 {source['sha256'][:16]}..., "
                     + (f"{source['features']:,} features" if "features" in source else
                        f"{source['observations']:,} observations, {source['weights']:,} non-zero weights")
                     + (f"; its strings read as {source['encoding']}" if source.get("encoding") else "")
                     + ("; each token's scores summed in float32, as crf_test sums them"
                        if info["scores"] == "float32 sums" else ""))
    for name in ("train", "dev"):
        f = t.get(name)
        if f:
            lines.append(f"{name}: {f['path']} ({f['sentences']} sentences, {f['tokens']} tokens, "
                         f"sha256 {f['sha256'][:16]}...)")
    for task in info.get("tasks", []):
        train = task.get("train") or {}
        best = task.get("best_dev")
        own = "?" if task["own_attributes"] is None else task["own_attributes"]
        lines.append(f"task {task['name']}: {own} own attributes with weights; trained on "
                     f"{train.get('path')} ({train.get('sentences')} sentences)"
                     + (f", best dev {best['metric']} {best['value']:.2f} at pass {best['pass']}" if best else ""))
    selection = t.get("selection") or {}
    fitted = selection.get("temperature") or t.get("temperature")
    given = info["params"].get("temperature", 0) > 0 and not fitted
    lines.append(f"probabilities: scores / {info['temperature']:g}"
                 + (f" (the {tool} model's own distribution)" if source and not fitted and not given
                    else " (the CRF's own distribution)" if info["learner"] in ("crf", "l2sgd") and not fitted and not given
                    else f" (temperature fitted "
                         f"{'on the dev sets of ' + ', '.join(fitted['tasks']) if fitted.get('tasks') else _where(fitted['on'])}"
                         f": token NLL {fitted['nll_at_1']:.4f} at 1, "
                         f"{fitted['nll']:.4f} fitted)" if fitted
                    else " (temperature given)" if given else " (no temperature fitted)"))
    rules = info.get("rules")
    if rules:
        lines.append(f"rules: every labelling decoded keeps out {rules['forbidden_transitions']} transitions, "
                     f"{len(rules['forbidden_first'])} first labels and {len(rules['forbidden_last'])} last labels "
                     f"([tag] well_formed, forbid)")
    if selection.get("tried"):
        lines.append(_selection_line(selection))
    if "passes_run" in t:
        lines.append(f"passes run: {t['passes_run']} of {t['passes_planned']}"
                     + (f"; best dev {t['best_dev']['metric']} {t['best_dev']['value']:.2f} at pass "
                        f"{t['best_dev']['pass']}" if t.get("best_dev") else ""))
    if t.get("interrupted"):
        lines.append(f"interrupted {t['interrupted']}")
    parent, depth = t.get("init_model"), 0
    while parent:
        depth += 1
        pt = parent.get("training", {})
        lines.append(f"{'  ' * (depth - 1)}continued from {parent['path']} (sha256 {parent['sha256'][:16]}...), "
                     f"trained on {pt.get('train', {}).get('path')} for {pt.get('passes_run')} passes")
        parent = pt.get("init_model")
    if t.get("config") or t.get("template_file"):
        lines.append(f"config: {t.get('config')}" + (f", template file {t['template_file']}"
                                                    if t.get("template_file") else ""))
    st = t.get("structure")
    if st:
        lines += _structure_lines(st)
    emb = (t.get("vectors") or {}).get("%emb")
    if emb:
        lines += _embedding_lines(emb)
    if info["params"]:
        lines.append("params: " + ", ".join(f"{k}={v}" for k, v in info["params"].items()))
    lines.append("features (template: attributes, non-zero weights):")
    for f in info["features"]:
        lines.append(f"  {f['template']}: {f['attributes']}, {f['nonzero_weights']}")
    return "\n".join(lines) + "\n"
