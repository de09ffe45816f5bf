"""`seqbil tag` in blocks: the same output as tagging sentence by sentence, and from a
pipe each sentence comes out as soon as the input pauses, before the input ends (with
one process or several)."""
import select
import subprocess
import sys

import pytest

import seqbil
from seqbil.samples import sample_path
from test_cli import ENV


def test_blocks_give_the_sentence_by_sentence_output(tmp_path):
    model = seqbil.train(config="conll2000", learner="sp", epochs=2)
    path = tmp_path / "m.sbm"
    model.save(path)
    text = sample_path("conll2000_test.txt").read_text(encoding="utf-8")
    sentences = [[line.split()[:2] for line in block.splitlines()] for block in text.strip().split("\n\n")]
    raw = "\n\n".join("\n".join(" ".join(t) for t in s) for s in sentences[:40]) + "\n"
    proc = subprocess.run([sys.executable, "-m", "seqbil", "tag", "-m", str(path)], input=raw, env=ENV, cwd=tmp_path,
                          capture_output=True, text=True, check=True)
    expected = [" ".join(t + [y]) for s in sentences[:40] for t, y in zip(s, model.tag(s))]
    # each sentence's lines with their labels, a blank line after each sentence
    assert proc.stdout == "".join("\n".join(expected_s) + "\n\n" for expected_s in _split(expected, sentences[:40]))


def _split(lines, sentences):
    out, k = [], 0
    for s in sentences:
        out.append(lines[k:k + len(s)])
        k += len(s)
    return out


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_pipe_gets_each_sentence_before_the_input_ends(tmp_path, jobs):
    model = seqbil.train(config="sighan2005", learner="sp", epochs=1)
    path = tmp_path / "m.sbm"
    model.save(path)
    proc = subprocess.Popen([sys.executable, "-m", "seqbil", "tag", "-m", str(path), "--jobs", str(jobs)], cwd=tmp_path,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=ENV, text=True)
    try:
        for text in ("扬帆远东做与中国合作的先行", "希望的新世纪"):
            proc.stdin.write(text + "\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 60)
            assert ready, "no output while the input stays open"
            line = proc.stdout.readline()
            assert line.replace(" ", "").strip() == text and line.split() == model.segment(text)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert proc.returncode == 0
