import collections
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import seqbil
from seqbil.cli import main
from seqbil.model import Model
from seqbil.samples import SAMPLES, sample_path

# subprocesses import the same seqbil as the tests (installed, or built in place)
ENV = {**os.environ, "PYTHONPATH": str(Path(seqbil.__file__).resolve().parent.parent)}


# Slow reference scorers, written from the definitions (conlleval for chunks, the SIGHAN
# bakeoff scorer for words), to check the numbers of `seqbil eval` against.

def conll_sentences(text):
    """Sentences of CoNLL-style text, each a list of rows of fields."""
    return [[line.split() for line in block.splitlines()] for block in text.strip().split("\n\n")]


def reference_chunks(tags):
    """(type, first, end) of each chunk of IOB tags as conlleval reads them: B-X starts a
    chunk, I-X continues a chunk of type X and starts one anywhere else, O is outside."""
    found, start, kind = set(), None, None
    for i, tag in enumerate(list(tags) + ["O"]):
        prefix, _, t = tag.partition("-")
        if start is not None and (prefix != "I" or t != kind):
            found.add((kind, start, i))
            start = None
        if prefix == "B" or (prefix == "I" and start is None):
            start, kind = i, t
    return found


def percent(part, whole):
    return 100 * part / whole if whole else 0.0


def f_score(precision, recall):
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def reference_chunk_scores(gold, pred):
    """conlleval's precision, recall, F1 and token accuracy of tag sequences."""
    n_gold = n_pred = right = tokens = same = 0
    for g, p in zip(gold, pred, strict=True):
        assert len(g) == len(p)
        g_chunks, p_chunks = reference_chunks(g), reference_chunks(p)
        n_gold, n_pred, right = n_gold + len(g_chunks), n_pred + len(p_chunks), right + len(g_chunks & p_chunks)
        tokens, same = tokens + len(g), same + sum(x == y for x, y in zip(g, p))
    precision, recall = percent(right, n_pred), percent(right, n_gold)
    return {"precision": precision, "recall": recall, "f1": f_score(precision, recall),
            "accuracy": percent(same, tokens)}


def reference_segment_scores(gold, pred, vocabulary=None):
    """The SIGHAN scorer's word precision, recall and F1 (a word is right when its
    character span is a predicted word's), with a vocabulary also OOV rate and OOV recall
    (OOV: a gold word not in the vocabulary)."""
    def spans(words):
        ends = list(itertools.accumulate(map(len, words)))
        return [(end - len(w), end) for w, end in zip(words, ends)]
    n_gold = n_pred = right = oov = oov_right = 0
    for g, p in zip(gold, pred, strict=True):
        assert "".join(g) == "".join(p)
        predicted = set(spans(p))
        n_gold, n_pred = n_gold + len(g), n_pred + len(p)
        for word, span in zip(g, spans(g)):
            right += span in predicted
            if vocabulary is not None and word not in vocabulary:
                oov, oov_right = oov + 1, oov_right + (span in predicted)
    precision, recall = percent(right, n_pred), percent(right, n_gold)
    scores = {"precision": precision, "recall": recall, "f1": f_score(precision, recall)}
    if vocabulary is not None:
        scores.update(oov_rate=percent(oov, n_gold), oov_recall=percent(oov_right, oov))
    return scores


def assert_scores(got, expected):
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12), (key, got[key], value)


def reference_scores_of_tagging(model, test_path):
    """Tag the test corpus with `seqbil tag` and score the output with the reference
    scorers; also checks that the output keeps the input tokens."""
    if Model.load(model).format.name == "crfsuite":  # the label first; `tag` writes a label per line
        import gzip
        gold = [[line.split("\t")[0] for line in block.splitlines()]
                for block in gzip.decompress(Path(test_path).read_bytes()).decode().strip().split("\n\n")]
        result = run("tag", "--model", model, test_path)
        assert result.exit_code == 0, result.output
        pred = [block.splitlines() for block in result.stdout.strip().split("\n\n")]
        return reference_chunk_scores(gold, pred)
    text = Path(test_path).read_text(encoding="utf-8")
    if Model.load(model).format.name == "sighan":
        gold = [line.split() for line in text.splitlines() if line.strip()]
        result = run("tag", "--model", model, input="".join("".join(words) + "\n" for words in gold))
        assert result.exit_code == 0, result.output
        pred = [line.split() for line in result.stdout.splitlines()]
        return reference_segment_scores(gold, pred)
    result = run("tag", "--model", model, test_path)
    assert result.exit_code == 0, result.output
    gold, tagged = conll_sentences(text), conll_sentences(result.stdout)
    assert [[row[:-1] for row in s] for s in tagged] == gold
    return reference_chunk_scores([[row[-1] for row in s] for s in gold], [[row[-1] for row in s] for s in tagged])


def run(*args, input=None):
    return CliRunner().invoke(main, list(map(str, args)), input=input, catch_exceptions=False)


@pytest.fixture(scope="module")
def chunker(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "chunker.sbm"
    result = run("train", "--epochs", 3, "--model", path, "-q")
    assert result.exit_code == 0, result.output
    assert "no training corpus given" in result.output and "bundled sample" in result.output
    return path


@pytest.fixture(scope="module")
def segmenter(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "pku.sbm"
    result = run("train", "--config", "sighan2005", "--epochs", 3, "--model", path, "-q")
    assert result.exit_code == 0, result.output
    return path


@pytest.mark.parametrize("command", [[], ["train"], ["tag"], ["eval"]])
def test_help(command):
    result = run(*command, "--help")
    assert result.exit_code == 0 and "Usage:" in result.output


def test_train_reports_dev_scores_per_epoch(chunker):
    result = run("train", "--epochs", 2, "--model", chunker.parent / "again.sbm", "-q", "--dev",
                 sample_path("conll2000_train.txt"), "--learner", "bol")
    assert result.output.count("dev F1") == 2


def test_a_bare_train_never_reads_the_test_sample(tmp_path):
    """The bundled run chooses its learner (and an online learner's temperature) on
    held-out training sentences, as any run without --dev: the test sample is for
    scoring only."""
    result = run("train", "--epochs", 1, "--model", tmp_path / "bare.sbm", "-q")
    assert result.exit_code == 0, result.output
    assert "conll2000_test" not in result.output and "dev F1" not in result.output
    assert "cross-validation" in result.output or "held-out" in result.output
    info = seqbil.load(tmp_path / "bare.sbm").training
    assert info["dev"] is None and info["selection"]["on"] == "held-out"
    assert info["selection"].get("temperature", {"on": "held-out"})["on"] == "held-out"
    assert "conll2000_test" not in json.dumps(info)


def test_tag_appends_predictions(chunker):
    text = "He PRP\nreckons VBZ\nthe DT\ncurrent JJ\naccount NN\n\nOK UH\n"
    result = run("tag", "--model", chunker, input=text)
    lines = result.output.split("\n")
    assert result.exit_code == 0
    assert lines[0].startswith("He PRP ") and len(lines[0].split()) == 3
    assert lines[5] == "" and lines[6].startswith("OK UH ")


def test_eval_data_and_gold_pred_agree(chunker, tmp_path):
    test = sample_path("conll2000_test.txt")
    by_model = json.loads(run("eval", "--model", chunker, "--data", test, "--json").stdout)
    tagged = run("tag", "--model", chunker, test).stdout
    (tmp_path / "pred.txt").write_text(tagged)
    by_files = json.loads(run("eval", "--gold", test, "--pred", tmp_path / "pred.txt", "--json").stdout)
    assert by_model["metric"] == by_files["metric"] == "chunk"
    for key in ("precision", "recall", "f1", "accuracy"):
        assert by_model[key] == by_files[key]
    assert_scores(by_model, reference_scores_of_tagging(chunker, test))
    table = run("eval", "--model", chunker, "--data", test).output
    assert "precision" in table and "NP" in table
    # the layouts of --marginals and --all-marginals (crf_test -v1, -v2) and of --confidence (a
    # margin after each label) score the same, from the labelled test file or from its words alone
    words = tmp_path / "words.txt"
    words.write_text("\n".join(" ".join(line.split()[:-1]) for line in test.read_text().split("\n")))
    for source in (test, words):
        for flags in (["--marginals"], ["--all-marginals"], ["--nbest", "1", "--marginals"], ["--confidence"]):
            (tmp_path / "pred.txt").write_text(run("tag", "--model", chunker, *flags, source).stdout)
            again = json.loads(run("eval", "--gold", test, "--pred", tmp_path / "pred.txt", "--json").stdout)
            assert all(again[key] == by_model[key] for key in ("precision", "recall", "f1", "accuracy")), flags


def test_eval_refuses_predictions_of_other_words(chunker, tmp_path):
    """The predictions must be of the gold file's words, as conlleval assumes; a token
    that is '#' is a token, not a note line."""
    gold = tmp_path / "gold.txt"
    gold.write_text("# # O\nHe PRP B-NP\nran VBD B-VP\n\nOK UH O\n")
    good = tmp_path / "good.txt"
    good.write_text("# # O O\nHe PRP B-NP B-NP\nran VBD B-VP I-VP\n\nOK UH O O\n")
    r = run("eval", "--gold", gold, "--pred", good, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["tokens"] == 4
    shifted = tmp_path / "shifted.txt"
    shifted.write_text("# # O O\nHe PRP B-NP B-NP\nran VBD B-VP I-VP\n\nNo UH O O\n")
    r = run("eval", "--gold", gold, "--pred", shifted)
    assert r.exit_code == 2 and f"{shifted}:5:" in r.output and "'No'" in r.output and "gold.txt:5" in r.output


def test_segmenter_prints_words(segmenter):
    result = run("tag", "--model", segmenter, input="扬帆远东做与中国合作的先行\n\n中国\n")
    lines = result.output.split("\n")
    assert "".join(lines[0].split()) == "扬帆远东做与中国合作的先行"
    assert len(lines[0].split()) >= 3 and lines[1] == "" and lines[2] == "中国"
    test, train = sample_path("pku_test.utf8"), sample_path("pku_train.utf8")
    scores = json.loads(run("eval", "--model", segmenter, "--data", test, "--words", train, "--json").stdout)
    assert scores["metric"] == "segment"
    gold = [line.split() for line in test.read_text(encoding="utf-8").splitlines() if line.strip()]
    tagged = run("tag", "--model", segmenter, input="".join("".join(words) + "\n" for words in gold)).stdout
    vocabulary = set(train.read_text(encoding="utf-8").split())
    assert_scores(scores, reference_segment_scores(gold, [line.split() for line in tagged.splitlines()], vocabulary))


@pytest.mark.parametrize("args, text, message", [
    (["train", "--train", "{bad}", "--epochs", "1"], "He PRP B-NP\nran VBD\n", "bad.txt:2: expected 3 fields"),
    (["train", "--train", "{bad}", "--template", "{bad}"], "He PRP B-NP\n", "must start with U"),
    (["train", "--train", "{bad}"], "", "no sentences"),
    (["train", "--config", "{bad}"], "[train]\nepochs = 'x'\n", "epochs must be int"),
    (["train", "--config", "{bad}"], "[train]\nepoch = 3\n", "bad.txt:2: unknown key [train] epoch"),
    (["tag", "--model", "{bad}"], "not a model", "not a seqbil model file"),
    (["eval", "--gold", "{bad}"], "x", "give --model and --data, or --gold and --pred"),
    (["train", "--train", "{bad}"], "He PRP\nran VBD\n", "the label column of 2-field data (are the labels missing?)"),
    (["train", "--train", "{bad}"], b"caf\xe9 NN B-NP\n", "bad.txt:1: invalid utf-8 at byte offset 3 (byte 0xe9); "
                                                        "give the right --encoding"),
    (["train", "--train", "{bad}"], b"a NN B-NP\nb\0 NN O\n", "bad.txt:2: NUL byte at byte offset 11"),
    (["train", "--train", "{dir}"], "", "is a directory, not a file"),
    (["train", "--config", "{dir}"], "", "is a directory, not a config file"),
    (["train", "--template", "{bad}"], "U00:%x[0,7]\n", "reads column 7, but the data has 3 fields"),
    (["train", "--config", "{bad}"], "[train]\nC = 'big'\n", "bad.txt:2: [train] C must be float"),
    (["train", "--config", "{bad}"], "[train\n", "bad.txt:1: invalid TOML"),
    (["train", "--seed", "-3"], "", "seed must be at least 0"),
    (["tag", "--model", "{dir}"], "", "is a directory, not a model file"),
    (["tag", "--model", "{model}", "{bad}"], "He PRP B-NP extra\n", "bad.txt:1: expected 2 or 3 fields, found 4"),
    (["tag", "--model", "{model}", "{bad}"], b"\xff\xfa", "invalid utf-8 at byte offset 0"),
    (["eval", "--model", "{model}", "--data", "{bad}"], "", "bad.txt: no sentences in file"),
    (["eval", "--model", "{model}", "--data", "{bad}"], "He PRP B-FOO\n", "none of the labels is known to the model"),
    (["eval", "--gold", "{model}", "--pred", "{bad}"], "", "chunker.sbm:1: invalid utf-8 at byte offset 0"),
])
def test_bad_input_exits_2_with_one_line(tmp_path, chunker, args, text, message):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    places = {"{bad}": bad, "{dir}": tmp_path, "{model}": chunker}
    result = CliRunner().invoke(main, [str(places.get(a, a)) for a in args])
    assert result.exit_code == 2, result.output
    assert message in result.output and "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1].startswith(("seqbil: error: ", "Error: "))


def test_encoding_option_reads_and_writes_other_encodings(chunker, tmp_path):
    (tmp_path / "latin1.txt").write_bytes("café NN\nnaïve JJ\n".encode("latin-1"))
    result = run("tag", "--model", chunker, "--encoding", "latin-1", tmp_path / "latin1.txt")
    assert result.exit_code == 0 and result.stdout_bytes.startswith("café NN ".encode("latin-1"))


def test_empty_input_gives_empty_output(chunker, segmenter):
    for model in (chunker, segmenter):
        result = run("tag", "--model", model, input="")
        assert result.exit_code == 0 and result.output == ""


def test_unseen_tokens_and_megabyte_lines_are_tagged(chunker, segmenter):
    line = "".join(chr(0x4e00 + (i * 7919) % 20000) for i in range(400_000))  # 1.2 MB of UTF-8
    result = run("tag", "--model", segmenter, input=line + "\n")
    assert result.exit_code == 0 and "".join(result.output.split()) == line
    result = run("tag", "--model", chunker, input="x" * 2_000_000 + " NN\nzzzqqq XYZ\n")
    assert result.exit_code == 0 and [len(r.split()) for r in result.output.splitlines()] == [3, 3, 0]


def test_tag_in_a_pipe_as_a_subprocess(chunker, tmp_path):
    # run outside the source tree so the installed package is the one imported
    proc = subprocess.run([sys.executable, "-m", "seqbil", "tag", "--model", str(chunker)], cwd=tmp_path, env=ENV,
                          input="Confidence NN\nin IN\nthe DT\npound NN\n\n", capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert [len(line.split()) for line in proc.stdout.splitlines()] == [3, 3, 3, 3, 0]


def test_bad_model_as_a_subprocess(tmp_path):
    (tmp_path / "m.sbm").write_bytes(b"\x80\x04garbage")
    proc = subprocess.run([sys.executable, "-m", "seqbil", "tag", "--model", str(tmp_path / "m.sbm")],
                          cwd=tmp_path, env=ENV, input="", capture_output=True, text=True)
    assert proc.returncode == 2 and "pickle" in proc.stderr and "Traceback" not in proc.stderr


def test_eval_warns_about_gold_labels_the_model_lacks(chunker, tmp_path):
    data = tmp_path / "data.txt"
    data.write_text("He PRP B-NP\nran VBD B-XYZ\n\n")
    proc = subprocess.run([sys.executable, "-m", "seqbil", "eval", "--model", str(chunker), "--data", str(data),
                           "--json"], cwd=tmp_path, env=ENV, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "gold labels the model does not know (scored as errors): B-XYZ" in proc.stderr
    assert json.loads(proc.stdout)["labels_unknown_to_model"] == ["B-XYZ"]


def reference_accuracy_of_tagging(model, test_path):
    """Token accuracy of `seqbil tag` on a CoNLL test file, and that of the trivial rule of
    baseline_f1 (the label seen most often with the token's POS tag in the training sample)."""
    text = Path(test_path).read_text(encoding="utf-8")
    result = run("tag", "--model", model, test_path)
    assert result.exit_code == 0, result.output
    gold, tagged = conll_sentences(text), conll_sentences(result.stdout)
    pairs = [(g[-1], t[-1]) for gs, ts in zip(gold, tagged) for g, t in zip(gs, ts)]
    by_pos = collections.defaultdict(collections.Counter)
    for s in conll_sentences(sample_path("conll2000_train.txt").read_text(encoding="utf-8")):
        for _, pos, tag in s:
            by_pos[pos][tag] += 1
    guess = [by_pos[pos].most_common(1)[0][0] if pos in by_pos else "O" for s in gold for _, pos, _ in s]
    return {"accuracy": 100 * sum(g == t for g, t in pairs) / len(pairs),
            "baseline": 100 * sum(g[-1] == b for g, b in zip((g for s in gold for g in s), guess)) / len(guess)}


def baseline_f1(format_name):
    """F1 of a trivial rule on the test sample, by the reference scorers: for chunking, the
    CoNLL-2000 baseline (each token gets the chunk tag seen most often with its POS tag in
    the training sample); for segmentation, every character a word."""
    if format_name == "sighan":
        gold = [line.split() for line in sample_path("pku_test.utf8").read_text(encoding="utf-8").splitlines()
                if line.strip()]
        return reference_segment_scores(gold, [list("".join(words)) for words in gold])["f1"]
    by_pos = collections.defaultdict(collections.Counter)
    for s in conll_sentences(sample_path("conll2000_train.txt").read_text(encoding="utf-8")):
        for _, pos, tag in s:
            by_pos[pos][tag] += 1
    test = conll_sentences(sample_path("conll2000_test.txt").read_text(encoding="utf-8"))
    if format_name == "crfsuite":  # its sample: the first 100 sentences
        test = test[:100]
    guess = [[by_pos[pos].most_common(1)[0][0] if pos in by_pos else "O" for _, pos, _ in s] for s in test]
    return reference_chunk_scores([[tag for *_, tag in s] for s in test], guess)["f1"]


@pytest.mark.parametrize("name", sorted(p.stem for p in (Path(__file__).parent.parent / "configs").glob("*.toml")))
def test_every_bundled_config_trains_by_name(tmp_path, name):
    """Each config in configs/ is found by name and trains a model that scores its sample."""
    model = tmp_path / "m.sbm"
    result = run("train", "--config", name, "--epochs", 2, "--model", model, "-q")
    assert result.exit_code == 0, result.output
    loaded = Model.load(model)
    test = SAMPLES[loaded.format.name][1]
    result = run("eval", "--model", model, "--data", sample_path(test), "--json")
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)
    if loaded.corpus["metric"] == "accuracy":  # a tagging config (pos): per-token accuracy of the same output
        reference = reference_accuracy_of_tagging(model, sample_path(test))
        assert scores["accuracy"] == pytest.approx(reference["accuracy"], rel=1e-12)
        assert scores["accuracy"] > reference["baseline"]
    else:
        assert_scores(scores, reference_scores_of_tagging(model, sample_path(test)))
        assert scores["f1"] > baseline_f1(loaded.format.name)  # it learned more than a trivial rule
    if loaded.templates.by_order[0]:  # the 0-order part learned something
        assert loaded.weights["W0"].any()


def test_progress_bars_show_on_a_terminal_and_stay_out_of_a_redirected_log(tmp_path):
    """Without -q, the bars are drawn on a terminal; stderr redirected to a pipe gets the
    run's lines and no bars (the carriage-return redraws of tqdm)."""
    import pty
    command = [sys.executable, "-m", "seqbil", "train", "--learner", "sp", "--epochs", "2", "--model", "m.sbm"]
    piped = subprocess.run(command, cwd=tmp_path, env=ENV, capture_output=True)
    assert piped.returncode == 0 and b"epoch 2/2: " in piped.stderr
    assert b"\r" not in piped.stderr and b"seq/s" not in piped.stderr
    import fcntl
    import struct
    import termios
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # (a new pty is 0 wide)
    try:
        with open(os.devnull, "wb") as null:
            proc = subprocess.run(command, cwd=tmp_path, env=ENV, stdout=null, stderr=follower)
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # (the terminal is closed once the process is gone)
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    assert proc.returncode == 0 and b"seq/s" in shown and b"epoch 2/2: " in shown
