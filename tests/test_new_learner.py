"""What a new learner takes: one class with @register, its options as Param entries.

The learner here is the structured perceptron without averaging, written in numpy
(its own score tables, Viterbi from the decoder); registered from this module, as a
user's own learner would be, it trains through seqbil.train, has its option in the
parameter table with its range checked, and saves a model that loads and tags like
any other. Its models tag as sp's unaveraged ones, trained on the same order.
"""
import json

import numpy as np
import pytest

import seqbil
from conftest import sample_head
from seqbil import params
from seqbil._kernels.decode import viterbi_best
from seqbil.learners import LEARNERS, OnlineLearner, register
from seqbil.parameter import Param
from seqbil.samples import sample_path


class NumpyPerceptron(OnlineLearner):
    name = "numpy-sp"
    summary = "structured perceptron in numpy, without averaging"
    averages = False
    options = (Param("numpy_step", float, 1.0, "the size of each perceptron update", positive=True),)
    checkpointed = OnlineLearner.checkpointed.plus(arrays=("W0", "W1", "end"))

    def __init__(self, n_labels, n_attributes0, n_attributes1, settings, transitions=True, tasks=None):
        super().__init__(n_labels, n_attributes0, n_attributes1, settings, transitions, tasks)
        S = self.S
        self.W0, self.W1 = np.zeros((self.A0, S)), np.zeros((self.A1, S, S + 1))
        self.end = np.zeros(S)
        self.step = settings.numpy_step

    def train_chunk(self, data, order):
        mistakes, S = 0, self.S
        b_ptr = data.b_pointers()  # (the training corpus may keep a fixed width instead)
        for j in order:
            lo, hi = data.seq_ptr[j], data.seq_ptr[j + 1]
            gold = data.labels[lo:hi]
            unary, pair = np.zeros((hi - lo, S)), np.zeros((hi - lo, S, S + 1))
            for i, p in enumerate(range(lo, hi)):  # the score tables, as test_decode.tables
                unary[i] = self.W0[data.u_ids[data.u_ptr[p]:data.u_ptr[p + 1]]].sum(axis=0)
                pair[i] = self.W1[data.b_ids[b_ptr[p]:b_ptr[p + 1]]].sum(axis=0)
            pred, _ = viterbi_best(unary, pair, self.trans, self.end)
            if np.array_equal(pred, gold):
                continue
            mistakes += 1
            for ys, sign in ((gold, self.step), (pred, -self.step)):
                for i, p in enumerate(range(lo, hi)):
                    prev = ys[i - 1] if i else S  # S: the start symbol
                    for k in range(data.u_ptr[p], data.u_ptr[p + 1]):
                        self.W0[data.u_ids[k], ys[i]] += sign
                    for k in range(b_ptr[p], b_ptr[p + 1]):
                        self.W1[data.b_ids[k], ys[i], prev] += sign
                    if self.transitions:
                        self.trans[ys[i], prev] += sign
                self.end[ys[-1]] += sign
        return mistakes

    def parameters(self):
        return "linear", {"W0": self.W0.copy(), "W1": self.W1.copy(), "trans": self.trans.copy(),
                          "end": self.end.copy()}


@pytest.fixture
def registered():
    register(NumpyPerceptron)
    yield
    del LEARNERS[NumpyPerceptron.name]  # (the table follows the registry: params._table)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The first 60 sentences of the CoNLL-2000 sample."""
    return sample_head("conll2000_train.txt", 60, tmp_path_factory.mktemp("corpus") / "train.txt")


def test_a_registered_learner_trains_saves_and_tags_as_its_reference(registered, corpus, tmp_path):
    blocks = sample_path("conll2000_test.txt").read_text(encoding="utf-8").strip().split("\n\n")[:40]
    test = [[line.split()[:2] for line in block.splitlines()] for block in blocks]
    model = seqbil.train(train=str(corpus), config="conll2000", learner="numpy-sp", epochs=2,
                         model=str(tmp_path / "m.sbm"), log=str(tmp_path / "mine.log"))
    assert model.training["learner"] == "numpy-sp" and model.training["params"]["numpy_step"] == 1.0
    loaded = seqbil.load(str(tmp_path / "m.sbm"))
    sp = seqbil.train(train=str(corpus), config="conll2000", learner="sp", averaged=False, C=1.0, epochs=2,
                      log=str(tmp_path / "sp.log"))
    assert [loaded.tag(s) for s in test] == [sp.tag(s) for s in test] == [model.tag(s) for s in test]
    mistakes = [[json.loads(line)["mistakes"] for line in (tmp_path / f"{name}.log").open()] for name in ("mine", "sp")]
    assert mistakes[0] == mistakes[1] and mistakes[0][0] > mistakes[0][1] > 0


def test_a_registered_learners_option_joins_the_parameter_table(registered):
    entry = params.by_name()["numpy_step"]
    assert entry.learners == ("numpy-sp",) and "numpy-sp" in params.by_name()["learner"].choices
    assert "numpy_step" in params.describe("markdown", learner="numpy-sp")
    assert params.resolve(None, {"learner": "numpy-sp", "numpy_step": 0.5}).numpy_step == 0.5
    with pytest.raises(seqbil.SeqbilError, match="numpy_step must be positive"):
        params.resolve(None, {"learner": "numpy-sp", "numpy_step": -1.0})


def test_the_table_forgets_a_learner_taken_out_of_the_registry():
    assert "numpy_step" not in params.by_name() and "numpy-sp" not in params.by_name()["learner"].choices
