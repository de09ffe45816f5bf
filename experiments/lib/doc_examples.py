"""Run the examples of README.md and docs/: every shell and Python block, in page order.

A page's blocks run one after another in a workspace of its own, a folder holding the
bundled samples under the names the pages use (`workspace`) and links to the checkout's
experiments/, data_scripts/, benchmarks/ and configs/, so that a model trained in one
block is there for the next and scripts run as from the repository's root.

    ```sh / ```bash      run by bash -e -o pipefail; it must exit with 0
    ```console           `$ COMMAND` lines, each followed by the output it must print
                         (standard output and error together; `...` matches anything)
    ```python            run; ```pycon blocks are doctests (`>>>`, output checked); the
                         Python blocks of a page share one namespace (a doctest sees it,
                         but its own names stay in the doctest)

An HTML comment on the line before a block sets how it is run:

    <!-- example: file=NAME -->     the block is the content of the file NAME (not run)
    <!-- example: status=N -->      a console block whose commands exit with N
    <!-- example: needs=CORPUS -->  needs a corpus of data_scripts (data/...): the tests
                                    only check its commands (the command and options
                                    exist); `experiments/docs_examples.sh` runs it
    <!-- example: setup -->         installation (pip, git, venv, cd): not run by the
                                    tests; CI runs the README's set-up commands itself

    python experiments/lib/doc_examples.py [--needs] [PAGE ...]
"""
import argparse
import contextlib
import doctest
import gzip
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUN = {"sh", "bash", "console", "python", "pycon"}
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S)
MARK = re.compile(r"<!--\s*example:\s+(?P<attrs>[^>]*?)\s*-->\s*$")
SETUP_LINE = re.compile(r"^(pip install|python3? -m (pip|venv)|python3? setup.py build_ext|git clone|cd |\. \S+/activate|source |#|$)")
TIMEOUT = 600


@dataclass
class Block:
    path: Path
    line: int
    lang: str
    text: str
    attrs: dict = field(default_factory=dict)

    @property
    def where(self):
        path = self.path.resolve()
        return f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{self.line}"

    @property
    def runs(self):
        return self.lang in RUN and not ({"needs", "setup", "file"} & set(self.attrs))


def pages():
    """README.md and every page of docs/, in a fixed order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path):
    """The fenced blocks of a page, with the attributes of the comment before each."""
    text = Path(path).read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        before = text[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        attrs = {}
        if mark := MARK.search(before):
            for item in mark.group("attrs").split():
                key, _, value = item.partition("=")
                attrs[key] = value
        indent = len(m.group("indent"))
        body = "\n".join(ln[indent:] for ln in m.group("body").splitlines()) + "\n"
        found.append(Block(Path(path), line, m.group("lang").lower(), body, attrs))
    return found


def problems(block):
    """What is wrong with a block's markup (not with what it does)."""
    unknown = set(block.attrs) - {"file", "status", "needs", "setup"}
    if unknown:
        return [f"{block.where}: unknown example attribute {sorted(unknown)[0]!r}"]
    if "setup" in block.attrs:
        bad = [ln for ln in block.text.splitlines() if not SETUP_LINE.match(ln.strip())]
        if bad:
            return [f"{block.where}: a setup block holds only installation commands, not {bad[0]!r}"]
    if "status" in block.attrs and block.lang != "console":
        return [f"{block.where}: status= is for console blocks"]
    return []


# ---------------------------------------------------------------------------- workspace

def _lines(name):
    from seqbil.samples import sample_path
    data = sample_path(name).read_bytes()
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8").splitlines()


def _sentences(lines):
    out, cur = [], []
    for ln in lines:
        if ln.strip():
            cur.append(ln)
        elif cur:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def _write(path, lines):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(ln + "\n" for ln in lines), encoding="utf-8")


def _conll(sentences):
    return [ln for s in sentences for ln in (*s, "")]


def workspace(folder):
    """Fill FOLDER with the files the pages' examples read, made of the bundled samples
    (CoNLL-2000 and pku ones): the names are those a user's corpus would have."""
    folder = Path(folder)
    train = _sentences(_lines("conll2000_train.txt"))
    test = _sentences(_lines("conll2000_test.txt"))
    _write(folder / "train.txt", _conll(train))
    _write(folder / "dev.txt", _conll(test[:40]))
    _write(folder / "test.txt", _conll(test))
    _write(folder / "input.txt", _conll([[" ".join(ln.split()[:-1]) for ln in s] for s in test]))
    words = _conll([[ln.split()[0] + " " + ln.split()[1] for ln in s] for s in train])  # word POS
    _write(folder / "pos_train.txt", words[:len(words) * 3 // 4])
    _write(folder / "pos_test.txt", words[len(words) * 3 // 4:])
    pku = _lines("pku_train.utf8")
    pku_test = _lines("pku_test.utf8")
    _write(folder / "pku_training.utf8", pku)
    _write(folder / "pku_dev.utf8", pku_test[:50])
    _write(folder / "pku_test_gold.utf8", pku_test)
    _write(folder / "pku_test.utf8", ["".join(ln.split()) for ln in pku_test])
    _write(folder / "pku_training_words.utf8", sorted({w for ln in pku for w in ln.split()}))
    # a second task's corpus (multi-task examples): the second half of the pku sample
    _write(folder / "sxu_training.utf8", pku[len(pku) // 2:])
    _write(folder / "my_words.txt", ["远东", "先行"])
    for name, out in (("conll2000_train.crfsuite.gz", "train.crfsuite.txt"),
                      ("conll2000_test.crfsuite.gz", "test.crfsuite.txt")):
        _write(folder / out, _lines(name))
    # raw text: one sentence per line, the words of the CoNLL sample and of pku
    raw = [" ".join(ln.split()[0] for ln in s) for s in train + test]
    (folder / "raw").mkdir(exist_ok=True)
    for i in range(2):
        with gzip.open(folder / "raw" / f"news{i}.txt.gz", "wt", encoding="utf-8") as f:
            f.writelines(s + "\n" for s in raw[i::2])
    _write(folder / "raw_zh.txt", ["".join(ln.split()) for ln in pku])
    checkout(folder)
    return folder


def checkout(folder):
    """The repository's script folders, linked into FOLDER: the pages' `bash experiments/...`
    and `python benchmarks/...` lines are run as from the root of a checkout."""
    for name in ("experiments", "data_scripts", "benchmarks", "configs"):
        if not (Path(folder) / name).exists():
            os.symlink(ROOT / name, Path(folder) / name)


# ------------------------------------------------------------------------------ running

class ExampleFailed(AssertionError):
    pass


def _env():
    env = dict(os.environ)
    env.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    env["COLUMNS"] = "100"
    env["NO_COLOR"] = "1"
    return env


def _matches(expected, got):
    """doctest's comparison: `...` matches anything, blank-space runs compare equal."""
    checker = doctest.OutputChecker()
    return checker.check_output(expected, got, doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)


def console_commands(text):
    """(command, expected output) pairs of a console block; `\\` continues a command."""
    pairs, command, expected = [], None, []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("$ "):
            if command is not None:
                pairs.append((command, "\n".join(expected)))
            command, expected = ln[2:], []
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1] + "\n" + lines[i]
        elif command is not None:
            expected.append(ln)
        i += 1
    if command is not None:
        pairs.append((command, "\n".join(expected)))
    return pairs


def run_shell(block, cwd):
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=cwd, env=_env(),
                       capture_output=True, text=True, timeout=TIMEOUT)
    if r.returncode != 0:
        raise ExampleFailed(f"{block.where}: exit status {r.returncode}\n--- stderr:\n{r.stderr[-3000:]}")


def run_console(block, cwd):
    status = int(block.attrs.get("status", 0))
    for command, expected in console_commands(block.text):
        r = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=TIMEOUT)
        if r.returncode != status:
            raise ExampleFailed(f"{block.where}: `{command}` exited with {r.returncode}, not {status}\n{r.stdout[-3000:]}")
        if expected.strip() and not _matches(expected.strip() + "\n", r.stdout.strip() + "\n"):
            raise ExampleFailed(f"{block.where}: `{command}` printed\n{r.stdout}\nnot\n{expected}")


def run_python(block, cwd, namespace):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        if block.lang == "pycon":
            parser = doctest.DocTestParser()
            test = parser.get_doctest(block.text, namespace, block.where, str(block.path), block.line)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            out = io.StringIO()
            runner.run(test, out=out.write, clear_globs=False)
            if runner.failures:
                raise ExampleFailed(f"{block.where}: doctest failed\n{out.getvalue()}")
        else:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(block.text, block.where, "exec"), namespace)  # noqa: S102 - the docs' own code
    except ExampleFailed:
        raise
    except Exception as e:  # noqa: BLE001 - reported with the block's place
        raise ExampleFailed(f"{block.where}: {type(e).__name__}: {e}") from e
    finally:
        os.chdir(old)


def run_page(path, cwd, needs=False):
    """Run a page's blocks in CWD (filled by `workspace`, or holding `data/` when NEEDS:
    then only the blocks that need a corpus run). Returns the number of blocks run."""
    namespace = {"__name__": "__docs__"}
    count = 0
    for block in blocks(path):
        if (msg := problems(block)):
            raise ExampleFailed(msg[0])
        if "file" in block.attrs:
            (Path(cwd) / block.attrs["file"]).write_text(block.text, encoding="utf-8")
            continue
        if block.lang not in RUN or "setup" in block.attrs or (("needs" in block.attrs) != needs):
            continue
        if block.lang in ("sh", "bash"):
            run_shell(block, cwd)
        elif block.lang == "console":
            run_console(block, cwd)
        else:
            run_python(block, cwd, namespace)
        count += 1
    return count


# ------------------------------------------------------------- blocks that need corpora

def check_commands(block):
    """Without running a block: every `seqbil` command is one of the CLI's, with options
    it has; every script it runs exists. Returns the problems."""
    from seqbil.cli import main as cli
    found = []
    text = re.sub(r"\\\n", " ", block.text)
    for ln in text.splitlines():
        ln = ln.split(" #", 1)[0].strip()
        if not ln or ln.startswith("#"):
            continue
        for part in re.split(r"\s*(?:\|\||&&|\||;)\s*", ln):
            try:
                words = shlex.split(part)
            except ValueError:
                continue
            if not words:
                continue
            if words[0] == "seqbil" and len(words) > 1:
                command = cli.commands.get(words[1])
                if command is None:
                    found.append(f"{block.where}: no command `seqbil {words[1]}`")
                    continue
                opts = {o for p in command.params for o in (*p.opts, *p.secondary_opts)} | {"-h", "--help"}
                for w in words[2:]:
                    if w.startswith("-") and w != "-" and w.split("=", 1)[0] not in opts:
                        found.append(f"{block.where}: `seqbil {words[1]}` has no option {w.split('=', 1)[0]}")
            elif words[0] in ("bash", "python", "python3") and len(words) > 1 and not words[1].startswith("-"):
                if not (ROOT / words[1]).exists():
                    found.append(f"{block.where}: {words[1]} does not exist")
    return found


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("pages", nargs="*", help="pages to run (default: README.md and docs/)")
    ap.add_argument("--needs", action="store_true",
                    help="run the blocks that need corpora, from a folder with data/ (installed by data_scripts/)")
    ap.add_argument("--data", default=str(ROOT / "data"), help="the corpora's folder (with --needs)")
    args = ap.parse_args(argv)
    total = 0
    for page in [Path(p).resolve() for p in args.pages] or pages():
        with tempfile.TemporaryDirectory(prefix="seqbil-docs-") as tmp:
            if args.needs:
                os.symlink(Path(args.data).resolve(), Path(tmp) / "data")
                checkout(tmp)
            else:
                workspace(tmp)
            n = run_page(page, tmp, needs=args.needs)
            total += n
            print(f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}: {n} examples ran", flush=True)
    print(f"{total} examples ran")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "experiments" / "lib"))
    sys.exit(main())
