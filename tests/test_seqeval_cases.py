"""seqeval's own expectations (its tests/test_scheme.py and tests/test_v1.py, version 1.2),
ported as figures: the chunks its strict mode reads in each scheme, typed and untyped, the
schemes it detects from untyped tags, and its macro and weighted averages. Its code is not
used; seqbil's strict reading (evaluation/strict.py) must give the same chunks."""
import pytest

from seqbil.evaluation.chunks import chunk_scores, detect_scheme
from seqbil.evaluation.strict import strict_chunks

# "TAGS > TYPE FIRST LAST; ..." (seqeval's spans end one past the last token; an untyped
# chunk, seqeval's '_', has no TYPE here). seqeval leaves two IOE1 cases out of its tests
# (I-PER E-PER, I E), which its IOE1 does not read as the scheme says: so do we.
CASES = {
    "iob1": [
        " >", "B-PER >", "I-PER > PER 0 0", "O >", "O I-PER > PER 1 1", "O B-PER >", "I-PER O > PER 0 0",
        "I-PER I-PER > PER 0 1", "I-PER I-ORG > PER 0 0; ORG 1 1", "I-PER B-PER > PER 0 0; PER 1 1",
        "I-PER B-ORG > PER 0 0", "B-PER O >", "B-PER I-PER > PER 1 1", "B-PER I-ORG > ORG 1 1",
        "B-PER B-PER > PER 1 1", "B-PER B-ORG >", " >", "B >", "I > 0 0", "O >", "O O >", "O I > 1 1", "O B >",
        "I O > 0 0", "I I > 0 1", "I B > 0 0; 1 1", "B O >", "B I > 1 1", "B B > 1 1",
    ],
    "iob2": [
        " >", "B-PER > PER 0 0", "I-PER >", "O >", "O I-PER >", "O B-PER > PER 1 1", "I-PER O >", "I-PER I-PER >",
        "I-PER I-ORG >", "I-PER B-PER > PER 1 1", "I-PER B-ORG > ORG 1 1", "B-PER O > PER 0 0",
        "B-PER I-PER > PER 0 1", "B-PER I-ORG > PER 0 0", "B-PER B-PER > PER 0 0; PER 1 1",
        "B-PER B-ORG > PER 0 0; ORG 1 1", " >", "B > 0 0", "I >", "O >", "O O >", "O I >", "O B > 1 1", "I O >",
        "I I >", "I B > 1 1", "B O > 0 0", "B I > 0 1", "B B > 0 0; 1 1",
    ],
    "ioe1": [
        " >", "E-PER >", "I-PER > PER 0 0", "O >", "O I-PER > PER 1 1", "O E-PER >", "I-PER O > PER 0 0",
        "I-PER I-PER > PER 0 1", "I-PER I-ORG > PER 0 0; ORG 1 1", "I-PER E-ORG > PER 0 0", "E-PER O >",
        "E-PER I-PER > PER 1 1", "E-PER I-ORG > ORG 1 1", "E-PER E-PER >", "E-PER E-ORG >", " >", "E >", "I > 0 0",
        "O >", "O O >", "O I > 1 1", "O E >", "I O > 0 0", "I I > 0 1", "E O >", "E I > 1 1", "E E >",
    ],
    "ioe2": [
        " >", "E-PER > PER 0 0", "I-PER >", "O >", "O I-PER >", "O E-PER > PER 1 1", "I-PER O >", "I-PER I-PER >",
        "I-PER I-ORG >", "I-PER E-PER > PER 0 1", "I-PER E-ORG > ORG 1 1", "E-PER O > PER 0 0",
        "E-PER I-PER > PER 0 0", "E-PER I-ORG > PER 0 0", "E-PER E-PER > PER 0 0; PER 1 1",
        "E-PER E-ORG > PER 0 0; ORG 1 1", " >", "E > 0 0", "I >", "O >", "O O >", "O I >", "O E > 1 1", "I O >",
        "I I >", "I E > 0 1", "E O > 0 0", "E I > 0 0", "E E > 0 0; 1 1",
    ],
    "iobes": [
        "O >", "I-PER >", "B-PER >", "E-PER >", "S-PER > PER 0 0", "O O >", "O I-PER >", "O B-PER >", "O E-PER >",
        "O S-PER > PER 1 1", "I-PER O >", "I-PER I-PER >", "I-PER I-ORG >", "I-PER B-PER >", "I-PER E-PER >",
        "I-PER E-ORG >", "I-PER S-PER > PER 1 1", "B-PER O >", "B-PER I-PER >", "B-PER I-ORG >", "B-PER B-PER >",
        "B-PER E-PER > PER 0 1", "B-PER E-ORG >", "B-PER S-PER > PER 1 1", "E-PER O >", "E-PER I-PER >",
        "E-PER B-PER >", "E-PER E-PER >", "E-PER S-PER > PER 1 1", "S-PER O > PER 0 0", "S-PER I-PER > PER 0 0",
        "S-PER B-PER > PER 0 0", "S-PER E-PER > PER 0 0", "S-PER S-PER > PER 0 0; PER 1 1", "O >", "I >", "B >",
        "E >", "S > 0 0", "O O >", "O I >", "O B >", "O E >", "O S > 1 1", "I O >", "I I >", "I B >", "I E >",
        "I S > 1 1", "B O >", "B I >", "B B >", "B E > 0 1", "B S > 1 1", "E O >", "E I >", "E B >", "E E >",
        "E S > 1 1", "S O > 0 0", "S I > 0 0", "S B > 0 0", "S E > 0 0", "S S > 0 0; 1 1",
    ],
    "bilou": [
        "O >", "I-PER >", "B-PER >", "L-PER >", "U-PER > PER 0 0", "O O >", "O I-PER >", "O B-PER >", "O L-PER >",
        "O U-PER > PER 1 1", "I-PER O >", "I-PER I-PER >", "I-PER I-ORG >", "I-PER B-PER >", "I-PER L-PER >",
        "I-PER L-ORG >", "I-PER U-PER > PER 1 1", "B-PER O >", "B-PER I-PER >", "B-PER I-ORG >", "B-PER B-PER >",
        "B-PER L-PER > PER 0 1", "B-PER L-ORG >", "B-PER U-PER > PER 1 1", "L-PER O >", "L-PER I-PER >",
        "L-PER B-PER >", "L-PER L-PER >", "L-PER U-PER > PER 1 1", "U-PER O > PER 0 0", "U-PER I-PER > PER 0 0",
        "U-PER B-PER > PER 0 0", "U-PER L-PER > PER 0 0", "U-PER U-PER > PER 0 0; PER 1 1", "O >", "I >", "B >",
        "L >", "U > 0 0", "O O >", "O I >", "O B >", "O L >", "O U > 1 1", "I O >", "I I >", "I B >", "I L >",
        "I U > 1 1", "B O >", "B I >", "B B >", "B L > 0 1", "B U > 1 1", "L O >", "L I >", "L B >", "L L >",
        "L U > 1 1", "U O > 0 0", "U I > 0 0", "U B > 0 0", "U L > 0 0", "U U > 0 0; 1 1",
    ],}


def parse(case):
    tags, _, want = case.partition(">")
    chunks = []
    for part in filter(None, (p.strip() for p in want.split(";"))):
        fields = part.split()
        typ, first, last = (fields if len(fields) == 3 else ["", *fields])
        chunks.append((typ, int(first), int(last)))
    return tags.split(), chunks


@pytest.mark.parametrize("scheme, case", [(s, c) for s, cases in CASES.items() for c in cases])
def test_strict_chunks_are_seqevals(scheme, case):
    tags, want = parse(case)
    assert strict_chunks(tags, scheme) == want


@pytest.mark.parametrize("tags, scheme", [
    ("B I O", "iob2"), ("B I", "iob2"), ("B O", "iob2"), ("B", "iob2"),
    ("I O E", "ioe2"), ("I E", "ioe2"), ("E O", "ioe2"), ("E", "ioe2"),
    ("I O B E S", "iobes"), ("I B E S", "iobes"), ("I O B E", "iobes"), ("O B E S", "iobes"), ("I B E", "iobes"),
    ("B E S", "iobes"), ("O B E", "iobes"), ("B E", "iobes"), ("S", "iobes"),
    ("I O B L U", "bilou"), ("I B L U", "bilou"), ("I O B L", "bilou"), ("O B L U", "bilou"), ("I B L", "bilou"),
    ("B L U", "bilou"), ("O B L", "bilou"), ("B L", "bilou"), ("U", "bilou")])
def test_untyped_tags_are_detected_as_seqeval_detects_them(tags, scheme):
    assert detect_scheme(set(tags.split())) == scheme
    # scored, not refused; with the sentence itself, a chunk that ends on I (I O E) reads as IOE1,
    # as one that an I opens reads as IOB1 (where seqeval detects only IOB2 and IOE2)
    assert chunk_scores([tags.split()], [tags.split()])["scheme"].rstrip("12") == scheme.rstrip("12")


@pytest.mark.parametrize("mode", ["default", "strict"])
def test_macro_and_weighted_averages_are_seqevals(mode):
    """test_v1.py: gold B-A B-B O B-A, predicted O B-B B-C B-A (IOB2): micro 0.67 / 0.67 /
    0.67, macro 0.67 / 0.50 / 0.56, weighted 1.00 / 0.67 / 0.78."""
    r = chunk_scores([["B-A", "B-B", "O", "B-A"]], [["O", "B-B", "B-C", "B-A"]], "iob2", mode)
    assert [round(r[k] / 100, 2) for k in ("precision", "recall", "f1")] == [0.67, 0.67, 0.67]
    assert [round(r["macro"][k] / 100, 2) for k in ("precision", "recall", "f1")] == [0.67, 0.50, 0.56]
    assert [round(r["weighted"][k] / 100, 2) for k in ("precision", "recall", "f1")] == [1.00, 0.67, 0.78]
    none = chunk_scores([["O"]], [["O"]], "iob2", mode)  # no chunk anywhere: 0, as seqeval gives
    assert none["weighted"] == {"precision": 0.0, "recall": 0.0, "f1": 0.0} == none["macro"]


def test_strict_mode_counts_only_well_formed_chunks():
    """An IOB2 prediction that opens a chunk with I-: the default mode (conlleval) repairs
    it into a chunk that matches the gold one; the strict mode counts no chunk there."""
    gold, pred = [["B-PER", "I-PER", "O"]], [["I-PER", "I-PER", "O"]]
    assert chunk_scores(gold, pred, "iob2")["f1"] == 100.0
    strict = chunk_scores(gold, pred, "iob2", "strict")
    assert strict["phrases_pred"] == 0 and strict["f1"] == 0.0 and strict["mode"] == "strict"
    with pytest.raises(ValueError, match="mode"):
        chunk_scores(gold, pred, "iob2", "lenient")
