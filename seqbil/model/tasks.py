"""The tasks of a multi-task model: the decoding weights of one task's view, and one
task folded into a model of its own (Cavallanti, Cesa-Bianchi & Gentile 2008, written
as augmented features: see ARCHITECTURE.md, Several tasks in one model)."""
from dataclasses import replace

import numpy as np

from ..features.index import FeatureIndex
from ..features.templates import TemplateSet, task_digits
from ..storage import Rows, Store


def task_store(store, view):
    """The decoding weights of task view.task of a multi-task model whose weights are
    `store`: the shared trans and end plus the task's copies; where the tasks' label
    sets differ, no path goes through the labels of other tasks."""
    S, k = len(view.labels), view.tasks.index(view.task)
    trans = store.trans[:S] + store.trans[(k + 1) * S:(k + 2) * S]
    end = store.end[:S] + store.end[(k + 1) * S:(k + 2) * S]
    if view.task in view.task_labels:
        other = np.array([y not in set(view.task_labels[view.task]) for y in view.labels])
        trans[other, :] = end[other] = -np.inf
    return replace(store, trans=trans, end=end)


def single_task(model, name):
    """Model.single_task: task `name` of a multi-task model as a model of its own, or
    None when a template's keys are hashed."""
    view = model.for_task(name)
    base = view.parent
    store, index, S = view.store, base.index, len(model.labels)
    radix, (task_id,) = task_digits(index, base.templates, [name])
    shared = [t for t in base.templates.templates if not t.reads_task]
    position = {t.text: (o, i) for o in (0, 1) for i, t in enumerate(base.templates.by_order[o])}
    tables, rows = [], []
    for order in (0, 1):
        table, ptr = index.tables[order]
        _, _, _, mults = index.specs[order]
        t_ptr = index.specs[order][0]
        keys, parts, new_ptr = [], [], [0]
        dense = store.block(order)
        width = S * (S + 1) if order == 1 else dense.width  # (a bilinear model's AB rows become W1's)
        for t in (t for t in shared if t.order == order and (t.refs or order == 0)):
            i = position[t.text][1]
            _, j = position[f"{t.text}/%task"]
            if (len(t.refs) and mults[t_ptr[i]] == 0) or mults[t_ptr[j]] == 0:
                return None
            s_lo, s_hi, o_lo, o_hi = int(ptr[i]), int(ptr[i + 1]), int(ptr[j]), int(ptr[j + 1])
            own = table[o_lo:o_hi]
            mine = np.flatnonzero(own % radix == task_id)
            folded = own[mine] // radix
            union = np.union1d(table[s_lo:s_hi], folded)
            block_rows = np.zeros((len(union), width))
            block_rows[np.searchsorted(union, table[s_lo:s_hi])] += _rows(dense, s_lo, s_hi, S)
            block_rows[np.searchsorted(union, folded)] += _rows(dense, o_lo, o_hi, S)[mine]
            keys.append(union)
            parts.append(block_rows)
            new_ptr.append(new_ptr[-1] + len(union))
        tables.append((np.concatenate(keys) if keys else np.zeros(0, np.int64), np.array(new_ptr, np.int64)))
        merged = np.concatenate(parts) if parts else np.zeros((0, width))
        rows.append(Rows.from_dense(merged, "float64"))
    templates = TemplateSet(shared)
    fields = {f: index.fields[f] for f in templates.fields}
    single = FeatureIndex(templates, fields, tables, index.normalize, index.layout, index.lexicons,
                          index.length_cap)
    store = Store(*rows, np.asarray(store.trans), np.asarray(store.end))
    out = type(model)("linear", model.labels, single, model.corpus, None, dict(model.training), store, "float64",
                      temperature=model.temperature)
    out.training["task"] = name
    out.compact()
    return out


def _rows(rows, lo, hi, S):
    """Rows lo:hi of storage.Rows as a dense float64 array; the rows of bilinear
    factors [alpha | beta] as their products alpha beta^T, S (S + 1) wide."""
    out = rows.rows(lo, hi).to_dense()
    if rows.width == 2 * S + 1 and S * (S + 1) != 2 * S + 1:  # factors (S = 1 never factors)
        out = (out[:, :S, None] * out[:, None, S:]).reshape(len(out), S * (S + 1))
    return out
