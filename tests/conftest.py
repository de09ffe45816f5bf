import numpy as np
import pytest
from hypothesis import settings

from seqbil.formats import Sentence
from seqbil.samples import sample_path

# no time limit per example: the properties are about results, and a loaded machine
# (CI's two cores shared with other work) makes an example take any time
settings.register_profile("seqbil", deadline=None)
settings.load_profile("seqbil")

# The modules that take longest, longest first: the workers take modules whole, in the
# order collected (pyproject.toml: --dist loadfile --no-loadscope-reorder), so these start
# first and the short ones fill in around them; in file order a minute-long module drawn
# last kept one worker running alone at the end. Measured with --durations=0.
LONGEST_FIRST = ("test_experiments.py", "test_ipm.py", "test_docs.py", "test_fuzz_files.py", "test_kill_outputs.py",
                 "test_untrusted_files.py", "test_benchmarks.py", "test_auto_learner.py", "test_tag_jobs.py",
                 "test_multitask.py")


def pytest_collection_modifyitems(items):
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # (stable: the rest keep their order)


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def client():
    """A Dask client of a local cluster of two worker processes (one thread each), one
    per test module."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as c, \
            distributed.Client(c) as client:
        yield client


@pytest.fixture
def conll_sample():
    return sample_path("conll2000_train.txt")


@pytest.fixture
def pku_sample():
    return sample_path("pku_train.utf8")


def sentence(*columns, labels=None):
    """A Sentence from token columns, e.g. sentence(["He", "ran"], ["PRP", "VBD"], labels=["B-NP", "B-VP"])."""
    return Sentence([list(c) for c in columns] + ([None] if labels is not None else []), labels, 1)


def sample_head(name, n, path):
    """The first n sentences of a bundled CoNLL sample, written to path (returned)."""
    blocks = sample_path(name).read_text(encoding="utf-8").strip().split("\n\n")[:n]
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    return path
