"""Every example of README.md and docs/ runs, on the bundled samples, and prints what the
page shows (experiments/lib/doc_examples.py says how a page marks its blocks)."""
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, ROOT / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


docs = _load("doc_examples", "experiments/lib/doc_examples.py")
PAGES = docs.pages()


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    return docs.workspace(tmp_path_factory.mktemp("workspace"))


def _fresh(samples, tmp_path):
    import shutil
    shutil.copytree(samples, tmp_path, dirs_exist_ok=True)
    return tmp_path


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_page_examples_run(page, samples, tmp_path):
    runnable = [b for b in docs.blocks(page) if b.runs]
    assert docs.run_page(page, _fresh(samples, tmp_path)) == len(runnable)


def _api_modules():
    """The modules whose objects the Python API page documents (`::: module.name`)."""
    import importlib
    names = re.findall(r"^::: ([\w.]+)", (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8"), re.M)
    found = []
    for name in names:
        parts = name.split(".")
        for cut in range(len(parts), 0, -1):  # the longest prefix that is a module
            try:
                importlib.import_module(".".join(parts[:cut]))
            except ImportError:
                continue
            found.append(".".join(parts[:cut]))
            break
    return sorted(set(found))


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("module", _api_modules())
def test_api_reference_examples_run(module, tmp_path, monkeypatch):
    """The Examples sections of the docstrings the API page shows are doctests that pass."""
    import doctest
    import importlib
    monkeypatch.chdir(tmp_path)
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_every_block_is_run_or_marked():
    """A shell or Python block the tests do not run says why: it needs a corpus, or it
    installs; its markup is valid."""
    found = []
    for page in PAGES:
        for b in docs.blocks(page):
            found += docs.problems(b)
            if b.lang in ("", "shell", "py", "python3", "zsh"):
                found.append(f"{b.where}: name the block's language (sh, console, python, pycon, toml, text)")
    assert not found, "\n".join(found)


def test_blocks_needing_corpora_name_real_commands():
    needing = [b for p in PAGES for b in docs.blocks(p) if "needs" in b.attrs]
    found = [msg for b in needing for msg in docs.check_commands(b)]
    assert not found, "\n".join(found)


def test_site_tables_are_generated_from_their_records():
    tables = _load("tables", "benchmarks/tables.py")
    for page in PAGES:
        for name, content in tables.readme_blocks(page.read_text(encoding="utf-8")):
            assert content == tables.render(name), f"{page.relative_to(ROOT)}: table {name} differs from its record"


def test_parameter_tables_are_generated():
    from seqbil import params
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for block in re.findall(r"<!-- params:begin -->\n(.*?)<!-- params:end -->", text, re.S):
            assert block == params.describe("markdown"), f"{page.relative_to(ROOT)}: parameter table is stale"
        for learner, block in re.findall(r"<!-- params:(?!begin)(\w+) -->\n(.*?)<!-- /params -->", text, re.S):
            assert block == params.describe("markdown", learner), f"{page.relative_to(ROOT)}: {learner}'s table is stale"


# The harness itself: a stale example fails.

def _page(tmp_path, text):
    page = tmp_path / "page.md"
    page.write_text(text, encoding="utf-8")
    return page


def test_a_stale_output_fails(samples, tmp_path):
    page = _page(tmp_path, "```console\n$ echo 1 2 3\n1 2 4\n```\n")
    with pytest.raises(docs.ExampleFailed, match="printed"):
        docs.run_page(page, _fresh(samples, tmp_path / "w"))
    page = _page(tmp_path, "```console\n$ echo 1 2 3\n1 ... 3\n```\n")
    assert docs.run_page(page, _fresh(samples, tmp_path / "w")) == 1


def test_a_failing_command_fails(samples, tmp_path):
    page = _page(tmp_path, "```sh\nseqbil tag -m missing.sbm < input.txt\n```\n")
    with pytest.raises(docs.ExampleFailed, match="exit status 2"):
        docs.run_page(page, _fresh(samples, tmp_path / "w"))
    page = _page(tmp_path, "<!-- example: status=2 -->\n```console\n$ seqbil tag -m missing.sbm < input.txt\n"
                           "...missing.sbm...\n```\n")
    assert docs.run_page(page, _fresh(samples, tmp_path / "w")) == 1


def test_a_stale_doctest_fails(samples, tmp_path):
    page = _page(tmp_path, "```pycon\n>>> 1 + 1\n3\n```\n")
    with pytest.raises(docs.ExampleFailed, match="doctest"):
        docs.run_page(page, _fresh(samples, tmp_path / "w"))


def test_a_renamed_option_is_found(tmp_path):
    page = _page(tmp_path, "<!-- example: needs=sighan2005 -->\n```sh\n"
                           "seqbil train --config cws --trian data/x.utf8 --model m.sbm\n"
                           "bash experiments/no_such_script.sh\nseqbil tga -m m.sbm\n```\n")
    found = docs.check_commands(docs.blocks(page)[0])
    assert any("no option --trian" in f for f in found)
    assert any("no_such_script.sh does not exist" in f for f in found)
    assert any("no command `seqbil tga`" in f for f in found)
    good = _page(tmp_path, "<!-- example: needs=x -->\n```sh\nseqbil train --config cws --train a --model m.sbm\n```\n")
    assert docs.check_commands(docs.blocks(good)[0]) == []


def test_setup_blocks_only_install(tmp_path):
    page = _page(tmp_path, "<!-- example: setup -->\n```sh\npip install .\nseqbil train\n```\n")
    assert docs.problems(docs.blocks(page)[0])
    page = _page(tmp_path, "<!-- example: setup -->\n```sh\ngit clone URL seqbil\ncd seqbil\npip install -e .\n```\n")
    assert not docs.problems(docs.blocks(page)[0])
