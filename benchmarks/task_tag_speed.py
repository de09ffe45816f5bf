"""What tagging one task of a multi-task model costs, against a single-task model of
the same features, end to end through the shell.

    python benchmarks/task_tag_speed.py [--repeat 5] [--copies 10] [--data DIR]

Trains, with configs/sighan2005.toml and learner sp: a model of pku alone, and one
model of pku, SXU, udc, wtb and zx as tasks (coupling as configured); and converts
the joint model's pku task into a model of its own (`seqbil convert --task pku`).
Then tags the pku test text, concatenated COPIES times, with each (`seqbil tag`, the
joint model with `--task pku`), alternating, REPEAT times each: wall time and peak
RSS of each process. The joint model's output and its converted task's are compared,
the same but for the rounding of float32 sums (the sentences that differ are
counted). Writes results/speed/task_tag.json and task_tag.md.
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record import ROOT, find_corpus, header, run_measured, stats  # noqa: E402

SEQBIL = [sys.executable, "-P", "-m", "seqbil"]
TASKS = {"pku": ("sighan2005", "pku_training.approx.utf8"), "sxu": ("sighan2008-sxu", "train.txt"),
         "udc": ("cws-more/udc", "train.txt"), "wtb": ("cws-more/wtb", "train.txt"),
         "zx": ("cws-more/zx", "train.txt")}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--copies", type=int, default=10, help="times the test set is concatenated (default 10)")
    ap.add_argument("--data", help="corpora as data_scripts/ installs them (default: data/, then ../shared/data)")
    ap.add_argument("--out", default=str(ROOT / "results" / "speed" / "task_tag.json"))
    args = ap.parse_args()
    record = {**header(), "benchmark": "task_tag_speed", "repeat": args.repeat, "copies": args.copies}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        train = {name: find_corpus(folder, file, args.data) for name, (folder, file) in TASKS.items()}
        test = find_corpus("sighan2005", "pku_test_gold.utf8", args.data)
        common = ["train", "-q", "--config", "sighan2005", "--learner", "sp"]
        models = {"pku alone": work / "single.sbm", "joint, --task pku": work / "joint.sbm",
                  "joint's pku, converted": work / "converted.sbm"}
        print("task_tag_speed: training", file=sys.stderr)
        subprocess.run(SEQBIL + common + ["--train", str(train["pku"]), "--model", str(models["pku alone"])],
                       check=True)
        subprocess.run(SEQBIL + common + [a for n, p in train.items() for a in ("--task", f"{n}={p}")]
                       + ["--model", str(models["joint, --task pku"])], check=True)
        subprocess.run(SEQBIL + ["convert", "--task", "pku", str(models["joint, --task pku"]),
                                 str(models["joint's pku, converted"])], check=True)
        lines = [line for line in test.read_text(encoding="utf-8").splitlines() if line.strip()] \
            if test.suffix != ".gz" else None
        if lines is None:
            import gzip
            lines = [line for line in gzip.decompress(test.read_bytes()).decode("utf-8").splitlines() if line.strip()]
        raw = work / "pku.input"
        raw.write_text("".join("".join(line.split()) + "\n" for line in lines) * args.copies, encoding="utf-8")
        tokens = sum(len("".join(line.split())) for line in lines) * args.copies
        runs = {system: [] for system in models}
        for _ in range(args.repeat):
            for system, model in models.items():
                task = ["--task", "pku"] if system.startswith("joint,") else []
                with open(raw, "rb") as fin, open(work / f"{model.stem}.out", "wb") as fout:
                    wall, rss, _ = run_measured(SEQBIL + ["tag", "-m", str(model), *task], stdin=fin, stdout=fout)
                runs[system].append((wall, rss))
        # float32 sums of shared and own weights round apart from the joint model's: count the sentences
        joint_out, converted_out = ((work / f"{n}.out").read_text(encoding="utf-8").splitlines()
                                    for n in ("joint", "converted"))
        differ = sum(a != b for a, b in zip(joint_out, converted_out))
        rows = []
        for system, values in runs.items():
            walls = [w for w, _ in values]
            rows.append({"system": system, "tag_s": stats(walls), "tokens_per_s": stats([tokens / w for w in walls]),
                         "peak_rss_mib": stats([r for _, r in values]),
                         "model_mib": models[system].stat().st_size / 2 ** 20})
    medians = {r["system"]: r["tokens_per_s"]["median"] for r in rows}
    record.update(tokens=tokens, rows=rows,
                  description=f"SIGHAN 2005 pku test text, concatenated {args.copies} times ({tokens:,} "
                              "characters); configs/sighan2005.toml, learner sp; joint: pku, SXU, udc, wtb and zx "
                              "as tasks",
                  converted_sentences_differing=differ, sentences=len(joint_out),
                  joint_vs_single=medians["joint, --task pku"] / medians["pku alone"],
                  converted_vs_single=medians["joint's pku, converted"] / medians["pku alone"])
    from tables import publish
    publish(args.out, record)


if __name__ == "__main__":
    main()
