"""Multi-task learning (Cavallanti, Cesa-Bianchi & Gentile 2008, section 3) as
augmented features: every attribute, trans and end have a shared copy and a copy per
task; an update on task k moves the shared copies by b / (K (1 + b)) and k's own by
1 / (1 + b) times the single-task step.

The reference is the paper's Figure 1 written out: K explicit weight vectors, the
sequence of task k decoded by brute force with vector k, and on a mistake every
vector j moved by (A^-1)_{jk} C dPhi, A^-1 computed by numpy from eq. (3)."""
import dataclasses
import json

import numpy as np
import pytest

from seqbil.features.dataset import Dataset
from seqbil.learners import LEARNERS
from seqbil.params import Settings
from test_decode import random_dataset, tables
from test_real_values import Snapshots, best_path, dphi, epoch_orders, refresh_reference


def augmented(data, task, K, A0, A1, adjacent=False):
    """data with each attribute a of an order (A attributes) at a position of a task-k
    sequence present twice: shared as a, and as k's own copy A + k A + a (values
    alike), or A + K a + k with adjacent (the explicit form's layout); and seq_task."""
    def copies(ptr, ids, vals, A):
        out_ptr, out_ids, out_vals = [0], [], []
        for j in range(data.n_sequences):
            for p in range(data.seq_ptr[j], data.seq_ptr[j + 1]):
                mine = ids[ptr[p]:ptr[p + 1]]
                own = A + K * mine + task[j] if adjacent else A + task[j] * A + mine
                out_ids += list(mine) + list(own)
                if vals is not None:
                    out_vals += list(vals[ptr[p]:ptr[p + 1]]) * 2
                out_ptr.append(len(out_ids))
        return (np.array(out_ptr, np.int64), np.array(out_ids, np.int32),
                None if vals is None else np.array(out_vals, np.float32))
    u_ptr, u_ids, u_vals = copies(data.u_ptr, data.u_ids, data.u_vals, A0)
    b_ptr, b_ids, _ = copies(data.b_ptr, data.b_ids, None, A1)
    out = Dataset(data.seq_ptr, data.labels, u_ptr, u_ids, b_ptr, b_ids, u_vals)
    out.seq_task = np.asarray(task, dtype=np.int32)
    return out


def tasks_spec(K, b, A0, A1):
    return (K, b, (A0, A0 + K * A0), (A1, A1 + K * A1))


def per_task(weights, K, S, A0, A1):
    """The weights that score task j: the shared copies plus j's own."""
    out = []
    for j in range(K):
        out.append({"W0": weights["W0"][:A0] + weights["W0"][A0 + j * A0:A0 + (j + 1) * A0],
                    "W1": weights["W1"][:A1] + weights["W1"][A1 + j * A1:A1 + (j + 1) * A1],
                    "trans": weights["trans"][:S] + weights["trans"][(j + 1) * S:(j + 2) * S],
                    "end": weights["end"][:S] + weights["end"][(j + 1) * S:(j + 2) * S]})
    return out


def eq3(K, b):
    """The interaction matrix of eq. (3)."""
    return (1 + b) * np.eye(K) - (b / K) * np.ones((K, K))


def figure1_reference(data, task, orders, K, A, S, A0, A1, C):
    """Figure 1 with interaction matrix A: K perceptrons, the one of the sequence's
    task predicting, all of them moved on its mistakes."""
    A_inv = np.linalg.inv(A)
    U = [{"W0": np.zeros((A0, S)), "W1": np.zeros((A1, S, S + 1)), "trans": np.zeros((S, S + 1)),
          "end": np.zeros(S)} for _ in range(K)]
    avg = [Snapshots(u) for u in U]
    wrong = []  # per epoch, the sequences decoded wrongly
    for order in orders:
        wrong.append(np.zeros(data.n_sequences, np.uint8))
        for j in order:
            k = task[j]
            gold = data.labels[data.seq_ptr[j]:data.seq_ptr[j + 1]]
            pred, _ = best_path(*tables(data, j, U[k]["W0"], U[k]["W1"]), U[k]["trans"], U[k]["end"])
            if not np.array_equal(pred, gold):
                wrong[-1][j] = 1
                d = dphi(data, j, gold, pred, S, A0, A1)
                for i in range(K):
                    for name in d:
                        U[i][name] += C * A_inv[i, k] * d[name]
            for i in range(K):
                avg[i].add(U[i])
    return wrong, U, [a.mean() for a in avg]


def learn_checking_flags(learner, data, orders, wrong):
    """Run the learner over the epochs' orders; each epoch, the sequences it flags
    wrong (data.seq_wrong) and its mistake count must be the reference's (wrong, per
    epoch), which must make some."""
    for order, want in zip(orders, wrong):
        data.seq_wrong = np.zeros(data.n_sequences, np.uint8)
        assert learner.train_chunk(data, order) == want.sum()
        np.testing.assert_array_equal(data.seq_wrong, want)
    assert sum(w.sum() for w in wrong) > 0


def untied_dataset(rng, n_seq, S, A0, A1):
    """random_dataset with at least one 0-order entry at every position, valued at
    random: two paths then score alike with probability 0, so that the rounding of
    sums taken in another order cannot change which one is decoded."""
    data = random_dataset(rng, n_seq, S, A0, A1)
    P = data.n_positions
    counts = rng.integers(1, 4, size=P)
    u_ptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    u_ids = rng.integers(0, A0, size=int(u_ptr[-1])).astype(np.int32)
    vals = rng.normal(size=len(u_ids)).astype(np.float32)
    return dataclasses.replace(data, u_ptr=u_ptr, u_ids=u_ids, u_vals=vals)


@pytest.mark.parametrize("b", [0.0, 0.5, 3.0])
@pytest.mark.parametrize("averaged", [False, True])
def test_augmented_perceptron_equals_figure1(rng, b, averaged):
    K, S, A0, A1, C = 3, 3, 5, 4, 0.7
    base = untied_dataset(rng, 24, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1)
    orders = epoch_orders(rng, base, 3)
    learner = LEARNERS["sp"](S, A0 + K * A0, A1 + K * A1, Settings.of({"averaged": averaged, "C": C}),
                             tasks=tasks_spec(K, b, A0, A1))
    ref_wrong, final, mean = figure1_reference(base, task, orders, K, eq3(K, b), S, A0, A1, C)
    learn_checking_flags(learner, data, orders, ref_wrong)
    for got, want in zip(per_task(learner.parameters()[1], K, S, A0, A1), mean if averaged else final):
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("learner", ["sp", "bol"])
def test_without_coupling_each_task_learns_alone(rng, learner):
    """b = 0: the shared copies never move, and task k's own copies follow exactly the
    single-task learner run on task k's sequences in the same order."""
    K, S, A0, A1 = 2, 3, 5, 4
    base = random_dataset(rng, 30, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1)
    order = rng.permutation(base.n_sequences).astype(np.int64)
    settings = Settings.of({"averaged": False, "C": 0.7})
    joint = LEARNERS[learner](S, A0 + K * A0, A1 + K * A1, settings, tasks=tasks_spec(K, 0.0, A0, A1))
    joint.train_chunk(data, order)
    weights = joint.parameters()[1]
    first = "W1" if learner == "sp" else "alpha"
    assert not np.any(weights["W0"][:A0]) and not np.any(weights[first][:A1])  # the shared copies
    for k in range(K):
        alone = LEARNERS[learner](S, A0, A1, settings)
        alone.train_chunk(base, order[task[order] == k])
        want = alone.parameters()[1]
        got = {"W0": weights["W0"][A0 + k * A0:A0 + (k + 1) * A0], "trans": weights["trans"][(k + 1) * S:(k + 2) * S],
               "end": weights["end"][(k + 1) * S:(k + 2) * S]}
        for name in ("W1",) if learner == "sp" else ("alpha", "beta"):
            got[name] = weights[name][A1 + k * A1:A1 + (k + 1) * A1]
        for name in want:
            np.testing.assert_array_equal(got[name], want[name], err_msg=f"task {k}: {name}")


def random_interaction(rng, K):
    """A random symmetric positive definite K x K matrix."""
    M = rng.normal(size=(K, K))
    return M @ M.T + 0.5 * np.eye(K)


def explicit_spec(K, A_inv, A0, A1):
    """The learners' tasks argument of the explicit form over augmented(..., adjacent=True)."""
    return (K, A_inv, (A0, A0 + K * A0), (A1, A1 + K * A1), np.arange(K, dtype=np.int32))


def explicit_per_task(weights, K, S, A0, A1):
    """The weights of task j in the explicit form: its copies (the shared ones stay 0)."""
    assert not np.any(weights["W0"][:A0]) and not np.any(weights["trans"][:S]) and not np.any(weights["end"][:S])
    return [{"W0": weights["W0"][A0 + j:A0 + K * A0:K], "W1": weights["W1"][A1 + j:A1 + K * A1:K],
             "trans": weights["trans"][(j + 1) * S:(j + 2) * S], "end": weights["end"][(j + 1) * S:(j + 2) * S]}
            for j in range(K)]


@pytest.mark.parametrize("interaction", ["random", "eq3"])
@pytest.mark.parametrize("averaged", [False, True])
def test_a_general_interaction_matrix_is_figure1_written_out(rng, interaction, averaged):
    K, S, A0, A1, C = 3, 3, 5, 4, 0.7
    A = random_interaction(rng, K) if interaction == "random" else eq3(K, 2.0)
    base = untied_dataset(rng, 24, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1, adjacent=True)
    orders = epoch_orders(rng, base, 3)
    learner = LEARNERS["sp"](S, A0 + K * A0, A1 + K * A1, Settings.of({"averaged": averaged, "C": C}),
                             tasks=explicit_spec(K, np.linalg.inv(A), A0, A1))
    ref_wrong, final, mean = figure1_reference(base, task, orders, K, A, S, A0, A1, C)
    learn_checking_flags(learner, data, orders, ref_wrong)
    got = learner.parameters()[1]
    for got_j, want_j in zip(explicit_per_task(got, K, S, A0, A1), mean if averaged else final):
        for name in want_j:
            np.testing.assert_allclose(got_j[name], want_j[name], rtol=0, atol=1e-12, err_msg=name)


def test_bol_with_a_general_interaction_equals_its_reference(rng):
    """Each task's copy of a 1st-order attribute is a block of its own, moved by
    (A^-1)_{jk} C dPhi; A^-1 of powers of two keeps Theta exact in float32."""
    K, S, A0, A1, C, R = 3, 3, 5, 4, 0.5, 4
    A_inv = np.array([[1.0, 0.5, 0.25], [0.5, 1.0, 0.5], [0.25, 0.5, 1.0]])
    base = untied_dataset(rng, 24, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1, adjacent=True)
    orders = epoch_orders(rng, base, 3)
    learner = LEARNERS["bol"](S, A0 + K * A0, A1 + K * A1, Settings.of({"averaged": False, "C": C,
                                                           "power_steps": R}),
                              tasks=explicit_spec(K, A_inv, A0, A1))

    def reach(order, a, k):  # the copies an update of attribute a on task k moves, and by how much
        A = (A0, A1)[order]
        return [] if a < A else [(A + K * ((a - A) // K) + j, A_inv[j, k]) for j in range(K)]

    want, wrong = block_bilinear_tasks_reference(data, task, orders, K, S, A0, A1, C, R, reach,
                                                 lambda k: [(j + 1, A_inv[j, k]) for j in range(K)])
    learn_checking_flags(learner, data, orders, wrong)
    got = learner.parameters()[1]
    for weights in (want, got):
        weights["W1"] = weights.pop("alpha")[:, :, None] * weights.pop("beta")[:, None, :]
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-9, atol=1e-10, err_msg=name)


def test_tasks_are_checked(rng):
    S, A0, A1 = 3, 5, 4
    base = random_dataset(rng, 6, S, A0, A1)
    learner = LEARNERS["sp"](S, 3 * A0, 3 * A1, Settings.of(), tasks=tasks_spec(2, 1.0, A0, A1))
    order = np.arange(base.n_sequences, dtype=np.int64)
    with pytest.raises(ValueError, match="seq_task"):
        learner.train_chunk(base, order)
    data = augmented(base, np.zeros(base.n_sequences, dtype=np.int32), 2, A0, A1)
    data.seq_task[2] = 5
    with pytest.raises(ValueError, match="task 5"):
        learner.train_chunk(data, order)
    with pytest.raises(ValueError, match=r"coupling b \(eq. 3\) only"):
        LEARNERS["bcd"](S, 3 * A0, 3 * A1, Settings.of(), tasks=explicit_spec(2, np.eye(2), A0, A1))
    with pytest.raises(ValueError, match="several tasks"):
        LEARNERS["bol"](S, A0, A1, Settings.of({"rank1": "global"}), tasks=tasks_spec(2, 1.0, A0, A1))


# --- the product: corpora of several tasks, %task templates, models with task heads ----

from click.testing import CliRunner  # noqa: E402

import seqbil  # noqa: E402
from seqbil.cli import main  # noqa: E402
from seqbil.errors import ConfigError, SeqbilError  # noqa: E402
from seqbil.features.templates import own_attributes, parse_template, task_copies  # noqa: E402
from seqbil.formats import Sentence  # noqa: E402
from seqbil.formats.sentence import Corpus  # noqa: E402

CWS = ["U00:%x[0,0]", "B01:%x[-1,0]", "B02:%x[-1,0]%x[0,0]", "B"]


def test_joined_corpus_keeps_every_cell_label_and_task():
    a = [Sentence([["x", "y"], ["1", "2"]], ["P", "Q"], 1), Sentence([["y"], ["3"]], ["Q"], 3)]
    b = [Sentence([["z", "x"], ["1", "4"]], ["R", "P"], 1)]
    joined = Corpus.joined([Corpus.of(a), Corpus.of(b)], ["first", "second"])
    assert joined.task_names == ["first", "second"] and list(joined.tasks) == [0, 0, 1]
    for c in range(2):
        values, ids = joined.column(c)
        assert [values[i] for i in ids] == [v for s in a + b for v in s.columns[c]]
    assert [y for seq in joined.label_sequences() for y in seq] == ["P", "Q", "Q", "R", "P"]
    names, per_token = joined.task_values()
    assert [names[i] for i in per_token] == ["first"] * 3 + ["second"] * 2


def test_task_copies_follow_the_shared_templates():
    templates = task_copies([parse_template(t) for t in CWS])
    texts = [t.text for t in templates.templates]
    assert texts == CWS + ["U00:%x[0,0]/%task", "B01:%x[-1,0]/%task", "B02:%x[-1,0]%x[0,0]/%task"]
    assert templates.tasks and templates.transition
    with pytest.raises(ConfigError, match="made by multi-task training"):
        task_copies([parse_template("U00:%x[0,0]/%task")])


def pku_lines(path, lo, hi):
    return [line.strip() for line in open(path, encoding="utf-8").readlines()[lo:hi] if line.strip()]


@pytest.fixture
def two_standards(tmp_path, pku_sample):
    """Two segmentation standards of the same text: the sample's words, and its
    characters paired into two-character words."""
    first = pku_lines(pku_sample, 0, 150)
    second = [" ".join(s[i:i + 2] for i in range(0, len(s), 2))
              for s in ("".join(line.split()) for line in pku_lines(pku_sample, 150, 300))]
    paths = {}
    for name, lines in (("words", first), ("pairs", second)):
        paths[name] = tmp_path / f"{name}.utf8"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    return paths


@pytest.mark.parametrize("learner", ["sp", "bol"])
def test_a_multi_task_model_tags_each_task_in_its_standard(tmp_path, two_standards, learner):
    tasks = [f"{name}={path},{path}" for name, path in two_standards.items()]
    model = seqbil.train(config="sighan2005", tasks=tasks, learner=learner, epochs=4, coupling=0.5,
                         model=str(tmp_path / "m.sbm"), log=str(tmp_path / "log.jsonl"))
    assert model.tasks == ["words", "pairs"]
    # the log counts each pass's sequences and mistakes per task, chunk by chunk
    for line in (tmp_path / "log.jsonl").read_text().splitlines():
        record = json.loads(line)
        seen, wrong = np.array(record["task_sequences_per_chunk"]), np.array(record["task_mistakes_per_chunk"])
        assert seen.sum(axis=0).tolist() == [150, 150] and np.all(wrong <= seen)
        assert wrong.sum() == record["mistakes"] and wrong.sum(axis=0).tolist() == list(record["task_mistakes"].values())
    # each task's head learned its own standard
    own = {name: seqbil.evaluate(model, str(two_standards[name]), task=name)["f1"] for name in model.tasks}
    other = {name: seqbil.evaluate(model, str(two_standards[name]), task=({"words", "pairs"} - {name}).pop())["f1"]
             for name in model.tasks}
    assert all(own[name] > other[name] + 20 for name in model.tasks), (own, other)
    text = "扬帆远东做与中国合作的先行"
    loaded = seqbil.load(str(tmp_path / "m.sbm"))
    for name in model.tasks:
        assert loaded.for_task(name).segment(text) == model.for_task(name).segment(text)
        scores = seqbil.evaluate(loaded, str(two_standards[name]), task=name)
        assert scores["f1"] == loaded.training["tasks"][name]["last_dev"]["value"]
    with pytest.raises(SeqbilError, match="tasks: words, pairs"):
        loaded.tag(list(text))
    with pytest.raises(SeqbilError, match="no task 'other'"):
        loaded.for_task("other")
    with pytest.raises(SeqbilError, match="model itself"):
        loaded.for_task("words").save(str(tmp_path / "x.sbm"))
    # the task copies of the attributes follow the shared ones, order by order
    (lo0, hi0), (lo1, hi1) = own_attributes(loaded.index, loaded.templates)
    assert lo0 == hi0 == 0 and 0 < lo1 < hi1 == loaded.index.n_attributes(1)  # sighan2005: B templates only


def test_the_command_line_trains_tags_and_scores_tasks(tmp_path, two_standards):
    config = tmp_path / "mt.toml"
    config.write_text(f'[tasks.words]\ntrain = "{two_standards["words"]}"\n[tasks.pairs]\n'
                      f'train = "{two_standards["pairs"]}"\ndev = "{two_standards["pairs"]}"\n'
                      '[corpus]\nformat = "sighan"\n[features]\ntemplates = ["U00:%x[0,0]", "U01:%x[-1,0]", '
                      '"U02:%x[1,0]", "B"]\n[train]\nlearner = "sp"\nepochs = 3\n', encoding="utf-8")
    runner = CliRunner()
    model = tmp_path / "m.sbm"
    result = runner.invoke(main, ["train", "--config", str(config), "--model", str(model), "-q"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(main, ["tag", "-m", str(model)], input="扬帆远东\n")
    assert result.exit_code == 2 and "--task" in result.output and "words, pairs" in result.output
    result = runner.invoke(main, ["tag", "-m", str(model), "--task", "pairs"], input="扬帆远东\n")
    assert result.exit_code == 0 and result.output == "扬帆  远东\n"
    result = runner.invoke(main, ["eval", "-m", str(model), "--data", str(two_standards["pairs"]), "--task",
                                  "pairs", "--json"])
    assert result.exit_code == 0
    result = runner.invoke(main, ["inspect", str(model)])
    assert "task words:" in result.output and "task pairs:" in result.output
    flags = [arg for name, path in two_standards.items() for arg in ("--task", f"{name}={path}")]
    (tmp_path / "A.txt").write_text("1 0\n0 1\n", encoding="utf-8")
    result = runner.invoke(main, ["train", "--config", "sighan2005", *flags, "--learner", "bcd", "--interaction",
                                  str(tmp_path / "A.txt"), "-q"])
    assert result.exit_code == 2 and "coupling b (eq. 3) only" in result.output


def test_a_multi_task_run_resumes_as_it_would_have_gone_on(tmp_path, two_standards):
    tasks = [f"{name}={path}" for name, path in two_standards.items()]
    common = dict(config="sighan2005", tasks=tasks, epochs=3, learner="sp")
    whole = seqbil.train(model=str(tmp_path / "whole.sbm"), **common)
    seqbil.train(model=str(tmp_path / "part.sbm"), checkpoint_every=1, **{**common, "epochs": 2})
    resumed = seqbil.resume(str(tmp_path / "part.sbm.ckpt"), str(tmp_path / "resumed.sbm"), epochs=3)
    text = "扬帆远东做与中国合作的先行"
    for name in whole.tasks:
        assert resumed.for_task(name).segment(text) == whole.for_task(name).segment(text)
    assert (tmp_path / "resumed.sbm").read_bytes() == (tmp_path / "whole.sbm").read_bytes()


def block_bilinear_tasks_reference(data, task, orders, K, S, A0, A1, C, R, reach, trans_reach):
    """bol with tasks in numpy (test_real_values.block_bilinear_reference with the
    multi-task steps): the augmented attributes of data, trans and end with a shared
    copy and one per task; a sequence of task k is decoded with the shared plus k's
    copies, and on a mistake C dPhi of attribute a moves the attributes reach(order, a,
    k) names, each by its multiplier, and the copies trans_reach(k) names."""
    n0, n1 = A0 + K * A0, A1 + K * A1
    W0, trans, end = np.zeros((n0, S)), np.zeros(((K + 1) * S, S + 1)), np.zeros((K + 1) * S)
    alpha, beta, sigma, theta = np.zeros((n1, S)), np.zeros((n1, S + 1)), np.zeros(n1), np.zeros((n1, S, S + 1))
    wrong = []  # per epoch, the sequences decoded wrongly
    for order in orders:
        wrong.append(np.zeros(data.n_sequences, np.uint8))
        for j in order:
            k, p0 = task[j], data.seq_ptr[j]
            gold = data.labels[p0:data.seq_ptr[j + 1]]
            mine = slice((k + 1) * S, (k + 2) * S)
            W1 = alpha[:, :, None] * beta[:, None, :]
            pred, _ = best_path(*tables(data, j, W0, W1), trans[:S] + trans[mine], end[:S] + end[mine])
            if np.array_equal(pred, gold):
                continue
            wrong[-1][j] = 1
            d = dphi(data, j, gold, pred, S, n0, n1)
            for a in np.flatnonzero(np.any(d["W0"], axis=1)):
                for target, step in reach(0, a, k):
                    W0[target] += C * step * d["W0"][a]
            for copy, step in trans_reach(k):
                trans[copy * S:(copy + 1) * S] += C * step * d["trans"]
                end[copy * S:(copy + 1) * S] += C * step * d["end"]
            differ = [i for i in range(len(gold)) if gold[i] != pred[i] or (i and gold[i - 1] != pred[i - 1])]
            touched = {int(a) for i in differ for a in data.b_ids[data.b_ptr[p0 + i]:data.b_ptr[p0 + i + 1]]}
            moved = {}
            for a in touched:
                for target, step in reach(1, a, k):
                    moved[target] = moved.get(target, 0) + C * step * d["W1"][a]
            for a in sorted(moved):
                theta[a] = (theta[a] + moved[a]).astype(np.float32)
                alpha[a], beta[a], sigma[a] = refresh_reference(theta[a], alpha[a], beta[a], sigma[a], R)
    return {"W0": W0, "trans": trans, "end": end, "alpha": alpha, "beta": beta}, wrong


def test_bol_with_tasks_equals_its_reference(rng):
    # C and the steps are powers of two (b = 1, K = 2: 1/4 and 1/2), so that Theta is
    # summed exactly in float32 by the kernel and the reference alike
    K, S, A0, A1, C, R, b = 2, 3, 5, 4, 0.5, 4, 1.0
    base = untied_dataset(rng, 24, S, A0, A1)
    task = rng.integers(0, K, size=base.n_sequences)
    data = augmented(base, task, K, A0, A1)
    orders = epoch_orders(rng, base, 3)
    learner = LEARNERS["bol"](S, A0 + K * A0, A1 + K * A1, Settings.of({"averaged": False, "C": C,
                                                           "power_steps": R}), tasks=tasks_spec(K, b, A0, A1))
    shared, own = b / (K * (1 + b)), 1 / (1 + b)
    want, wrong = block_bilinear_tasks_reference(
        data, task, orders, K, S, A0, A1, C, R, lambda order, a, k: [(a, own if a >= (A0, A1)[order] else shared)],
        lambda k: [(0, shared), (k + 1, own)])
    learn_checking_flags(learner, data, orders, wrong)
    got = learner.parameters()[1]
    for weights in (want, got):  # the products: (alpha, beta) and (-alpha, -beta) are the same weights
        weights["W1"] = weights.pop("alpha")[:, :, None] * weights.pop("beta")[:, None, :]
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-9, atol=1e-10, err_msg=name)


def test_templates_and_models_of_tasks_are_checked(tmp_path, two_standards):
    tasks = [f"{name}={path}" for name, path in two_standards.items()]
    with pytest.raises(ConfigError, match="%vec"):
        task_copies([parse_template("U30:%vec[0,0,emb]")])
    with pytest.raises(ConfigError, match="only multi-task training"):
        seqbil.train(str(two_standards["words"]), config="sighan2005", templates=["U00:%x[0,0]/%task", "B"])
    model = seqbil.train(config="sighan2005", tasks=tasks, epochs=1)
    view = model.for_task("words")
    text = list("扬帆远东做与中国合作的先行")
    assert view.for_task("pairs").tag(text) == model.for_task("pairs").tag(text)  # a view of a view
    for use in (lambda: view.weights, lambda: view.compact(), lambda: view.save(str(tmp_path / "v.sbm"))):
        with pytest.raises(SeqbilError, match="multi-task model"):
            use()
    with pytest.raises(SeqbilError, match="which task"):
        model.decode(view.encode([Sentence([text], None, 1)]))


def test_each_task_tags_with_its_own_labels(tmp_path, conll_sample):
    """CoNLL tasks whose label sets differ: a task never gives another task's labels."""
    lines = open(conll_sample, encoding="utf-8").read().split("\n\n")
    first, second = tmp_path / "first.txt", tmp_path / "second.txt"
    first.write_text("\n\n".join(lines[:60]) + "\n", encoding="utf-8")
    second.write_text("\n\n".join(lines[60:120]).replace("-NP\n", "-XP\n") + "\n", encoding="utf-8")
    model = seqbil.train(config="conll2000", tasks=[f"first={first}", f"second={second}"], epochs=3,
                         model=str(tmp_path / "m.sbm"))
    model = seqbil.load(str(tmp_path / "m.sbm"))
    assert "B-XP" in model.task_labels["second"] and "B-XP" not in model.task_labels["first"]
    rows = [line.split()[:-1] for line in lines[61].splitlines()]
    tags = {name: set(y for s in model.for_task(name).tag_many([rows] * 3) for y in s) for name in model.tasks}
    assert not any(y.endswith("-XP") for y in tags["first"]) and any(y.endswith("-XP") for y in tags["second"])
    assert not any(y.endswith("-NP") for y in tags["second"])


@pytest.mark.parametrize("learner", ["sp", "bol"])
def test_one_task_as_a_model_of_its_own_tags_as_the_task(tmp_path, two_standards, learner):
    tasks = [f"{name}={path}" for name, path in two_standards.items()]
    model = seqbil.train(config="sighan2005", tasks=tasks, learner=learner, epochs=3,
                         templates=["U00:%x[0,0]", "U01:bias", "B02:%x[-1,0]%x[0,0]", "B"],
                         model=str(tmp_path / "joint.sbm"))
    lines = [line.replace(" ", "") for path in two_standards.values()
             for line in open(path, encoding="utf-8").read().split("\n") if line]
    for name in model.tasks:
        single = model.single_task(name)
        assert not single.tasks and not single.templates.tasks and single.kind == "linear"
        # half the attributes: the shared ones and this task's own, folded together
        assert single.index.n_attributes(1) < model.index.n_attributes(1) / 1.5
        view = model.for_task(name)
        assert [single.segment(s) for s in lines] == [view.segment(s) for s in lines]
        result = CliRunner().invoke(main, ["convert", "--task", name, "--precision", "float64",
                                           str(tmp_path / "joint.sbm"), str(tmp_path / f"{name}.sbm")])
        assert result.exit_code == 0, result.output
        saved = seqbil.load(str(tmp_path / f"{name}.sbm"))
        assert [saved.segment(s) for s in lines] == [view.segment(s) for s in lines]


def test_an_interaction_matrix_file_couples_the_tasks(tmp_path, two_standards):
    """The explicit form with eq. (3)'s matrix learns the weights the augmented
    features learn with coupling b: the tasks tag alike; and each task's model of its
    own still tags as the task."""
    A = tmp_path / "A.txt"
    A.write_text("# words pairs\n1.5 -0.5\n-0.5 1.5  # b = 1\n", encoding="utf-8")
    tasks = [f"{name}={path}" for name, path in two_standards.items()]
    common = dict(config="sighan2005", tasks=tasks, learner="sp", epochs=3)
    explicit = seqbil.train(interaction=str(A), model=str(tmp_path / "e.sbm"), **common)
    coupled = seqbil.train(coupling=1.0, **common)
    explicit = seqbil.load(str(tmp_path / "e.sbm"))
    lines = [line.replace(" ", "") for path in two_standards.values()
             for line in open(path, encoding="utf-8").read().split("\n") if line]
    for name in explicit.tasks:
        view = explicit.for_task(name)
        assert [view.segment(s) for s in lines] == [coupled.for_task(name).segment(s) for s in lines]
        assert [explicit.single_task(name).segment(s) for s in lines] == [view.segment(s) for s in lines]
    # every 1st-order attribute of the task-copy templates has a copy per task, adjacent
    (_, _), (lo1, hi1) = own_attributes(explicit.index, explicit.templates)
    assert (hi1 - lo1) % 2 == 0


@pytest.mark.parametrize("text, message", [
    ("1 0.5\n0.5\n", ":2: a row of the interaction matrix needs 2 finite numbers"),
    ("1 x\n0 1\n", ":1: not a row of numbers"),
    ("1 0\n0 1\n0 1\n", ":3: one row too many"),
    ("1 0\n", "needs 2 rows"),
    ("1 0.5\n0.4 1\n", "symmetric"),
    ("1 2\n2 1\n", "positive definite"),
])
def test_a_bad_interaction_matrix_is_named(tmp_path, two_standards, text, message):
    A = tmp_path / "A.txt"
    A.write_text(text, encoding="utf-8")
    flags = [arg for name, path in two_standards.items() for arg in ("--task", f"{name}={path}")]
    result = CliRunner().invoke(main, ["train", "--config", "sighan2005", *flags, "--interaction", str(A), "-q"])
    assert result.exit_code == 2 and message in result.output and str(A) in result.output, result.output
    result = CliRunner().invoke(main, ["train", "--config", "sighan2005", *flags, "--interaction", str(A),
                                       "--coupling", "2", "-q"])
    assert result.exit_code == 2 and "not both" in result.output


def test_a_multi_task_model_fits_its_temperature_on_the_tasks_dev_sets(tmp_path, two_standards):
    """One temperature, the least token NLL summed over the tasks' dev sets, each scored
    by its own task's head; without dev sets, 1."""
    from seqbil.calibration import token_nll
    from seqbil.formats import make_format, read_corpus
    tasks = [f"{name}={path},{path}" for name, path in two_standards.items()]
    lines = []
    model = seqbil.train(config="sighan2005", tasks=tasks, learner="sp", epochs=3, echo=lines.append,
                         model=str(tmp_path / "m.sbm"))
    T = model.temperature
    assert T != 1.0 and model.training["temperature"]["tasks"] == ["words", "pairs"]
    assert any(line.startswith("temperature") and "dev sets of words, pairs" in line for line in lines)

    def total(t):
        nll = 0.0
        for name, path in two_standards.items():
            head = model.for_task(name)
            sentences = read_corpus(make_format("sighan"), str(path))
            nll += token_nll(head, head.encode(sentences, str(path)), t)[0]
        return nll
    assert total(T) <= min(total(T * 1.05), total(T / 1.05)) + 1e-6 < total(1.0)
    assert seqbil.load(str(tmp_path / "m.sbm")).temperature == pytest.approx(T, rel=1e-6)
    from click.testing import CliRunner
    from seqbil.cli import main
    shown = CliRunner().invoke(main, ["inspect", str(tmp_path / "m.sbm")]).output
    assert "temperature fitted on the dev sets of words, pairs" in shown
    plain = seqbil.train(config="sighan2005", tasks=[f"{n}={p}" for n, p in two_standards.items()], learner="sp",
                         epochs=1, echo=lines.append)
    assert plain.temperature == 1.0 and "without dev sets" in lines[-3] + lines[-2] + lines[-1]
