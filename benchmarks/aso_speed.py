"""What learning a structure from unlabeled text costs (`seqbil aso`), end to end
through the shell: raw text in, structure file out.

    python benchmarks/aso_speed.py [--repeat 5] [--jobs 2] [--texts en,en2,zh] [--unlabeled DIR]

Runs `seqbil aso --jobs JOBS` with the default English splits on every file of
UNLABELED/en (default: data/unlabeled, then ../shared/data/unlabeled), and with
`--config cws` on UNLABELED/zh, REPEAT times each: wall time and peak RSS of each
process, and the split times the structure records. en2 is the English text twice
(each file given two times) with `--aux-min-count 4`: the same features and targets
as the text once at the default 2, so that the memory that grows with the text alone
shows. Writes results/speed/aso.json and aso.md.
"""
import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, header, run_measured, stats  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]


def unlabeled_dir(given):
    for d in ([Path(given)] if given else [ROOT / "data" / "unlabeled", ROOT.parent / "shared" / "data" / "unlabeled"]):
        if (d / "en").is_dir():
            return d
    sys.exit("unlabeled text not found (data_scripts/get_unlabeled.sh installs it; or give --unlabeled DIR)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--unlabeled", help="directory with en/ and zh/ raw text")
    ap.add_argument("--texts", default="en,en2,zh", help="which raw texts (default: en,en2,zh)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "aso.json"))
    args = ap.parse_args()
    src = unlabeled_dir(args.unlabeled)
    record = {**header(), "benchmark": "aso_speed", "repeat": args.repeat, "jobs": args.jobs, "rows": []}
    from seqbil.features.structure import Structure
    with tempfile.TemporaryDirectory() as tmp:
        texts = args.texts.split(",")
        for lang, folder, config, times in (("en", "en", [], 1), ("en2", "en", ["--aux-min-count", "4"], 2),
                                            ("zh", "zh", ["--config", "cws"], 1)):
            if lang not in texts:
                continue
            files = sorted((src / folder).glob("*.txt*")) * times
            out = Path(tmp) / f"{lang}.sbs"
            runs = []
            for k in range(args.repeat):
                print(f"aso_speed: {lang}, run {k + 1} of {args.repeat}", file=sys.stderr)
                wall, rss, _ = run_measured(SEQBIL + ["aso", "-q", *config, "--jobs", str(args.jobs), "--unlabeled",
                                                      *map(str, files), "--out", str(out)])
                runs.append((wall, rss))
            s = Structure.load(out)
            prov = s.provenance
            record["rows"].append({
                "text": lang, "files": [f.name for f in files], "options": config,
                "units": sum(f["units"] for f in prov["unlabeled"]), "unit": s.unit,
                "wall_s": stats([w for w, _ in runs]), "peak_rss_mib": stats([r for _, r in runs]),
                "splits": [{k: sp[k] for k in ("name", "attributes", "problems", "method", "seconds")}
                           for sp in prov["splits"]],
                "targets": prov["targets"], "dim": prov["dim"], "structure_mib": out.stat().st_size / 2 ** 20})
    from tables import publish
    publish(args.out, record)


if __name__ == "__main__":
    main()
