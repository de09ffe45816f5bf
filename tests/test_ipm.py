"""Iterative parameter mixing (seqbil/dask/ipm.py, `seqbil train --shards K`): the mix
against dense per-shard parameters, one shard against training in one process (exact),
K shards the same on 1 or 2 workers, and their F1 against training in one process."""
import json
import subprocess
import sys

import numpy as np
import pytest

import seqbil
from seqbil.dask import ipm, ipm_mix
from seqbil.errors import ConfigError
from seqbil.learners.base import OnlineLearner
from seqbil.samples import sample_path
from test_cli import ENV

distributed = pytest.importorskip("distributed")


class Toy:
    """A learner as mixing sees it, over random arrays."""
    get_rows, set_rows, row_size, mixed = (OnlineLearner.get_rows, OnlineLearner.set_rows, OnlineLearner.row_size,
                                           OnlineLearner.mixed)

    def __init__(self, rng, A0=7, A1=5, S=3):
        self.arrays = {"W0": (rng.normal(size=(A0, S)), 0), "U0": (rng.normal(size=(A0, S)), 0),
                       "W1": (rng.normal(size=(A1, S, S + 1)), 1), "trans": (rng.normal(size=(S, S + 1)), None)}
        for name, (array, _) in self.arrays.items():
            setattr(self, name, array)
        self.counter = int(rng.integers(1, 100))

    def mixing(self):
        return {name: order for name, (_, order) in self.arrays.items()}, ["counter"]


@pytest.mark.parametrize("seed", range(8))
def test_the_mix_is_the_weighted_sum_of_the_dense_shard_parameters(seed):
    rng = np.random.default_rng(seed)
    start = Toy(rng)
    K = int(rng.integers(1, 5))
    mu = rng.dirichlet(np.ones(K)) if seed % 2 else np.full(K, 1.0 / K)
    dense, messages = [], []
    for _ in range(K):  # each shard changes some entries of its copy and sends them
        full = {name: a.copy() for name, (a, _) in start.arrays.items()}
        message = {}
        for name, (a, order) in start.arrays.items():
            if order is None:
                full[name] = rng.normal(size=a.shape)
                message[name] = full[name]
                continue
            flat = full[name].reshape(len(a), -1)
            keys = np.sort(rng.choice(flat.size, int(rng.integers(0, flat.size + 1)), replace=False))
            flat.ravel()[keys] = rng.normal(size=len(keys))
            message[name] = (keys, flat.ravel()[keys])
        message["counter"] = start.counter + int(rng.integers(0, 50))
        dense.append(full)
        messages.append(message)
    mixed = ipm_mix.mix(start, messages, list(mu))
    ipm_mix.apply(start, mixed)
    for name, (a, _) in start.arrays.items():
        assert np.allclose(a, sum(m * d[name] for m, d in zip(mu, dense)), rtol=1e-12, atol=1e-12), name
    assert start.counter == round(sum(m * msg["counter"] for m, msg in zip(mu, messages)))
    union = np.unique(np.concatenate([msg["W1"][0] for msg in messages]))
    assert np.array_equal(mixed["W1"][0], union)  # only the entries some shard changed travel back


def test_one_shard_comes_back_exactly():
    rng = np.random.default_rng(0)
    start = Toy(rng)
    message = {"W0": (np.array([1, 4, 13]), rng.normal(size=3)), "U0": (np.array([2]), rng.normal(size=1)),
               "W1": (np.array([0, 59]), rng.normal(size=2)), "trans": rng.normal(size=(3, 4)), "counter": 12345}
    mixed = ipm_mix.mix(start, [message], [1.0])
    for name in ("W0", "U0", "W1"):
        assert np.array_equal(mixed[name][0], message[name][0]) and np.array_equal(mixed[name][1], message[name][1])
    assert np.array_equal(mixed["trans"], message["trans"]) and mixed["counter"] == 12345


def train(**options):
    options = {"config": "conll2000", "learner": "sp", "epochs": 4, "precision": "float64", **options}
    return seqbil.train(str(sample_path("conll2000_train.txt")), **options)


def same_model(a, b):
    assert a.labels == b.labels
    for o in (0, 1):
        assert np.array_equal(a.index.tables[o][0], b.index.tables[o][0])
    assert sorted(a.weights) == sorted(b.weights)
    for name in a.weights:
        assert np.array_equal(a.weights[name], b.weights[name]), name


def f1(model):
    return seqbil.evaluate(model, str(sample_path("conll2000_test.txt")))["f1"]


@pytest.mark.parametrize("learner,averaged", [("sp", True), ("sp", False), ("bol", True), ("bol", False)])
def test_one_shard_equals_training_in_one_process(client, learner, averaged):
    same_model(train(shards=1, client=client, learner=learner, averaged=averaged),
               train(learner=learner, averaged=averaged))


def test_one_shard_equals_one_process_on_segmentation_without_0_order_templates(client):
    def segment(**options):
        return seqbil.train(str(sample_path("pku_train.utf8")), config="sighan2005", epochs=3, precision="float64",
                            **options)
    same_model(segment(shards=1, client=client), segment())
    assert segment(shards=2, client=client).weights["alpha"].any()


def test_refresh_blocks_is_the_kernel_update_block_by_block():
    from seqbil._kernels.bol import block_update, refresh_blocks
    rng = np.random.default_rng(5)
    for S in (3, 4):
        theta = rng.normal(size=(6, S, S + 1)).astype(np.float32)
        alpha, beta = rng.normal(size=(6, S)), rng.normal(size=(6, S + 1))
        sigma = np.abs(rng.normal(size=6))
        sigma[0], theta[1] = 0.0, 0.0  # a block without a pair, a zero block
        want = [(a.copy(), b.copy()) for a, b in zip(alpha, beta)]
        sigmas = [block_update(t.astype(np.float64), a, b, s, 4) for t, (a, b), s in zip(theta, want, sigma)]
        refresh_blocks(theta, alpha, beta, sigma, 4)
        assert np.allclose(sigma, np.maximum(sigmas, 0.0), rtol=1e-6)
        assert np.allclose(alpha, [a for a, _ in want], rtol=1e-5, atol=1e-9)
        assert np.allclose(beta, [b for _, b in want], rtol=1e-5, atol=1e-9)
        u, s, vt = np.linalg.svd(theta[2].astype(np.float64))  # R steps from a pair: near the top triple
        assert abs(sigma[2] - s[0]) < 0.2 * s[0]


def test_bol_on_shards_is_as_good_as_in_one_process_over_seeds(client):
    """bol's F1 on the sample moves by about 1 point from seed to seed (one process as
    well as mixed): the means over three seeds are compared."""
    def mean_f1(**options):
        return np.mean([f1(train(learner="bol", epochs=20, seed=seed, **options)) for seed in (1, 2, 3)])
    plain = mean_f1()
    for shards in (2, 3):
        assert mean_f1(shards=shards, client=client) >= plain - 0.3, shards


def test_shards_give_one_model_whatever_the_workers_and_an_f1_near_one_process(client, tmp_path):
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as c, \
            distributed.Client(c) as one_worker:
        same_model(train(shards=2, client=one_worker), train(shards=2, client=client))
    # a shard's pass makes 1/K of the updates of a pass over all: mixing needs the epochs
    # to converge (20, the default, on the sample)
    plain = f1(train(epochs=20))
    for shards, mixing in ((2, "uniform"), (3, "uniform"), (3, "mistakes")):
        mixed = train(epochs=20, shards=shards, mixing=mixing, client=client, log=str(tmp_path / "log.jsonl"))
        assert abs(f1(mixed) - plain) <= 0.3, (shards, mixing)
    records = [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()]
    assert len(records) == 20
    for r in records:
        shards = r["mixing"]["shard_mistakes"]
        assert len(shards) == 3 and sum(shards) == r["mistakes"]
        assert 0 < r["mixing"]["delta_bytes"] and 0 < r["mixing"]["entries_mixed"]


def test_what_cannot_be_sharded_is_refused(client):
    with pytest.raises(ConfigError, match="learner bcd does not support iterative parameter mixing"):
        train(shards=2, client=client, learner="bcd")
    rows = [[["He", "PRP", "B-NP"], ["ran", "VBD", "B-VP"]]] * 4
    with pytest.raises(ConfigError, match="give it as a path"):
        seqbil.train(rows, config="conll2000", learner="sp", shards=2, client=client)
    with pytest.raises(ConfigError, match="give shards too"):
        train(client=client)


def test_the_command_line_trains_on_shards(tmp_path):
    run = [sys.executable, "-m", "seqbil", "train", "--learner", "sp", "--epochs", "2", "-q", "--model", "m.sbm"]
    proc = subprocess.run(run + ["--shards", "2", "--workers", "2"], cwd=tmp_path, env=ENV, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"iterative parameter mixing: 2 shards" in proc.stderr
    assert b"Dask dashboard" not in proc.stderr  # (-q)
    assert seqbil.load(tmp_path / "m.sbm").training["params"]["shards"] == 2
    proc = subprocess.run([a for a in run if a != "-q"] + ["--shards", "2", "--workers", "1"], cwd=tmp_path, env=ENV,
                          capture_output=True)
    assert proc.returncode == 0 and b"Dask dashboard: http" in proc.stderr, proc.stderr.decode()
    proc = subprocess.run(run + ["--workers", "2"], cwd=tmp_path, env=ENV, capture_output=True)
    assert proc.returncode == 2 and b"go with --shards" in proc.stderr


@pytest.mark.parametrize("learner", ["sp", "bol"])
def test_a_worker_killed_mid_run_changes_nothing(tmp_path, learner):
    """SIGKILL of one of three workers while the shards train: its shard is read again
    on a worker that is left (or the one its nanny starts), redoes the epoch from the
    driver's parameters, and the model is the undisturbed run's, bit for bit."""
    import os
    import signal
    import threading
    import time
    with distributed.LocalCluster(n_workers=3, threads_per_worker=1, processes=True, dashboard_address=":0") as c, \
            distributed.Client(c) as three:
        want = train(shards=3, client=three, learner=learner, epochs=8)
        pids = three.run(os.getpid)
        victim = sorted(pids)[1]  # holds shard 2
        log, seen = tmp_path / "log.jsonl", []

        def kill_after_two_epochs():
            while not log.exists() or len(log.read_text().splitlines()) < 2:
                time.sleep(0.002)
            os.kill(pids[victim], signal.SIGKILL)
        killer = threading.Thread(target=kill_after_two_epochs, daemon=True)
        killer.start()
        got = train(shards=3, client=three, learner=learner, epochs=8, log=str(log), echo=seen.append)
        killer.join(timeout=5)
    same_model(got, want)
    recovered = [r for line in log.read_text().splitlines() for r in json.loads(line)["mixing"].get("recovered", [])]
    assert any(r["lost_worker"] == victim and r["shard"] == 2 for r in recovered)
    # (whether the scheduler still listed the killed worker when the loss was seen is a race:
    # "lost with Dask worker W" or "its inputs lost on Dask worker W", W the victim either way)
    assert any(line.startswith("shard 2 of 3 ") and f"Dask worker {victim} " in line for line in seen)


@pytest.mark.parametrize("learner", ["sp", "bol"])
def test_a_run_on_shards_resumes_from_its_checkpoint(client, tmp_path, learner):
    """Stopped after two epochs (Ctrl-C: the checkpoint is written), then resumed: the
    shards start from the checkpoint's parameters and random states, and the model
    file is the uninterrupted run's, byte for byte."""
    from test_reliability import interrupt_after
    data = str(sample_path("pku_train.utf8"))
    options = {"config": "sighan2005", "learner": learner, "epochs": 5, "shards": 2, "client": client}
    whole, part, ckpt = tmp_path / "whole.sbm", tmp_path / "part.sbm", tmp_path / "part.ckpt"
    seqbil.train(data, model=str(whole), **options)
    seqbil.train(data, model=str(part), checkpoint_every=100, checkpoint=str(ckpt), echo=interrupt_after(2),
                 **options)
    assert seqbil.load(part).training["passes_run"] == 2
    seqbil.resume(str(ckpt), str(part), client=client)
    assert part.read_bytes() == whole.read_bytes()


# --- the index of the shards -------------------------------------------------------

def prepared(path, config, client=None, **options):
    """training.prepare on a file, in one process or (client) on 3 shards."""
    from seqbil import params, training
    extra = {"shards": 3} if client is not None else {}
    settings = params.resolve(params.find_config(config), {"learner": "sp", "epochs": 1,
                                                                    "temperature": 1.0, **extra, **options})
    run = training.prepare(settings, str(path), None, None, config, None, lambda line: None, client)
    if run.mixer is not None:
        run.mixer.close()
    return run


def same_run(a, b):
    """The index, labels and corpus settings of two prepared runs."""
    assert a.labels == b.labels and a.model.corpus == b.model.corpus
    assert a.index.field_list == b.index.field_list
    for f in a.index.field_list:
        assert a.index.fields[f].strings == b.index.fields[f].strings, f
    for o in (0, 1):
        assert np.array_equal(a.index.tables[o][0], b.index.tables[o][0])
        assert np.array_equal(a.index.tables[o][1], b.index.tables[o][1])
    assert a.train_record == b.train_record
    assert sorted(a.index.lexicons) == sorted(b.index.lexicons)
    for name in a.index.lexicons:
        assert a.index.lexicons[name].entries == b.index.lexicons[name].entries
    assert (a.vectors is None) == (b.vectors is None)
    if a.vectors is not None:
        for name, table in a.vectors.tables.items():
            assert table.words == b.vectors.tables[name].words


def test_no_process_reads_the_whole_file_and_the_index_is_one_process_s(client, tmp_path):
    """The driver merges the shards' vocabularies and key counts: the index (ids
    included), labels, chunk scheme, training record, dictionaries from the training
    data and the rows the vectors keep are those of training in one process."""
    conll = sample_path("conll2000_train.txt")
    for options in ({}, {"min_count": 2}, {"normalize": "nfkc"}):
        same_run(prepared(conll, "conll2000", client, **options), prepared(conll, "conll2000", **options))
    # IOB1 (an I- tag starts a chunk) seen only in the last shard
    lines = conll.read_text().splitlines()
    iob1 = tmp_path / "iob1.txt"
    iob1.write_text("\n".join(lines[:-1] + ["x NN I-NP", "y NN I-NP", ""]) + "\n")
    one, three = prepared(iob1, "conll2000"), prepared(iob1, "conll2000", client)
    assert one.model.corpus["scheme"] == "iob1"
    same_run(three, one)
    pku = sample_path("pku_train.utf8")
    words = {"templates": ["U00:%x[0,0]", "U01:%x[0,0]%dict[w]", "U02:%x[-1,0]/%x[0,0]", "B"],
             "dictionaries": ["w=train"], "dict_folds": 0}
    same_run(prepared(pku, "sighan2005", client, **words), prepared(pku, "sighan2005", **words))
    vectors = tmp_path / "v.txt"
    vectors.write_text("the 1 0\nHe 0 1\nnever-seen 1 1\n, 0.5 0.5\n")
    vec = {"templates": ["U00:%x[0,0]", "U01:%vec[0,0,v]", "B"], "vectors": [f"v={vectors}"]}
    same_run(prepared(conll, "conll2000", client, **vec), prepared(conll, "conll2000", **vec))


def test_tokens_given_as_attributes_on_shards(client):
    data = sample_path("conll2000_train.crfsuite.gz")
    options = {"format": "crfsuite", "templates": ["U:%attr", "B"], "min_count": 2}
    same_run(prepared(data, "crfsuite", client, **options), prepared(data, "crfsuite", **options))


def test_a_bad_line_in_a_later_shard_is_named_by_its_place_in_the_file(client, tmp_path):
    lines = sample_path("conll2000_train.txt").read_text().splitlines()
    at = len(lines) * 5 // 6
    while lines[at] == "":
        at += 1
    lines[at] = "two fields"
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(seqbil.errors.InputError) as one:
        prepared(bad, "conll2000")
    # (what the module's earlier runs may still hold: their workers let it go on their own time)
    before = sum(client.run(kept_by_worker).values())
    with pytest.raises(seqbil.errors.InputError) as three:
        prepared(bad, "conll2000", client)
    assert str(three.value) == str(one.value) == f"{bad}:{at + 1}: expected 3 fields, found 2"
    # the shards read before the bad one are let go of (a cluster given by --scheduler lives on):
    # the workers hold nothing more than before this run
    assert sum(client.run(kept_by_worker).values()) <= before
    bad.write_text("")
    with pytest.raises(seqbil.errors.InputError, match="no sentences"):
        prepared(bad, "conll2000", client)


def kept_by_worker():
    """How many things a worker keeps for runs on shards."""
    from seqbil.dask import ipm_shards
    with ipm_shards._lock:
        return len(ipm_shards._shards) + len(ipm_shards._corpora) + len(ipm_shards._datasets)


@pytest.mark.parametrize("learner", ["sp", "bol"])
def test_the_mistakes_of_each_epoch_are_one_process_s_on_one_shard(client, tmp_path, learner):
    """What the log says of an epoch on shards: each shard's mistakes in that pass
    (bol also mixes a running count of its mistakes, which is not the epoch's)."""
    def logged(**options):
        log = tmp_path / "log.jsonl"
        train(learner=learner, log=str(log), **options)
        return [json.loads(line) for line in log.read_text().splitlines()]
    one, shard = logged(), logged(shards=1, client=client)
    assert [r["mistakes"] for r in shard] == [r["mistakes"] for r in one]
    for r in logged(shards=2, client=client):
        assert sum(r["mixing"]["shard_mistakes"]) == r["mistakes"] <= 500


@pytest.mark.parametrize("learner,averaged", [("sp", True), ("bol", True), ("bol", False)])
def test_the_mix_in_many_ranges_is_the_mix_in_one(client, monkeypatch, tmp_path, learner, averaged):
    """The driver collects and mixes the shards' entries a range of rows at a time:
    however many ranges, the same model (bol refreshes the mixed blocks range by range)."""
    log = tmp_path / "log.jsonl"
    # (two epochs: the second mixes a model the first mix made)
    whole = train(shards=2, client=client, learner=learner, averaged=averaged, log=str(log), epochs=2)
    assert all(json.loads(line)["mixing"]["ranges"] == 1 for line in log.read_text().splitlines())
    monkeypatch.setattr(ipm.Mixer, "RANGE_ENTRIES", 300)
    ranged = train(shards=2, client=client, learner=learner, averaged=averaged, log=str(log), epochs=2)
    assert max(json.loads(line)["mixing"]["ranges"] for line in log.read_text().splitlines()) > 10
    same_model(ranged, whole)


def test_ranges_cover_the_buckets_in_order():
    rng = np.random.default_rng(0)
    for _ in range(50):
        counts = rng.integers(0, 100, size=ipm_mix.BUCKETS) * (rng.random(ipm_mix.BUCKETS) < 0.5)
        target = int(rng.integers(1, 2000))
        out = ipm_mix.ranges(counts, target)
        assert out[0][0] == 0 and out[-1][1] == ipm_mix.BUCKETS
        assert all(a[1] == b[0] for a, b in zip(out, out[1:])) and all(lo < hi for lo, hi in out)
        # a range goes past the target only by its first bucket
        assert all(counts[lo:hi].sum() <= target or hi - lo == 1 or counts[lo:hi - 1].sum() <= target
                   for lo, hi in out)
        for n in (1, 7, 1000, 12345):
            rows = [ipm_mix.bucket_rows(lo, hi, n) for lo, hi in out]
            assert rows[0][0] == 0 and rows[-1][1] == n and all(a[1] == b[0] for a, b in zip(rows, rows[1:]))
            for (lo, hi), (a, b) in zip(out, rows):
                assert all(lo <= r * ipm_mix.BUCKETS // n < hi for r in range(a, b))
