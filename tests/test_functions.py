"""Template functions: each function on hand-checked values, and a template with
functions trains exactly the model that the same values written as extra columns give."""
import numpy as np
import pytest

import seqbil
from seqbil.features.functions import FUNCTIONS, apply_chain, char_type, describe, parse_chain


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_documented_example_holds(name):
    fn = FUNCTIONS[name]
    if fn.takes_arg:
        given, arg, out = fn.example
    else:
        (given, out), arg = fn.example, None
    assert fn.apply(given, arg) == out
    assert name in describe()


@pytest.mark.parametrize("chain, value, expected", [
    ("|lower", "ÉTAT", "état"), ("|suffix:3", "ab", "ab"), ("|prefix:2", "abc", "ab"),
    ("|shape", "McDonald's-2", "XxXxxxxx'x-d"), ("|shortshape", "McDonald's-2", "XxXx'x-d"),
    ("|shortshape", "", ""), ("|len", "", "0"), ("|isupper", "A1", "1"), ("|isupper", "1", "0"),
    ("|istitle", "New-York", "1"), ("|istitle", "new", "0"), ("|isdigit", "12", "1"), ("|isdigit", "1a", "0"),
    ("|hasdigit", "a1", "1"), ("|hasdigit", "ab", "0"), ("|ispunct", ",.", "1"), ("|ispunct", ",a", "0"),
    ("|ispunct", "", "0"), ("|lower|suffix:2", "ABC", "bc"), ("|suffix:2|upper", "abc", "BC"),
])
def test_chains_on_hand_checked_values(chain, value, expected):
    assert apply_chain(parse_chain(chain), value) == expected


def test_chartype_folds_widths_and_knows_numbers_and_dates():
    assert [char_type(c) for c in "2２十年Ａa，,中😀"] == \
        ["digit", "digit", "digit", "date", "latin", "latin", "punct", "punct", "han", "punct"]
    assert char_type("ä") == "other" and char_type("\u3042") == "other"  # not Latin ASCII, not Han
    assert apply_chain(parse_chain("|chartype"), "1998年Ｂ超") == "digit-date-latin-han"


def _train(sentences, templates, learner):
    return seqbil.train(sentences, config="conll2000", templates=templates, learner=learner, epochs=3)


@pytest.mark.parametrize("learner", ["sp", "bol"])
@pytest.mark.parametrize("seed", range(3))
def test_functions_equal_columns_written_by_hand(seed, learner):
    """%x[r,0]|f reads what %x[r,k] reads when column k holds f of column 0: the same
    attributes, so the same weights, the same tags on unseen words."""
    rng = np.random.default_rng(seed)
    words = ["Paris", "paris", "PARIS", "rose", "Rose", "1999", "A4", "run", "running", "--", "Ünter"]
    chains = ["|lower", "|suffix:3", "|shape", "|prefix:1|lower"]

    def corpus(n, vocab):
        out = []
        for _ in range(n):
            toks = [str(w) for w in rng.choice(vocab, int(rng.integers(1, 7)))]
            labels = ["B-X" if t[0].isupper() else "B-Y" if t.isdigit() else "O" for t in toks]
            out.append([[t] + [apply_chain(parse_chain(c), t) for c in chains] + [y] for t, y in zip(toks, labels)])
        return out

    train, test = corpus(40, words), corpus(20, words + ["Berlin", "2024", "walking"])
    with_fns = _train([[[r[0], r[-1]] for r in s] for s in train],
                      ["U00:%x[0,0]|lower", "U01:%x[-1,0]|suffix:3/%x[0,0]|shape", "U02:%x[1,0]|prefix:1|lower",
                       "B10:%x[0,0]|shape", "B"], learner)
    by_hand = _train(train, ["U00:%x[0,1]", "U01:%x[-1,2]/%x[0,3]", "U02:%x[1,4]", "B10:%x[0,3]", "B"], learner)
    tagged_fns = with_fns.tag_many([[r[0] for r in s] for s in test])
    tagged_hand = by_hand.tag_many([[r[:-1] for r in s] for s in test])
    assert tagged_fns == tagged_hand
    assert with_fns.index.n_attributes(0) == by_hand.index.n_attributes(0)
    for name in with_fns.weights:
        assert np.array_equal(with_fns.weights[name], by_hand.weights[name]), name


def test_model_with_functions_reloads(tmp_path):
    train = [[["Paris", "B-X"], ["is", "O"]], [["rose", "O"], ["Rose", "B-X"]]]
    model = seqbil.train(train, config="conll2000", templates=["U00:%x[0,0]|lower|suffix:2", "U01:%x[0,0]", "B"], learner="sp",
                         epochs=2)
    model.save(tmp_path / "m.sbm")
    again = seqbil.load(tmp_path / "m.sbm")
    assert again.tag(["PARIS", "rose"]) == model.tag(["PARIS", "rose"])
    assert [t.text for t in again.templates.templates] == ["U00:%x[0,0]|lower|suffix:2", "U01:%x[0,0]", "B"]


def test_help_templates_lists_the_grammar_and_every_function():
    from click.testing import CliRunner
    from seqbil.cli import main
    result = CliRunner().invoke(main, ["train", "--help-templates"])
    assert result.exit_code == 0 and "%x[r,c]|f|g:N" in result.stdout
    for name, fn in FUNCTIONS.items():
        assert f"  {name}" in result.stdout and fn.help in result.stdout
