import numpy as np
import pytest

from seqbil._kernels.bcd import BCDKernel
from seqbil._kernels.decode import decode_corpus
from seqbil.features.dataset import encode
from seqbil.learners import LEARNERS
from seqbil.params import Settings
from seqbil.features.templates import TemplateSet, parse_template
from test_perceptron import separable_corpus, train_epochs

TEMPLATES = ["U00:%x[0,0]", "B01:%x[0,0]", "B02:%x[-1,0]", "B"]


def sequence_score(data, j, labels, W0, trans, end, alpha, beta):
    """Score of a label sequence computed term by term (eq. 1 plus the linear part; a
    0-order entry with value x adds x * W0[a, y], x = 1 when data.u_vals is None)."""
    a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
    S = len(end)
    vals = np.ones(len(data.u_ids)) if data.u_vals is None else data.u_vals.astype(np.float64)
    total = end[labels[-1]]
    for i, p in enumerate(range(a, b)):
        prev = labels[i - 1] if i else S
        total += trans[labels[i], prev]
        total += sum(vals[k] * W0[data.u_ids[k], labels[i]] for k in range(data.u_ptr[p], data.u_ptr[p + 1]))
        total += sum(alpha[k, labels[i]] * beta[k, prev] for k in data.b_ids[data.b_ptr[p]:data.b_ptr[p + 1]])
    return total


@pytest.mark.parametrize("side", [0, 1])
def test_one_pa_step_makes_the_margin_exactly_one(rng, side):
    """PA-I with a step below C lands exactly on the margin: s(gold) - s(old guess) = 1."""
    sentences = separable_corpus(rng, 10)
    data, index = encode(sentences, TemplateSet(parse_template(t) for t in TEMPLATES), None, ["B", "I", "O"])
    A0, A1 = index.n_attributes(0), index.n_attributes(1)
    W0, end, trans = rng.normal(size=(A0, 3)) * 0.1, rng.normal(size=3) * 0.1, rng.normal(size=(3, 4)) * 0.1
    alpha, beta = rng.normal(size=(A1, 3)), rng.normal(size=(A1, 4))
    kernel = BCDKernel(W0, trans, end, alpha, beta, np.full(A0, -1, np.int32), np.full(A1, -1, np.int32), 1e9, True)
    weights = {"W0": W0, "trans": trans, "end": end, "alpha": alpha, "beta": beta}
    checked = 0
    for j in range(data.n_sequences):
        out = np.zeros(data.n_positions, dtype=np.int32)
        decode_corpus(data, weights, out)
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        guess, gold = list(out[a:b]), list(data.labels[a:b])
        if guess == gold:
            continue
        mistakes = kernel.train_chunk(data, np.array([j], dtype=np.int64), side)
        assert mistakes == 1
        margin = sequence_score(data, j, gold, W0, trans, end, alpha, beta) - \
            sequence_score(data, j, guess, W0, trans, end, alpha, beta)
        assert margin == pytest.approx(1.0, abs=1e-9)
        checked += 1
    assert checked >= 3


def test_bcd_learns_a_toy_corpus(rng):
    sentences = separable_corpus(rng)
    data, index = encode(sentences, TemplateSet(parse_template(t) for t in TEMPLATES), None, ["B", "I", "O"])
    learner = LEARNERS["bcd"](3, index.n_attributes(0), index.n_attributes(1), Settings.of({"bcd_rounds": 2}))
    history = []
    for k in range(learner.passes()):
        learner.start_pass(k)
        history += train_epochs(learner, data, 1, seed=k)
    assert learner.pass_name(5) == "round 1/2 beta epoch 1/5"
    assert history[0] > 0 and history[-1] == 0


def test_bcd_says_it_does_not_read_epochs(tmp_path):
    """bcd's passes are 2 x bcd_rounds x bcd_epochs: a given --epochs is named as unread,
    and the header does not show it as a setting."""
    from click.testing import CliRunner
    from seqbil.cli import main
    from seqbil.samples import sample_path
    r = CliRunner().invoke(main, ["train", "--learner", "bcd", "--epochs", "3", "--bcd-epochs", "1", "--temperature",
                                  "1", "--train", str(sample_path("conll2000_train.txt")), "--model",
                                  str(tmp_path / "b.sbm")])
    assert r.exit_code == 0, r.output
    assert "bcd does not read epochs: its passes are 2 x bcd_rounds x bcd_epochs = 4" in r.output
    header = next(line for line in r.output.splitlines() if line.startswith("learner bcd"))
    assert "epochs 3" not in header and "bcd_epochs 1" in header
    assert sum(line.startswith("round ") or "epoch" in line.split(":")[0] for line in r.output.splitlines()) >= 4
