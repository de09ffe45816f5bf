"""Tests for seqbil.evaluation.  Expected values are worked out by hand in the comments."""
import random

import pytest

from seqbil.evaluation import format_report
from seqbil.evaluation.accuracy import token_accuracy
from seqbil.evaluation.chunks import LabelError, chunk_scores, chunks, conlleval_scores, iobes_to_iob2
from seqbil.evaluation.segmentation import segment_scores


# --------------------------------------------------------------------------- chunks()

def test_chunks_at_sentence_start_and_end():
    # B-NP I-NP opens the sentence, B-VP closes it; both chunks must be reported.
    assert chunks(["B-NP", "I-NP", "O", "B-VP"]) == [("NP", 0, 1), ("VP", 3, 3)]
    # A lone I- tag at the very start is a chunk (sentence start behaves like a preceding O).
    assert chunks(["I-NP"]) == [("NP", 0, 0)]
    assert chunks([]) == []
    assert chunks(["O", "O"]) == []


def test_i_after_o_starts_a_chunk():
    # IOB1: I-NP after O opens a chunk that runs over the following I-NP.
    assert chunks(["O", "I-NP", "I-NP", "O"]) == [("NP", 1, 2)]


def test_type_change_starts_a_new_chunk():
    # I-VP after I-NP: the NP chunk ends, a VP chunk starts.
    assert chunks(["I-NP", "I-VP", "I-VP"]) == [("NP", 0, 0), ("VP", 1, 2)]
    assert chunks(["B-NP", "I-VP", "O"]) == [("NP", 0, 0), ("VP", 1, 1)]


def test_b_splits_adjacent_chunks_of_the_same_type():
    assert chunks(["I-NP", "I-NP", "B-NP", "I-NP"]) == [("NP", 0, 1), ("NP", 2, 3)]
    assert chunks(["B-NP", "B-NP"]) == [("NP", 0, 0), ("NP", 1, 1)]


def test_iob1_and_iob2_spellings_give_the_same_chunks():
    iob1 = ["I-NP", "I-NP", "B-NP", "O", "I-VP", "I-PP", "I-NP"]
    iob2 = ["B-NP", "I-NP", "B-NP", "O", "B-VP", "B-PP", "B-NP"]
    expected = [("NP", 0, 1), ("NP", 2, 2), ("VP", 4, 4), ("PP", 5, 5), ("NP", 6, 6)]
    assert chunks(iob1) == expected
    assert chunks(iob2) == expected
    s = chunk_scores([iob1], [iob2])
    # same chunks -> 5/5 correct, but only tags 1 (I-NP), 2 (B-NP), 3 (O) are equal: 3/7
    assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (5, 5, 5)
    assert s["precision"] == s["recall"] == s["f1"] == 100.0
    assert s["accuracy"] == pytest.approx(300 / 7)


def test_tags_without_a_type():
    # "B" splits as prefix B, type "": B opens a chunk after O, I continues it, O ends it.
    assert chunks(["B", "I", "O", "B"]) == [("", 0, 1), ("", 3, 3)]
    # Perl truthiness: a type "0" is false and becomes "".
    assert chunks(["B-0", "I-0"]) == [("", 0, 1)]
    # O then a bare I: no type change, so only the explicit O->I rule opens this chunk.
    assert chunks(["O", "I", "I"]) == [("", 1, 2)]


def test_conlleval_reads_e_tags_as_ioe_not_iobes():
    # IOE1: E-NP followed by I-NP ends one chunk and starts the next.
    assert chunks(["I-NP", "E-NP", "I-NP", "E-NP"]) == [("NP", 0, 1), ("NP", 2, 3)]
    # conlleval has no rule for E->B or S->S of one type: IOBES input reads as one chunk ...
    assert chunks(["B-NP", "E-NP", "B-NP", "E-NP"]) == [("NP", 0, 3)]
    assert chunks(["S-PER", "S-PER"]) == [("PER", 0, 1)]
    # ... unless it is read as IOBES, or converted to IOB2 first.
    assert chunks(["B-NP", "E-NP", "B-NP", "E-NP"], "iobes") == [("NP", 0, 1), ("NP", 2, 3)]
    assert chunks(["S-PER", "S-PER"], "iobes") == [("PER", 0, 0), ("PER", 1, 1)]
    assert iobes_to_iob2(["B-NP", "E-NP", "S-NP", "O"]) == ["B-NP", "I-NP", "B-NP", "O"]
    assert chunks(iobes_to_iob2(["S-PER", "S-PER"])) == [("PER", 0, 0), ("PER", 1, 1)]
    # S-PER then I-PER: two chunks for seqeval (S ends its chunk), so the I-PER becomes a B-PER;
    # rewriting tag by tag (S -> B) would have glued them into one.
    assert iobes_to_iob2(["S-PER", "I-PER"]) == ["B-PER", "B-PER"]


def test_bracket_tags_are_one_token_chunks():
    # "[" always starts a chunk and the token after "[" or "]" always ends it.
    assert chunks(["[", "O", "]"]) == [("", 0, 0), ("", 2, 2)]
    assert chunks(["[-NP", "I-NP"]) == [("NP", 0, 0)]   # I-NP after [-NP starts nothing


# --------------------------------------------------------------------------- conlleval_scores()

def test_exotic_tags_follow_the_incorrect_state_machine():
    # E-NP -> [-NP: endOfChunk has no rule for it (same type), but "[" always starts a chunk.
    # chunks() closes the first chunk there; conlleval's inCorrect flag just carries on, and
    # only the end after "[" credits a chunk: 2 gold, 2 found, 1 correct (perl conlleval agrees),
    # whereas intersecting the chunk sets would give 2.
    tags = ["B-NP", "E-NP", "[-NP"]
    assert chunks(tags) == [("NP", 0, 1), ("NP", 2, 2)]
    s = conlleval_scores([tags], [tags])
    assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (2, 2, 1)
    # ".-NP" never ends a chunk on a type change, so the predicted NP is still open when B-VP
    # arrives while gold's NP goes on: the types differ (NP vs VP) without an end on either
    # side, which clears inCorrect -> nothing correct (perl: 1 gold, 2 found, 0 correct).
    s = conlleval_scores([["B-NP", "I-NP", "I-NP"]], [["B-NP", ".-NP", "B-VP"]])
    assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (1, 2, 0)
    # A chunk ending in ".-NP" is not ended by the sentence boundary (no rule ends after "."),
    # so it is still open at the end of the input, where conlleval credits it anyway.
    s = conlleval_scores([["B-NP", ".-NP"]], [["B-NP", ".-NP"]])
    assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (1, 1, 1)
    # chunk_scores only takes chunk tags, and says which one it cannot read.
    with pytest.raises(LabelError, match=r"'\[-NP' \(in gold sentence 1\) is not a chunk tag"):
        chunk_scores([tags], [tags])


def test_ioe_tags_are_scored_as_ioe():
    # conlleval reads gold I-NP E-NP | I-NP as IOE1: chunks (0,1) and (2,2); chunk_scores detects
    # ioe1 (E- tags without B-, a chunk ending on I-) and gives conlleval's numbers.
    # pred I-NP I-NP I-NP: one chunk (0,2) both ways -> 2 gold, 1 found, 0 correct either way.
    gold, pred = [["I-NP", "E-NP", "I-NP"]], [["I-NP", "I-NP", "I-NP"]]
    s = chunk_scores(gold, pred)
    assert s["scheme"] == "ioe1"
    assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (2, 1, 0)
    s = conlleval_scores(gold, pred)
    assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (2, 1, 0)


# --------------------------------------------------------------------------- chunk_scores()

def test_right_start_wrong_end_is_not_correct():
    gold = [["B-NP", "I-NP", "I-NP", "O"]]
    short = [["B-NP", "I-NP", "O", "O"]]     # ends one token early
    long_ = [["B-NP", "I-NP", "I-NP", "I-NP"]]  # runs on to the sentence end
    for pred, equal_tags in ((short, 3), (long_, 3)):
        s = chunk_scores(gold, pred)
        assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (1, 1, 0)
        assert s["precision"] == s["recall"] == s["f1"] == 0.0
        assert s["accuracy"] == pytest.approx(100 * equal_tags / 4)


def test_sentence_boundary_separates_chunks():
    # Sentence 1 ends inside an NP; sentence 2 starts with I-NP (gold) / B-NP (pred).
    # The boundary acts like O, so both are 2 separate NPs and both are correct.
    gold = [["O", "B-NP"], ["I-NP"]]
    pred = [["O", "B-NP"], ["B-NP"]]
    s = chunk_scores(gold, pred)
    assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (2, 2, 2)
    assert s["accuracy"] == pytest.approx(200 / 3)   # the last tag differs


def _small_corpus():
    gold = [["B-NP", "I-NP", "B-VP", "I-VP", "B-PP", "B-NP", "I-NP", "O"],
            ["O", "B-NP", "I-NP", "B-ADJP"]]
    pred = [["B-NP", "I-NP", "B-VP", "B-VP", "B-PP", "B-NP", "I-NP", "O"],
            ["O", "B-NP", "B-NP", "B-ADJP"]]
    return gold, pred


def test_corpus_level_scores_by_hand():
    gold, pred = _small_corpus()
    # gold chunks: s1 NP(0,1) VP(2,3) PP(4,4) NP(5,6); s2 NP(1,2) ADJP(3,3)      -> 6
    # pred chunks: s1 NP(0,1)+ VP(2,2) VP(3,3) PP(4,4)+ NP(5,6)+; s2 NP(1,1) NP(2,2) ADJP(3,3)+
    #              -> 8 found, 4 correct (marked +)
    # tags: 12, different at s1[3] and s2[2] -> 10/12 = 83.33 %
    # P = 4/8 = 50 %, R = 4/6 = 66.67 %, F1 = 2PR/(P+R) = 4/7 = 57.14 %
    s = chunk_scores(gold, pred)
    assert s["tokens"] == 12
    assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (6, 8, 4)
    assert s["accuracy"] == pytest.approx(1000 / 12)
    assert s["precision"] == pytest.approx(50.0)
    assert s["recall"] == pytest.approx(400 / 6)
    assert s["f1"] == pytest.approx(400 / 7)


def test_per_type_scores_by_hand():
    gold, pred = _small_corpus()
    pt = chunk_scores(gold, pred)["per_type"]
    assert sorted(pt) == ["ADJP", "NP", "PP", "VP"]
    # NP: gold 3, found 4, correct 2 -> P 50, R 66.67, F 57.14
    assert (pt["NP"]["gold"], pt["NP"]["pred"], pt["NP"]["correct"]) == (3, 4, 2)
    assert pt["NP"]["precision"] == pytest.approx(50.0)
    assert pt["NP"]["recall"] == pytest.approx(200 / 3)
    assert pt["NP"]["f1"] == pytest.approx(400 / 7)
    # VP: gold 1, found 2, correct 0 -> everything 0
    assert (pt["VP"]["gold"], pt["VP"]["pred"], pt["VP"]["correct"]) == (1, 2, 0)
    assert pt["VP"]["precision"] == pt["VP"]["recall"] == pt["VP"]["f1"] == 0.0
    # PP and ADJP: 1 of 1
    for t in ("PP", "ADJP"):
        assert (pt[t]["gold"], pt[t]["pred"], pt[t]["correct"]) == (1, 1, 1)
        assert pt[t]["f1"] == 100.0


def test_type_only_in_prediction_gets_zero_recall_and_precision():
    # gold NP(0,1); pred calls it VP(0,1): NP gold 1 pred 0, VP gold 0 pred 1, nothing correct
    pt = chunk_scores([["B-NP", "I-NP"]], [["B-VP", "I-VP"]])["per_type"]
    assert (pt["NP"]["gold"], pt["NP"]["pred"], pt["NP"]["correct"]) == (1, 0, 0)
    assert (pt["VP"]["gold"], pt["VP"]["pred"], pt["VP"]["correct"]) == (0, 1, 0)
    assert pt["NP"]["f1"] == pt["VP"]["f1"] == 0.0


def test_chunk_report_in_conlleval_layout():
    gold, pred = _small_corpus()
    report = format_report(chunk_scores(gold, pred), "chunk")
    assert report.splitlines() == [
        "processed 12 tokens with 6 phrases; found: 8 phrases; correct: 4.",
        "accuracy:  83.33%; precision:  50.00%; recall:  66.67%; FB1:  57.14",
        "             ADJP: precision: 100.00%; recall: 100.00%; FB1: 100.00  1",
        "               NP: precision:  50.00%; recall:  66.67%; FB1:  57.14  4",
        "               PP: precision: 100.00%; recall: 100.00%; FB1: 100.00  1",
        "               VP: precision:   0.00%; recall:   0.00%; FB1:   0.00  2",
    ]


def test_empty_corpus():
    s = chunk_scores([], [])
    assert (s["tokens"], s["phrases_gold"], s["phrases_pred"], s["correct"]) == (0, 0, 0, 0)
    assert s["f1"] == 0.0 and s["per_type"] == {}
    assert format_report(s, "chunk") == "processed 0 tokens with 0 phrases; found: 0 phrases; correct: 0.\n"


def test_length_mismatch_names_the_sentence():
    gold = [["O", "O"], ["B-NP"], ["O"]]
    pred = [["O", "O"], ["B-NP", "O"], ["O"]]
    with pytest.raises(ValueError, match=r"sentence 2\b.*\b1\b.*\b2\b"):
        chunk_scores(gold, pred)
    with pytest.raises(ValueError, match=r"sentence 2\b"):
        token_accuracy(gold, pred)
    with pytest.raises(ValueError, match=r"3 sentences.*2"):
        chunk_scores(gold, pred[:2])


def test_token_accuracy():
    # 4 labels, one wrong -> 75 %
    assert token_accuracy([["N", "V", "N"], ["D"]], [["N", "N", "N"], ["D"]]) == pytest.approx(75.0)
    assert token_accuracy([], []) == 0.0


# --------------------------------------------------------------------------- property check

TYPES = ["NP", "VP", "PP"]


def _random_bio(rng, n):
    """Random B/I/O tags, not necessarily well formed (I- may follow O or another type)."""
    return [rng.choice(["O", "B-" + rng.choice(TYPES), "I-" + rng.choice(TYPES)]) for _ in range(n)]


def _brute_force_spans(tags):
    """Independent chunk reader for B/I/O tags.

    First rewrite to strict IOB2 (an I-X not continuing an X chunk is really a chunk start,
    so it becomes B-X); then each B-X starts a chunk that absorbs the following I-X tokens.
    """
    iob2 = []
    for i, t in enumerate(tags):
        continues = t.startswith("I-") and i > 0 and iob2[i - 1] != "O" and iob2[i - 1][2:] == t[2:]
        iob2.append(t if t == "O" or continues else "B-" + t[2:])
    spans = set()
    for i, t in enumerate(iob2):
        if t.startswith("B-"):
            j = i
            while j + 1 < len(iob2) and iob2[j + 1] == "I-" + t[2:]:
                j += 1
            spans.add((t[2:], i, j))
    return spans


@pytest.mark.parametrize("seed", range(5))
def test_random_sequences_against_brute_force(seed):
    rng = random.Random(seed)
    for _ in range(100):
        gold = [_random_bio(rng, rng.randint(0, 12)) for _ in range(rng.randint(1, 5))]
        # prediction: the gold tags with about a third of them replaced at random
        pred = [[rng.choice(_random_bio(rng, 1)) if rng.random() < 0.35 else t for t in s] for s in gold]
        n_gold = n_pred = n_right = 0
        per_type = {t: [0, 0, 0] for t in TYPES}
        for g, p in zip(gold, pred):
            gs, ps = _brute_force_spans(g), _brute_force_spans(p)
            assert set(chunks(g)) == gs and len(chunks(g)) == len(gs)
            n_gold, n_pred, n_right = n_gold + len(gs), n_pred + len(ps), n_right + len(gs & ps)
            for t in TYPES:
                per_type[t][0] += sum(1 for c in gs if c[0] == t)
                per_type[t][1] += sum(1 for c in ps if c[0] == t)
                per_type[t][2] += sum(1 for c in gs & ps if c[0] == t)
        s = chunk_scores(gold, pred)
        assert (s["phrases_gold"], s["phrases_pred"], s["correct"]) == (n_gold, n_pred, n_right)
        for t, v in s["per_type"].items():
            assert [v["gold"], v["pred"], v["correct"]] == per_type[t]


# --------------------------------------------------------------------------- segment_scores()

def _seg_example():
    gold = [["他", "来到", "北京", "大学"], ["我", "爱", "你们"]]
    pred = [["他", "来到", "北京大学"], ["我爱", "你们"]]
    vocab = {"他", "来到", "北京", "我", "爱"}
    return gold, pred, vocab


def test_segment_precision_recall_f1_by_hand():
    gold, pred, _ = _seg_example()
    # gold 7 words, predicted 5; correct: 他, 来到 (s1) and 你们 (s2) = 3
    # P = 3/5 = 60 %, R = 3/7 = 42.86 %, F = 2PR/(P+R) = (18/35)/(36/35) = 50 %
    s = segment_scores(gold, pred)
    assert (s["words_gold"], s["words_pred"], s["correct"]) == (7, 5, 3)
    assert s["precision"] == pytest.approx(60.0)
    assert s["recall"] == pytest.approx(300 / 7)
    assert s["f1"] == pytest.approx(50.0)
    assert "oov_rate" not in s


def test_segment_oov_and_iv_by_hand():
    gold, pred, vocab = _seg_example()
    # OOV gold tokens: 大学 (missed), 你们 (found) -> rate 2/7, OOV recall 1/2
    # IV gold tokens: 他+ 来到+ 北京- 我- 爱- -> IV recall 2/5
    s = segment_scores(gold, pred, vocabulary=vocab)
    assert s["oov_rate"] == pytest.approx(200 / 7)
    assert s["oov_recall"] == pytest.approx(50.0)
    assert s["iv_recall"] == pytest.approx(40.0)
    assert format_report(s, "segment").splitlines() == [
        "=== TOTAL TRUE WORD COUNT:\t7",
        "=== TOTAL TEST WORD COUNT:\t5",
        "=== TOTAL TRUE WORDS RECALL:\t0.429",
        "=== TOTAL TEST WORDS PRECISION:\t0.600",
        "=== F MEASURE:\t0.500",
        "=== OOV Rate:\t0.286",
        "=== OOV Recall Rate:\t0.500",
        "=== IV Recall Rate:\t0.400",
    ]


def test_oov_rate_counts_tokens_not_types():
    # the OOV word occurs twice: 2 OOV tokens out of 3, although only 1 OOV type out of 2
    s = segment_scores([["新词", "的", "新词"]], [["新词", "的", "新词"]], vocabulary=["的"])
    assert s["oov_rate"] == pytest.approx(200 / 3)
    assert s["oov_recall"] == s["iv_recall"] == 100.0


def test_segment_word_must_match_its_position():
    # 哈|哈哈 vs 哈哈|哈: both contain a 哈 and a 哈哈, but at different character spans
    s = segment_scores([["哈", "哈哈"]], [["哈哈", "哈"]])
    assert s["correct"] == 0 and s["f1"] == 0.0


def test_segment_report_without_oov_words_prints_dashes():
    s = segment_scores([["的"]], [["的"]], vocabulary={"的"})
    lines = format_report(s, "segment").splitlines()
    assert "=== OOV Rate:\t0.000" in lines and "=== OOV Recall Rate:\t--" in lines
    assert "=== IV Recall Rate:\t1.000" in lines


def test_segment_mismatch_names_the_sentence():
    with pytest.raises(ValueError, match=r"sentence 2\b"):
        segment_scores([["ab"], ["c", "d"]], [["a", "b"], ["c", "e"]])
    with pytest.raises(ValueError, match="sentences"):
        segment_scores([["ab"]], [["ab"], ["c"]])


def test_format_report_rejects_unknown_kind():
    with pytest.raises(ValueError):
        format_report({}, "pos")


def test_segmented_files_read_as_columns_name_the_format_to_give(tmp_path):
    """eval --gold/--pred without a model or --format reads columns; segmented text then
    fails at its first ragged line, and the message says which --format reads it."""
    from click.testing import CliRunner
    from seqbil.cli import main
    gold = tmp_path / "gold.utf8"
    gold.write_text("共同  创造  美好\n新  世纪  ——  二○○一年  新年\n", encoding="utf-8")
    r = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(gold)])
    assert r.exit_code == 2 and "gold.utf8:2: expected 3 fields, found 5" in r.output
    assert "give --format sighan for segmented text" in r.output
    r = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--pred", str(gold), "--format", "sighan"])
    assert r.exit_code == 0 and "F MEASURE:\t1.000" in r.output, r.output
