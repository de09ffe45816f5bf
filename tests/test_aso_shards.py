"""seqbil aso --shards K (seqbil/dask/aso.py) on a local Dask cluster, against the
structure learned in one process and, for the SGD rounds, against the shards' own
runs averaged by hand."""
import numpy as np
import pytest
from click.testing import CliRunner

distributed = pytest.importorskip("distributed")

from seqbil.api import learn_structure  # noqa: E402
from seqbil.aso import StructureLearner, split_specs  # noqa: E402
from seqbil.aso_svd import top_singular  # noqa: E402
from seqbil.aso_text import merge_values, read_text  # noqa: E402
from seqbil.cli import main  # noqa: E402
from seqbil.features.structure import Structure  # noqa: E402
from seqbil.features.templates import TemplateSet, parse_template  # noqa: E402
from seqbil.params import resolve  # noqa: E402

from test_aso import markov_text, write_parts  # noqa: E402

CLOSED = ["left: %x[-1,0] -> 0", "right: %x[1,0]|lower -> 0"]  # one template each: closed form
SGD = ["left: %x[-1,0]|lower %x[-2,0]|lower -> 0", "word: %x[0,0] %x[0,0]|suffix:2 -> -1 1"]
OPTIONS = {"targets": 12, "dim": 4, "aux_min_count": 2, "aux_epochs": 2}


@pytest.fixture(scope="module")
def text(tmp_path_factory):
    rng = np.random.default_rng(5)
    return [str(p) for p in write_parts(tmp_path_factory.mktemp("aso_shards"), markov_text(rng, n_sent=300,
                                                                                         words=50))]


def assert_same_structure(a, b):
    """The same index, and the same Theta up to float32 rounding: the same subspace
    (principal angles ~0) in the same canonical basis (aso_svd.canonical_basis), whatever
    order the sums of the shards and of the solver took on this machine."""
    assert [s.name for s in a.splits] == [s.name for s in b.splits]
    for x, y in zip(a.splits, b.splits):
        np.testing.assert_array_equal(x.index.tables[0][0], y.index.tables[0][0])
        np.testing.assert_array_equal(x.index.tables[0][1], y.index.tables[0][1])
        assert x.theta.shape == y.theta.shape
        cosines = np.linalg.svd(x.theta.T.astype(np.float64) @ y.theta, compute_uv=False)
        live = np.abs(x.theta).max(axis=0) > 0  # directions of singular value ~0 are 0
        assert cosines[:live.sum()].min() > 1 - 1e-6, cosines
        np.testing.assert_allclose(x.theta, y.theta, rtol=0, atol=1e-5)
        assert x.rms == pytest.approx(y.rms, rel=1e-5)


@pytest.mark.parametrize("K", [1, 2, 3])
def test_closed_form_splits_on_shards_are_the_one_process_structure(client, text, K):
    """The first round in closed form adds the shards' counts: index, Theta and RMS are
    those of one process, however many shards (3 shards on 2 workers too)."""
    one = learn_structure(text, splits=CLOSED, **OPTIONS)
    sharded = learn_structure(text, splits=CLOSED, shards=K, client=client, **OPTIONS)
    assert_same_structure(one, sharded)
    assert sharded.provenance["shards"] == K


def test_one_shard_is_one_process_for_sgd_too(client, text):
    one = learn_structure(text, splits=SGD, **OPTIONS)
    sharded = learn_structure(text, splits=SGD, shards=1, client=client, **OPTIONS)
    assert_same_structure(one, sharded)


def test_sgd_on_shards_is_parameter_mixing_of_the_shards_epochs(client, text):
    """Each SGD split's weights: every epoch, each shard's pass (a StructureLearner on its
    part of the text, with the whole text's vocabularies, index and targets) from the
    mixed weights, which are then the passes' weights averaged by tokens; then the one
    process's SVD. Done here by hand, shard after shard."""
    K = 2
    sharded = learn_structure(text, splits=SGD, shards=K, client=client, **OPTIONS)
    settings = resolve(None, {"splits": SGD, **OPTIONS})
    whole, _ = read_text(text, "token")
    n = len(whole)
    parts = merge_values([read_text(text, "token", keep=(n * k // K, n * (k + 1) // K))[0] for k in range(K)])
    ref = StructureLearner(settings, whole, "token", split_specs(settings, "conll"))
    ref.targets = {0: (*ref.target_table(settings.targets, 0)[:2], 0.0)}
    learners = [StructureLearner(settings, part, "token", []) for part in parts]
    for lrn in learners:
        lrn.targets = ref.targets
    mu = [np.float32(p.n_tokens / whole.n_tokens) for p in parts]
    for (name, texts, offsets, column), got in zip(split_specs(settings, "conll"), sharded.splits):
        templates = TemplateSet(parse_template(t) for t in texts)
        counts = ref.split_text(name, templates).key_counts()
        np.testing.assert_array_equal(ref.split_text(name, templates).index.tables[0][0], got.index.tables[0][0])
        epochs = []
        for lrn in learners:
            t = lrn.split_text(name, templates)
            t.set_counts(counts, settings.aux_min_count)
            epochs.append(lrn.sgd_epochs(t, 0, name, offsets, column, None))
        for e in range(settings.aux_epochs):
            runs = [next(steps) for steps in epochs]
            mixed = []
            for b in range(len(runs[0])):
                W = np.zeros_like(runs[0][b][2])
                for run, m in zip(runs, mu):
                    W += m * run[b][2]
                mixed.append(W)
                for run in runs:
                    run[b][2][:] = W
        theta, _ = top_singular(mixed, settings.dim, settings.seed)
        np.testing.assert_allclose(got.theta, theta, rtol=1e-4, atol=1e-5)


def test_the_cli_learns_on_shards_and_writes_vectors(tmp_path, text):
    out, vec = tmp_path / "s.sbs", tmp_path / "s.vec"
    args = ["aso", "-q", "--unlabeled", *text, "--out", str(out), "--split", CLOSED[0], "--split",
            "word: %x[0,0] -> -1 1", "--targets", "12", "--dim", "4"]
    r = CliRunner().invoke(main, args + ["--shards", "2", "--workers", "2", "--vectors", str(vec)])
    assert r.exit_code == 0, r.output
    one = CliRunner().invoke(main, args + ["--vectors", str(tmp_path / "one.vec")])
    assert one.exit_code == 0, one.output
    assert_same_structure(Structure.load(out), learn_structure(text, splits=[CLOSED[0], "word: %x[0,0] -> -1 1"],
                                                               targets=12, dim=4))
    mine, theirs = (p.read_text().split("\n") for p in (vec, tmp_path / "one.vec"))
    assert mine[0] == theirs[0] and len(mine) == len(theirs)
    for a, b in zip(mine[1:], theirs[1:]):
        assert a.split()[0] == b.split()[0] if a else not b
        np.testing.assert_allclose([float(x) for x in a.split()[1:]], [float(x) for x in b.split()[1:]], rtol=1e-5)
    r = CliRunner().invoke(main, args + ["--workers", "2"])
    assert r.exit_code == 2 and "--shards" in r.output


def test_shards_without_text_take_no_part(client, tmp_path):
    """More shards than sentences: the empty ones count nothing and weigh nothing."""
    path = tmp_path / "few.txt"
    path.write_text("a b c a b\nb c a\n\nc a b c\n", encoding="utf-8")
    options = {**OPTIONS, "aux_min_count": 1, "dim": 2, "targets": 3}
    one = learn_structure([str(path)], splits=CLOSED, **options)
    assert_same_structure(one, learn_structure([str(path)], splits=CLOSED, shards=5, client=client, **options))
    one = learn_structure([str(path)], splits=SGD, **options)
    sharded = learn_structure([str(path)], splits=SGD, shards=5, client=client, **options)
    for x, y in zip(one.splits, sharded.splits):  # (the mix of three one-sentence passes is not one pass)
        np.testing.assert_array_equal(x.index.tables[0][0], y.index.tables[0][0])
        assert y.theta.shape == x.theta.shape and np.isfinite(y.theta).all()
