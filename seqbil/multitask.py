"""Multi-task learning (Cavallanti, Cesa-Bianchi & Gentile 2008, section 3): how the
tasks are coupled, for the learners (cython_ext/chain.pxd, Linear).

With the interaction matrix of eq. (3), A = (1 + b) I - (b/K) 1 1^T, Figure 1 is
learned as augmented features: a shared copy of every attribute and a copy per task
for the attributes seen in that task. A general A (a file) is learned in Figure 1's
explicit form: every attribute of the task-copy templates gets a copy for every task,
the K copies adjacent, and an update on task k moves task j's copy by (A^-1)_{jk}."""
import numpy as np

from .errors import ConfigError, InputError
from .features.templates import own_attributes, task_digits
from .formats.textio import read_lines


def read_interaction(path, names):
    """A^-1 of the K x K interaction matrix in file `path` (K rows of K numbers, the
    tasks in the order of `names`; # starts a comment), checked symmetric and
    positive definite."""
    K, rows = len(names), []
    for number, line in read_lines(path, "utf-8"):
        text = line.split("#", 1)[0].split()
        if not text:
            continue
        try:
            row = [float(x) for x in text]
        except ValueError:
            raise InputError(path, number, f"not a row of numbers: {line.strip()!r}") from None
        if len(row) != K or not all(np.isfinite(row)):
            raise InputError(path, number, f"a row of the interaction matrix needs {K} finite numbers, one per "
                             f"task ({', '.join(names)}); this one has {len(row)}")
        if len(rows) == K:
            raise InputError(path, number, f"one row too many: the interaction matrix has {K} rows, one per task "
                             f"({', '.join(names)})")
        rows.append(row)
    if len(rows) != K:
        raise InputError(path, 0, f"the interaction matrix needs {K} rows, one per task ({', '.join(names)}); "
                         f"the file has {len(rows)}")
    A = np.array(rows)
    if not np.allclose(A, A.T, rtol=0, atol=1e-12 * max(1.0, np.abs(A).max())):
        raise InputError(path, 0, "the interaction matrix must be symmetric")
    try:
        np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        raise InputError(path, 0, f"the interaction matrix must be positive definite (its smallest eigenvalue is "
                         f"{np.linalg.eigvalsh(A)[0]:.3g})") from None
    eig = np.linalg.eigvalsh(A)
    # A^-1 scales an update by up to 1/eig[0] and the tasks' mix by the condition number:
    # beyond 1e12 the weights lose every digit (or overflow) within a few updates
    if not eig[-1] <= 1e12 * eig[0]:
        raise InputError(path, 0, f"the interaction matrix is too ill-conditioned (eigenvalues {eig[0]:.3g} to "
                         f"{eig[-1]:.3g}, a ratio above 1e12): training with its inverse cannot stay finite")
    return np.linalg.inv(A)


def complete_task_copies(index, templates, names, data, origin):
    """For the explicit form: give every attribute of the task-copy templates a copy
    for each task (their keys adjacent in the sorted tables), renumbering data's ids
    to match. Returns rank: task k's copy of an attribute is its rank[k]-th."""
    radix, digits = task_digits(index, templates, names)
    rank = np.argsort(np.argsort(digits)).astype(np.int32)
    for order, ids in ((0, data.u_ids), (1, data.b_ids)):
        table, ptr = index.tables[order]
        first_ref, _, _, mults = index.specs[order]
        keys, new_ptr = [], [0]
        renumber = np.empty(len(table), np.int32)
        for t, template in enumerate(templates.by_order[order]):
            old = table[ptr[t]:ptr[t + 1]]
            if template.reads_task:
                if mults[first_ref[t]] == 0:
                    raise ConfigError(origin, 0, f"template {template.text!r}: its keys are hashed, which a "
                                      f"general interaction matrix cannot take apart into tasks")
                full = (np.unique(old // radix)[:, None] * radix + np.sort(digits)[None, :]).ravel()
            else:
                full = old
            renumber[ptr[t]:ptr[t + 1]] = new_ptr[-1] + np.searchsorted(full, old)
            keys.append(full)
            new_ptr.append(new_ptr[-1] + len(full))
        index.tables[order] = (np.concatenate(keys) if keys else table, np.array(new_ptr, np.int64))
        ids[:] = renumber[ids]
    return rank


def task_spec(index, templates, names, settings, data, origin):
    """(the learners' tasks argument, a line saying how the tasks are coupled)."""
    K = len(names)
    own0, own1 = own_attributes(index, templates)
    if not settings.interaction:
        b = float(settings.coupling)
        return (K, b, own0, own1), (f"tasks: {', '.join(names)}; coupling b = {b:g}: an update on one task moves "
                                    f"the shared weights by {b / (K * (1 + b)):.3g} and its own by "
                                    f"{1 / (1 + b):.3g} of the step")
    inverse = read_interaction(settings.interaction, names)
    rank = complete_task_copies(index, templates, names, data, origin)
    own0, own1 = own_attributes(index, templates)
    return (K, inverse, own0, own1, rank), (f"tasks: {', '.join(names)}; interaction matrix from "
                                            f"{settings.interaction}: an update on task k moves task j's "
                                            f"weights by (A^-1)_jk of the step, diagonal "
                                            f"{' '.join(f'{x:.3g}' for x in np.diag(inverse))}")



def epoch_order(rng, seq_task, how):
    """The order of an epoch over the sequences of all tasks: a fresh permutation,
    shuffled across tasks; round-robin, a sequence of each task in turn (each task's
    own shuffled; a task that runs out drops out); or tasks, task by task in the
    order given, each shuffled. One permutation is drawn either way."""
    perm = rng.permutation(len(seq_task)).astype(np.int64)
    if how == "shuffled":
        return perm
    task = seq_task[perm]
    if how == "tasks":
        return perm[np.argsort(task, kind="stable")]
    turn = np.empty(len(perm), np.int64)  # how many of its task's sequences come before it
    for k in np.unique(task):
        mine = np.flatnonzero(task == k)
        turn[mine] = np.arange(len(mine))
    return perm[np.lexsort((task, turn))]
