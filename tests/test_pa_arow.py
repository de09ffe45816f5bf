"""The learners pa and arow against dense numpy references written from CRFsuite's
train_passive_aggressive.c and train_arow.c (Viterbi by enumerating every label path,
the difference vector F(x, y) - F(x, y') dense), and their runs: F1 on the bundled
sample, checkpoints, --init-model, shards and the command line."""
import itertools
import json
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest

import seqbil
from seqbil.errors import ConfigError
from seqbil.learners import LEARNERS
from seqbil.model import Model
from seqbil.params import Settings
from seqbil.samples import sample_path
from test_cli import ENV
from test_init_model import corpus, sentences, weights_by_position, write_config
from test_reliability import interrupt_after

TOL = dict(rtol=1e-9, atol=1e-12)
NAMES = ("W0", "W1", "trans", "end")


# --- small random cases --------------------------------------------------------------

def make_case(seed, values=False, transitions=True, csr=False):
    """A few random encoded sequences (lengths 1..4) over S in {2, 3} labels: 5 0-order
    attributes (1..3 per position, values 1 or random float32), 4 1st-order ones (one per
    position, or 0..2 by CSR pointers), random start weights (trans zero without
    transitions: it is then never learned and stays as the learners allocate it)."""
    rng = np.random.default_rng(seed)
    S, A0, A1 = int(rng.integers(2, 4)), 5, 4
    lens = rng.integers(1, 5, int(rng.integers(3, 6)))
    P = int(lens.sum())
    u_ptr = np.concatenate([[0], np.cumsum(rng.integers(1, 4, P))]).astype(np.int64)
    u_ids = rng.integers(0, A0, u_ptr[-1]).astype(np.int32)
    b_ptr = np.concatenate([[0], np.cumsum(rng.integers(0, 3, P))]).astype(np.int64) if csr else None
    data = SimpleNamespace(
        seq_ptr=np.concatenate([[0], np.cumsum(lens)]).astype(np.int64), labels=rng.integers(0, S, P).astype(np.int32),
        u_ptr=u_ptr, u_ids=u_ids, u_vals=rng.uniform(0.5, 2.0, len(u_ids)).astype(np.float32) if values else None,
        b_ptr=b_ptr, b_ids=rng.integers(0, A1, P if b_ptr is None else b_ptr[-1]).astype(np.int32),
        b_width=0 if csr else 1, seq_task=None, seq_wrong=None)
    shapes = [(A0, S), (A1, S, S + 1), (S, S + 1), (S,)]
    weights = [rng.normal(0, 0.5, s) for s in shapes]
    if not transitions:
        weights[2][:] = 0.0
    n = len(lens)
    return SimpleNamespace(data=data, S=S, A0=A0, A1=A1, transitions=transitions, shapes=shapes, weights=weights,
                           orders=[rng.permutation(n), rng.integers(0, n, n + 3)], rng=rng)


def psi(case, j, y):
    """F(x, y) of sequence j, dense and flat in the order W0, W1, trans, end."""
    d, S = case.data, case.S
    f = [np.zeros(s) for s in case.shapes]
    prev = S
    for i, yi in enumerate(y):
        p = d.seq_ptr[j] + i
        for q in range(d.u_ptr[p], d.u_ptr[p + 1]):
            f[0][d.u_ids[q], yi] += 1.0 if d.u_vals is None else float(d.u_vals[q])
        lo, hi = (d.b_ptr[p], d.b_ptr[p + 1]) if d.b_ptr is not None else (p * d.b_width, (p + 1) * d.b_width)
        for b in d.b_ids[lo:hi]:
            f[1][b, yi, prev] += 1.0
        if case.transitions:
            f[2][yi, prev] += 1.0
        prev = yi
    f[3][y[-1]] += 1.0
    return np.concatenate([a.ravel() for a in f])


def flat(arrays):
    return np.concatenate([np.asarray(a).ravel() for a in arrays])


def unflat(case, v):
    sizes = np.cumsum([np.prod(s) for s in case.shapes])[:-1]
    return dict(zip(NAMES, (a.reshape(s) for a, s in zip(np.split(v, sizes), case.shapes))))


def viterbi(case, j, w):
    """(the best path, its score) by enumeration: gm->viterbi of CRFsuite."""
    d = case.data
    n = int(d.seq_ptr[j + 1] - d.seq_ptr[j])
    paths = list(itertools.product(range(case.S), repeat=n))
    scores = [w @ psi(case, j, y) for y in paths]
    best = int(np.argmax(scores))
    return paths[best], scores[best]


def gold(case, j):
    d = case.data
    return tuple(int(y) for y in d.labels[d.seq_ptr[j]:d.seq_ptr[j + 1]])


def crfsuite_pa(case, orders, pa_type, c, error_sensitive):
    """train_passive_aggressive.c's epoch loop over the given orders from the case's
    weights: returns w, its average w - ws / u, the mistakes per order and every tau."""
    w, ws, u = flat(case.weights), np.zeros(sum(np.prod(s) for s in case.shapes)), 1
    mistakes, taus = [], []
    for order in orders:
        wrong = 0
        for j in order:
            y = gold(case, j)
            viterbi_path, sv = viterbi(case, j, w)
            d = sum(a != b for a, b in zip(y, viterbi_path))  # diff()
            if d > 0:
                wrong += 1
                sc = w @ psi(case, j, y)  # gm->score
                cost = sv - sc + (np.sqrt(d) if error_sensitive else 1.0)  # cost_sensitive / cost_insensitive
                delta = psi(case, j, y) - psi(case, j, viterbi_path)
                norm2 = delta @ delta
                tau = {0: cost / norm2, 1: min(c, cost / norm2), 2: cost / (norm2 + 0.5 / c)}[pa_type]
                w, ws = w + tau * delta, ws + tau * u * delta  # delta_add
                taus.append(tau)
            u += 1
        mistakes.append(wrong)
    return unflat(case, w), unflat(case, w - ws / u), mistakes, taus


def crfsuite_arow(case, orders, variances, gamma):
    """train_arow.c's epoch loop from the case's weights (mean) and these variances
    (cov): returns mean, cov and the mistakes per order."""
    mean, cov = flat(case.weights), flat(variances)
    mistakes = []
    for order in orders:
        wrong = 0
        for j in order:
            y = gold(case, j)
            viterbi_path, sv = viterbi(case, j, mean)
            d = sum(a != b for a, b in zip(y, viterbi_path))
            if d > 0:
                wrong += 1
                sc = mean @ psi(case, j, y)
                cost = sv - sc + d
                on_gold, on_viterbi = psi(case, j, y), psi(case, j, viterbi_path)
                delta = on_gold - on_viterbi
                actives = (on_gold != 0) | (on_viterbi != 0)  # the features on either path
                prod = delta * delta
                alpha = cost / (gamma + np.sum(prod[actives] * cov[actives]))
                mean = mean + np.where(actives, alpha * cov * delta, 0.0)
                cov = np.where(actives, 1.0 / (1.0 / cov + prod / gamma), cov)
        mistakes.append(wrong)
    return unflat(case, mean), unflat(case, cov), mistakes


def learner(case, name, **settings):
    out = LEARNERS[name](case.S, case.A0, case.A1, Settings.of(settings), case.transitions)
    out.warm_start({n: a.copy() for n, a in zip(NAMES, case.weights)})
    return out


# --- pa ---------------------------------------------------------------------------------

@pytest.mark.parametrize("averaged", [False, True])
@pytest.mark.parametrize("error_sensitive", [False, True])
@pytest.mark.parametrize("pa_type", [0, 1, 2])
@pytest.mark.parametrize("values,transitions,csr", [(False, True, False), (True, False, True), (True, True, True)])
@pytest.mark.parametrize("seed", range(2))
def test_pa_matches_crfsuite(seed, values, transitions, csr, pa_type, error_sensitive, averaged):
    """Two chunks (a permutation, then a draw with repeats): the weights, the averages as
    parameters() gives them and the mistakes equal the reference's."""
    case = make_case(seed * 97 + 8 * values + 4 * transitions + 2 * csr + pa_type, values, transitions, csr)
    C = (0.05, 3.0)[seed]
    pa = learner(case, "pa", pa_type=pa_type, pa_error_sensitive=error_sensitive, averaged=averaged, C=C)
    mistakes = [pa.train_chunk(case.data, np.asarray(o, dtype=np.int64)) for o in case.orders]
    w, avg, want_mistakes, taus = crfsuite_pa(case, case.orders, pa_type, C, error_sensitive)
    assert mistakes == want_mistakes and mistakes[0] > 0
    assert pa.counter == 1 + sum(map(len, case.orders))
    kind, params = pa.parameters()
    assert kind == "linear"
    for name in NAMES:
        np.testing.assert_allclose(getattr(pa, name), w[name], **TOL, err_msg=name)
        np.testing.assert_allclose(params[name], (avg if averaged else w)[name], **TOL, err_msg=name)
    if pa_type == 1:  # the cap C binds for the small C and not for the large one
        assert any(t == C for t in taus) if C < 1 else all(t < C for t in taus)


@pytest.mark.parametrize("seed", range(4))
def test_pa2_without_error_sensitivity_is_rpa_zero_one_without_emb(seed):
    """rpa without %emb templates is structured PA-II: with the zero-one cost it is pa's
    pa_type 2 without error sensitivity, weight for weight."""
    case = make_case(300 + seed, values=seed % 2 == 1, transitions=seed < 2)
    pa = learner(case, "pa", pa_type=2, pa_error_sensitive=False, C=0.7)
    rpa = learner(case, "rpa", rpa_loss="zero-one", C=0.7)
    for o in case.orders:
        order = np.asarray(o, dtype=np.int64)
        assert pa.train_chunk(case.data, order) == rpa.train_chunk(case.data, order)
    for name, value in pa.parameters()[1].items():
        np.testing.assert_array_equal(value, rpa.parameters()[1][name], err_msg=name)


def test_pa_type_is_checked():
    with pytest.raises(ConfigError, match="pa_type = 3: choose one of 0, 1, 2"):
        seqbil.train(config="conll2000", learner="pa", pa_type=3, epochs=1)


# --- arow -------------------------------------------------------------------------------

@pytest.mark.parametrize("gamma,variance", [(1.0, 1.0), (0.3, 2.0), (5.0, None)])
@pytest.mark.parametrize("values,transitions,csr", [(False, True, False), (True, False, True), (True, True, True)])
@pytest.mark.parametrize("seed", range(3))
def test_arow_matches_crfsuite(seed, values, transitions, csr, gamma, variance):
    """Means and variances after two chunks equal the reference's, from the option's
    variance (None: a random variance per weight)."""
    case = make_case(seed * 89 + 8 * values + 4 * transitions + 2 * csr, values, transitions, csr)
    arow = learner(case, "arow", arow_gamma=gamma, arow_variance=variance or 1.0)
    if variance is None:
        for name in ("V0", "V1", "Vtrans", "Vend"):
            getattr(arow, name)[...] = case.rng.uniform(0.2, 3.0, getattr(arow, name).shape)
    start = [getattr(arow, name).copy() for name in ("V0", "V1", "Vtrans", "Vend")]
    assert all(np.all(v == variance) for v in start) or variance is None
    mistakes = [arow.train_chunk(case.data, np.asarray(o, dtype=np.int64)) for o in case.orders]
    mean, cov, want_mistakes = crfsuite_arow(case, case.orders, start, gamma)
    assert mistakes == want_mistakes and mistakes[0] > 0
    kind, params = arow.parameters()
    assert kind == "linear"
    for name, vname in zip(NAMES, ("V0", "V1", "Vtrans", "Vend")):
        np.testing.assert_allclose(params[name], mean[name], **TOL, err_msg=name)
        np.testing.assert_allclose(getattr(arow, vname), cov[name], **TOL, err_msg=vname)
    assert np.any(arow.V0 < start[0])  # the variances of the features of a mistake shrink


def test_arow_does_not_average():
    assert not LEARNERS["arow"].averages and LEARNERS["pa"].averages
    case = make_case(7)
    arow = learner(case, "arow", averaged=True)
    arow.train_chunk(case.data, np.asarray(case.orders[0], dtype=np.int64))
    for name, value in arow.parameters()[1].items():
        assert value is getattr(arow, name)


# --- runs ---------------------------------------------------------------------------------

def f1(model):
    return seqbil.evaluate(model, str(sample_path("conll2000_test.txt")))["f1"]


def test_pa_and_arow_chunk_about_as_well_as_sp():
    sp = f1(seqbil.train(config="conll2000", learner="sp", epochs=3))
    pa = f1(seqbil.train(config="conll2000", learner="pa", epochs=3))
    assert abs(pa - sp) < 2.0, (pa, sp)
    # AROW keeps its last means (CRFsuite does not average it): compare with sp likewise
    arow = f1(seqbil.train(config="conll2000", learner="arow", epochs=3))
    sp_last = f1(seqbil.train(config="conll2000", learner="sp", epochs=3, averaged=False))
    assert arow > sp_last - 2.0 and arow > 80.0, (arow, sp_last)


@pytest.mark.parametrize("name, extra", [("pa", {}), ("pa", {"pa_type": 2, "averaged": False}), ("arow", {})])
def test_interrupted_and_resumed_run_gives_the_same_model_bytes(tmp_path, name, extra):
    options = {"config": "sighan2005", "learner": name, "epochs": 4, **extra}
    data = str(sample_path("pku_train.utf8"))
    whole = tmp_path / "whole.sbm"
    seqbil.train(data, model=str(whole), **options)
    part, ckpt = tmp_path / "part.sbm", tmp_path / "part.ckpt"
    seqbil.train(data, model=str(part), checkpoint_every=100, checkpoint=str(ckpt), echo=interrupt_after(2),
                 **options)
    assert Model.load(part).training["passes_run"] == 2
    seqbil.resume(str(ckpt), str(part))
    assert part.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize("seed", range(2))
def test_pa_continued_equals_one_online_run(tmp_path, seed):
    """Without averaging, pa's state is its weights: continuing a model on a second
    corpus is one online run over the first corpus and then the second."""
    from seqbil.features.dataset import encode
    from seqbil.features.templates import TemplateSet, parse_template
    from test_init_model import TEMPLATES
    rng = np.random.default_rng(seed)
    first = corpus(rng, 25, list("abcd"), ["A", "B", "C"])
    second = corpus(rng, 20, list("cdefg"), ["B", "C"])
    config = write_config(tmp_path / "c.toml", "pa")
    seqbil.train(first, config=config, epochs=2, model=str(tmp_path / "m1.sbm"), precision="float64")
    continued = seqbil.train(second, init_model=str(tmp_path / "m1.sbm"), epochs=1, precision="float64")
    assert continued.training["init_model"]["path"] == str(tmp_path / "m1.sbm")

    templates = TemplateSet(parse_template(t) for t in TEMPLATES)
    both = sentences(first) + sentences(second)
    labels = ["A", "B", "C"]
    data, index = encode(both, templates, None, labels)
    pa = LEARNERS["pa"](3, index.n_attributes(0), index.n_attributes(1), Settings.of({"averaged": False}), True)
    order_rng = np.random.default_rng(3)
    for _ in range(2):
        pa.train_chunk(data, order_rng.permutation(len(first)).astype(np.int64))
    order_rng = np.random.default_rng(3)
    pa.train_chunk(data, (len(first) + order_rng.permutation(len(second))).astype(np.int64))
    kind, weights = pa.parameters()
    reference = Model(kind, labels, index, {"format": "conll", "n_fields": 2, "metric": "accuracy"}, weights)
    got, want = weights_by_position(continued, both), weights_by_position(reference, both)
    assert len(got) == len(want) == sum(map(len, both))
    for (gu, gb), (wu, wb) in zip(got, want):
        np.testing.assert_allclose(gu, wu, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gb, wb, rtol=1e-12, atol=1e-12)
    for name in ("trans", "end"):
        np.testing.assert_allclose(continued.weights[name], reference.weights[name], rtol=1e-12, atol=1e-12)


def test_arow_continues_a_model_from_its_means(tmp_path):
    """A vanishing variance leaves the means where the model put them."""
    rng = np.random.default_rng(5)
    first, second = corpus(rng, 25, list("abcd"), ["A", "B", "C"]), corpus(rng, 20, list("cdefg"), ["A", "C"])
    config = write_config(tmp_path / "c.toml", "arow")
    old = seqbil.train(first, config=config, epochs=2, model=str(tmp_path / "m1.sbm"), precision="float64")
    new = seqbil.train(second, init_model=str(tmp_path / "m1.sbm"), epochs=1, arow_variance=1e-300,
                       precision="float64")
    moved = seqbil.train(second, init_model=str(tmp_path / "m1.sbm"), epochs=1, precision="float64")
    probe = sentences(first + second)
    pairs = list(zip(weights_by_position(new, probe), weights_by_position(old, probe),
                     weights_by_position(moved, probe)))
    for (nu, nb), (ou, ob), _ in pairs:
        np.testing.assert_allclose(nu, ou, rtol=1e-12, atol=1e-250)
        np.testing.assert_allclose(nb, ob, rtol=1e-12, atol=1e-250)
    assert any(not np.allclose(mu, ou) for (_, _), (ou, _), (mu, _) in pairs)  # with its variance it learns


def test_what_pa_and_arow_refuse():
    with pytest.raises(ConfigError, match="learner arow does not support iterative parameter mixing"):
        seqbil.train(str(sample_path("conll2000_train.txt")), config="conll2000", learner="arow", shards=2)
    pku = str(sample_path("pku_train.utf8"))
    for name in ("pa", "arow"):
        with pytest.raises(ConfigError, match=f"learner = '{name}' does not learn several tasks"):
            seqbil.train(config="sighan2005", learner=name, tasks=[f"a={pku}", f"b={pku}"], epochs=1)


def test_pa_reads_emb_vectors_as_fixed_values():
    """%emb templates: pa reads the vectors as values written into the encoded corpus
    and never moves them; PA-II with the zero-one cost is then rpa on frozen vectors."""
    from seqbil.features.templates import EMB
    from test_rpa_tagger import TEMPLATES, TRAIN, sentences as probe

    def train(**options):
        return seqbil.train(TRAIN, templates=TEMPLATES, epochs=3, embeddings="random:5", averaged=False, **options)
    pa = train(learner="pa", pa_type=2, pa_error_sensitive=False)
    frozen = train(learner="rpa", rpa_loss="zero-one", freeze_embeddings=True)
    assert "moved" not in pa.training["vectors"][EMB]
    np.testing.assert_array_equal(pa.index.vectors.tables[EMB].matrix, frozen.index.vectors.tables[EMB].matrix)
    np.testing.assert_allclose(pa.weights["W0"], frozen.weights["W0"], atol=1e-9)
    assert pa.tag_many(probe()) == frozen.tag_many(probe())


def test_the_command_line_trains_arow_and_pa(tmp_path):
    def cli(*args):
        proc = subprocess.run([sys.executable, "-m", "seqbil", *args], cwd=tmp_path, env=ENV, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr
        return proc
    out = cli("train", "--learner", "arow", "--arow-gamma", "2", "--epochs", "2", "--model", "a.sbm")
    assert "learner arow (argument)" in out.stderr and "arow_gamma 2.0 (argument)" in out.stderr
    assert "no averaging" in out.stderr
    info = json.loads(cli("inspect", "--json", "a.sbm").stdout)
    assert info["learner"] == "arow" and info["params"]["arow_gamma"] == 2.0
    out = cli("train", "--learner", "pa", "--pa-type", "2", "--no-pa-error-sensitive", "--epochs", "1", "-q",
              "--model", "p.sbm")
    info = json.loads(cli("inspect", "--json", "p.sbm").stdout)
    assert info["learner"] == "pa" and info["params"]["pa_type"] == 2 and info["params"]["pa_error_sensitive"] is False
    test = str(sample_path("conll2000_test.txt"))
    for name in ("a.sbm", "p.sbm"):
        scores = json.loads(cli("eval", "-m", name, "--data", test, "--json").stdout)
        assert scores["f1"] > 70.0, (name, scores)
    bad = subprocess.run([sys.executable, "-m", "seqbil", "train", "--learner", "pa", "--pa-type", "5"], cwd=tmp_path,
                         env=ENV, capture_output=True, text=True)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr and "--pa-type" in bad.stderr


def test_pa_on_one_shard_equals_training_in_one_process():
    """The kernel flags the positions it updates, so a shard sends every change."""
    distributed = pytest.importorskip("distributed")
    from test_ipm import same_model, train
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as c, \
            distributed.Client(c) as client:
        for averaged in (True, False):
            same_model(train(shards=1, client=client, learner="pa", averaged=averaged, epochs=2),
                       train(learner="pa", averaged=averaged, epochs=2))
