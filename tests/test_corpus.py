import pytest
from hypothesis import given, strategies as st

from seqbil.formats import ConllFormat, SighanFormat, bies_tags, words_from_tags
from seqbil.errors import InputError


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


def test_conll_reads_columns_labels_and_line_numbers(tmp_path):
    path = write(tmp_path, "a.txt", "He PRP B-NP\nran VBD B-VP\n\n\nOK UH O\n")
    s1, s2 = ConllFormat().read(path)
    assert s1.columns[:2] == [("He", "ran"), ("PRP", "VBD")] and s1.columns[2] is None
    assert s1.labels == ["B-NP", "B-VP"] and s1.line == 1
    assert s2.labels == ["O"] and s2.line == 5


def test_conll_write_appends_prediction_and_round_trips(tmp_path):
    text = "He PRP B-NP\nran VBD B-VP\n\nOK UH O\n\n"
    fmt = ConllFormat()
    sentences = list(fmt.read(write(tmp_path, "a.txt", text)))
    out = "".join(fmt.write(s, s.labels) for s in sentences)
    assert out == "He PRP B-NP B-NP\nran VBD B-VP B-VP\n\nOK UH O O\n\n"
    # reading the tag output back as a 4-field file recovers the predictions
    again = list(ConllFormat().read(write(tmp_path, "b.txt", out)))
    assert [s.labels for s in again] == [s.labels for s in sentences]


def test_conll_unlabeled_input_for_tagging(tmp_path):
    fmt = ConllFormat(3, -1)
    (s,) = fmt.read(write(tmp_path, "a.txt", "He PRP\nran VBD\n"), labeled=False)
    assert s.labels is None and s.columns[1] == ("PRP", "VBD")


def test_conll_crlf_bom_and_tabs(tmp_path):
    path = write(tmp_path, "a.txt", b"\xef\xbb\xbfHe\tPRP\tB-NP\r\nran VBD B-VP\r\n")
    (s,) = ConllFormat().read(path)
    assert s.columns[0] == ("He", "ran") and s.labels == ["B-NP", "B-VP"]


@pytest.mark.parametrize("text, line, what", [
    ("a B C\nb C\n", 2, "expected 3 fields, found 2"),
    ("a B C\n\nb C D E\n", 3, "expected 3 fields, found 4"),
    ("word\n", 1, "at least 2 fields"),
])
def test_conll_bad_field_counts_name_the_line(tmp_path, text, line, what):
    path = write(tmp_path, "bad.txt", text)
    with pytest.raises(InputError) as err:
        list(ConllFormat().read(path))
    assert err.value.line == line and what in str(err.value) and "bad.txt" in str(err.value)


def test_invalid_utf8_names_line_and_offset(tmp_path):
    path = write(tmp_path, "bad.txt", b"ok O\n\xff\xfe O\n")
    with pytest.raises(InputError, match=r"bad.txt:2: invalid utf-8 at byte offset 5"):
        list(ConllFormat().read(path))


def test_sighan_reads_words_as_bies(tmp_path):
    path = write(tmp_path, "s.txt", "\ufeff迈向  充满  希望\u3000的\r\n\n中国 \n")
    s1, s2 = SighanFormat().read(path)
    assert s1.columns[0] == list("迈向充满希望的") and s1.labels == list("BEBEBES")
    assert s2.columns[0] == ["中", "国"] and s2.labels == ["B", "E"] and s2.line == 3
    assert SighanFormat().write(s1, s1.labels) == "迈向  充满  希望  的\n"


def test_sighan_keeps_empty_lines_for_tagging(tmp_path):
    path = write(tmp_path, "s.txt", "你好\n\n世界\n")
    lengths = [len(s) for s in SighanFormat().read(path, labeled=False, keep_empty=True)]
    assert lengths == [2, 0, 2]


def test_bies_by_hand():
    assert bies_tags(["中国", "人", "共和国"]) == ["B", "E", "S", "B", "I", "E"]


@given(st.lists(st.text(alphabet="abcde中国", min_size=1, max_size=5), min_size=1, max_size=8))
def test_bies_round_trip(words):
    chars = list("".join(words))
    assert words_from_tags(chars, bies_tags(words)) == words


@given(st.lists(st.sampled_from("BIES"), min_size=1, max_size=12))
def test_any_tag_sequence_segments_all_characters(tags):
    chars = [chr(0x4e00 + i) for i in range(len(tags))]
    words = words_from_tags(chars, tags)
    assert "".join(words) == "".join(chars) and all(words)


def test_gzip_files_are_read_transparently(tmp_path):
    import gzip
    path = tmp_path / "a.txt.gz"
    path.write_bytes(gzip.compress("He PRP B-NP\n\nOK UH O\n".encode()))
    assert [s.labels for s in ConllFormat().read(str(path))] == [["B-NP"], ["O"]]
    bad = tmp_path / "b.gz"
    data = gzip.compress("".join(f"w{i} O\n" for i in range(5000)).encode())
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match="corrupt gzip"):
        list(ConllFormat().read(str(bad)))


# --- properties of the readers ---------------------------------------------------

FIELD = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=6)


@st.composite
def conll_files(draw):
    """(bytes, sentences as lists of rows) with random separators, line ends and BOM."""
    width = draw(st.integers(2, 4))
    sentences = draw(st.lists(st.lists(st.lists(FIELD, min_size=width, max_size=width), min_size=1, max_size=5),
                              max_size=4))
    end = draw(st.sampled_from(["\n", "\r\n"]))
    sep = st.sampled_from([" ", "\t", "  ", " \t"])
    lines = []
    for s in sentences:
        lines += [draw(sep).join(row) + draw(st.sampled_from(["", " ", "\t"])) for row in s]
        lines += [""] * draw(st.integers(1, 2))
    data = ("\ufeff" if draw(st.booleans()) else "") + end.join(lines)
    return data.encode("utf-8"), sentences


@given(conll_files())
def test_conll_reader_recovers_any_well_formed_file(tmp_path_factory, case):
    data, sentences = case
    path = tmp_path_factory.mktemp("c") / "c.txt"
    path.write_bytes(data)
    read = list(ConllFormat().read(str(path)))
    assert [[list(r) for r in s.rows] for s in read] == sentences
    assert [s.labels for s in read] == [[row[-1] for row in s] for s in sentences]
    # what `seqbil tag` writes reads back as the same tokens with the predictions appended
    out = "".join(ConllFormat().write(s, s.labels) for s in read)
    if sentences:
        again = list(ConllFormat().read(_write(path, out)))
        assert [s.rows for s in again] == [[r + [r[-1]] for r in s.rows] for s in read]


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return str(path)


WORD = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Zs", "Zl", "Zp", "Cc")), min_size=1, max_size=4)


@given(st.lists(st.lists(WORD, min_size=1, max_size=6), max_size=5),
       st.sampled_from([" ", "  ", "\u3000", "\t"]), st.sampled_from(["\n", "\r\n"]))
def test_sighan_reader_and_writer_round_trip(tmp_path_factory, lines, sep, end):
    path = tmp_path_factory.mktemp("s") / "s.txt"
    path.write_bytes(end.join(sep.join(words) for words in lines).encode("utf-8"))
    read = list(SighanFormat().read(str(path)))
    assert [SighanFormat().words(s, s.labels) for s in read] == lines
    assert "".join(SighanFormat().write(s, s.labels) for s in read) == "".join("  ".join(w) + "\n" for w in lines)


@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\0\n"),
                        max_size=12), max_size=6))
def test_raw_text_gives_one_sentence_per_line(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("r") / "r.txt"
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8"))
    read = list(SighanFormat().read(str(path), labeled=False, keep_empty=True))
    assert [s.columns[0] for s in read] == [list("".join(line.rstrip("\r").split())) for line in lines]
    assert [s.line for s in read] == list(range(1, len(lines) + 1))
