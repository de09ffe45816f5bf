"""The README: short, the two set-up commands first, its Python example runs, its tables
are generated."""
import contextlib
import io
import os
import re
from pathlib import Path

import pytest

from seqbil import params

README = Path(__file__).resolve().parent.parent / "README.md"


def block(name):
    text = README.read_text(encoding="utf-8")
    m = re.search(rf"<!-- {name}:begin -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert m, f"README has no {name} block"
    return m.group(1)


def test_parameter_table_is_generated_from_the_table():
    """The site's parameter page holds the whole generated table."""
    page = (README.parent / "docs" / "reference" / "parameters.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- params:begin -->\n(.*?)<!-- params:end -->", page, re.S)
    assert m and m.group(1) == params.describe("markdown")


def test_readme_is_short_and_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    first = re.search(r"```sh\n(.*?)```", text, re.S).group(1).splitlines()
    assert first[0].startswith("pip install . && seqbil train") and first[1].startswith('pip install ".[test]" && pytest')


@pytest.mark.filterwarnings("ignore")
def test_python_example_runs(tmp_path):
    code = re.search(r"```python\n(.*?)```", block("example"), re.S).group(1)
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README example", "exec"), {})
    finally:
        os.chdir(cwd)
    printed = out.getvalue().splitlines()
    assert (tmp_path / "chunker.sbm").is_file()
    labels = eval(printed[0])  # noqa: S307 - our own printed list
    assert len(labels) == 4 and all(y == "O" or y[:2] in ("B-", "I-") for y in labels)
    assert 50 < float(printed[2]) <= 100
    words = eval(printed[3])  # noqa: S307
    assert "".join(words) == "扬帆远东做与中国合作的先行" and len(words) > 1
    assert eval(printed[4]) == ["B-NP", "B-VP", "O"]  # noqa: S307 - learned from ten copies of it


def test_result_tables_are_generated_from_their_records():
    import importlib.util
    spec = importlib.util.spec_from_file_location("tables", README.parent / "benchmarks" / "tables.py")
    tables = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tables)
    blocks = tables.readme_blocks(README.read_text(encoding="utf-8"))
    assert blocks, "README has no generated tables"
    for name, content in blocks:
        assert content == tables.render(name), f"README table {name} differs from its record"


def test_results_page_is_generated_from_the_records():
    """results/README.md is what experiments/lib/results_readme.py makes of the records
    under results/ (no typed figures)."""
    import importlib.util
    path = README.parent / "experiments" / "lib" / "results_readme.py"
    spec = importlib.util.spec_from_file_location("results_readme", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (README.parent / "results" / "README.md").read_text(encoding="utf-8") == module.build()
