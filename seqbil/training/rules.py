"""What a labelling may not have, in training ([tag] well_formed and forbid): the rules
of the model (model/constraints.py), the training corpus checked against them, and
their cells for the learners, which train over the allowed labellings only and leave
the model to keep the rules (Model.rules: -inf in every decoder)."""
import numpy as np

from ..errors import ConfigError, InputError, SeqbilError
from ..model import constraints


def training_rules(settings, labels, scheme):
    """(allowed, end_allowed) of the settings' well_formed and forbid over the labels
    (constraints.well_formed, read_forbidden), or None when neither is set."""
    if not settings.well_formed and not settings.forbid:
        return None
    S = len(labels)
    allowed, end_allowed = np.ones((S, S + 1), dtype=bool), np.ones(S, dtype=bool)
    try:
        if settings.well_formed:
            rules = constraints.well_formed(labels, scheme)
            allowed, end_allowed = allowed & rules[0], end_allowed & rules[1]
        if settings.forbid:
            rules = constraints.read_forbidden(settings.forbid, labels, settings.encoding)
            allowed, end_allowed = allowed & rules[0], end_allowed & rules[1]
        constraints.check_lengths(allowed, end_allowed)
    except SeqbilError as exc:
        if isinstance(exc, InputError):
            raise
        raise SeqbilError(f"{settings.origin('well_formed' if settings.well_formed else 'forbid')}: {exc}") from None
    return allowed, end_allowed


def run_rules(settings, labels, scheme, data, tasks, sharded, name):
    """The rules of a run (training_rules) with its training corpus (data, read from
    name) checked against them, or None; refused for multi-task and sharded runs."""
    rules = training_rules(settings, labels, scheme)
    if rules is not None:
        if tasks or sharded:
            raise ConfigError(settings.origin("well_formed" if settings.well_formed else "forbid"), 0,
                              f"the rules of [tag] well_formed and forbid: not with "
                              f"{'multi-task training' if tasks else 'training on shards'}")
        check_corpus(rules, data, labels, name)
    return rules


def check_corpus(rules, data, labels, name):
    """Refuse a training corpus whose gold labels break the rules (naming the first
    sentence that does): its likelihood would be 0 and no learner could follow it.
    Where labels are partial (data.known), the known ones are checked."""
    allowed, end_allowed = rules
    S = len(labels)
    gold = data.labels if data.known is None else np.where(data.known >= 0, data.known, -1)
    starts, ends = data.seq_ptr[:-1], data.seq_ptr[1:]
    nonempty = ends > starts
    prev = np.full(data.n_positions, S, dtype=np.int64)  # the start symbol before each sentence
    prev[1:] = gold[:-1]
    prev[starts[nonempty]] = S
    known = (gold >= 0) & (prev >= 0)  # (the start symbol S included; a partial corpus's unknown left out)
    bad = np.zeros(data.n_positions, dtype=bool)
    bad[known] = ~allowed[gold[known], prev[known]]
    last = ends[nonempty] - 1
    bad_end = np.zeros(data.n_positions, dtype=bool)
    bad_end[last] = (gold[last] >= 0) & ~end_allowed[np.maximum(gold[last], 0)]
    found = np.flatnonzero(bad | bad_end)
    if len(found):
        p = int(found[0])
        j = int(np.searchsorted(data.seq_ptr, p, side="right")) - 1
        if bad[p]:
            what = (f"{labels[gold[p]]} first" if prev[p] == S else f"{labels[gold[p]]} after {labels[prev[p]]}")
        else:
            what = f"{labels[gold[p]]} last"
        raise InputError(name, 0, f"sentence {j + 1} has {what}, which the rules forbid ([tag] well_formed, "
                         f"forbid): a model trained over the allowed labellings cannot learn it")


def frozen_cells(rules, copies=1):
    """(trans, end) boolean masks of the cells a learner must leave alone and score as
    forbidden, tiled over a multi-task learner's copies."""
    allowed, end_allowed = rules
    return np.tile(~allowed, (copies, 1)), np.tile(~end_allowed, copies)
