"""MkDocs hook: the results under results/ become the site's Results pages.

results/README.md (generated from the records by experiments/lib/results_readme.py)
is the page results/index.md; the tables, plots and records it links to are served
beside it, so that neither is copied into docs/.
"""
import re
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"
KINDS = {".md", ".png", ".csv", ".json", ".txt"}


def on_files(files, config):
    for path in sorted(RESULTS.rglob("*")):
        rel = path.relative_to(RESULTS)
        if not path.is_file() or path.suffix not in KINDS or "runs" in rel.parts or rel.parts[0] == "quick":
            continue
        uri = "results/" + ("index.md" if rel.as_posix() == "README.md" else rel.as_posix())
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    return files


ROOTED = re.compile(r'((?:href|src)=")/(?!/)')


def on_post_build(config):
    """Without a site_url, MkDocs writes the 404 page's links from the server's root
    (/assets/..., /learners/), which break wherever the site is not at a domain's root
    (a subfolder, file://). They are made relative to the site's top folder, where the
    page itself is: right wherever the site is put, for the page as served at its top."""
    if config.get("site_url"):
        return
    page = Path(config["site_dir"]) / "404.html"
    if page.exists():
        html = ROOTED.sub(r"\1./", page.read_text(encoding="utf-8"))
        html = html.replace('"base": "/"', '"base": "."').replace('"search": "/assets/', '"search": "./assets/')
        page.write_text(html, encoding="utf-8")
