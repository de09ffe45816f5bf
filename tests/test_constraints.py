"""Constrained decoding: the rules of each chunk tag scheme against a reference that
writes chunks back in the scheme (a labelling is well formed when reading its chunks
and writing them again gives it back), and every decoder against enumerating the
allowed labellings."""
import itertools
import math
import subprocess
import sys

import numpy as np
import pytest

import seqbil
from seqbil._kernels.decode import confidence_corpus, decode_corpus, marginals_corpus, nbest_corpus
from seqbil.errors import SeqbilError
from seqbil.evaluation.chunks import chunks
from seqbil.model import constraints
from seqbil.storage import Store
from test_nbest import all_paths, assert_same_list, random_dataset, random_model, tables


def written(chunks, n, scheme):
    """The labels of n tokens holding chunks [(type, first, last)], written in scheme."""
    tags = ["O"] * n

    def tag(prefix, t):
        return f"{prefix}-{t}" if t else prefix
    chunks = sorted(chunks, key=lambda c: c[1])
    for k, (t, a, b) in enumerate(chunks):
        before = chunks[k - 1] if k else None
        after = chunks[k + 1] if k + 1 < len(chunks) else None
        inner = [tag("I", t)] * (b - a + 1)
        if scheme == "iob2":
            inner[0] = tag("B", t)
        elif scheme == "iob1" and before and before[2] == a - 1 and before[0] == t:
            inner[0] = tag("B", t)
        elif scheme == "ioe2":
            inner[-1] = tag("E", t)
        elif scheme == "ioe1" and after and after[1] == b + 1 and after[0] == t:
            inner[-1] = tag("E", t)
        elif scheme in ("iobes", "bilou"):
            single, end = ("S", "E") if scheme == "iobes" else ("U", "L")
            inner = [tag(single, t)] if a == b else [tag("B", t)] + inner[1:-1] + [tag(end, t)]
        tags[a:b + 1] = inner
    return tags


def well_formed_reference(tags, scheme):
    try:
        found = chunks(tags, scheme if scheme in ("iobes", "bilou") else None)
    except SeqbilError:
        return False
    return written(found, len(tags), scheme) == list(tags)


LABELS = {"iob2": ["B-A", "I-A", "B-B", "I-B", "O"], "iob1": ["B-A", "I-A", "B-B", "I-B", "O"],
          "ioe2": ["I-A", "E-A", "I-B", "E-B", "O"], "ioe1": ["I-A", "E-A", "I-B", "E-B", "O"],
          "iobes": ["B-A", "I-A", "E-A", "S-A", "B-B", "E-B", "S-B", "O"], "bilou": ["B-A", "I-A", "L-A", "U-A", "O"],
          "segmentation": ["B", "I", "E", "S"]}


@pytest.mark.parametrize("scheme", sorted(LABELS))
def test_the_rules_of_each_scheme_allow_exactly_the_well_formed_labellings(scheme):
    labels = LABELS[scheme]
    rules = "iobes" if scheme == "segmentation" else scheme
    allowed, end_allowed = constraints.well_formed(labels, rules)
    index = {y: i for i, y in enumerate(labels)}
    S = len(labels)
    for n in range(1, 5):
        for tags in itertools.product(labels, repeat=n):
            ids = [index[y] for y in tags]
            by_rules = bool(allowed[ids[0], S] and end_allowed[ids[-1]] and
                            all(allowed[y, v] for v, y in zip(ids, ids[1:])))
            assert by_rules == well_formed_reference(tags, rules), (scheme, tags)


def test_auto_reads_the_scheme_from_the_labels_and_other_labels_are_refused():
    assert np.array_equal(constraints.well_formed(LABELS["iobes"])[0], constraints.well_formed(LABELS["iobes"], "iobes")[0])
    with pytest.raises(SeqbilError, match="chunk tags"):
        constraints.well_formed(["NN", "VB", "DT"])


def allowed_paths(paths, scores, allowed, end_allowed):
    S = len(end_allowed)
    keep = allowed[paths[:, 0], S] & end_allowed[paths[:, -1]]
    for i in range(1, paths.shape[1]):
        keep &= allowed[paths[:, i], paths[:, i - 1]]
    return paths[keep], scores[keep]


@pytest.mark.parametrize("S", [2, 3, 4])
@pytest.mark.parametrize("form", ["linear", "bilinear"])
def test_every_decoder_ranges_over_the_allowed_labellings(rng, form, S):
    data = random_dataset(rng, 12, S, 7, 5)
    weights, W1 = random_model(rng, form, S, "normal")
    allowed = rng.random((S, S + 1)) < 0.6
    allowed[:, :S] |= np.eye(S, dtype=bool)  # every label may repeat: every length has a labelling
    allowed[0, S] = True
    end_allowed = rng.random(S) < 0.6
    end_allowed[0] = True
    constraints.check_lengths(allowed, end_allowed)
    store = constraints.masked(_store(weights), allowed, end_allowed)
    N, P, k, T = data.n_sequences, data.n_positions, 6, 0.9
    best = np.full(P, -1, dtype=np.int32)
    decode_corpus(data, store, best)
    paths, scores = np.full((k, P), -1, dtype=np.int32), np.full((N, k), np.nan)
    counts = np.zeros(N, dtype=np.int32)
    nbest_corpus(data, store, k, paths, scores, counts)
    out, margins, sentence = np.full(P, -1, dtype=np.int32), np.zeros(P), np.zeros(N)
    confidence_corpus(data, store, out, margins, sentence)
    m_out, m_best, marginals, logz = np.full(P, -1, dtype=np.int32), np.zeros(N), np.zeros((P, S)), np.zeros(N)
    marginals_corpus(data, store, T, m_out, m_best, marginals, logz)
    assert np.array_equal(paths[0], best) and np.array_equal(out, best) and np.array_equal(m_out, best)
    for j in range(N):
        a, b = data.seq_ptr[j], data.seq_ptr[j + 1]
        unary, pair = tables(data, j, weights["W0"], W1)
        ref_paths, ref_scores = allowed_paths(*all_paths(unary, pair, weights["trans"], weights["end"]), allowed,
                                              end_allowed)
        assert counts[j] == min(k, len(ref_scores))
        assert_same_list(paths[:counts[j], a:b], scores[j, :counts[j]], ref_paths, ref_scores, exact=False)
        expected = math.inf if len(ref_scores) == 1 else ref_scores[0] - ref_scores[1]
        assert sentence[j] == pytest.approx(expected, abs=1e-9)
        z = ref_scores / T
        assert logz[j] == pytest.approx(np.logaddexp.reduce(z), abs=1e-9)
        p = np.exp(z - np.logaddexp.reduce(z))
        for i in range(b - a):
            np.testing.assert_allclose(marginals[a + i], [p[ref_paths[:, i] == y].sum() for y in range(S)], atol=1e-10)


def _store(weights):
    from seqbil._kernels.decode import as_store
    store = as_store(weights)
    assert isinstance(store, Store)
    return store


def test_rules_that_leave_a_length_without_a_labelling_are_refused():
    allowed, end_allowed = np.ones((2, 3), dtype=bool), np.ones(2, dtype=bool)
    allowed[:, :2] = [[False, True], [True, False]]  # A and B alternate
    end_allowed[:] = [True, False]  # and end in A: only odd lengths starting with A ...
    allowed[1, 2] = False  # (which must start with A)
    with pytest.raises(SeqbilError, match="no labelling of 2 tokens"):
        constraints.check_lengths(allowed, end_allowed)


@pytest.fixture(scope="module")
def chunker(tmp_path_factory):
    path = tmp_path_factory.mktemp("constraints") / "m.sbm"
    seqbil.train(None, config="conll2000", learner="sp", epochs=1, temperature=1.0, model=str(path))
    return path


def test_the_command_line_keeps_to_the_rules_in_every_layout(chunker, tmp_path):
    model = seqbil.load(str(chunker))
    test = seqbil.samples.sample_path("conll2000_test.txt")
    forbid = tmp_path / "forbid.txt"
    forbid.write_text("# no prepositional phrase right before a noun phrase\nB-PP B-NP\n<s> O\nO </s>  # nor O last\n")

    def tag(*flags):
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(chunker), *flags, str(test)],
                              capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return [[line.split()[-1] for line in block.splitlines() if not line.startswith("#")]
                for block in proc.stdout.split("\n\n") if block.strip()]
    plain = tag()
    assert any(not well_formed_reference(s, "iob2") for s in plain)  # the sample has ill-formed output to fix
    for flags in ([], ["--nbest", "2"], ["--marginals"]):
        for s in tag("--well-formed", *flags):
            labels = [y.rsplit("/", 1)[0] for y in s]
            assert well_formed_reference(labels, "iob2"), labels
    for s in tag("--forbid", str(forbid)):
        assert s[0] != "O" and s[-1] != "O" and all((p, y) != ("B-PP", "B-NP") for p, y in zip(s, s[1:]))
    c = model.constrain(well_formed=True)
    assert tag("--well-formed") == [c.tag([line.split()[:2] for line in block.splitlines()])
                                    for block in test.read_text().split("\n\n") if block.strip()]


def test_a_file_of_forbidden_pairs_is_checked(chunker, tmp_path):
    for text, message in (("B-PP\n", "two labels"), ("B-PP X\n", "'X' is not one of the model's"),
                          ("<s> </s>\n", "empty labelling")):
        (tmp_path / "f.txt").write_text(text)
        proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(chunker), "--forbid",
                               str(tmp_path / "f.txt")], input="He PRP\n\n", capture_output=True, text=True)
        assert proc.returncode == 2 and "f.txt:1:" in proc.stderr and message in proc.stderr, proc.stderr


@pytest.mark.parametrize("constrained", [False, True])
def test_posterior_decoding_is_the_allowed_labelling_of_highest_expected_accuracy(chunker, constrained):
    """Each token's most probable label, or under constraints the allowed labelling with
    the largest sum of marginals (by enumeration over every labelling of a short
    sentence), and the probability printed is that labelling's."""
    model = seqbil.load(str(chunker))
    model = model.constrain(well_formed=True) if constrained else model
    index = {y: i for i, y in enumerate(model.labels)}
    for tokens in ([["in", "IN"], ["the", "DT"], ["market", "NN"]], [["He", "PRP"], ["reckons", "VBZ"]],
                   [["and", "CC"], ["rising", "VBG"], [".", "."]]):
        sentence = model.format.sentence(tokens, 1)
        labels, p, marginals = model.predict_posterior([sentence])[0]
        if not constrained:
            assert labels == [model.labels[i] for i in marginals.argmax(axis=1)]
        gain = sum(marginals[i, index[y]] for i, y in enumerate(labels))
        candidates = [c for c in itertools.product(model.labels, repeat=len(tokens))
                      if not constrained or well_formed_reference(list(c), "iob2")]
        best = max(sum(marginals[i, index[y]] for i, y in enumerate(c)) for c in candidates)
        assert gain == pytest.approx(best, abs=1e-12)
        assert p == pytest.approx(model.probability(tokens, labels), rel=1e-9)


def test_posterior_decoding_from_the_command_line(chunker):
    model = seqbil.load(str(chunker))
    text = "He PRP\nreckons VBZ\nthe DT\ncurrent JJ\naccount NN\n\n"
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(chunker), "--posterior"], input=text,
                          capture_output=True, text=True)
    tokens = [line.split() for line in text.split("\n\n")[0].splitlines()]
    labels = model.predict_posterior([model.format.sentence(tokens, 1)])[0][0]
    assert proc.returncode == 0 and [line.split()[-1] for line in proc.stdout.splitlines() if line] == labels
    proc = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(chunker), "--posterior", "--nbest",
                           "2"], input=text, capture_output=True, text=True)
    assert proc.returncode == 2 and "Viterbi's" in proc.stderr
