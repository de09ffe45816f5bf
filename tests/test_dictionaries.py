"""Dictionary and gazetteer features against a brute-force reading of their definition
(every span of every sentence looked up in a Python set), jackknifing, and models
that carry their dictionaries."""
import numpy as np
import pytest
from click.testing import CliRunner

import seqbil
from conftest import sentence
from seqbil.cli import main
from seqbil.errors import ConfigError
from seqbil.features.dictionaries import Lexicon, codes, value_strings
from seqbil.features.index import FeatureIndex
from seqbil.features.templates import TemplateSet, parse_template

KINDS = ("longest", "begin", "end", "any", "bilou")


def reference(tokens, entries, kind, cap):
    """What the macro reads at each token, straight from the definition."""
    entries = set(map(tuple, entries))
    n = len(tokens)
    spans = [(i, j) for i in range(n) for j in range(i + 1, n + 1) if tuple(tokens[i:j]) in entries]
    out = []
    for p in range(n):
        cover = [(i, j) for i, j in spans if i <= p < j]
        if kind == "begin":
            out.append(str(min(max([j - i for i, j in spans if i == p] or [0]), cap)))
        elif kind == "end":
            out.append(str(min(max([j - i for i, j in spans if j - 1 == p] or [0]), cap)))
        elif kind == "any":
            tags = {"S" if j - i == 1 else "B" if p == i else "E" if p == j - 1 else "M" for i, j in cover}
            out.append("".join(t for t in "BMES" if t in tags) or "-")
        else:
            if not cover:
                out.append("-" if kind == "longest" else "O")
                continue
            i, j = min(cover, key=lambda s: (-(s[1] - s[0]), s[0]))  # longest, then leftmost
            L = j - i
            pos = "S" if L == 1 else "B" if p == i else "E" if p == j - 1 else "M"
            if kind == "bilou":
                out.append({"S": "U", "B": "B", "M": "I", "E": "L"}[pos])
            else:
                out.append(f"{pos}{min(L, cap)}")
    return out


def compute(lex, sentences, kind, cap):
    flat = [t for s in sentences for t in s]
    symbols = np.array([lex.symbols.get(t, 0) for t in flat], dtype=np.int64)
    lengths = np.array([len(s) for s in sentences], dtype=np.int64)
    strings = value_strings(kind, cap)
    got = [strings[c] for c in codes(lex.starts(symbols, lengths), len(flat), kind, cap)]
    out, k = [], 0
    for s in sentences:
        out.append(got[k:k + len(s)])
        k += len(s)
    return out


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", range(8))
def test_matches_the_definition_on_random_cases(seed, kind):
    rng = np.random.default_rng(seed)
    alphabet = list("abcde")
    entries = {tuple(rng.choice(alphabet, int(rng.integers(1, 6)))) for _ in range(int(rng.integers(1, 25)))}
    sentences = [list(rng.choice(alphabet + ["z"], int(rng.integers(1, 12)))) for _ in range(10)]
    cap = int(rng.integers(1, 5))
    lex = Lexicon(entries)
    assert compute(lex, sentences, kind, cap) == [reference(s, entries, kind, cap) for s in sentences]


def test_windows_do_not_cross_sentences():
    lex = Lexicon([("a", "b")])
    assert compute(lex, [["x", "a"], ["b", "y"]], "longest", 6) == [["-", "-"], ["-", "-"]]
    assert compute(lex, [["a", "b"]], "longest", 6) == [["B2", "E2"]]


def test_gazetteer_phrases_of_tokens(tmp_path):
    path = tmp_path / "gaz.txt"
    path.write_text("New York\nNew York City\tLOC\nYork\n\n", encoding="utf-8")
    lex = Lexicon.read(str(path), "token")
    assert compute(lex, [["in", "New", "York", "City", "now"], ["York"]], "bilou", 6) == \
        [["O", "B", "I", "L", "O"], ["U"]]


def test_word_list_with_frequencies(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("\ufeff希望 120\n新世纪\n", encoding="utf-8")
    lex = Lexicon.read(str(path), "char")
    assert lex.entries == [tuple("希望"), tuple("新世纪")]
    assert compute(lex, [list("希望的新世纪")], "longest", 6) == [["B2", "E2", "-", "B3", "M3", "E3"]]


@pytest.mark.parametrize("text, line", [("希望 120\n戊己 庚辛\n", 2), ("甲乙 1 2\n", 1)])
def test_a_word_list_line_of_two_words_is_refused(tmp_path, text, line):
    path = tmp_path / "words.txt"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match="one word, optionally followed by its frequency") as info:
        Lexicon.read(str(path), "char")
    assert info.value.line == line and str(path) in str(info.value)


def segmented(words):
    chars = [c for w in words for c in w]
    labels = [("S" if len(w) == 1 else "B" if k == 0 else "E" if k == len(w) - 1 else "I")
              for w in words for k in range(len(w))]
    return sentence(chars, labels=labels)


@pytest.mark.parametrize("folds", [0, 3])
def test_training_sentences_see_only_the_other_folds(folds):
    """With jackknifing, sentence j's feature is the definition evaluated with the words
    of the sentences outside its fold (j mod folds); without, with every word."""
    from seqbil.features.dictionaries import training_lexicons
    rng = np.random.default_rng(folds)
    sents = [["".join(rng.choice(list("abc"), int(rng.integers(1, 4)))) for _ in range(int(rng.integers(1, 6)))]
             for _ in range(12)]
    train = [segmented(s) for s in sents]
    templates = TemplateSet([parse_template("U00:%dict[w]"), parse_template("U01:%x[0,0]")])
    lexicons, jackknife, info = training_lexicons(["w=train"], templates, train, "char", None, folds)
    assert info["w"]["source"] == "train" and info["w"]["entries"] == len({w for s in sents for w in s})
    index, (u_ptr, u_ids, _, _) = FeatureIndex.build(train, templates, lexicons=lexicons, length_cap=6,
                                                     jackknife=jackknife)
    field = templates.fields[0] if templates.fields[0].source else templates.fields[1]
    strings = index.fields[field].strings
    table, ptr = index.tables[0]
    p = 0
    for j, s in enumerate(sents):
        words = {tuple(w) for k, other in enumerate(sents) for w in other if folds < 2 or k % folds != j % folds}
        expected = reference(list("".join(s)), words, "longest", 6)
        for value in expected:
            attr = u_ids[u_ptr[p]]  # template U00 comes first
            assert attr < ptr[1]
            key = table[attr]
            assert strings[int(key) - (2 * index.K + 1)] == value
            p += 1


def test_model_keeps_its_dictionary_and_takes_user_words(tmp_path):
    train = ["迈向 充满 希望 的 新 世纪", "希望 的 田野", "新 世纪 的 希望"] * 5
    model = seqbil.train(train, config="sighan2005", learner="sp", epochs=3,
                         templates=["U00:%x[0,0]", "U01:%dict[words]", "U02:%dict[words,any]", "B"],
                         dictionaries=["words=train"])
    path = tmp_path / "m.sbm"
    model.save(path)
    again = seqbil.load(path)
    assert again.index.lexicons["words"].entries == model.index.lexicons["words"].entries
    assert again.tag("希望的新世纪") == model.tag("希望的新世纪")
    info = again.training["dictionaries"]["words"]
    assert info["source"] == "train" and info["folds"] == 5 and info["entries"] == 7
    # a user word changes what the dictionary features read, not the weights
    before = again.index.encode([again.format.sentence("田野希望", 1)])
    again.add_words("words", ["田野希望"])
    after = again.index.encode([again.format.sentence("田野希望", 1)])
    assert not all(np.array_equal(a, b) for a, b in zip(before, after))
    with pytest.raises(seqbil.SeqbilError, match="no dictionary 'names'"):
        again.add_words("names", ["x"])
    # the command line: --dict adds a word list for the run
    words = tmp_path / "user.txt"
    words.write_text("田野希望\n", encoding="utf-8")
    text = tmp_path / "in.txt"
    text.write_text("田野希望\n", encoding="utf-8")
    plain = CliRunner().invoke(main, ["tag", "-m", str(path), str(text)])
    extended = CliRunner().invoke(main, ["tag", "-m", str(path), "--dict", f"words={words}", str(text)])
    assert plain.exit_code == 0 and extended.exit_code == 0
    wrong = CliRunner().invoke(main, ["tag", "-m", str(path), "--dict", f"names={words}", str(text)])
    assert wrong.exit_code != 0 and "no dictionary 'names'" in wrong.output


def test_missing_dictionary_is_a_config_error():
    with pytest.raises(ConfigError, match="dictionary 'words'.*words=FILE"):
        seqbil.train(["a b"] * 3, config="sighan2005", learner="sp", epochs=1,
                     templates=["U00:%dict[words]", "B"])
    with pytest.raises(ConfigError, match="NAME=FILE"):
        seqbil.train(["a b"] * 3, config="sighan2005", learner="sp", epochs=1,
                     templates=["U00:%dict[words]", "B"], dictionaries=["words"])
    with pytest.raises(ConfigError, match="segmentation"):
        seqbil.train([[["a", "O"]]], config="conll2000", learner="sp", epochs=1,
                     templates=["U00:%gaz[g]", "B"], dictionaries=["g=train"])


def test_a_model_with_a_changed_dictionary_is_refused(tmp_path):
    model = seqbil.train(["a b", "b a"], config="sighan2005", learner="sp", epochs=1,
                         templates=["U00:%dict[w]", "B"], dictionaries=["w=train"])
    path = tmp_path / "m.sbm"
    model.save(path)
    from seqbil.modelfile import read_model, write_model
    meta, arrays = read_model(path)
    arrays["lexicon:w"] = np.frombuffer("a\nc".encode(), dtype=np.uint8)
    write_model(path, meta, arrays)
    with pytest.raises(seqbil.errors.ModelFileError, match="dictionary w does not match"):
        seqbil.load(path)


def test_folded_characters_that_become_several_survive_the_model_file(tmp_path):
    """NFKC turns one character into several (… -> ..., ℃ -> °C): a stored entry keeps
    its tokens apart, so the reloaded model reads the same dictionary features."""
    train = ["气温 30 ℃ …", "… 气温 ℃", "30 ℃"] * 3
    model = seqbil.train(train, config="sighan2005", learner="sp", epochs=2, normalize="nfkc",
                         templates=["U00:%x[0,0]", "U01:%dict[words]", "B"], dictionaries=["words=train"])
    assert ("°C",) in model.index.lexicons["words"].entries and ("...",) in model.index.lexicons["words"].entries
    model.save(tmp_path / "m.sbm")
    again = seqbil.load(tmp_path / "m.sbm")
    assert again.index.lexicons["words"].entries == model.index.lexicons["words"].entries
    s = again.format.sentence("气温30℃…", 1)
    assert all(np.array_equal(a, b) for a, b in zip(again.index.encode([s]), model.index.encode([s])))


def test_bol_is_warned_off_bilinear_dictionary_features():
    said = []
    seqbil.train(["a b", "b a"], config="sighan2005", learner="bol", epochs=1, echo=said.append,
                 templates=["U00:%x[0,0]", "B01:%x[0,0]", "B02:%dict[w]/%x[0,0]|chartype", "B"], dictionaries=["w=train"])
    assert any("warning: learner bol factors the 1st-order template B02:%dict[w]" in line for line in said)
    said.clear()
    seqbil.train(["a b", "b a"], config="sighan2005", learner="bol", epochs=1, echo=said.append,
                 templates=["U00:%dict[w]", "B01:%x[0,0]", "B"], dictionaries=["w=train"])
    assert not any("factors the 1st-order" in line for line in said)


def test_min_length_leaves_out_short_entries(tmp_path):
    from seqbil.features.dictionaries import training_lexicons
    train = [segmented(["ab", "c", "de"]), segmented(["c", "fgh"])]
    templates = TemplateSet([parse_template("U00:%dict[w]"), parse_template("U01:%dict[v]")])
    path = tmp_path / "v.txt"
    path.write_text("x\nxy\n", encoding="utf-8")
    lexicons, _, _ = training_lexicons(["w=train", f"v={path}"], templates, train, "char", None, 0, min_length=2)
    assert lexicons["w"].entries == [tuple("ab"), tuple("de"), tuple("fgh")]
    assert lexicons["v"].entries == [tuple("xy")]


def test_continuing_a_model_adds_the_new_training_words(tmp_path):
    first = seqbil.train(["迈向 充满 希望", "新 世纪"] * 3, config="sighan2005", learner="sp", epochs=1,
                         templates=["U00:%x[0,0]", "U01:%dict[words]", "B"], dictionaries=["words=train"])
    first.save(tmp_path / "a.sbm")
    more = seqbil.train(["希望 的 田野"] * 3, init_model=str(tmp_path / "a.sbm"), epochs=1)
    entries = set(more.index.lexicons["words"].entries)
    assert set(first.index.lexicons["words"].entries) < entries and tuple("田野") in entries
    assert more.training["dictionaries"]["words"]["source"] == "train"
