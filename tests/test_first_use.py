"""What a new user meets first: inputs that once gave a wrong answer with exit status 0
now give the right one, or one line naming the file and exit status 2 (130 for a run
cut short by Ctrl-C)."""
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import seqbil
from seqbil.cli import main
from seqbil.errors import InputError
from seqbil.samples import sample_path

from test_cli import ENV, reference_chunk_scores

CONLL, PKU = sample_path("conll2000_train.txt"), sample_path("pku_train.utf8")


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("first_use")
    seqbil.train(str(CONLL), config="conll2000", epochs=1, model=str(folder / "chunker.sbm"))
    seqbil.train(str(PKU), config="sighan2005", epochs=2, model=str(folder / "segmenter.sbm"))
    return folder


def raw_lines(path, n=200):
    """Lines of a segmented corpus with their spaces taken out: text to segment."""
    return ["".join(line.split()) for line in path.read_text(encoding="utf-8").splitlines()[:n] if line.strip()]


# ------------------------------------------------------------------- segmentation corpora

@pytest.mark.parametrize("kind", ["raw", "words"])
def test_unsegmented_text_is_not_a_segmentation_corpus(tmp_path, kind):
    words = [w for line in PKU.read_text(encoding="utf-8").splitlines()[:100] for w in line.split()]
    text = raw_lines(PKU) if kind == "raw" else words  # a word list: a word a line
    bad = tmp_path / "raw.utf8"
    bad.write_text("\n".join(text) + "\n", encoding="utf-8")
    r = run("train", "--config", "cws", "--train", bad, "--model", tmp_path / "m.sbm", "--epochs", 1, "-q",
            "--learner", "bol")
    assert r.exit_code == 2 and str(bad) in r.output and "unsegmented text or a word list" in r.output, r.output
    assert not (tmp_path / "m.sbm").exists()
    with pytest.raises(InputError, match="not a segmented corpus"):
        seqbil.train(str(bad), config="sighan2005", epochs=1)
    # a segmented corpus with a few one-word lines among them still trains
    mixed = tmp_path / "mixed.utf8"
    mixed.write_text(PKU.read_text(encoding="utf-8") + "\n".join(text[:20]) + "\n", encoding="utf-8")
    assert run("train", "--config", "cws", "--train", mixed, "--model", tmp_path / "m.sbm", "--epochs", 1,
               "-q", "--learner", "bol").exit_code == 0


# ------------------------------------------------------------------- spaces in raw text

def test_spaces_in_text_to_segment_are_word_boundaries_the_output_keeps(models, tmp_path):
    """Random raw lines with spaces put in: every path of the segmenter (the compiled
    one, the Python one of --confidence, --jobs 2, Model.segment) gives words that never
    run across a space, over the same characters, and where no space was the same
    segmentation as the line without spaces gives at its other boundaries."""
    model = seqbil.load(models / "segmenter.sbm")
    rng = random.Random(3)
    lines = raw_lines(sample_path("pku_test.utf8"), 60) + ["Hello world", "扬帆 远东做", "a　b\tc"]
    spaced = []
    for line in lines:
        chars = list(line)
        for _ in range(rng.randrange(3)):
            chars.insert(rng.randrange(1, len(chars) + 1), rng.choice([" ", "  ", "\u3000"]))
        spaced.append("".join(chars))
    (tmp_path / "in.txt").write_text("\n".join(spaced) + "\n", encoding="utf-8")

    def check(words_per_line):
        assert len(words_per_line) == len(spaced)
        for text, words in zip(spaced, words_per_line):
            pieces = text.split()
            assert "".join(words) == "".join(pieces)
            cuts, at = set(), 0
            for w in words:
                at += len(w)
                cuts.add(at)
            at = 0
            for piece in pieces:  # the end of every piece of the input is a word end
                at += len(piece)
                assert at in cuts, (text, words)

    for extra in ([], ["--jobs", "2"], ["--confidence"]):
        r = subprocess.run([sys.executable, "-P", "-m", "seqbil", "tag", "-m", str(models / "segmenter.sbm"),
                            str(tmp_path / "in.txt"), *extra], capture_output=True, text=True, env=ENV)
        assert r.returncode == 0, r.stderr
        out = [line for line in r.stdout.splitlines() if not line.startswith("#")]
        check([line.split() for line in out])
    check([model.segment(text) for text in spaced])
    assert model.segment("Hello world")[-1] == "world" or model.segment("Hello world")[-1].endswith("d")
    assert "Helloworld" not in "".join(w + "|" for w in model.segment("Hello world"))


# ------------------------------------------------------------------- eval

def test_gold_without_its_label_column_is_refused(models, tmp_path):
    text = CONLL.read_text(encoding="utf-8")
    gold_input = tmp_path / "input.txt"  # the tagger's input: word and POS, no chunk tag
    gold_input.write_text("\n".join(" ".join(line.split()[:2]) for line in text.splitlines()) + "\n",
                          encoding="utf-8")
    tagged = tmp_path / "tagged.txt"
    assert run("tag", "-m", models / "chunker.sbm", gold_input, "-o", tagged).exit_code == 0
    r = run("eval", "--gold", gold_input, "--pred", tagged)
    assert r.exit_code == 2 and str(gold_input) in r.output and "label column" in r.output, r.output
    # the gold file itself scores
    full = tmp_path / "gold.txt"
    full.write_text(text, encoding="utf-8")
    r = run("eval", "--gold", full, "--pred", tagged)
    assert r.exit_code == 0 and "FB1" in r.output or "F1" in r.output, r.output


@pytest.mark.parametrize("options", [["--scheme", "iob2"], ["--metric", "chunk"], []])
def test_gold_of_only_O_is_scored_as_chunks(tmp_path, options):
    """Sentences without a gold chunk: precision, recall and F1 of conlleval (0 gold
    chunks), not a switch to accuracy nor a refusal."""
    rng = np.random.default_rng(7)
    words = ["a", "b", "c", "d"]
    gold_rows, pred_rows, gold, pred = [], [], [], []
    for _ in range(6):
        n = int(rng.integers(1, 6))
        g = ["O"] * n
        p = [str(rng.choice(["O", "B-NP", "I-NP", "B-VP"])) for _ in range(n)]
        gold.append(g)
        pred.append(p)
        gold_rows.append("\n".join(f"{words[i % 4]} X {y}" for i, y in enumerate(g)))
        pred_rows.append("\n".join(f"{words[i % 4]} X {y}" for i, y in enumerate(p)))
    (tmp_path / "g.txt").write_text("\n\n".join(gold_rows) + "\n", encoding="utf-8")
    (tmp_path / "p.txt").write_text("\n\n".join(pred_rows) + "\n", encoding="utf-8")
    r = run("eval", "--gold", tmp_path / "g.txt", "--pred", tmp_path / "p.txt", "--json", *options)
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    want = reference_chunk_scores(gold, pred)
    assert got["metric"] == "chunk"
    for key in ("precision", "recall", "f1", "accuracy"):
        assert got[key] == pytest.approx(want[key], abs=0.005)


# ------------------------------------------------------------------- outputs over inputs

def test_no_output_overwrites_an_input(models, tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(CONLL.read_text(encoding="utf-8"), encoding="utf-8")
    before = corpus.read_bytes()
    link = tmp_path / "link.txt"
    link.symlink_to(corpus)
    for args in (["train", "--train", corpus, "--model", corpus],
                 ["train", "--train", corpus, "--model", link],
                 ["train", "--train", link, "--model", Path(os.path.relpath(corpus))],
                 ["train", "--train", corpus, "--dev", link, "--model", tmp_path / "ok.sbm", "--log", link],
                 ["tag", "-m", models / "chunker.sbm", corpus, "-o", link],
                 ["aso", "--unlabeled", corpus, "--out", corpus]):
        model_before = (models / "chunker.sbm").read_bytes()
        r = run(*args, "-q") if args[0] in ("train", "aso") else run(*args)
        assert r.exit_code == 2 and "is an input of this run" in r.output, (args, r.output)
        assert corpus.read_bytes() == before and (models / "chunker.sbm").read_bytes() == model_before
    with pytest.raises(InputError, match="input of this run"):
        seqbil.train(str(corpus), config="conll2000", model=str(corpus))


# ------------------------------------------------------------------- numbers that cannot work

def test_resume_with_no_epochs_or_fewer_is_refused(tmp_path):
    model, ckpt = tmp_path / "m.sbm", tmp_path / "m.sbm.ckpt"
    assert run("train", "--train", CONLL, "--epochs", 3, "--checkpoint-every", 1, "--model", model,
               "-q").exit_code == 0
    saved = model.read_bytes()
    for epochs in (0, -1, 2):
        r = run("train", "--resume", ckpt, "--epochs", epochs, "-q")
        assert r.exit_code == 2 and "epochs" in r.output, (epochs, r.output)
        assert model.read_bytes() == saved
    with pytest.raises(seqbil.SeqbilError, match="epochs"):
        seqbil.resume(str(ckpt), str(model), epochs=0)


def test_an_interaction_matrix_that_overflows_is_refused(tmp_path):
    lines = CONLL.read_text(encoding="utf-8").split("\n\n")
    for name, part in (("a", lines[:100]), ("b", lines[100:200])):
        (tmp_path / f"{name}.txt").write_text("\n\n".join(part) + "\n", encoding="utf-8")
    matrix = tmp_path / "A.txt"
    matrix.write_text("1e308 0\n0 1e-308\n", encoding="utf-8")
    r = run("train", "--task", f"a={tmp_path / 'a.txt'}", "--task", f"b={tmp_path / 'b.txt'}", "--interaction",
            matrix, "--model", tmp_path / "m.sbm", "--epochs", 1, "-q")
    assert r.exit_code == 2 and str(matrix) in r.output and "ill-conditioned" in r.output, r.output
    assert not (tmp_path / "m.sbm").exists()


# ------------------------------------------------------------------- wide encodings

@pytest.mark.parametrize("encoding, named", [("utf-16", True), ("utf-16-le", True), ("utf-16-be", True),
                                             ("utf-32", True), ("utf-16", False), ("utf-32", False)])
def test_utf16_and_utf32_files_train_tag_and_score_as_utf8(models, tmp_path, encoding, named):
    """A corpus in UTF-16 or UTF-32 (named by --encoding, or marked by its byte-order
    mark) gives the model, the tags and the scores of the same text in UTF-8; the
    output is written in the encoding named."""
    text = sample_path("conll2000_test.txt").read_text(encoding="utf-8")
    (tmp_path / "u8.txt").write_text(text, encoding="utf-8")
    (tmp_path / "wide.txt").write_bytes(text.encode(encoding))
    flag = ["--encoding", encoding] if named else []
    for name in ("u8", "wide"):
        # (the learner named: two runs compared, and a choice within a time budget may differ)
        r = run("train", "--train", tmp_path / f"{name}.txt", "--epochs", 1, "--model", tmp_path / f"{name}.sbm",
                "--learner", "bol", "-q", *(flag if name == "wide" else []))
        assert r.exit_code == 0, r.output
    a, b = seqbil.load(tmp_path / "u8.sbm"), seqbil.load(tmp_path / "wide.sbm")
    sentences = [[["He", "PRP"], ["reckons", "VBZ"], ["the", "DT"], ["deficit", "NN"]]]
    assert a.tag_many(sentences) == b.tag_many(sentences)
    want = run("tag", "-m", models / "chunker.sbm", tmp_path / "u8.txt").output
    r = run("tag", "-m", models / "chunker.sbm", tmp_path / "wide.txt", "-o", tmp_path / "out.txt", *flag)
    assert r.exit_code == 0, r.output
    out = (tmp_path / "out.txt").read_bytes()
    assert out.decode(encoding if named else "utf-8") .removeprefix("\ufeff") == want
    r = run("eval", "-m", models / "chunker.sbm", "--data", tmp_path / "wide.txt", "--json", *flag)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["f1"] == json.loads(run("eval", "-m", models / "chunker.sbm", "--data",
                                                        tmp_path / "u8.txt", "--json").stdout)["f1"]


def test_bad_utf16_names_its_line(tmp_path, models):
    bad = tmp_path / "bad.txt"
    bad.write_bytes("He PRP\nran VBD\n".encode("utf-16") + b"\x00\xd8" + "x X\n".encode("utf-16-le"))
    r = run("tag", "-m", models / "chunker.sbm", bad)
    assert r.exit_code == 2 and f"{bad}:3" in r.output and "utf-16" in r.output, r.output


# ------------------------------------------------------------------- Ctrl-C

def interrupt_when(args, marker, tmp_path, cores=None):
    """Run `seqbil train ARGS` (on the first `cores` CPUs it may use, if given), send
    SIGINT when a line of standard error starts with marker; (exit status, standard
    error)."""
    allowed = sorted(os.sched_getaffinity(0))[:cores] if cores else None
    proc = subprocess.Popen([sys.executable, "-P", "-m", "seqbil", "train", *map(str, args)], stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=ENV, cwd=tmp_path,
                            preexec_fn=(lambda: os.sched_setaffinity(0, allowed)) if allowed else None)
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith(marker):
            proc.send_signal(signal.SIGINT)
            break
    lines.extend(proc.stderr)
    return proc.wait(timeout=600), "".join(lines)


@pytest.mark.parametrize("phase, marker, cores", [
    ("held-out", "choosing the temperature", 1),  # one core: the held-out run goes first
    ("beside", "choosing the temperature", 2),  # two: beside the run
    ("passes", "epoch 2/", None)])
def test_ctrl_c_saves_what_the_run_has_and_exits_130(tmp_path, phase, marker, cores):
    if cores and len(os.sched_getaffinity(0)) < cores:
        pytest.skip(f"fewer than {cores} CPUs")
    model = tmp_path / "m.sbm"
    status, err = interrupt_when(["--train", PKU, "--config", "sighan2005", "--epochs", 60, "--model", model,
                                  "-q"], marker, tmp_path, cores)
    assert status == 130, err
    assert "interrupted" in err and f"model saved to {model}" in err, err
    info = seqbil.load(model).training
    assert info["passes_run"] < 60
    if phase == "held-out":  # the model is the held-out run's
        assert info["interrupted"].startswith("while choosing the temperature")
    else:
        assert info["interrupted"].startswith(f"after {info['passes_run']} of 60")
    if phase != "passes":
        assert seqbil.load(model).temperature == 1.0


# ------------------------------------------------------------------- the package

def test_dir_lists_the_api_before_it_is_imported():
    out = subprocess.run([sys.executable, "-P", "-c", "import seqbil; print(' '.join(dir(seqbil)))"],
                         capture_output=True, text=True, env=ENV, check=True).stdout.split()
    for name in seqbil.__all__:
        assert name in out


# ------------------------------------------------------------------- template messages

@pytest.mark.parametrize("dev", [False, True])
def test_a_template_error_names_the_training_file_and_the_fault(tmp_path, dev):
    """With or without --dev (the settings then chosen on parts of the training file):
    the training file, not a part in memory; and what is wrong with the macro."""
    template = tmp_path / "t.txt"
    template.write_text("U00:%x[0,5]\n", encoding="utf-8")
    extra = ["--dev", CONLL] if dev else []
    r = run("train", "--train", CONLL, "--template", template, "--model", tmp_path / "m.sbm", "-q", *extra)
    assert r.exit_code == 2 and f"{CONLL}: template 'U00:%x[0,5]'" in r.output and "<memory>" not in r.output
    template.write_text("U00:%x[0,0]\nU01:%x[0,0\n", encoding="utf-8")
    r = run("train", "--train", CONLL, "--template", template, "--model", tmp_path / "m.sbm", "-q", *extra)
    assert r.exit_code == 2 and f"{template}:2:" in r.output and "a ']' is missing" in r.output, r.output


@pytest.mark.parametrize("named", [True, False])
def test_a_cluster_refuses_utf16_files_it_would_cut(models, tmp_path, named):
    pytest.importorskip("distributed")
    from seqbil.dask import tag_files
    wide = tmp_path / "wide.txt"
    wide.write_bytes(sample_path("conll2000_test.txt").read_text(encoding="utf-8").encode("utf-16"))
    with pytest.raises(InputError, match="is utf-16: tagging on a cluster cuts files at line feeds"):
        tag_files(str(models / "chunker.sbm"), [str(wide)], str(tmp_path / "out"), workers=1,
                  encoding="utf-16" if named else None)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_help_gives_whole_summaries_and_the_options_early():
    """`seqbil --help` cuts no command's summary, convert's names the tools it reads, and
    train --help reaches its options within a screen and stays short: the long
    descriptions are `seqbil params` and the docs."""
    commands = run("--help").output.split("Commands:")[1]
    rows = " ".join(commands.split())
    assert "..." not in rows and "CRF++" in rows and "CRFsuite" in rows, commands
    lines = run("train", "--help").output.splitlines()
    assert lines.index("Options:") < 30 and len(lines) < 300
    assert "--epochs" in run("params").output and "[train] epochs" in " ".join(lines)
