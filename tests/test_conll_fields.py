"""CoNLL fields as CRF++ reads them (split at ASCII spaces and tabs only, so that U+3000
and U+00A0 can be tokens), the separator `seqbil tag` appends with, and bol without
1st-order templates, against plain references on small random cases."""
import io
import re

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

import seqbil
from seqbil.cli import main
from seqbil.errors import ConfigError, InputError
from seqbil.formats import ConllFormat

# characters str.split() takes for white space, and others; only " " and "\t" separate
ODD = ["\u3000", "\u00a0", "\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2003", "\r"]


def reference_fields(line):
    """CRF++'s tokenize2(line, "\\t ", ...): the non-empty pieces between spaces and tabs."""
    return [f for f in re.split("[ \t]", line) if f]


def reference_sentences(text):
    """Sentences (lists of field lists) of a CoNLL text, a line being blank when it has
    no field once its line end (LF, CRLF) is dropped."""
    out, rows = [], []
    for line in text.split("\n"):
        fields = reference_fields(line.rstrip("\r"))
        if fields:
            rows.append(fields)
        elif rows:
            out.append(rows)
            rows = []
    return out + ([rows] if rows else [])


FIELD = st.text(alphabet=st.sampled_from(["a", "B", "中", "#", "-"] + ODD), min_size=1, max_size=4).filter(
    lambda f: not f.endswith("\r"))  # a CR at the end of a line is part of its line end


@st.composite
def crfpp_files(draw):
    width = draw(st.integers(1, 4))
    lines = []
    for _ in range(draw(st.integers(0, 4))):
        for _ in range(draw(st.integers(1, 4))):
            fields = draw(st.lists(FIELD, min_size=width, max_size=width))
            seps = [draw(st.sampled_from([" ", "\t", "  ", " \t", "\t\t"])) for _ in fields[1:]]
            line = fields[0] + "".join(s + f for s, f in zip(seps, fields[1:]))
            lines.append(draw(st.sampled_from(["", " ", "\t"])) + line + draw(st.sampled_from(["", " ", "\t "])))
        lines += [draw(st.sampled_from(["", " ", "\t", " \t "]))] * draw(st.integers(1, 2))
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines)


@settings(max_examples=150, deadline=None)
@given(crfpp_files())
def test_the_reader_splits_fields_as_crfpp_and_the_writer_appends_to_the_line(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("c") / "c.txt"
    path.write_bytes(text.encode("utf-8"))
    want = reference_sentences(text)
    fmt = ConllFormat(len(want[0][0]) + 1) if want else ConllFormat(2)
    read = list(fmt.read(str(path), labeled=False))
    assert [s.rows for s in read] == want
    # each token line comes back as it was (less its line end and trailing blanks), its
    # separator, the label
    lines = [line.rstrip("\r") for line in text.split("\n") if reference_fields(line.rstrip("\r"))]
    out = "".join(fmt.write(s, [f"L{i}" for i in range(len(s))]) for s in read)
    labels = [f"L{i}" for s in read for i in range(len(s))]
    sep = ["\t" if "\t" in line.rstrip(" \t") else " " for line in lines]
    assert [line for line in out.split("\n") if line] == [
        line.rstrip(" \t") + s + y for line, s, y in zip(lines, sep, labels)]


def test_a_line_of_only_an_ideographic_space_is_a_token_and_blank_lines_break(tmp_path):
    path = tmp_path / "c.txt"
    path.write_bytes("\u3000\tS13\tO\r\n \t \r\n\u00a0 x O\n\x0c y B\n".encode("utf-8"))
    read = list(ConllFormat().read(str(path)))
    assert [s.rows for s in read] == [[["\u3000", "S13", "O"]], [["\u00a0", "x", "O"], ["\x0c", "y", "B"]]]
    assert [s.labels for s in read] == [["O"], ["O", "B"]]
    path.write_bytes("a b O\n\u3000 O\n".encode("utf-8"))  # the U+3000 is a field: 2 fields, not 1
    with pytest.raises(InputError, match="c.txt:2: expected 3 fields, found 2"):
        list(ConllFormat().read(str(path)))


# --- tagging, with any number of processes and on a Dask cluster --------------------------

WORDS = ["\u3000", "\u00a0", "中", "国", "a", "、", "\u3000\u3000"]


def crfpp_corpus(rng, n):
    """Sentences of rows word, class, label: the label follows from the word and the
    previous label, so that a model learns something; U+3000 and U+00A0 are words."""
    out = []
    for _ in range(n):
        rows, prev = [], 0
        for _ in range(int(rng.integers(1, 6))):
            w = int(rng.integers(len(WORDS)))
            y = (w + prev) % 3
            rows.append([WORDS[w], f"S{w % 2}", "BIO"[y]])
            prev = y
        out.append(rows)
    return out


def write_corpus(path, sentences, rng, labeled=True):
    """CRF++-style: tab-separated lines, and some with spaces, CRLF line ends."""
    lines = []
    for rows in sentences:
        for r in rows:
            fields = r if labeled else r[:-1]
            lines.append(("\t" if rng.random() < 0.7 else " ").join(fields) + ("\r" if rng.random() < 0.2 else ""))
        lines.append("\r" if rng.random() < 0.2 else "")
    path.write_bytes("\n".join(lines).encode("utf-8"))
    return lines


TEMPLATE = "U00:%x[-1,0]\nU01:%x[0,0]\nU02:%x[1,0]\nU03:%x[0,1]\nU04:%x[-1,0]/%x[0,0]\n\nB\n"


@pytest.fixture(scope="module")
def crfpp_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("crfpp")
    rng = np.random.default_rng(5)
    (folder / "template").write_text(TEMPLATE)
    write_corpus(folder / "train.data", crfpp_corpus(rng, 120), rng)
    said = []
    model = seqbil.train(str(folder / "train.data"), template=str(folder / "template"), epochs=4,
                         model=str(folder / "m.sbm"), echo=said.append, learner="bol")
    return folder, model, said


def test_a_crfpp_corpus_trains_and_tags_its_lines(crfpp_model, tmp_path):
    folder, model, _ = crfpp_model
    rng = np.random.default_rng(6)
    sentences = crfpp_corpus(rng, 40)
    lines = write_corpus(tmp_path / "test.data", sentences, rng, labeled=False)
    out = io.BytesIO()
    assert seqbil.tag_file(str(folder / "m.sbm"), str(tmp_path / "test.data"), out) == len(sentences)
    predicted = model.tag_many([[r[:-1] for r in rows] for rows in sentences])  # no line splitting here
    want = []
    for line, y in zip([line for line in lines if line.rstrip("\r")], [y for ys in predicted for y in ys]):
        line = line.rstrip("\r")
        want.append(line + ("\t" if "\t" in line else " ") + y)
    got = out.getvalue().decode("utf-8").split("\n")
    assert [line for line in got if line] == want
    assert got.count("") == len(sentences) + 1  # a blank line after each sentence (and the text's last line end)
    # the labelled file: the gold label stays, the prediction follows it
    rng = np.random.default_rng(6)
    lines = write_corpus(tmp_path / "gold.data", crfpp_corpus(rng, 40), rng)
    out = io.BytesIO()
    seqbil.tag_file(str(folder / "m.sbm"), str(tmp_path / "gold.data"), out)
    got = [line for line in out.getvalue().decode("utf-8").split("\n") if line]
    lines = [line.rstrip("\r") for line in lines if line.rstrip("\r")]
    assert [g[:len(line)] for g, line in zip(got, lines)] == lines
    assert [g[len(line)] for g, line in zip(got, lines)] == ["\t" if "\t" in line else " " for line in lines]


def test_jobs_and_blocks_give_the_same_bytes(crfpp_model, tmp_path, monkeypatch):
    import seqbil.tagging

    folder, _, _ = crfpp_model
    rng = np.random.default_rng(7)
    write_corpus(tmp_path / "test.data", crfpp_corpus(rng, 300), rng, labeled=False)
    outputs = []
    for jobs, block in ((1, 1 << 18), (2, 97), (1, 31)):
        monkeypatch.setattr(seqbil.tagging.reader, "BLOCK_BYTES", block)
        for options in ({}, {"confidence": True}, {"nbest": 2}, {"marginals": "all"}):
            out = io.BytesIO()
            seqbil.tag_file(str(folder / "m.sbm"), str(tmp_path / "test.data"), out, jobs=jobs, **options)
            outputs.append(out.getvalue())
    assert outputs[4:8] == outputs[:4] and outputs[8:] == outputs[:4]
    # --confidence: the margin after the label, with the line's separator
    confident = outputs[1].decode("utf-8").split("\n")
    plain = [line for line in outputs[0].decode("utf-8").split("\n") if line]
    tokens = [line for line in confident if line and not line.startswith("# confidence ")]
    for t, p in zip(tokens, plain):
        sep = "\t" if "\t" in p else " "
        assert t.startswith(p + sep) and float(t[len(p) + 1:]) >= 0 and sep not in t[len(p) + 1:]


def test_the_command_line_tags_crfpp_columns(crfpp_model, tmp_path):
    folder, _, _ = crfpp_model
    (tmp_path / "in.data").write_bytes("\u3000\tS0\n中 S1\n\n".encode("utf-8"))
    result = CliRunner().invoke(main, ["tag", "-m", str(folder / "m.sbm"), str(tmp_path / "in.data")])
    assert result.exit_code == 0, result.output
    first, second, blank = result.output.split("\n")[:3]
    assert first.startswith("\u3000\tS0\t") and reference_fields(first)[:2] == ["\u3000", "S0"]
    assert second.startswith("中 S1 ") and "\t" not in second and blank == ""


def test_unlabeled_columns_for_aso_are_split_as_crfpp(tmp_path):
    from seqbil.aso_text import read_columns

    rng = np.random.default_rng(8)
    sentences = crfpp_corpus(rng, 30)
    write_corpus(tmp_path / "cols.txt", sentences, rng)
    corpus, _ = read_columns([str(tmp_path / "cols.txt")])
    assert list(corpus.lengths) == [len(s) for s in sentences]
    for c in range(3):
        assert [corpus.values[c][i] for i in corpus.ids[c]] == [r[c] for s in sentences for r in s]


def test_evaluation_reads_crfpp_columns(crfpp_model, tmp_path):
    folder, _, _ = crfpp_model
    rng = np.random.default_rng(9)
    sentences = crfpp_corpus(rng, 30)
    write_corpus(tmp_path / "gold.data", sentences, rng)
    out = io.BytesIO()
    seqbil.tag_file(str(folder / "m.sbm"), str(tmp_path / "gold.data"), out)
    (tmp_path / "pred.data").write_bytes(out.getvalue())
    result = seqbil.evaluate_files(str(tmp_path / "gold.data"), str(tmp_path / "pred.data"), metric="accuracy")
    predicted = [line.split("\t" if "\t" in line else " ")[-1] for line in out.getvalue().decode().split("\n") if line]
    gold = [r[-1] for s in sentences for r in s]
    assert result["tokens"] == len(gold)
    assert result["accuracy"] == pytest.approx(100 * np.mean([g == p for g, p in zip(gold, predicted)]))
    scored = seqbil.evaluate(str(folder / "m.sbm"), str(tmp_path / "gold.data"), metric="accuracy")
    assert scored["accuracy"] == pytest.approx(result["accuracy"])


# --- bol without 1st-order templates -------------------------------------------------------

def test_bol_without_first_order_attributes_learns_the_perceptrons_weights(rng):
    """What makes training such a template set as sp right: bol (either rank-1 mode)
    on a corpus without 1st-order attributes gives sp's weights exactly."""
    from seqbil.features.dataset import encode
    from seqbil.features.templates import TemplateSet, parse_template
    from seqbil.formats import Sentence
    from seqbil.learners import LEARNERS
    from seqbil.params import Settings

    sentences = [Sentence([[r[0] for r in rows], [r[1] for r in rows], None], [r[2] for r in rows], 1)
                 for rows in crfpp_corpus(rng, 80)]
    for texts in (["U00:%x[0,0]", "U01:%x[-1,0]/%x[0,1]", "B"], ["U00:%x[0,0]", "U01:%x[1,1]"]):
        templates = TemplateSet(parse_template(t) for t in texts)
        data, index = encode(sentences, templates, None, ["B", "I", "O"])
        assert index.n_attributes(1) == 0
        for averaged in (True, False):
            learned = []
            for name, extra in (("sp", {}), ("bol", {"rank1": "block"}), ("bol", {"rank1": "global"})):
                learner = LEARNERS[name](3, index.n_attributes(0), 0, Settings.of({"averaged": averaged, **extra}),
                                         templates.transition)
                order = np.random.default_rng(1)
                for _ in range(3):
                    learner.train_chunk(data, order.permutation(data.n_sequences).astype(np.int64))
                learned.append(learner.parameters()[1])
            assert np.abs(learned[0]["W0"]).sum() > 0
            for other in learned[1:]:
                for block in ("W0", "trans", "end"):
                    np.testing.assert_array_equal(other[block], learned[0][block])


def test_the_model_of_bol_without_first_order_templates_is_sps(crfpp_model, tmp_path):
    folder, model, said = crfpp_model  # trained with bol, the default config's own learner
    assert "bol: no 1st-order templates with %x macros to factor; training the linear model (as sp)" in said
    sp = seqbil.train(str(folder / "train.data"), template=str(folder / "template"), epochs=4, learner="sp")
    assert model.kind == "linear" and model.training["learner"] == "sp"
    for block in ("W0", "trans", "end"):
        np.testing.assert_array_equal(model.weights[block], sp.weights[block])
    loaded = seqbil.load(str(folder / "m.sbm"))
    sentences = [[r[:-1] for r in rows] for rows in crfpp_corpus(np.random.default_rng(10), 20)]
    assert loaded.tag_many(sentences) == sp.tag_many(sentences)
    result = CliRunner().invoke(main, ["inspect", str(folder / "m.sbm")])
    assert result.exit_code == 0 and "linear model, learner sp" in result.output.split("\n")[0]
    # asked for on the command line: the same line, and the run's header names sp
    result = CliRunner().invoke(main, ["train", "--train", str(folder / "train.data"), "--template",
                                       str(folder / "template"), "--learner", "bol", "--epochs", "1", "--model",
                                       str(tmp_path / "b.sbm")])
    assert result.exit_code == 0, result.output
    assert "bol: no 1st-order templates with %x macros to factor; training the linear model (as sp)" in result.output
    assert "\nlearner sp: " in result.output


def test_bcd_without_first_order_templates_is_still_refused(crfpp_model):
    folder, _, _ = crfpp_model
    with pytest.raises(ConfigError, match="learner = 'bcd' factors the 1st-order features"):
        seqbil.train(str(folder / "train.data"), template=str(folder / "template"), epochs=1, learner="bcd")
