"""The order of a multi-task epoch over the tasks' sentences (task_order)."""
import json

import numpy as np
import pytest

import seqbil
from seqbil.multitask import epoch_order
from test_multitask import two_standards  # noqa: F401 (a fixture)


def reference(perm, task, how):
    """The orders written out: queues of each task's sequences in the permutation's order."""
    if how == "shuffled":
        return list(perm)
    queues = {k: [j for j in perm if task[j] == k] for k in sorted(set(task))}
    if how == "tasks":
        return [j for k in queues for j in queues[k]]
    out = []
    while any(queues.values()):
        for k in queues:
            if queues[k]:
                out.append(queues[k].pop(0))
    return out


@pytest.mark.parametrize("how", ["shuffled", "round-robin", "tasks"])
def test_epoch_orders_are_what_they_say(how):
    for seed in range(20):
        rng = np.random.default_rng(seed)
        task = rng.integers(0, rng.integers(1, 5), size=rng.integers(1, 40)).astype(np.int32)
        got = epoch_order(np.random.default_rng(seed), task, how)
        perm = np.random.default_rng(seed).permutation(len(task))
        assert got.dtype == np.int64 and list(got) == reference(perm, task, how)


@pytest.mark.parametrize("how, first, second", [("tasks", [150, 106], [0, 44]),
                                                ("round-robin", [128, 128], [22, 22])])
def test_training_follows_the_task_order(tmp_path, two_standards, how, first, second):  # noqa: F811
    tasks = [f"{name}={path}" for name, path in two_standards.items()]
    seqbil.train(config="sighan2005", tasks=tasks, learner="sp", epochs=2, task_order=how,
                 log=str(tmp_path / "log.jsonl"))
    for line in (tmp_path / "log.jsonl").read_text().splitlines():
        chunks = json.loads(line)["task_sequences_per_chunk"]  # 256 sentences a chunk
        assert chunks == [first, second]
