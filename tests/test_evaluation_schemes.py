"""Chunk scores in every tag scheme (IOB1, IOB2, IOBES, BILOU), scheme detection, label checks,
conversions, per-label accuracy and the reports.

Expected counts are worked out by hand in the comments.  The property tests compare against
encoders and a slow chunk reader written here from the definitions: conlleval for IOB1/IOB2,
seqeval's default (non-strict) mode for IOBES, and BILOU as IOBES with U = S and L = E.
"""
import re

import pytest
from hypothesis import given, settings, strategies as st

from seqbil.evaluation import choose_metric, format_report, headline, score
from seqbil.evaluation.accuracy import label_scores
from seqbil.evaluation.chunks import (LabelError, chunk_scores, chunks, conlleval_scores, detect_scheme,
                                      to_iob2, to_iobes)
from seqbil.evaluation.segmentation import segment_scores


def counts(s):
    return s["phrases_gold"], s["phrases_pred"], s["correct"]


def type_counts(s):
    return {t: (v["gold"], v["pred"], v["correct"]) for t, v in s["per_type"].items()}


# --------------------------------------------------------------------------- hand-computed cases

def test_iob2_with_i_after_o_and_a_type_change_inside_a_chunk():
    gold = [["B-NP", "I-NP", "O", "B-VP", "I-VP", "B-PP", "B-NP"]]
    pred = [["B-NP", "I-VP", "O", "I-VP", "I-VP", "B-PP", "I-NP"]]
    # gold: NP(0,1) VP(3,4) PP(5,5) NP(6,6)                                       -> 4
    # pred: B-NP opens NP; I-VP changes type: NP(0,0) ends, VP opens, O ends VP(1,1);
    #       I-VP after O opens VP(3,4); PP(5,5); I-NP after B-PP changes type: NP(6,6)  -> 5
    # correct: VP(3,4) PP(5,5) NP(6,6) -> 3; P 3/5 = 60, R 3/4 = 75, F 2PR/(P+R) = 66.67
    # equal tags: positions 0, 2, 4, 5 -> 4/7
    s = chunk_scores(gold, pred)
    assert s["scheme"] == "iob2"       # gold has no I- starting a chunk; pred does not count
    assert counts(s) == (4, 5, 3)
    assert type_counts(s) == {"NP": (2, 2, 1), "PP": (1, 1, 1), "VP": (1, 2, 1)}
    assert s["precision"] == pytest.approx(60.0)
    assert s["recall"] == pytest.approx(75.0)
    assert s["f1"] == pytest.approx(200 / 3)
    assert s["accuracy"] == pytest.approx(400 / 7)


def test_iob1_b_only_between_chunks_of_one_type():
    gold = [["I-NP", "I-NP", "B-NP", "O", "I-VP", "I-PP", "I-NP", "I-NP"]]
    pred = [["I-NP", "I-NP", "I-NP", "O", "I-VP", "I-PP", "I-NP", "B-NP"]]
    # gold: NP(0,1), B-NP splits off NP(2,2), VP(4,4), PP(5,5), NP(6,7)           -> 5
    # pred: NP(0,2) VP(4,4) PP(5,5) NP(6,6) NP(7,7)                                -> 5
    # correct: VP and PP -> 2; P = R = F = 40; per type NP 3 gold, 3 found, 0 correct
    s = chunk_scores(gold, pred)
    assert s["scheme"] == "iob1"       # I-NP opens the sentence's first chunk in gold
    assert counts(s) == (5, 5, 2)
    assert type_counts(s) == {"NP": (3, 3, 0), "PP": (1, 1, 1), "VP": (1, 1, 1)}
    assert s["precision"] == s["recall"] == s["f1"] == pytest.approx(40.0)


def test_iob1_and_iob2_encodings_of_the_same_chunks_score_identically():
    # The IOB1 corpus above and its IOB2 spelling: same chunks, so the same chunk numbers.
    gold1 = [["I-NP", "I-NP", "B-NP", "O", "I-VP", "I-PP", "I-NP", "I-NP"]]
    pred1 = [["I-NP", "I-NP", "I-NP", "O", "I-VP", "I-PP", "I-NP", "B-NP"]]
    gold2 = [["B-NP", "I-NP", "B-NP", "O", "B-VP", "B-PP", "B-NP", "I-NP"]]
    pred2 = [["B-NP", "I-NP", "I-NP", "O", "B-VP", "B-PP", "B-NP", "B-NP"]]
    assert [to_iob2(s, "iob1") for s in gold1] == gold2
    assert [to_iob2(s, "iob1") for s in pred1] == pred2
    s1, s2 = chunk_scores(gold1, pred1), chunk_scores(gold2, pred2)
    assert (s1["scheme"], s2["scheme"]) == ("iob1", "iob2")
    for key in ("phrases_gold", "phrases_pred", "correct", "precision", "recall", "f1", "per_type"):
        assert s1[key] == s2[key], key
    assert counts(s2) == (5, 5, 2)


def test_single_token_chunks_are_not_one_two_token_chunk():
    gold, pred = [["B-PER", "E-PER"]], [["S-PER", "S-PER"]]
    # gold: one chunk PER(0,1); pred: S is a whole chunk, twice: PER(0,0), PER(1,1) -> 1, 2, 0
    s = chunk_scores(gold, pred)
    assert s["scheme"] == "iobes"
    assert counts(s) == (1, 2, 0)
    assert s["precision"] == s["recall"] == s["f1"] == 0.0
    # conlleval has no S rule and no E->B rule: it reads one PER(0,1) chunk in each -> 100 %
    c = conlleval_scores(gold, pred)
    assert counts(c) == (1, 1, 1) and c["f1"] == 100.0
    # BILOU spelling: the same
    s = chunk_scores([["B-PER", "L-PER"]], [["U-PER", "U-PER"]])
    assert s["scheme"] == "bilou" and counts(s) == (1, 2, 0)


IOBES_GOLD = [["B-PER", "I-PER", "E-PER", "O", "S-LOC", "B-ORG", "E-ORG"]]
IOBES_PRED = [["B-PER", "E-PER", "E-PER", "O", "B-LOC", "I-ORG", "E-ORG"]]


def _as_bilou(corpus):
    return [[{"S": "U", "E": "L"}.get(t[0], t[0]) + t[1:] for t in s] for s in corpus]


@pytest.mark.parametrize("scheme, gold, pred", [
    ("iobes", IOBES_GOLD, IOBES_PRED),
    ("bilou", _as_bilou(IOBES_GOLD), _as_bilou(IOBES_PRED)),
])
def test_iobes_and_bilou_with_ill_formed_predictions(scheme, gold, pred):
    # gold: PER(0,2) LOC(4,4) ORG(5,6)                                            -> 3
    # pred: B-PER E-PER is PER(0,1); E-PER after E starts a new chunk: PER(2,2), O ends it;
    #       B-LOC then I-ORG: the type changes, LOC(4,4) ends, I-ORG opens ORG(5,6)  -> 4
    # correct: LOC(4,4), ORG(5,6) -> 2; P 2/4 = 50, R 2/3 = 66.67, F = 4/7 = 57.14
    # equal tags: 0, 2 (E-PER both), 3, 6 -> 4/7
    s = chunk_scores(gold, pred)
    assert s["scheme"] == scheme
    assert counts(s) == (3, 4, 2)
    assert type_counts(s) == {"LOC": (1, 1, 1), "ORG": (1, 1, 1), "PER": (1, 2, 0)}
    assert s["precision"] == pytest.approx(50.0)
    assert s["recall"] == pytest.approx(200 / 3)
    assert s["f1"] == pytest.approx(400 / 7)
    assert s["accuracy"] == pytest.approx(400 / 7)
    assert chunks(pred[0], scheme) == [("PER", 0, 1), ("PER", 2, 2), ("LOC", 4, 4), ("ORG", 5, 6)]


@pytest.mark.parametrize("scheme, gold, pred", [
    # Each gold corpus has a chunk open at the end of sentence 1 and a continuation tag at the
    # start of sentence 2; each pred has the two one-token chunks spelled as such.
    ("iob1", [["O", "I-NP"], ["I-NP", "O"]], [["O", "I-NP"], ["B-NP", "O"]]),
    ("iob2", [["O", "B-NP"], ["I-NP", "O"]], [["O", "B-NP"], ["B-NP", "O"]]),
    ("iobes", [["O", "B-NP"], ["E-NP", "O"]], [["O", "S-NP"], ["S-NP", "O"]]),
    ("iobes", [["O", "B-NP"], ["I-NP", "E-NP"]], [["O", "S-NP"], ["B-NP", "E-NP"]]),
    ("bilou", [["O", "B-NP"], ["L-NP", "O"]], [["O", "U-NP"], ["U-NP", "O"]]),
])
def test_chunks_do_not_cross_sentence_ends(scheme, gold, pred):
    # The sentence end closes gold's chunk: NP at (1,1) in sentence 1 and NP starting at 0 in
    # sentence 2; pred has the same two chunks -> 2 gold, 2 found, 2 correct.
    assert counts(chunk_scores(gold, pred, scheme)) == (2, 2, 2)
    # The same tags as ONE sentence: gold is then a single NP over the joint, pred still two,
    # so nothing is correct.  (This is what a merge across the sentence end would score.)
    joined = chunk_scores([gold[0] + gold[1]], [pred[0] + pred[1]], scheme)
    assert counts(joined) == (1, 2, 0)


@pytest.mark.parametrize("scheme", ["auto", "iob1", "iob2", "iobes", "bilou"])
def test_o_only_sentences(scheme):
    # Sentences of O only have no chunks and separate nothing: gold X(0,1) in sentence 2;
    # pred adds X(1,1) in sentence 1 -> 1 gold, 2 found, 1 correct.
    gold = [["O", "O"], ["B-X", "I-X"], [], ["O"]]
    pred = [["O", "B-X"], ["B-X", "I-X"], [], ["O"]]
    s = chunk_scores(gold, pred, scheme)
    assert counts(s) == (1, 2, 1)
    assert s["tokens"] == 5
    # A corpus of O only: no chunks, every score 0 (conlleval's convention), tags all right.
    s = chunk_scores([["O", "O"], ["O"]], [["O", "O"], ["O"]], scheme)
    assert counts(s) == (0, 0, 0) and s["per_type"] == {}
    assert s["precision"] == s["recall"] == s["f1"] == 0.0 and s["accuracy"] == 100.0
    assert s["scheme"] == ("iob2" if scheme == "auto" else scheme)


# --------------------------------------------------------------------------- scheme detection

def test_detect_scheme_from_labels():
    assert detect_scheme({"O", "B-NP", "I-NP"}) == "iob2"
    assert detect_scheme({"B-NP", "E-NP"}) == "iobes"
    assert detect_scheme({"O", "S-PER"}) == "iobes"
    assert detect_scheme({"U-PER", "B-LOC"}) == "bilou"
    assert detect_scheme({"L-PER"}) == "bilou"
    assert detect_scheme({"S-PER", "U-PER"}) == "bilou"     # U/L win; the check then rejects S-
    assert detect_scheme(["O"]) == "iob2"


def test_detect_iob1_from_gold_sentences():
    labels = {"O", "B-NP", "I-NP", "I-VP"}
    assert detect_scheme(labels) == "iob2"                               # no sentences: cannot tell
    assert detect_scheme(labels, [["B-NP", "I-NP", "O"], ["O", "I-NP"]]) == "iob1"   # I- after O
    assert detect_scheme(labels, [["I-NP", "B-NP"]]) == "iob1"           # I- at the sentence start
    assert detect_scheme(labels, [["B-NP", "I-VP"]]) == "iob1"           # I- after another type
    assert detect_scheme(labels, [["B-NP", "I-NP", "O", "B-VP", "I-VP"]]) == "iob2"


def test_auto_detection_looks_at_gold_and_prediction():
    # gold B-X I-X O alone would be iob2; the prediction's S- tags make it iobes.  Read as
    # IOBES: gold X(0,1); pred X(0,0), X(1,1) -> 1, 2, 0.  (Read as IOB2 by conlleval, pred
    # would be one chunk X(0,1) and correct.)
    s = chunk_scores([["B-X", "I-X", "O"]], [["S-X", "S-X", "O"]])
    assert s["scheme"] == "iobes" and counts(s) == (1, 2, 0)
    # IOB1 is detected from gold only: an I- start in the prediction is an error, not a scheme.
    assert chunk_scores([["B-X", "O"]], [["I-X", "O"]])["scheme"] == "iob2"
    assert chunk_scores([["I-X", "O"]], [["B-X", "O"]])["scheme"] == "iob1"
    # a given scheme is used as given
    assert chunk_scores([["I-X", "O"]], [["B-X", "O"]], "iob2")["scheme"] == "iob2"


def test_score_passes_the_scheme_and_reports_it():
    gold, pred = [["B-PER", "E-PER"]], [["S-PER", "S-PER"]]
    r = score("chunk", gold, pred)
    assert r["metric"] == "chunk" and r["scheme"] == "iobes" and counts(r) == (1, 2, 0)
    assert headline(r) == ("F1", 0.0)
    r = score("chunk", [["B-X", "I-X"]], [["B-X", "B-X"]], scheme="iobes")
    # read as IOBES (B then B: two chunks) -> gold X(0,1), pred X(0,0) X(1,1)
    assert r["scheme"] == "iobes" and counts(r) == (1, 2, 0)


# --------------------------------------------------------------------------- label checks

@pytest.mark.parametrize("bad", ["NP", "B-", "BX-NP", "b-NP", "-NP", "[-NP", "O-NP", "X"])
def test_labels_that_are_not_chunk_tags_are_named(bad):
    gold = [["B-NP", "O"], ["B-NP", "O"]]
    pred = [["B-NP", "O"], ["B-NP", bad]]
    with pytest.raises(ValueError, match=re.escape(f"{bad!r} (in predicted sentence 2) is not a chunk tag")):
        chunk_scores(gold, pred)
    with pytest.raises(LabelError, match="gold sentence 2"):
        chunk_scores(pred, gold)
    with pytest.raises(ValueError, match="is not a chunk tag"):
        score("chunk", gold, pred)


@pytest.mark.parametrize("scheme, gold, label", [
    ("iob2", [["B-X", "E-X"]], "E-X"),
    ("iob1", [["S-X"]], "S-X"),
    ("iobes", [["B-X", "L-X"]], "L-X"),
    ("bilou", [["B-X", "E-X"]], "E-X"),
    ("auto", [["U-X", "S-X"]], "S-X"),       # detected bilou, so S- does not belong
])
def test_labels_outside_the_scheme_are_named(scheme, gold, label):
    with pytest.raises(LabelError, match=rf"'{label}' \(in gold sentence 1\) does not belong to the "
                                         r"(iob1|iob2|iobes|bilou) scheme"):
        chunk_scores(gold, gold, scheme)


def test_unknown_scheme():
    with pytest.raises(ValueError, match="scheme must be"):
        chunk_scores([["B-X"]], [["B-X"]], "bio")


# --------------------------------------------------------------------------- conversions

def test_to_iob2_and_to_iobes_by_hand():
    iob1 = ["I-NP", "I-NP", "B-NP", "O", "I-VP"]
    # chunks NP(0,1) NP(2,2) VP(4,4)
    assert to_iob2(iob1, "iob1") == ["B-NP", "I-NP", "B-NP", "O", "B-VP"]
    assert to_iobes(iob1, "iob1") == ["B-NP", "E-NP", "S-NP", "O", "S-VP"]
    assert to_iob2(["U-X", "B-Y", "L-Y", "O"], "bilou") == ["B-X", "B-Y", "I-Y", "O"]
    # ill-formed IOBES: B-X, B-X (B ends the first), E-X, I-X (I after E starts a chunk)
    # -> X(0,0) X(1,2) X(3,3)
    assert to_iobes(["B-X", "B-X", "E-X", "I-X"], "iobes") == ["S-X", "B-X", "E-X", "S-X"]
    assert to_iob2(["B-X", "B-X", "E-X", "I-X"], "iobes") == ["B-X", "B-X", "I-X", "B-X"]
    # auto: S- makes it IOBES; E-X after S-X starts a chunk -> X(0,0) X(1,1)
    assert to_iob2(["S-X", "E-X"]) == ["B-X", "B-X"]
    assert to_iobes(["B-A-B", "I-A-B"]) == ["B-A-B", "E-A-B"]    # the type is all after the 1st hyphen
    with pytest.raises(LabelError):
        to_iobes(["B-X", "X"], "iob2")


def test_type_zero_is_kept_when_reading_a_scheme():
    # conlleval's Perl truthiness makes the type "0" empty; read in a scheme it stays "0", so
    # conversions write valid tags.
    assert chunks(["B-0", "I-0"]) == [("", 0, 1)]
    assert chunks(["B-0", "I-0"], "iob2") == [("0", 0, 1)]
    assert to_iobes(["B-0", "I-0"], "iob2") == ["B-0", "E-0"]
    assert to_iob2(["S-0"], "iobes") == ["B-0"]


# --------------------------------------------------------------------------- token accuracy

ACC_GOLD = [["N", "V", "N", "D"], ["N", "P"]]
ACC_PRED = [["N", "N", "N", "D"], ["N", "X"]]


def test_per_label_counts_by_hand():
    # position by position: N=N+, V/N, N=N+, D=D+ | N=N+, P/X -> 4 of 6 right = 66.67 %
    # count (gold):   D 1, N 3, P 1, V 1, X 0
    # predicted:      D 1, N 4, P 0, V 0, X 1
    # correct:        D 1, N 3, P 0, V 0, X 0
    # N: precision 3/4 = 75, recall 3/3 = 100, F1 2PR/(P+R) = 1.5/1.75 = 85.71; D: 100; P, V, X: 0
    table = label_scores(ACC_GOLD, ACC_PRED)
    assert list(table) == ["D", "N", "P", "V", "X"]
    assert {y: (v["count"], v["predicted"], v["correct"]) for y, v in table.items()} == {
        "D": (1, 1, 1), "N": (3, 4, 3), "P": (1, 0, 0), "V": (1, 0, 0), "X": (0, 1, 0)}
    assert table["N"]["precision"] == pytest.approx(75.0)
    assert table["N"]["recall"] == pytest.approx(100.0)
    assert table["N"]["f1"] == pytest.approx(600 / 7)
    assert table["D"]["precision"] == table["D"]["recall"] == table["D"]["f1"] == 100.0
    for y in "PVX":
        assert table[y]["precision"] == table[y]["recall"] == table[y]["f1"] == 0.0
    r = score("accuracy", ACC_GOLD, ACC_PRED)
    assert r["accuracy"] == pytest.approx(400 / 6) and r["per_label"] == table
    assert headline(r) == ("acc", pytest.approx(400 / 6))


def test_accuracy_report():
    report = format_report(score("accuracy", ACC_GOLD, ACC_PRED))
    # widths: the header words, or "100.00" where that is wider ("recall", "F1")
    assert report.splitlines() == [
        "accuracy: 66.67% (6 tokens)",
        "label  count  predicted  correct  precision  recall      F1",
        "D          1          1        1     100.00  100.00  100.00",
        "N          3          4        3      75.00  100.00   85.71",
        "P          1          0        0       0.00    0.00    0.00",
        "V          1          0        0       0.00    0.00    0.00",
        "X          0          1        0       0.00    0.00    0.00",
    ]
    # a long label widens the first column
    lines = format_report(score("accuracy", [["LONGLABEL"]], [["LONGLABEL"]])).splitlines()
    assert lines[1].startswith("label      count") and lines[2].startswith("LONGLABEL      1")
    assert format_report(score("accuracy", [], [])) == "accuracy: 0.00% (0 tokens)\n"


# --------------------------------------------------------------------------- chunk reports

def test_chunk_report_is_conllevals_output_and_nothing_else():
    # the IOBES case above: 7 tokens, 3 gold, 4 found, 2 correct; tags 4/7 = 57.14 %;
    # per type (alphabetical, found count last): LOC 1/1/1, ORG 1/1/1, PER 1/2/0
    r = score("chunk", IOBES_GOLD, IOBES_PRED)
    assert format_report(r).splitlines() == [
        "processed 7 tokens with 3 phrases; found: 4 phrases; correct: 2.",
        "accuracy:  57.14%; precision:  50.00%; recall:  66.67%; FB1:  57.14",
        "              LOC: precision: 100.00%; recall: 100.00%; FB1: 100.00  1",
        "              ORG: precision: 100.00%; recall: 100.00%; FB1: 100.00  1",
        "              PER: precision:   0.00%; recall:   0.00%; FB1:   0.00  2",
    ]


def test_chunk_report_pads_like_perl():
    # conlleval's "%17s" counts bytes: 人名 is 6 bytes in UTF-8, so 11 spaces, not 15.
    r = score("chunk", [["B-人名"]], [["B-人名"]])
    assert format_report(r).splitlines()[2] == " " * 11 + "人名: precision: 100.00%; recall: 100.00%; FB1: 100.00  1"
    # conlleval (Perl truthiness) turns type "0" into "", and prints the "" line twice when
    # the type occurs in both gold and prediction.
    r = score("chunk", [["B-0"]], [["B-0"]], scheme="iob2")
    line = " " * 17 + ": precision: 100.00%; recall: 100.00%; FB1: 100.00  1"
    assert format_report(r).splitlines()[2:] == [line, line]


# --------------------------------------------------------------------------- metric choice, segment

def test_choose_metric():
    assert choose_metric({"B-NP", "I-NP", "O"}, False) == ("chunk", "the labels are chunk tags")
    assert choose_metric({"U-PER", "L-PER", "O"}, False)[0] == "chunk"
    assert choose_metric({"O"}, False)[0] == "chunk"  # no gold chunks: conlleval scores them so
    assert choose_metric({"NN", "VB"}, False)[0] == "accuracy"
    assert choose_metric({"B", "I", "E", "S"}, True)[0] == "segment"
    assert choose_metric({"NN"}, False, "accuracy") == ("accuracy", "as set")
    with pytest.raises(ValueError, match="NN"):
        choose_metric({"NN", "B-NP"}, False, "chunk")
    with pytest.raises(ValueError, match="segment"):
        choose_metric({"B-NP"}, False, "segment")


def test_segment_numbers_unchanged_through_score():
    chars = [list("他来到北京大学")]
    gold = [["S", "B", "E", "B", "E", "B", "E"]]      # 他 来到 北京 大学
    pred = [["S", "B", "E", "B", "I", "I", "E"]]      # 他 来到 北京大学
    r = score("segment", gold, pred, chars=chars)
    expected = segment_scores([["他", "来到", "北京", "大学"]], [["他", "来到", "北京大学"]])
    assert {k: r[k] for k in expected} == expected
    assert (r["words_gold"], r["words_pred"], r["correct"]) == (4, 3, 2)
    assert "per_label" not in r and "scheme" not in r


# --------------------------------------------------------------------------- properties

TYPES = ["PER", "LOC", "A-B"]      # "A-B": the type is everything after the first hyphen


@st.composite
def segments(draw, n):
    """A sentence of n tokens as (type or None for O, length) segments; chunks of one type
    may be adjacent (then IOB1 needs its B-)."""
    out, left = [], n
    while left:
        k = draw(st.integers(1, min(left, 4)))
        out.append((draw(st.sampled_from([None, *TYPES])), k))
        left -= k
    return out


def encode(segs, scheme):
    """Tags of well-formed segments, written independently of the library."""
    out, prev = [], None
    for typ, k in segs:
        if typ is None:
            out += ["O"] * k
        elif scheme in ("iob1", "iob2"):
            first = "B" if scheme == "iob2" or prev == typ else "I"
            out += [f"{first}-{typ}"] + [f"I-{typ}"] * (k - 1)
        else:
            single, last = ("S", "E") if scheme == "iobes" else ("U", "L")
            out += [f"{single}-{typ}"] if k == 1 else [f"B-{typ}"] + [f"I-{typ}"] * (k - 2) + [f"{last}-{typ}"]
        prev = typ
    return out


def spans(segs):
    out, pos = set(), 0
    for typ, k in segs:
        if typ is not None:
            out.add((typ, pos, pos + k - 1))
        pos += k
    return out


@st.composite
def segmented_corpora(draw):
    """Gold and predicted corpora as segments: each predicted sentence is the gold one or an
    independent one of the same length."""
    gold, pred = [], []
    for n in draw(st.lists(st.integers(0, 9), min_size=1, max_size=4)):
        g = draw(segments(n))
        gold.append(g)
        pred.append(g if draw(st.booleans()) else draw(segments(n)))
    return gold, pred


def numbers(s):
    return (counts(s), s["precision"], s["recall"], s["f1"], type_counts(s))


@settings(max_examples=250, deadline=None)
@given(segmented_corpora())
def test_every_encoding_of_the_same_chunks_scores_like_iob2(corpora):
    gold, pred = corpora
    # expected from the segments themselves
    n_gold = n_pred = n_right = 0
    per_type = {}
    for g, p in zip(gold, pred):
        gs, ps = spans(g), spans(p)
        n_gold, n_pred, n_right = n_gold + len(gs), n_pred + len(ps), n_right + len(gs & ps)
        for i, found in enumerate((gs, ps, gs & ps)):
            for t, _, _ in found:
                per_type.setdefault(t, [0, 0, 0])[i] += 1
    iob2 = chunk_scores([encode(s, "iob2") for s in gold], [encode(s, "iob2") for s in pred], "iob2")
    assert counts(iob2) == (n_gold, n_pred, n_right)
    assert type_counts(iob2) == {t: tuple(v) for t, v in per_type.items()}
    for scheme in ("iob1", "iobes", "bilou"):
        g, p = [encode(s, scheme) for s in gold], [encode(s, scheme) for s in pred]
        assert numbers(chunk_scores(g, p, scheme)) == numbers(iob2), scheme
        assert numbers(chunk_scores(g, p)) == numbers(iob2), scheme           # detected
        for segs, tags in zip(gold + pred, g + p):
            assert to_iob2(tags, scheme) == encode(segs, "iob2")
            assert to_iobes(tags, scheme) == encode(segs, "iobes")
            assert set(chunks(tags, scheme)) == spans(segs)


def reference_chunks(tags, scheme):
    """Chunks by token-level definitions (BILOU read as IOBES with U = S, L = E):
    token i begins a chunk when it is not O and is B or S, or is first in the sentence, or
    follows O, E or S, or follows another type; it ends one when it is not O and is E or S, or
    is last, or is followed by O, B or S, or by another type.  A chunk runs from a beginning
    token to the first ending token from there on.  (For B/I/O tags: conlleval's reading.)"""
    as_iobes = {"U": "S", "L": "E"} if scheme == "bilou" else {}
    pre = [as_iobes.get(t[0], t[0]) if t != "O" else "O" for t in tags]
    typ = [t[2:] for t in tags]
    n = len(tags)

    def begins(i):
        return pre[i] != "O" and (pre[i] in "BS" or i == 0 or pre[i - 1] in "OES" or typ[i - 1] != typ[i])

    def ends(i):
        return pre[i] != "O" and (pre[i] in "ES" or i == n - 1 or pre[i + 1] in "OBS" or typ[i + 1] != typ[i])

    out = set()
    for s in range(n):
        if begins(s):
            e = s
            while not ends(e):
                e += 1
            out.add((typ[s], s, e))
    return out


@st.composite
def random_corpora(draw, prefixes):
    """Any tags of the scheme, ill-formed ones included (I- after O, E- without B-, ...)."""
    tag = st.one_of(st.just("O"), st.builds("{}-{}".format, st.sampled_from(prefixes), st.sampled_from(TYPES)))
    gold, pred = [], []
    for n in draw(st.lists(st.integers(0, 10), min_size=1, max_size=4)):
        g = draw(st.lists(tag, min_size=n, max_size=n))
        keep = draw(st.lists(st.booleans(), min_size=n, max_size=n))
        other = draw(st.lists(tag, min_size=n, max_size=n))
        gold.append(g)
        pred.append([a if k else b for a, k, b in zip(g, keep, other)])
    return gold, pred


# iob1 and iob2 are read alike (conlleval's state machine), so iob2 stands for both here.
@pytest.mark.parametrize("scheme, prefixes", [("iob2", "BI"), ("iobes", "BIES"), ("bilou", "BILU")])
def test_random_tags_against_the_reference_reader(scheme, prefixes):
    @settings(max_examples=250, deadline=None)
    @given(random_corpora(prefixes))
    def check(corpora):
        gold, pred = corpora
        found = [0, 0, 0]
        per_type = {}
        for g, p in zip(gold, pred):
            gs, ps = reference_chunks(g, scheme), reference_chunks(p, scheme)
            assert set(chunks(g, scheme)) == gs and len(chunks(g, scheme)) == len(gs)
            for i, chunk_set in enumerate((gs, ps, gs & ps)):
                found[i] += len(chunk_set)
                for t, _, _ in chunk_set:
                    per_type.setdefault(t, [0, 0, 0])[i] += 1
        s = chunk_scores(gold, pred, scheme)
        assert counts(s) == tuple(found)
        assert type_counts(s) == {t: tuple(v) for t, v in per_type.items()}
        p = 100 * found[2] / found[1] if found[1] else 0.0
        r = 100 * found[2] / found[0] if found[0] else 0.0
        assert s["precision"] == pytest.approx(p) and s["recall"] == pytest.approx(r)
        assert s["f1"] == pytest.approx(2 * p * r / (p + r) if p + r else 0.0)
        tokens = sum(map(len, gold))
        equal = sum(a == b for g, p in zip(gold, pred) for a, b in zip(g, p))
        assert s["tokens"] == tokens
        assert s["accuracy"] == pytest.approx(100 * equal / tokens if tokens else 0.0)

    check()


def test_chunks_without_types_are_scored_as_conlleval_scores_them(rng):
    """B / I / O without a type (CRF++'s base-NP example): chunks of an empty type, the
    metric chosen for them is chunk, and the scores are conlleval's."""
    from seqbil.evaluation import choose_metric
    from seqbil.evaluation.chunks import chunk_scores, conlleval_scores
    assert choose_metric({"B", "I", "O"})[0] == "chunk"
    for _ in range(30):
        gold = [list(rng.choice(["B", "I", "O"], int(rng.integers(1, 8)))) for _ in range(6)]
        pred = [list(rng.choice(["B", "I", "O"], len(g))) for g in gold]
        want = conlleval_scores(gold, pred)
        got = chunk_scores(gold, pred)
        assert got["f1"] == want["f1"] and got["correct"] == want["correct"]
