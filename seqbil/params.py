"""The parameter table: every option of a training run, its type, default and help.

A TOML config sets these per section; command-line flags override the config;
unset options take the defaults below. Unknown keys and wrong types are errors.
"""
import re
import tomllib
from dataclasses import dataclass
from importlib import resources

from .errors import ConfigError


@dataclass(frozen=True)
class Param:
    section: str
    name: str
    type: type
    default: object
    help: str
    choices: tuple = ()


PARAMS = [
    Param("corpus", "format", str, "conll", "corpus format: conll (token per line, columns) or sighan "
          "(sentence per line, words separated by spaces; characters tagged B/I/E/S)", ("conll", "sighan")),
    Param("corpus", "label_column", int, -1, "CoNLL field holding the label (negative: from the end)"),
    Param("corpus", "encoding", str, "utf-8", "text encoding of the corpus files"),
    Param("corpus", "normalize", str, "none", "fold field values before the templates read them: none, or nfkc "
          "(full-width digits and letters read as ASCII; the output keeps the input as it was)", ("none", "nfkc")),
    Param("corpus", "evaluation", str, "auto", "scores reported: chunk (conlleval), segment (SIGHAN), "
          "accuracy, or auto (segment for sighan, chunk for B-/I- labels, else accuracy)",
          ("auto", "chunk", "segment", "accuracy")),
    Param("features", "templates", list, [], "feature templates in CRF++ syntax: U... 0-order, B... 1st-order"),
    Param("features", "min_count", int, 1, "drop attributes seen fewer times in the training data"),
    Param("train", "learner", str, "sp", "sp: structured perceptron on the linear model; bol: online bilinear "
          "learner (Wu & Sun, Algorithm 2); bcd: blockwise coordinate descent (Algorithm 1)", ("sp", "bol", "bcd")),
    Param("train", "epochs", int, 20, "passes over the training data (T)"),
    Param("train", "C", float, 1.0, "learning rate / dual step size C"),
    Param("train", "averaged", bool, True, "average the parameters over all updates"),
    Param("train", "seed", int, 1, "seed of the per-epoch shuffling"),
    Param("train", "rank1", str, "block", "bol: rank-1 per attribute block, or the paper's literal global rank-1",
          ("block", "global")),
    Param("train", "power_steps", int, 4, "bol: power-iteration steps per update (R)"),
    Param("train", "diagnose", bool, False, "bol: after each epoch, exact SVD of every Theta block for "
          "sigma_2/sigma_1, the angle of the R-step pairs to the exact ones and the dual objective "
          "(about 1 s per million blocks)"),
    Param("train", "bcd_rounds", int, 2, "bcd: alternations between alpha and beta (R)"),
    Param("train", "bcd_epochs", int, 5, "bcd: epochs of the online SVM solver per half-step"),
]
BY_KEY = {(p.section, p.name): p for p in PARAMS}


def defaults():
    return {p.name: (list(p.default) if isinstance(p.default, list) else p.default) for p in PARAMS}


def check_value(param, value, source, line=0):
    ok = isinstance(value, param.type) and not (param.type is int and isinstance(value, bool))
    if param.type is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    if param.type is list and ok and not all(isinstance(v, str) for v in value):
        ok = False
    if not ok:
        raise ConfigError(source, line, f"[{param.section}] {param.name} must be {param.type.__name__}, "
                          f"got {type(value).__name__} {value!r}")
    if param.choices and value not in param.choices:
        raise ConfigError(source, line, f"[{param.section}] {param.name} = {value!r}: choose one of "
                          f"{', '.join(param.choices)}")
    if param.type in (int, float) and param.name in ("epochs", "C", "min_count", "power_steps", "bcd_rounds",
                                                     "bcd_epochs") and value <= 0:
        raise ConfigError(source, line, f"[{param.section}] {param.name} must be positive, got {value}")
    if param.name == "seed" and not 0 <= value < 2 ** 63:
        raise ConfigError(source, line, f"[{param.section}] seed must be a non-negative 64-bit integer, got {value}")
    return value


def _line_of(text, key):
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip().startswith(key):
            return number
    return 0


def load_config(path):
    """Settings of a TOML config file, checked against the parameter table."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except IsADirectoryError:
        raise ConfigError(path, 0, "is a directory, not a config file") from None
    except OSError as exc:
        raise ConfigError(path, 0, f"cannot open: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as exc:
        raise ConfigError(path, 0, f"invalid UTF-8 at byte offset {exc.start}") from None
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"\(at line (\d+), column \d+\)$", str(exc))
        message = str(exc)[:at.start()].strip() if at else str(exc)
        raise ConfigError(path, int(at[1]) if at else 0, f"invalid TOML: {message}") from None
    settings = {}
    for section, table in data.items():
        if not isinstance(table, dict):
            raise ConfigError(path, _line_of(text, section), f"unknown top-level key {section!r} "
                              f"(expected sections [corpus], [features], [train])")
        for key, value in table.items():
            param = BY_KEY.get((section, key))
            if param is None:
                known = ", ".join(p.name for p in PARAMS if p.section == section) or "none: unknown section"
                raise ConfigError(path, _line_of(text, key), f"unknown key [{section}] {key} (known: {known})")
            settings[key] = check_value(param, value, path, _line_of(text, key))
    return settings


def bundled_config(name):
    """Path of a config shipped with the package: seqbil.configs when installed,
    the top-level configs/ directory in a source checkout."""
    try:
        return resources.files("seqbil.configs") / name
    except ModuleNotFoundError:
        return resources.files("seqbil").parent / "configs" / name
