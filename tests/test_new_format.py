"""Adding a corpus format is one module and one registry row: a format written here,
`WORD/TAG` tokens one sentence per line, trains, saves, loads and tags through the API
and `seqbil tag` with no other change, and its model tags as the model of the same
sentences in CoNLL columns does."""
import subprocess
import sys
import textwrap

from seqbil.samples import sample_path

SLASH = textwrap.dedent('''
    from seqbil.errors import InputError
    from seqbil.formats.base import Format, register
    from seqbil.formats.sentence import Sentence
    from seqbil.formats.textio import read_lines


    @register
    class SlashFormat(Format):
        """One sentence per line, tokens WORD/TAG separated by spaces."""

        name = "slash"
        sentence_per_line = True

        def read(self, source, labeled=True, encoding="utf-8", keep_empty=False):
            for number, text in read_lines(source, encoding):
                tokens = [t.rpartition("/") if "/" in t else ("", "", t) for t in text.split()]
                if labeled and any(not word or not tag for word, _, tag in tokens):
                    raise InputError(str(source), number, "a token without its /TAG")
                if tokens or keep_empty:
                    yield Sentence([[w or t for w, _, t in tokens]], [t for _, _, t in tokens] if labeled else None,
                                   number)

        def write(self, sentence, tags):
            return " ".join(f"{w}/{t}" for w, t in zip(sentence.columns[0], tags)) + "\\n"

        def sentence(self, tokens, number):
            return Sentence([list(tokens)], None, number)
''')

SCRIPT = SLASH + textwrap.dedent('''
    import sys
    import seqbil
    from seqbil.tagging import tag_file

    train, test, out = sys.argv[1:4]
    templates = ["U00:%x[-1,0]", "U01:%x[0,0]", "U02:%x[1,0]", "U03:%x[0,0]/%x[1,0]", "B"]
    model = seqbil.train(train=train, format="slash", templates=templates, learner="sp", epochs=2, temperature=1)
    model.save(out + "/slash.sbm")
    loaded = seqbil.load(out + "/slash.sbm")
    assert loaded.corpus["format"] == "slash"
    tag_file(loaded, test, out + "/tagged.txt")
''')


def conll_blocks(path, n):
    blocks = path.read_text(encoding="utf-8").strip().split("\n\n")[:n]
    return [[line.split() for line in block.splitlines()] for block in blocks]


def test_a_format_in_one_module_trains_and_tags_as_its_columns_do(tmp_path):
    train, test = conll_blocks(sample_path("conll2000_train.txt"), 300), conll_blocks(sample_path("conll2000_test.txt"), 40)
    (tmp_path / "train.slash").write_text("".join(" ".join(f"{r[0]}/{r[-1]}" for r in s) + "\n" for s in train))
    (tmp_path / "test.txt").write_text("".join(" ".join(r[0] for r in s) + "\n" for s in test))
    (tmp_path / "run.py").write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path / "train.slash"),
                           str(tmp_path / "test.txt"), str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    tagged = [[t.rpartition("/") for t in line.split()] for line in (tmp_path / "tagged.txt").read_text().splitlines()]
    assert [[w for w, _, _ in s] for s in tagged] == [[r[0] for r in s] for s in test]

    # the same sentences as CoNLL columns (the word, then the label), the same templates
    import seqbil
    (tmp_path / "train.conll").write_text("".join("".join(f"{r[0]} {r[-1]}\n" for r in s) + "\n" for s in train))
    columns = seqbil.train(train=str(tmp_path / "train.conll"), templates=["U00:%x[-1,0]", "U01:%x[0,0]",
                           "U02:%x[1,0]", "U03:%x[0,0]/%x[1,0]", "B"], learner="sp", epochs=2, temperature=1)
    assert [[t for _, _, t in s] for s in tagged] == columns.tag_many([[[r[0]] for r in s] for s in test])
