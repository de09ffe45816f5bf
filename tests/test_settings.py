"""The parameter table drives flags, TOML keys and docs; settings that cannot do what
they say are refused or warned about; the metric is chosen openly; inspect shows
everything needed to reproduce a model."""
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import seqbil
from seqbil import params
from seqbil.cli import main
from seqbil.samples import sample_path

POS = "The DT\ncat NN\nsat VBD\n. .\n\nA DT\ndog NN\nran VBD\n. .\n\nThe DT\ndog NN\nsat VBD\n\n"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_every_parameter_has_its_flag_and_key(tmp_path):
    """train takes every parameter but those of seqbil aso ([structure]), which aso
    takes with the corpus format and encoding."""
    help_text = " ".join(run("train", "--help").output.split())
    aso_text = " ".join(run("aso", "--help").output.split())
    for p in params.table():
        if p.flag != "-":
            text = aso_text if p.section == "structure" else help_text
            assert p.cli_flag in text and f"[{p.section}] {p.name}" in text
            assert (f"[{p.section}] {p.name}" in aso_text) == (p.section == "structure" or
                                                               p.name in ("format", "encoding", "seed"))
        value = p.default if p.type is not list or p.validate is not None else ["U00:%x[0,0]"]
        literal = json.dumps(value) if not isinstance(value, bool) else str(value).lower()
        (tmp_path / "c.toml").write_text(f"[{p.section}]\n{p.name} = {literal}\n")
        assert params.load_config(tmp_path / "c.toml")[p.name] == value


def test_defaults_are_shown_in_help():
    help_text = " ".join(run("train", "--help").output.split())
    assert "default: 20" in help_text and "default: block" in help_text


def test_bol_without_first_order_templates_trains_as_sp_and_bcd_is_refused(tmp_path):
    (tmp_path / "t.txt").write_text("U00:%x[0,0]\nB\n")
    result = run("train", "--learner", "bol", "--template", tmp_path / "t.txt", "--epochs", 1, "--model",
                 tmp_path / "m.sbm", "-q")
    assert result.exit_code == 0
    assert "bol: no 1st-order templates with %x macros to factor; training the linear model (as sp)" in result.output
    assert "linear model, learner sp" in run("inspect", tmp_path / "m.sbm").output
    result = run("train", "--learner", "bcd", "--template", tmp_path / "t.txt", "--epochs", 1, "--model",
                 tmp_path / "b.sbm", "-q")
    assert result.exit_code == 2 and "[train] learner = 'bcd'" in result.output and "use learner = \"sp\"" in result.output
    assert not (tmp_path / "b.sbm").exists()


def test_option_of_another_learner_is_named(tmp_path):
    result = run("train", "--learner", "sp", "--power-steps", 3, "--epochs", 1, "--model", tmp_path / "m.sbm", "-q")
    assert result.exit_code == 0
    assert "warning: [train] power_steps (from arguments) is not used by learner sp" in result.output


def test_config_switched_to_another_learner_is_quiet(tmp_path):
    result = run("train", "--learner", "sp", "--epochs", 1, "--model", tmp_path / "m.sbm", "-q")
    assert result.exit_code == 0 and "warning" not in result.output


def test_header_says_where_values_come_from(tmp_path):
    out = run("train", "--config", "sighan2005", "--epochs", 1, "--model", tmp_path / "m.sbm", "-q").output
    assert "learner bol (config): epochs 1 (argument), C 1.0 (config), averaged false (config)" in out


def test_pos_files_are_scored_by_accuracy(tmp_path):
    data = tmp_path / "pos.txt"
    data.write_text(POS)
    result = run("eval", "--gold", data, "--pred", data)
    assert result.exit_code == 0, result.output
    assert "metric: accuracy, chosen because the labels are not chunk tags" in result.output
    assert "accuracy: 100.00%" in result.stdout
    (tmp_path / "t.txt").write_text("U00:%x[0,0]\nB01:%x[-1,0]\nB\n")
    out = run("train", "--template", tmp_path / "t.txt", "--train", data, "--dev", data, "--epochs", 2,
              "--model", tmp_path / "m.sbm", "-q").output
    assert "metric: accuracy" in out and "dev acc" in out and "dev F1" not in out
    result = run("eval", "-m", tmp_path / "m.sbm", "--data", data, "--json")
    assert json.loads(result.stdout)["metric"] == "accuracy"


def test_chunk_metric_on_pos_labels_names_the_key(tmp_path):
    data = tmp_path / "pos.txt"
    data.write_text(POS)
    (tmp_path / "t.txt").write_text("U00:%x[0,0]\nB01:%x[-1,0]\nB\n")
    result = run("train", "--template", tmp_path / "t.txt", "--train", data, "--metric", "chunk", "--model",
                 tmp_path / "m.sbm", "-q")
    assert result.exit_code == 2 and "[corpus] metric = 'chunk'" in result.output and "DT" in result.output
    result = run("eval", "--gold", data, "--pred", data, "--metric", "chunk")
    assert result.exit_code == 2 and "chunk needs chunk labels" in result.output


def test_inspect_has_everything_to_reproduce(tmp_path):
    train, dev = sample_path("pku_train.utf8"), sample_path("pku_test.utf8")
    model = tmp_path / "m.sbm"
    assert run("train", "--config", "sighan2005", "--train", train, "--dev", dev, "--epochs", 2, "--model", model,
               "-q").exit_code == 0
    info = json.loads(run("inspect", "--json", model).stdout)
    for key in ("learner", "params", "templates", "labels", "task_kind", "training", "features", "file",
                "seqbil_version"):
        assert key in info
    # every parameter of a training run (those of seqbil aso are the structure's, shown with it)
    assert set(info["params"]) == {p.name for p in params.table() if p.section != "structure"} - {"templates"}
    assert info["params"]["epochs"] == 2 and info["params"]["normalize"] == "nfkc"
    assert info["labels"] == ["B", "I", "E", "S"] and info["task_kind"]["metric"] == "segment"
    t = info["training"]
    assert t["train"]["sha256"] == hashlib.sha256(train.read_bytes()).hexdigest()
    assert t["dev"]["sentences"] == sum(1 for line in dev.read_text(encoding="utf-8").splitlines() if line.strip())
    assert t["passes_run"] == 2 and t["best_dev"]["metric"] == "F1"
    assert t["best_dev"]["value"] == max(r for r in [t["best_dev"]["value"], t["last_dev"]["value"]])
    from seqbil.modelfile import VERSION
    assert info["file"]["size_bytes"] == model.stat().st_size and info["file"]["format_version"] == VERSION
    assert info["file"]["weights"] == {"layout": "sparse rows", "precision": "float32"}
    by_template = {f["template"]: f for f in info["features"]}
    assert set(info["templates"]) - {"B"} <= set(by_template)
    assert all(0 <= f["nonzero_weights"] for f in info["features"])
    assert sum(f["attributes"] for f in info["features"] if f["order"] == 1 and f["template"] != "B") > 0
    text = run("inspect", model).output
    assert "learner bol" in text and "sha256" in text and "best dev F1" in text


def test_a_config_for_another_learner_leaves_the_chosen_learners_own_defaults():
    """configs/conll2000.toml sets epochs = 20 for bol: --learner crf gets crf's own
    iteration cap, unless epochs is given too; a config for the crf keeps its epochs."""
    from seqbil import params
    conll = params.find_config("conll2000")
    assert params.resolve(conll, {}).epochs == 20
    settings = params.resolve(conll, {"learner": "crf"})
    assert settings.epochs == 1000 and not settings.given("epochs")
    assert params.resolve(conll, {"learner": "crf", "epochs": 50}).epochs == 50
    assert params.resolve(conll, {"learner": "sp"}).epochs == 20  # sp has no defaults of its own
    assert params.resolve(conll, {"learner": "l2sgd"}).delta == 1e-6


def test_a_crf_config_keeps_its_epochs(tmp_path):
    from seqbil import params
    (tmp_path / "c.toml").write_text('[train]\nlearner = "crf"\nepochs = 30\n')
    assert params.resolve(tmp_path / "c.toml", {}).epochs == 30
    assert params.resolve(tmp_path / "c.toml", {"learner": "crf"}).epochs == 30
    assert params.resolve(tmp_path / "c.toml", {"learner": "l2sgd"}).epochs == 1000


def _documented(param, value):
    """Whether `value` is allowed by the range `seqbil params` documents for `param`
    (its text, parsed: "> 0, <= N" or "A to B")."""
    import math
    import re
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    if param.type is int and not isinstance(value, int):
        return False
    if not math.isfinite(value):
        return False
    text = param.range_text().replace(",", "")

    def number(s):
        return int(s) if re.fullmatch(r"-?\d+", s) else float(s)
    m = re.fullmatch(r"> 0 <= (\S+)", text)
    if m:
        return 0 < value <= number(m.group(1))
    low, high = text.split(" to ")
    return number(low) <= value <= number(high)


NUMBERS = [p for p in params._table() if p.type in (int, float) and not p.choices]


@pytest.mark.parametrize("param", NUMBERS, ids=[p.name for p in NUMBERS])
def test_every_number_is_refused_exactly_outside_its_documented_range(param):
    import math
    upper = param.upper
    tries = [0, -1, 1, 2, 0.5, math.nan, math.inf, -math.inf, 1e300, -1e300, 10 ** 30, "x", True, None,
             upper, upper + 1, -upper, -upper - 1, -1000, -1001]
    for value in tries:
        try:
            params.check_value(param, value, "<test>")
            taken = True
        except params.ConfigError:
            taken = False
        want = _documented(param, float(value) if param.type is float and isinstance(value, int) and
                           not isinstance(value, bool) else value)
        assert taken == want, (param.name, value)


def test_a_refused_number_leaves_the_model_file_alone(tmp_path):
    from click.testing import CliRunner
    from seqbil.cli import main
    model = tmp_path / "m.sbm"
    model.write_bytes(b"old")
    for flags in (["-C", "inf"], ["-C", "1e300"], ["--epochs", "-1"], ["--coupling", "nan"]):
        r = CliRunner().invoke(main, ["train", "--model", str(model), "-q", *flags])
        assert r.exit_code == 2 and "Traceback" not in r.output and "allowed are" in r.output or \
            "finite" in r.output or "positive" in r.output, (flags, r.output)
        assert model.read_bytes() == b"old"


@pytest.mark.parametrize("args, message", [
    (["convert", "x.sbm", "y.sbm", "--prune", "nan"], "'nan' is not a number"),
    (["convert", "x.sbm", "y.sbm", "--prune", "inf"], "not in the range"),
    (["tag", "-m", "x.sbm", "--nbest", "99999999999999"], "not in the range"),
    (["tag", "-m", "x.sbm", "--output-dir", "o", "--partition-mb", "nan"], "'nan' is not a number"),
])
def test_options_outside_the_table_refuse_absurd_numbers(args, message):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("command", [
    ["train", "--model", "{missing}/m.sbm"], ["train", "--model", "{dir}"],
    ["train", "--model", "{dir}/m.sbm", "--log", "{missing}/log"],
    ["train", "--model", "{dir}/m.sbm", "--checkpoint-every", "1", "--checkpoint", "{missing}/c"],
    ["convert", "{model}", "{missing}/c.sbm"], ["convert", "{model}", "{dir}"],
    ["tag", "-m", "{model}", "--output", "{missing}/out.txt", "{data}"],
    ["aso", "--unlabeled", "{data}", "--out", "{missing}/s.sbs"],
    ["aso", "--unlabeled", "{data}", "--out", "{dir}/s.sbs", "--vectors", "{missing}/v.txt"],
])
def test_outputs_that_cannot_be_written_are_refused_before_the_work(tmp_path, command):
    model = tmp_path / "m0.sbm"  # (any model: the learner named, no choice to wait for)
    assert CliRunner().invoke(main, ["train", "--model", str(model), "--epochs", "1", "--learner", "bol",
                                     "-q"]).exit_code == 0
    before = model.read_bytes()
    places = {"missing": str(tmp_path / "no" / "such"), "dir": str(tmp_path), "model": str(model),
              "data": str(sample_path("conll2000_test.txt"))}
    args = [a.format(**places) for a in command]
    r = CliRunner().invoke(main, args + (["-q"] if args[0] == "train" else []))
    assert r.exit_code == 2 and "Traceback" not in r.output, r.output
    assert "does not exist" in r.output or "is a directory" in r.output
    assert model.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["m0.sbm"]


def test_a_closed_standard_error_does_not_stop_the_work(tmp_path):
    """`seqbil train ... 2>&1 | head -1`: the reader of the messages goes away; the model
    is still written and the exit status is the work's."""
    import os
    import subprocess
    import sys
    model = tmp_path / "m.sbm"
    env = {**os.environ, "PYTHONPATH": str(Path(params.__file__).resolve().parent.parent)}
    proc = subprocess.Popen([sys.executable, "-m", "seqbil", "train", "--model", str(model), "--epochs", "3"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    proc.stderr.readline()  # one line, then the reader leaves
    proc.stderr.close()
    assert proc.wait(timeout=600) == 0
    assert model.exists() and model.stat().st_size > 0


@pytest.mark.parametrize("template, line", [("U00:%x[0,0]\nU01:%x[0,0]/%task\nB\n", 2),
                                            ("U00:%x[0,0]\nB\nU:%attr\n", 3)])
def test_a_template_no_corpus_can_read_is_named_with_its_line(tmp_path, template, line):
    path = tmp_path / "t.template"
    path.write_text(template)
    r = CliRunner().invoke(main, ["train", "--template", str(path), "--model", str(tmp_path / "m.sbm"), "-q"])
    assert r.exit_code == 2 and f"{path}:{line}:" in r.output, r.output


def test_settings_are_a_frozen_record_of_the_table_that_says_where_each_value_came_from(tmp_path):
    import dataclasses
    import pickle
    from seqbil import params
    (tmp_path / "c.toml").write_text("[train]\nepochs = 7\n")
    s = params.resolve(tmp_path / "c.toml", {"C": 0.5, "seed": None})
    assert [f.name for f in dataclasses.fields(s) if f.name != "sources"] == [p.name for p in params.table()]
    assert (s.epochs, s.C, s.seed) == (7, 0.5, params.by_name()["seed"].default)
    assert (s.origin("epochs"), s.origin("C"), s.origin("seed")) == (str(tmp_path / "c.toml"), "arguments",
                                                                     "<settings>")
    assert s.given("C") and not s.given("seed")
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.epochs = 3
    with pytest.raises(TypeError):
        s.sources["seed"] = "arguments"
    chosen = s.but({"C": 0.25}, "<chosen>")
    assert (chosen.C, chosen.origin("C"), s.C, s.origin("C")) == (0.25, "<chosen>", 0.5, "arguments")
    assert not s.but({"C": 0.25}, None).given("C") and s.but({"C": 0.25}).origin("C") == "arguments"
    back = pickle.loads(pickle.dumps(chosen))  # (as a Dask worker receives them)
    assert back == chosen and dict(back.sources) == dict(chosen.sources)
    assert list(s.as_dict()) == [p.name for p in params.table()]
    assert params.Settings.of({"C": 2.0}).as_dict() == {**params.defaults(), "C": 2.0}
    with pytest.raises(seqbil.SeqbilError, match="unknown parameter 'Cee'"):
        params.Settings.of({"Cee": 1.0})
