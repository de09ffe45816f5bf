"""The layout of the package, read from its source: what a newcomer can rely on.

Every package is in the wheel; no file is over 600 lines nor a function over 100;
imports never go round in a circle between files; no code outside formats/ compares a
format's name; no name with a leading underscore is taken from another module.
"""
import ast
import tomllib
from pathlib import Path

import pytest

from seqbil.formats import FORMATS

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "seqbil"
SOURCES = sorted(PACKAGE.rglob("*.py"))
pytestmark = pytest.mark.skipif(not (ROOT / "pyproject.toml").exists(), reason="needs the source tree")


def module_name(path):
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def tree(path):
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def imports(path, modules):
    """The seqbil modules a file imports, at its top or inside functions: for `from X
    import y`, module X.y when there is one, else X."""
    name, found = module_name(path), set()
    here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(here[:len(here) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            found.update(f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    # the packages a module is in run before it whatever it imports: no arrow to them
    return {m for m in found if m in modules and m != name and not name.startswith(m + ".")}


def test_every_package_is_in_the_wheel():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert packages <= listed, f"not in pyproject.toml's packages: {sorted(packages - listed)}"


def test_no_file_over_600_lines_and_no_function_over_100():
    long_files = [f"{p.relative_to(ROOT)}: {n}" for p in SOURCES if (n := len(p.read_text().splitlines())) > 600]
    long_functions = [f"{p.relative_to(ROOT)}:{f.lineno} {f.name}: {f.end_lineno - f.lineno + 1}"
                      for p in SOURCES for f in ast.walk(tree(p))
                      if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.end_lineno - f.lineno >= 100]
    assert not long_files and not long_functions


def test_no_import_circle_between_files():
    modules = {module_name(p): p for p in SOURCES}
    edges = {m: imports(p, modules) for m, p in modules.items()}
    seen, on_path, circles = set(), [], []

    def visit(m):
        if m in on_path:
            circles.append(on_path[on_path.index(m):] + [m])
            return
        if m in seen:
            return
        seen.add(m)
        on_path.append(m)
        for t in sorted(edges[m]):
            visit(t)
        on_path.pop()
    for m in sorted(edges):
        visit(m)
    assert not circles, " ; ".join(" -> ".join(c) for c in circles)


def test_no_format_name_is_compared_outside_formats():
    names = set(FORMATS)
    found = []
    for p in SOURCES:
        if p.parent.name == "formats":
            continue
        for node in ast.walk(tree(p)):
            if isinstance(node, ast.Compare):
                values = [node.left, *node.comparators]
                values += [e for v in values if isinstance(v, (ast.Tuple, ast.List, ast.Set)) for e in v.elts]
                if any(isinstance(v, ast.Constant) and v.value in names for v in values):
                    found.append(f"{p.relative_to(ROOT)}:{node.lineno}")
    assert not found


def test_no_private_name_is_taken_from_another_module():
    found = []
    for p in SOURCES:
        t = tree(p)
        own = {n.name for n in ast.walk(t) if isinstance(n, (ast.FunctionDef, ast.ClassDef))} | \
            {n.attr for n in ast.walk(t) if isinstance(n, ast.Attribute)
             and isinstance(n.value, ast.Name) and n.value.id == "self" and isinstance(n.ctx, ast.Store)}
        for node in ast.walk(t):
            if isinstance(node, ast.ImportFrom) and node.module != "__future__":
                found += [f"{p.relative_to(ROOT)}:{node.lineno} {a.name}" for a in node.names
                          if a.name.startswith("_") and not a.name.startswith("__")
                          and a.name not in ("_kernels", "_version")]
            elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__") \
                    and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")) \
                    and node.attr not in own:
                found.append(f"{p.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert not found
