"""The compiled CoNLL path of `seqbil tag` (cython_ext/conll_block.pyx) against the
reference path (formats/conll.py reading Sentence objects, Model.predict, the format's
writer): byte-identical output on every input the tests can make, and input the
reference refuses left to it."""
import numpy as np
import pytest

import seqbil
from seqbil import tagging
from seqbil._kernels.conll_block import Vocab, split_block
from seqbil.errors import InputError

WORDS = ["the", "cat", "a/b", "ü", "中文", "_B-1", "x\r", "#"]


def random_corpus(rng, n, labeled=True, unseen=False):
    out = []
    for _ in range(n):
        rows = []
        for _ in range(int(rng.integers(1, 7))):
            w = str(rng.choice(WORDS + (["new", "ñu"] if unseen else [])))
            pos = str(rng.choice(["N", "V", "D"]))
            rows.append([w, pos] + ([str(rng.choice(["B-NP", "I-NP", "O"]))] if labeled else []))
        out.append(rows)
    return out


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    rng = np.random.default_rng(7)
    path = tmp_path_factory.mktemp("fast") / "train.txt"
    path.write_text("".join("".join(" ".join(r) + "\n" for r in s) + "\n" for s in random_corpus(rng, 60)),
                    encoding="utf-8")
    tmpl = path.parent / "template"
    tmpl.write_text("U00:%x[0,0]\nU01:%x[-2,0]/%x[1,1]\nU02:%x[2,1]\nU03:%x[-1,0]%x[0,1]\nU04:bias\nB\n"
                    "B01:%x[0,1]\n", encoding="utf-8")
    return seqbil.train(str(path), config="conll2000", template=str(tmpl), learner="sp", epochs=3)


def both(model, raw):
    """(fast, reference) results of one block: (output bytes, sentences) or the error."""
    out = []
    for fast in (True, False):
        tagger = tagging.BlockTagger(model, "<in>", "utf-8", None, False, False)
        assert tagger.fast
        tagger.fast = tagger.fast if fast else None
        try:
            out.append(tagger((raw, 1, 0)))
        except InputError as exc:
            out.append(str(exc))
    return out


def layout(rng, sentences):
    """Sentences as a user's file may hold them: spaces or tabs (runs of them), blanks at
    line ends, CRLF, several blank lines or lines of blanks between sentences, blank
    lines first, and maybe no line end at the very end."""
    parts = [rng.choice(["", "\n", " \n\t\n"])]
    for rows in sentences:
        for r in rows:
            sep = str(rng.choice([" ", "\t", "  ", " \t"]))
            parts.append(sep.join(r) + str(rng.choice(["", " ", "\t ", "\r"])) + str(rng.choice(["\n", "\r\n"])))
        parts.append(str(rng.choice(["\n", "\n\n", " \n", "\r\n"])))
    text = "".join(parts)
    if rng.random() < 0.3:
        text = text.rstrip("\n")
    return text.encode("utf-8")


@pytest.mark.parametrize("seed", range(6))
def test_fast_path_output_is_the_reference_output(model, seed):
    rng = np.random.default_rng(seed)
    for labeled in (True, False):
        raw = layout(rng, random_corpus(rng, int(rng.integers(1, 12)), labeled=labeled, unseen=True))
        fast, reference = both(model, raw)
        assert fast == reference
    assert both(model, b"") == [(b"", 0), (b"", 0)]
    assert both(model, b"\n \n\t\n") == [(b"", 0), (b"", 0)]


def test_input_the_reference_refuses_is_left_to_it(model):
    for raw in (b"the N O\nthe\n", b"the N\nthe N O\n", b"the N O extra more\n", b"the N O\n\nthe N O x\n"):
        tagger = tagging.BlockTagger(model, "<in>", "utf-8", None, False, False)
        assert tagger._tag_block(raw) is None
        fast, reference = both(model, raw)
        assert fast == reference and "expected" in fast


def test_the_fast_path_is_used_only_where_it_applies(model, tmp_path):
    assert tagging.tagger._fast_applies(model, True, None, False, False) == "columns"
    assert not tagging.tagger._fast_applies(model, False, None, False, False)  # another encoding
    assert not tagging.tagger._fast_applies(model, True, 3, False, False)
    assert not tagging.tagger._fast_applies(model, True, None, True, False)
    assert not tagging.tagger._fast_applies(model, True, None, False, "all")
    chained = seqbil.train(config="conll2000", template=str(_template(tmp_path, "U00:%x[0,0]|lower\nB\n")),
                           learner="sp", epochs=1)
    assert not tagging.tagger._fast_applies(chained, True, None, False, False)


def _template(tmp_path, text):
    path = tmp_path / "t"
    path.write_text(text, encoding="utf-8")
    return path


def test_vocab_finds_each_string_and_nothing_else():
    strings = [s.encode("utf-8") for s in ["", "a", "ab", "ba", "中", "a b", "x" * 100]] + [b"a"]
    v = Vocab(strings)
    for i, s in enumerate(strings[:-1]):
        assert v.lookup(s) == i
    for s in (b"b", b"abc", "中文".encode(), b"x" * 99):
        assert v.lookup(s) == -1


def test_hashed_key_lookup_is_the_binary_search(model):
    """The key tables as one hash table (KeyHash) find the same attributes as the
    binary search over the sorted tables, for seen and unseen cells."""
    rng = np.random.default_rng(11)
    raw = layout(rng, random_corpus(rng, 40, labeled=False, unseen=True))
    tagger = tagging.BlockTagger(model, "<in>", "utf-8", None, False, False)
    tagger._tag_block(b"")
    vocabs, columns, _, n_fields, label_at = tagger._block[:5]
    matrix, positions = split_block(raw, n_fields, label_at, model.index.K, vocabs, columns)[:2]
    plain = model.index.encode_fields(matrix, positions)
    hashed = model.index.encode_fields(matrix, positions, hashed=True)
    assert len(plain[1]) > len(positions)  # attributes were found
    for a, b in zip(plain, hashed):
        np.testing.assert_array_equal(a, b)


CHARS = list("扬帆远东做与中国合作的先行１２ＡＢab,。") + ["𠀋", "😀", "\u3000", " ", "\t", "\r", "\x85", "\u2028"]


@pytest.fixture(scope="module")
def segmenter(tmp_path_factory):
    folder = tmp_path_factory.mktemp("seg")
    tmpl = folder / "template"
    tmpl.write_text("U00:%x[-1,0]\nU01:%x[0,0]\nU02:%x[0,0]|chartype\nU03:%x[-2,0]%x[1,0]\nB\nB01:%x[0,0]\n",
                    encoding="utf-8")
    return seqbil.train(config="sighan2005", template=str(tmpl), learner="bol", epochs=2)


@pytest.mark.parametrize("seed", range(6))
def test_segmentation_fast_path_output_is_the_reference_output(segmenter, seed):
    """Raw text of any characters (beyond the BMP too, unseen ones, full-width ones the
    model folds, every kind of Unicode blank), blank and empty lines, CRLF, and maybe no
    line end at the end: the same segmented lines and line count."""
    rng = np.random.default_rng(seed)
    lines = ["".join(rng.choice(CHARS, int(rng.integers(0, 12)))) for _ in range(int(rng.integers(1, 15)))]
    text = "\n".join(lines) + str(rng.choice(["", "\n", "\r\n"]))
    fast, reference = both(segmenter, text.encode("utf-8"))
    assert fast == reference
    assert tagging.tagger._fast_applies(segmenter, True, None, False, False) == "chars"
