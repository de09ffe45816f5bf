"""What template functions cost at encoding time: the templates of a config with their
functions (%x[0,0]|lower|suffix:3), against the same templates with the functions
taken out (same number of templates, same cells read), on one corpus.

Each measurement runs in its own process, REPEAT times (default 5), alternating the
two; reported as min / median / max. "encode" is building the attribute dictionary
and the encoded training set from sentences already read (FeatureIndex.build);
"read + encode" adds reading the file.

    python benchmarks/encode_speed.py [--config pos] [--data DIR] [--repeat 5]

Writes results/speed/encode.json (the record) and encode.md (its table).
"""
import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from record import ROOT, header, stats, write_record

CORPUS = ("conll2000", "train.txt")


def once(config, train, strip, label_column):
    """One measurement, in this process: JSON on stdout."""
    from seqbil import params
    from seqbil.features.dataset import encode
    from seqbil.features.templates import TemplateSet, parse_template
    from seqbil.formats import make_format, read_corpus

    settings = params.resolve(params.find_config(config))
    texts = settings.templates
    if strip:
        texts = [re.sub(r"\|[A-Za-z_]+(?::\d+)?", "", t) for t in texts]
    templates = TemplateSet(parse_template(t) for t in texts)
    t0 = time.perf_counter()
    sentences = read_corpus(make_format("conll", None, label_column), train, "utf-8")
    t1 = time.perf_counter()
    data, index = encode(sentences, templates, None, sorted({y for s in sentences for y in s.labels}))
    t2 = time.perf_counter()
    print(json.dumps({"read_s": t1 - t0, "encode_s": t2 - t1, "tokens": data.n_positions,
                      "templates": len(templates.templates), "attributes": index.n_attributes(0) + index.n_attributes(1)}))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--config", default="pos", help="bundled config or TOML file whose templates are measured")
    ap.add_argument("--data", help="folder with the corpora as data_scripts/ installs them (default: data/, "
                    "then ../shared/data)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--label-column", type=int, default=-1)
    ap.add_argument("--out", default=str(ROOT / "results" / "speed"))
    ap.add_argument("--once", choices=["functions", "plain"], help=argparse.SUPPRESS)
    ap.add_argument("--train", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.once:
        return once(args.config, args.train, args.once == "plain", args.label_column)

    from train_speed import find, plain
    record = header()
    runs = {"functions": [], "plain": []}
    with tempfile.TemporaryDirectory() as tmp:
        train = plain(find(*CORPUS, args.data), Path(tmp))
        for _ in range(args.repeat):
            for kind in runs:
                out = subprocess.run([sys.executable, __file__, "--once", kind, "--config", args.config,
                                      "--train", str(train), "--label-column", str(args.label_column)],
                                     capture_output=True, text=True, check=True, cwd=Path(__file__).parent)
                runs[kind].append(json.loads(out.stdout))
    rows = []
    for kind, rs in runs.items():
        rows.append({"templates": kind, "n_templates": rs[0]["templates"], "attributes": rs[0]["attributes"],
                     "tokens": rs[0]["tokens"], "encode_s": stats([r["encode_s"] for r in rs]),
                     "read_and_encode_s": stats([r["read_s"] + r["encode_s"] for r in rs])})
    ratio = rows[0]["encode_s"]["median"] / rows[1]["encode_s"]["median"]
    record.update({"benchmark": "encode_speed", "config": args.config, "corpus": "/".join(CORPUS),
                   "repeat": args.repeat, "rows": rows, "encode_ratio_median": ratio})
    out = Path(args.out)
    write_record(out / "encode.json", record)
    from tables import encode_table
    (out / "encode.md").write_text(encode_table(record), encoding="utf-8")
    print(encode_table(record))


if __name__ == "__main__":
    sys.exit(main())
