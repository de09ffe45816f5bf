"""MkDocs hook: the results under results/ become the site's Results pages.

results/README.md (generated from the records by experiments/lib/results_readme.py)
is the page results/index.md; the tables, plots and records it links to are served
beside it, so that neither is copied into docs/.
"""
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
