"""The documentation site as MkDocs builds it (needs the docs extra; CI runs this after
installing it): no link from a server's root, every link of the 404 page resolves,
and each page's title is its name in the navigation."""
import html
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    # -P: the source tree in the current folder (without compiled kernels) must not hide the installed seqbil
    proc = subprocess.run([sys.executable, "-P", "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                          capture_output=True, text=True, env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def test_no_link_starts_at_a_servers_root(site):
    rooted = re.compile(r'(?:href|src)="/(?!/)')
    found = [str(p.relative_to(site)) for p in site.rglob("*.html") if rooted.search(p.read_text(encoding="utf-8"))]
    assert not found


def test_the_404_pages_links_resolve(site):
    page = (site / "404.html").read_text(encoding="utf-8")
    links = re.findall(r'(?:href|src)="([^"#?]+)', page)
    local = [link for link in links if "://" not in link and not link.startswith(("mailto:", "//"))]
    assert len(local) > 20
    for link in local:
        target = site / html.unescape(link)
        assert target.exists() and (target.is_file() or (target / "index.html").exists()), link


def test_page_titles_are_their_names_in_the_navigation(site):
    import yaml

    def pages(items):
        for item in items:
            for name, value in item.items():
                yield from pages(value) if isinstance(value, list) else [(name, value)]

    class Loader(yaml.SafeLoader):
        pass
    Loader.add_multi_constructor("", lambda loader, suffix, node: None)  # the theme's !! tags
    nav = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)["nav"]
    for name, path in pages(nav):
        if path == "index.md":
            continue
        source = ROOT / "results" / "README.md" if path == "results/index.md" else ROOT / "docs" / path
        title = next(line[2:].strip() for line in source.read_text(encoding="utf-8").splitlines()
                     if line.startswith("# "))
        assert title == name, (path, title, name)
