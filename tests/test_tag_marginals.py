"""`seqbil tag --marginals` / `--all-marginals` (and seqbil.tag_file(marginals=...)):
the printed probabilities against enumeration of every labelling of small sentences,
exp(score / T) / Z with the scores summed from the model's dense weights; the layout
read back as documented; --jobs and --output-dir give the same bytes."""
import io
import itertools

import numpy as np
import pytest
from click.testing import CliRunner

import seqbil
from seqbil.cli import main
from test_decode import tables
from test_marginals import TOY_TEMPLATES, enumerate_paths, toy_corpus


def brute_force(model, sentence):
    """(every labelling with its probability, best first; the marginals) of one
    formats.Sentence, by enumeration over the score tables built from the dense weights."""
    w, S, T = model.weights, len(model.labels), model.temperature
    W1 = w["W1"] if model.kind == "linear" else w["alpha"][:, :, None] * w["beta"][:, None, :]
    data = model.encode([sentence])
    unary, pair = tables(data, 0, w["W0"], W1)
    logz, P, _ = enumerate_paths(unary, pair, w["trans"], w["end"], T)
    scored = []
    for path in itertools.product(range(S), repeat=len(sentence)):
        s, prev = 0.0, S
        for i, y in enumerate(path):
            s += unary[i, y] + pair[i, y, prev] + w["trans"][y, prev]
            prev = y
        scored.append(((s + w["end"][path[-1]]) / T, [model.labels[y] for y in path]))
    scored.sort(key=lambda t: -t[0])
    return [(labels, np.exp(s - logz)) for s, labels in scored], P


def close(printed, value):
    """A number printed with 6 significant digits (CRF++'s %g) is the value."""
    assert len(printed.lstrip("0.").replace(".", "").split("e")[0]) <= 6, printed
    assert float(printed) == pytest.approx(value, rel=1e-5, abs=1e-300), (printed, value)


@pytest.fixture(scope="module", params=["bol", "sp"])
def chunker(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp("marg")
    rng = np.random.default_rng(21)
    (folder / "t.template").write_text(TOY_TEMPLATES)
    model = seqbil.train(toy_corpus(rng, 80), template=str(folder / "t.template"), learner=request.param, epochs=3)
    model.temperature = 1.7  # the probabilities divide the scores by it
    model.save(str(folder / "m.sbm"))
    return folder, seqbil.load(str(folder / "m.sbm"))


def tokens_file(path, sentences):
    path.write_text("".join("".join(" ".join(r[:-1]) + "\n" for r in s) + "\n" for s in sentences))


def parse_conll(text, every, n_labels):
    """The documented layout: per labelling a line `# PROB` (`# RANK PROB` with nbest),
    its token lines with LABEL/PROB last (then n_labels more with every), a blank line.
    Returns per block (header fields, [(label, prob, [(label, prob)...]) per token])."""
    assert text.endswith("\n\n")
    blocks = []
    for block in text[:-2].split("\n\n"):
        head, *lines = block.split("\n")
        assert head.startswith("# ")
        tokens = []
        for line in lines:
            fields = line.split(" ")
            extra = fields[-n_labels:] if every else []
            mine = fields[-n_labels - 1] if every else fields[-1]
            tokens.append((*mine.rsplit("/", 1), [tuple(f.rsplit("/", 1)) for f in extra]))
        blocks.append((head[2:].split(" "), tokens))
    return blocks


@pytest.mark.parametrize("every", [False, True])
def test_conll_marginals_are_the_enumerated_probabilities(chunker, tmp_path, every):
    folder, model = chunker
    sentences = toy_corpus(np.random.default_rng(22), 12)
    tokens_file(tmp_path / "in.txt", sentences)
    out = io.StringIO()
    seqbil.tag_file(model, str(tmp_path / "in.txt"), out, marginals="all" if every else True)
    blocks = parse_conll(out.getvalue(), every, len(model.labels))
    assert len(blocks) == len(sentences)
    for rows, (head, tokens) in zip(sentences, blocks):
        sentence = model.format.sentence([r[:-1] for r in rows], 1)
        every_path, P = brute_force(model, sentence)
        best, p = every_path[0]
        assert len(head) == 1
        close(head[0], p)
        assert [t[0] for t in tokens] == best == model.tag([r[:-1] for r in rows])
        for i, (label, prob, others) in enumerate(tokens):
            close(prob, P[i, model.labels.index(label)])
            if every:
                assert [y for y, _ in others] == model.labels
                for k, (_, q) in enumerate(others):
                    close(q, P[i, k])
            else:
                assert others == []
    # the plain output is there with /PROB taken off and the `#` lines left out
    plain = io.StringIO()
    seqbil.tag_file(model, str(tmp_path / "in.txt"), plain)
    stripped = []
    for line in out.getvalue().split("\n"):
        if line.startswith("# "):
            continue
        fields = line.split(" ")
        if line:
            fields = fields[:len(fields) - len(model.labels)] if every else fields
            fields[-1] = fields[-1].rsplit("/", 1)[0]
        stripped.append(" ".join(fields))
    assert "\n".join(stripped) == plain.getvalue()


def test_nbest_with_marginals_gives_each_labellings_probability(chunker, tmp_path):
    folder, model = chunker
    sentences = toy_corpus(np.random.default_rng(23), 8)
    tokens_file(tmp_path / "in.txt", sentences)
    out = io.StringIO()
    k = 4
    seqbil.tag_file(model, str(tmp_path / "in.txt"), out, marginals=True, nbest=k)
    blocks = iter(parse_conll(out.getvalue(), False, len(model.labels)))
    for rows in sentences:
        sentence = model.format.sentence([r[:-1] for r in rows], 1)
        every_path, P = brute_force(model, sentence)
        for rank in range(min(k, len(every_path))):
            (r, p), tokens = next(blocks)
            assert int(r) == rank
            close(p, every_path[rank][1])
            assert [t[0] for t in tokens] == every_path[rank][0]  # (random weights: no ties)
            for i, (label, prob, _) in enumerate(tokens):
                close(prob, P[i, model.labels.index(label)])
    assert next(blocks, None) is None


SEG_TEMPLATES = "U00:%x[-1,0]\nU01:%x[0,0]\nU02:%x[1,0]\nU03:%x[-1,0]/%x[0,0]\nB00:%x[0,0]\nB\n"


@pytest.fixture(scope="module")
def segmenter(tmp_path_factory):
    folder = tmp_path_factory.mktemp("seg")
    rng = np.random.default_rng(24)
    words = ["中国", "的", "合作", "先行者", "与", "远东"]
    corpus = [" ".join(words[int(i)] for i in rng.integers(len(words), size=int(rng.integers(1, 6))))
              for _ in range(60)]
    (folder / "seg.template").write_text(SEG_TEMPLATES)
    model = seqbil.train(corpus, config="sighan2005", template=str(folder / "seg.template"), epochs=2)
    model.temperature = 2.5
    model.save(str(folder / "seg.sbm"))
    return folder, seqbil.load(str(folder / "seg.sbm"))


@pytest.mark.parametrize("every", [False, True])
def test_segmentation_boundaries_are_the_enumerated_probabilities(segmenter, tmp_path, every):
    folder, model = segmenter
    lines = ["中国的合作", "", "与远东", "先行者中", "国", "合 作"]
    (tmp_path / "in.txt").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    out = io.StringIO()
    seqbil.tag_file(model, str(tmp_path / "in.txt"), out, marginals="all" if every else True)
    plain = io.StringIO()
    seqbil.tag_file(model, str(tmp_path / "in.txt"), plain)
    got = out.getvalue().split("\n")
    per = 3 + (len(model.labels) if every else 0)  # lines per sentence, as documented
    assert len(got) == per * len(lines) + 1 and got[-1] == ""
    assert got[per - 1::per][:len(lines)] == plain.getvalue().split("\n")[:-1]
    for j, line in enumerate(lines):
        head, boundary, *rest = got[per * j:per * j + per - 1]
        chars = [c for c in line if not c.isspace()]
        assert boundary.split(" ")[:2] == ["#", "boundary"] and len(boundary.split(" ")) == 2 + len(chars)
        if not chars:
            assert head == "# 1" and boundary == "# boundary"
            assert rest == [f"# {y}" for y in model.labels] if every else rest == []
            continue
        every_path, P = brute_force(model, model.format.sentence(chars, 1))
        close(head.split(" ")[1], every_path[0][1])
        ends = P[:, model.labels.index("E")] + P[:, model.labels.index("S")]
        for printed, value in zip(boundary.split(" ")[2:], ends):
            close(printed, value)
        if every:
            assert [r.split(" ")[1] for r in rest] == model.labels
            for k, r in enumerate(rest):
                for printed, value in zip(r.split(" ")[2:], P[:, k]):
                    close(printed, value)
        else:
            assert rest == []


def test_segmentation_nbest_with_marginals(segmenter, tmp_path):
    folder, model = segmenter
    (tmp_path / "in.txt").write_text("中国的\n", encoding="utf-8")
    out = io.StringIO()
    seqbil.tag_file(model, str(tmp_path / "in.txt"), out, marginals=True, nbest=3)
    every_path, P = brute_force(model, model.format.sentence(list("中国的"), 1))
    got = out.getvalue().split("\n")
    assert len(got) == 3 * 3 + 1
    fmt = model.format
    for rank in range(3):
        head, boundary, text = got[3 * rank:3 * rank + 3]
        assert head.split(" ")[1] == str(rank)
        close(head.split(" ")[2], every_path[rank][1])
        assert boundary == got[1]
        assert text == fmt.write(model.format.sentence(list("中国的"), 1), every_path[rank][0])[:-1]


def test_jobs_blocks_and_the_command_line_give_the_same_bytes(chunker, segmenter, tmp_path, monkeypatch):
    import seqbil.tagging

    for (folder, model), text in ((chunker, None), (segmenter, "中国的合作\n与远东\n\n先行者\n" * 40)):
        path = tmp_path / "in.txt"
        if text is None:
            tokens_file(path, toy_corpus(np.random.default_rng(25), 200))
        else:
            path.write_text(text, encoding="utf-8")
        for flags in (["--marginals"], ["--all-marginals"], ["--marginals", "--nbest", "2"]):
            outputs = []
            for jobs, block in ((1, 1 << 18), (2, 61)):
                monkeypatch.setattr(seqbil.tagging.reader, "BLOCK_BYTES", block)
                name = tmp_path / f"out{jobs}.txt"
                model_file = str(folder / ("m.sbm" if text is None else "seg.sbm"))
                result = CliRunner().invoke(main, ["tag", "-m", model_file, str(path), "-o", str(name), "--jobs",
                                                   str(jobs), *flags])
                assert result.exit_code == 0, result.output
                outputs.append(name.read_bytes())
            api = io.BytesIO()
            marginals = "all" if "--all-marginals" in flags else True
            seqbil.tag_file(model_file, str(path), api, marginals=marginals, nbest=2 if "--nbest" in flags else None)
            assert outputs[0] == outputs[1] == api.getvalue()


def test_what_makes_no_sense_is_refused(chunker, tmp_path):
    folder, model = chunker
    (tmp_path / "in.txt").write_text("a t0\n\n")
    result = CliRunner().invoke(main, ["tag", "-m", str(folder / "m.sbm"), str(tmp_path / "in.txt"), "--marginals",
                                       "--confidence"])
    assert result.exit_code == 2 and "--marginals and --confidence print different layouts" in result.output
    for bad in ({"marginals": True, "confidence": True}, {"marginals": "some"}):
        with pytest.raises(seqbil.SeqbilError):
            seqbil.tag_file(model, str(tmp_path / "in.txt"), io.StringIO(), **bad)
