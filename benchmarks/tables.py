"""Markdown tables generated from the JSON records of the benchmarks, and the README
blocks that copy them.

    python benchmarks/tables.py --readme     # rewrite the generated blocks of README.md and docs/

(and the option table between <!-- params:begin --> and <!-- params:end -->, from
seqbil's parameter table).

A README block `<!-- table:NAME -->` ... `<!-- /table -->` holds the table of
results/NAME.json (e.g. table:speed/conll2000); a test checks that every block is
what this script makes of its record.
"""
import argparse
import json
import re
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BLOCK = re.compile(r"(<!-- table:(\S+) -->\n)(.*?)(<!-- /table -->)", re.S)
# benchmarks/suite.py's held-out corpora (data_scripts/get_heldout.sh), and the task each is judged on
HELDOUT = {"es-conll2002": "ner", "nl-conll2002": "ner", "af-afribooms": "pos", "mt-mudt": "pos"}


def spread(s, fmt="{:.2f}"):
    """median (min–max) of a stats dict."""
    if s is None:
        return "–"
    return f"{fmt.format(s['median'])} ({fmt.format(s['min'])}–{fmt.format(s['max'])})"


def provenance(record):
    m = record["machine"]
    commit = record["commit"][:12] + ("+modified" if record["commit"].endswith("+modified") else "")
    runs = (f"{record['repeat']} runs each, median (min–max)." if "repeat" in record else
            "one run (its figures are not timings repeated for comparison).")
    return f"`{record['command']}` at commit {commit}, {record['date']}, {m['cpu']} ({m['cores']} cores); {runs}"


def speed_table(record):
    rows = ["| system | train, end to end (s) | training passes only (s) | peer's feature building in Python (s) "
            "| seqbil read + encode (s) | train peak RSS (MiB) | model (MiB) | tagging, tokens/s | test "
            f"{record['rows'][0]['metric']} |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in record["rows"]:
        rows.append(" | ".join([
            f"| {r['system']}", spread(r["train_end_to_end_s"]), spread(r["train_passes_s"]),
            spread(r.get("peer_features_s")), spread(r.get("read_and_encode_s")),
            spread(r["train_peak_rss_mib"], "{:.0f}"), f"{r['model_mib']:.1f}",
            spread(r["tag_tokens_per_s"], "{:,.0f}"), f"{r['score']:.2f} |"]))
    notes = ("seqbil's tagging is `seqbil tag` end to end through the shell; crfsuite's is its attribute "
             "building plus tagging in Python. Training passes only: seqbil's per-epoch seconds (`--log`), "
             "crfsuite's training call.")
    return f"{record['description']}, {record['epochs']} epochs.\n\n" + "\n".join(rows) + \
        f"\n\n{notes} {provenance(record)}\n"


def encode_table(record):
    rows = ["| templates | count | attributes | encode (s) | read + encode (s) |", "| --- | --- | --- | --- | --- |"]
    for r in record["rows"]:
        rows.append(f"| {r['templates']} | {r['n_templates']} | {r['attributes']:,} | {spread(r['encode_s'])} | "
                    f"{spread(r['read_and_encode_s'])} |")
    return (f"Encoding {record['corpus']} ({record['rows'][0]['tokens']:,} tokens) with the templates of "
            f"configs/{record['config']}.toml (functions) and the same templates without their functions (plain). "
            f"Functions cost {record['encode_ratio_median']:.2f}× the plain encoding time (medians).\n\n"
            + "\n".join(rows) + f"\n\n{provenance(record)}\n")


def tagging_rows(runs, first):
    """The Markdown rows of tagging runs: time, tokens per second, peak RSS, model size."""
    rows = [f"| {first} | tagging (s) | tokens/s | peak RSS (MiB) | model (MiB) |", "| --- | --- | --- | --- | --- |"]
    for r in runs:
        rows.append(f"| {r['system']} | {spread(r['tag_s'])} | {spread(r['tokens_per_s'], '{:,.0f}')} | "
                    f"{spread(r['peak_rss_mib'], '{:.0f}')} | {r['model_mib']:.1f} |")
    return rows


def tag_table(record):
    out = []
    for corpus, c in record["corpora"].items():
        rows = tagging_rows(c["rows"], "system")
        ratios = [f"seqbil is {c['speedup_vs_crf_test']:.2f}× crf_test's tokens per second"] \
            if c["speedup_vs_crf_test"] else []
        ratios.append(f"--jobs 2 is {c['jobs2_vs_jobs1']:.2f}× --jobs 1 (same output)")
        crfpp = (f" CRF++'s model: {c['crfpp_iterations']} L-BFGS iterations (its tagging cost does not depend "
                 f"on how far it was trained)." if c["crfpp_iterations"] else "")
        out.append(f"{c['description']}, concatenated {c['copies']} times ({c['tokens']:,} tokens); "
                   + "; ".join(ratios) + " (medians). Start-up: `seqbil tag` of one sentence "
                   f"{spread(c['startup_one_sentence_process_s'])} s as a whole process; loading the model and "
                   f"tagging a first sentence {spread(c['load_and_first_sentence_s'], '{:.3f}')} s in a process "
                   f"that has imported seqbil.{crfpp}\n\n" + "\n".join(rows) + "\n")
    built = record.get("crfpp")
    crfpp = f"CRF++ ({built['version']}) built {built['build']}. " if built else ""
    return "\n".join(out) + f"\nEnd to end through the shell (raw text in, labels out); crf_test reads its " \
        f"column format ready-made. {crfpp}{provenance(record)}\n"


def size_table(record):
    out = []
    for c in record["corpora"].values():
        rows = ["| learner | weights | prune | model (MiB) | attributes | non-zero weights | test score |",
                "| --- | --- | --- | --- | --- | --- | --- |"]
        for r in c["rows"]:
            rows.append(f"| {r['model']} | {r['precision']} | {r['prune']:g} | {r['mib']:.1f} | {r['attributes']:,} | "
                        f"{r['nonzero_weights']:,} | {r['score']:.2f} |")
        out.append(f"{c['description']}.\n\n" + "\n".join(rows) + "\n")
    m = record["machine"]
    return "\n".join(out) + (f"\nprune: `seqbil convert --prune EPS` of the float32 model. `{record['command']}` at "
                             f"commit {record['commit'][:12]}, {record['date']}, {m['cpu']} ({m['cores']} cores); "
                             f"sizes and scores are deterministic, measured once.\n")


def task_tag_table(record):
    rows = tagging_rows(record["rows"], "model")
    return (f"Tagging one task of a multi-task model: {record['description']}. The joint model tagging pku runs at "
            f"{record['joint_vs_single']:.2f}× the tokens per second of the model of pku alone; its pku task "
            f"converted into a model of its own (`seqbil convert --task pku`; its output differs on "
            f"{record['converted_sentences_differing']} of {record['sentences']} sentences, from float32 rounding) at "
            f"{record['converted_vs_single']:.2f}× (medians).\n\n" + "\n".join(rows)
            + f"\n\nEnd to end through the shell (raw text in, words out). {provenance(record)}\n")


def aso_table(record):
    rows = ["| raw text | options | units | `seqbil aso` wall (s) | peak RSS (MiB) | structure file (MiB) | splits "
            "(features, problems, seconds of the last run) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    peaks = {}
    for r in record["rows"]:
        files = list(dict.fromkeys(r["files"]))
        times = len(r["files"]) // max(len(files), 1)
        splits = "; ".join(f"{s['name']}: {s['attributes']:,}, {s['problems']}, {s['seconds']:.0f} s"
                           for s in r["splits"])
        peaks[r["text"]] = r["peak_rss_mib"]["median"]
        rows.append(f"| {r['text']} ({', '.join(files)}{f', each {times} times' if times > 1 else ''}) | "
                    f"{' '.join(r.get('options', [])) or '–'} | {r['units']:,} {r['unit']}s | {spread(r['wall_s'])} | "
                    f"{spread(r['peak_rss_mib'], '{:.0f}')} | {r['structure_mib']:.1f} | {splits} |")
    first = record["rows"][0]
    growth = ""
    if "en" in peaks and "en2" in peaks:
        growth = (f" The English text twice, with the features and targets of the text once, takes "
                  f"{100 * (peaks['en2'] / peaks['en'] - 1):+.1f}% peak memory (medians).")
    return (f"Learning a structure from unlabeled text with `seqbil aso --jobs {record['jobs']}` "
            f"({first['targets']} targets, h = {first['dim']} per split), end to end (raw text in, structure "
            f"file out).{growth}\n\n" + "\n".join(rows) + f"\n\n{provenance(record)}\n")


def aso_shards_table(record):
    rows = ["| system | peak RSS of the process run (MiB) | peak RSS of each worker (MiB) | held-out F1 of a chunker "
            "with the structure | test F1, mean ± sd over seeds |", "| --- | --- | --- | --- | --- |"]
    f1, test = record["held_out_f1"], record["test_f1"]

    def mean_sd(v):
        return f"{statistics.mean(v):.2f} ± {statistics.stdev(v):.2f}" if len(v) > 1 else f"{v[0]:.2f}"
    for r, key in zip(record["rows"], ("one process", "--shards 2")):
        workers = ", ".join(f"{w:.0f}" for w in r["worker_peaks_mib"]) or "–"
        rows.append(f"| {r['system']} | {r['driver_peak_mib']:.0f} | {workers} | {f1[key]:.2f} | "
                    f"{mean_sd(test[key])} |")
    rows.append(f"| no structure | – | – | {f1['none']:.2f} | {mean_sd(test['none'])} |")
    splits = ["| split | how its problems were learned | same features | principal angles between the two "
              "subspaces, max / median / mean (degrees) |", "| --- | --- | --- | --- |"]
    for s in record["splits"]:
        a = s["angles_deg"]
        splits.append(f"| {s['name']} | {s['method']} | {'yes' if s['same_index'] else 'no'} | {a['max']:.2f} / "
                      f"{a['median']:.2f} / {a['mean']:.2f} |")
    return (f"`seqbil aso --shards 2` on a local Dask cluster of 2 workers (one thread each) against `seqbil aso "
            f"--jobs 2` in one process, on the English raw text ({', '.join(record['files'])}), one run each. "
            f"Held-out F1: CoNLL-2000's training set, the first 90% to train (bol), the last 10% scored, the "
            f"structure at scale {record['scale']} and window {record['window']}; test F1: trained on the whole "
            f"training set, seeds {', '.join(map(str, record['seeds']))}.\n\n" + "\n".join(rows) +
            "\n\n" + "\n".join(splits) + f"\n\n{provenance(record)}\n")


def rpa_table(record):
    rows = ["| system | one epoch (s) | epoch against sp | training passes (s) | train, end to end (s) | read + "
            "encode (s) | train peak RSS (MiB) | model (MiB) | test chunk F1 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in record["rows"]:
        rows.append(f"| {r['system']} | {spread(r['epoch_s'])} | {r['epoch_vs_sp']:.2f}× | {spread(r['train_passes_s'])} "
                    f"| {spread(r['train_end_to_end_s'])} | {spread(r['read_and_encode_s'])} | "
                    f"{spread(r['train_peak_rss_mib'], '{:.0f}')} | {r['model_mib']:.1f} | {r['score']:.2f} |")
    return (f"An epoch of rpa with k = {record['k']} word vectors (%emb[-1,0], %emb[0,0], %emb[1,0] over random "
            f"vectors) against sp on the same sparse templates (configs/conll2000.toml), CoNLL-2000's training set, "
            f"{record['epochs']} epochs, averaging on. One epoch: the learner's passes over the epochs (`--log`).\n\n"
            + "\n".join(rows) + f"\n\n{provenance(record)}\n")


def dask_tag_table(record):
    rows = ["| system | wall (s) | characters/s | against one worker |", "| --- | --- | --- | --- |"]
    for r in record["rows"]:
        rows.append(f"| {r['system']} | {spread(r['wall_s'])} | {spread(r['chars_per_s'], '{:,.0f}')} | "
                    f"{r['vs_one_worker']:.2f}× |")
    small, large = record["memory"]
    mem = (f"Peak RSS of each of 2 workers: {', '.join(f'{m:.0f}' for m in small['worker_peak_rss_mib'])} MiB "
           f"tagging one file of {small['chars']:,} characters, {', '.join(f'{m:.0f}' for m in large['worker_peak_rss_mib'])} "
           f"MiB for one of {large['chars']:,}.")
    return (f"Tagging {record['chars']:,} characters ({record['bytes'] / 2 ** 20:,.0f} MiB; the SIGHAN 2005 pku test "
            f"text repeated) in {record['files']} files with a pku sp model, end to end (raw files in, tagged files "
            f"out, cluster start-up included), {record['partition_mib']} MiB partitions; every run's outputs are byte "
            f"for byte `seqbil tag` of the joined input.\n\n" + "\n".join(rows)
            + f"\n\n{mem} A run on a one-line input (start-up and shut-down of a 2-worker local cluster): "
            f"{spread(record['startup_s'])} s. The driver joins part files at {spread(record['join_mib_per_s'], '{:,.0f}')} "
            f"MiB/s. {provenance(record)}\n")


def ipm_table(record):
    rows = ["| learner | training | train, end to end (s) | one epoch (s) | epoch against one process | test F1 | "
            "F1 against one process | sent by the shards per epoch (MiB) | mix sent back per epoch (MiB, to each "
            "shard) | entries mixed per epoch |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    mib = "{:.2f}"
    for r in record["rows"]:
        comm = [spread({k: v / 2 ** 20 for k, v in r[key].items() if k != "runs"}, mib) if key in r else "–"
                for key in ("delta_bytes_per_epoch", "mixed_bytes_per_epoch")]
        rows.append(f"| {r['learner']} | {r['system']} | {spread(r['wall_s'])} | {spread(r['epoch_s'], '{:.3f}')} | "
                    f"{r['epoch_vs_one_process']:.2f}× | {r['f1']:.2f} | {r['f1_vs_one_process']:+.2f} | "
                    f"{comm[0]} | {comm[1]} | "
                    f"{spread(r['entries_mixed_per_epoch'], '{:,.0f}') if 'entries_mixed_per_epoch' in r else '–'} |")
    split = ["| learner | training | slowest shard's pass (s) | rest of the shard's work (s) | mix on the driver (s) | "
             "messages and scheduling (s) | epoch (s) | epoch in one process (s) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    serial = {r["learner"]: r["seconds_per_epoch"]["median"] for r in record["rows"] if r["system"] == "one process"}
    for r in record["rows"]:
        if "pass_s_per_epoch" in r:
            parts = [r[f"{k}_per_epoch"]["median"] for k in ("pass_s", "shard_s", "mix_s", "epoch_s")]
            split.append(f"| {r['learner']} | {r['system']} | {parts[0]:.3f} | {parts[1] - parts[0]:.3f} | "
                         f"{parts[2]:.3f} | {parts[3] - parts[1] - parts[2]:.3f} | {parts[3]:.3f} | "
                         f"{serial[r['learner']]:.3f} |")
    rows += ["", "Where an epoch of the sharded runs goes (medians over the epochs of the first run; the rest of "
             "the shard's work: taking the mix, finding and gathering the changed entries):", ""] + split
    return (f"Iterative parameter mixing on {record['shards']} shards (`--shards {record['shards']}`, a local Dask "
            f"cluster of as many workers) against training in one process: SIGHAN 2005 pku (stand-in training set), "
            f"configs/sighan2005.toml, {record['rows'][0]['epochs']} epochs, temperature 1 (a run on shards fits none). One epoch: the mean of `--log`'s seconds over "
            f"the run's epochs (for the shards: the passes, the messages both ways and the mix; the first epochs, "
            f"with the most mistakes, send the most); end to end includes reading, encoding, the "
            f"cluster's start-up and saving. Rows with one run are timed once; the communication columns give the "
            f"median (min–max) over the epochs of the first run.\n\n" + "\n".join(rows) + f"\n\n{provenance(record)}\n")


def calibration_table(record):
    rows = ["| corpus | learner | test F1 | token accuracy | temperature | ECE at T = 1 | ECE at T | "
            "token NLL at T = 1 | token NLL at T | chosen on the held-out tenth |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in record["rows"]:
        chosen = ", ".join(f"{k} = {v:g}" for k, v in r["chosen"].items()) or "–"
        rows.append(f"| {r['corpus']} | {r['learner']} | {r['f1']:.2f} | {100 * r['fitted_accuracy']:.2f} | "
                    f"{r['temperature']:.3g} | {r['t1_ece']:.4f} | {r['fitted_ece']:.4f} | {r['t1_nll']:.4f} | "
                    f"{r['fitted_nll']:.4f} | {chosen} |")
    m = record["machine"]
    return (f"Calibration of the token marginals on the test sets: expected calibration error over "
            f"{record['bins']} equal-width bins of the Viterbi label's marginal, and the gold labels' negative "
            f"log-likelihood per token, at temperature 1 and at the model's own (a CRF's is 1; the online learners' "
            f"is fitted on the last tenth of the training sentences, with the CRF's c2). Trained without a dev set, "
            f"as `seqbil train --config CONFIG --learner LEARNER` runs (the CRF: at most "
            f"{record.get('iterations', 1000)} L-BFGS iterations).\n\n" + "\n".join(rows) +
            f"\n\n`{record['command']}` at commit {record['commit'][:12]}, {record['date']}, {m['cpu']} "
            f"({m['cores']} cores).{kept_rows(record)}\n")


def kept_rows(record):
    """Where a record keeps rows measured by an earlier run (--replace), which and when."""
    earlier = {}
    for r in record["rows"]:
        if r.get("commit", record["commit"]) != record["commit"]:
            earlier.setdefault((r["commit"], r["date"]), []).append(f"{r['corpus']} {r['learner']}")
    return "".join(f" Rows {', '.join(names)}: kept from the run at commit {c[:12]}, {d}." for (c, d), names in
                   earlier.items())


def crfpp_examples_table(record):
    rows = ["| corpus | system | flags, or settings as the model keeps them | test F1 | train (s) | iterations | "
            "train peak RSS (MiB) | model (KiB) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    notes = []
    for name, c in record["corpora"].items():
        first = f"{name} ({c['train_sentences']:,} / {c['test_sentences']:,} sentences)"
        for r in c["rows"]:
            if "flags" in r:
                said = [s for s, on in (("exec.sh gives no -p", r["threads_added"]),
                                        ("commented out in exec.sh", r["exec_sh"] == "commented out")) if on]
                how = f"`{r['flags']}`" + (f" ({'; '.join(said)})" if said else "")
            elif r.get("settings"):
                how = ", ".join(f"{k} {v if isinstance(v, str) else json.dumps(v)}" for k, v in r["settings"].items())
            else:
                how = f"`{r['command']}`"
            if "error" in r:
                notes += [] if r["error"] in notes else [r["error"]]
                rows.append(f"| {first} | {r['system']} | {how} | refused ({notes.index(r['error']) + 1}) | – | – | "
                            f"– | – |")
            else:
                f1 = r["f1"]
                score = f"{f1['median']:.2f}" if f1["min"] == f1["max"] else spread(f1)
                rows.append(f"| {first} | {r['system']} | {how} | {score} | {spread(r['train_s'])} | "
                            f"{r['iterations'] if r['iterations'] is not None else '–'} | "
                            f"{spread(r['train_peak_rss_mib'], '{:.0f}')} | {r['model_bytes'] / 1024:,.0f} |")
            first = ""
    crfpp = record["crfpp"]
    threads = (f"-p {crfpp['threads']} on every run" if crfpp.get("threads") is not None else
               "-p as exec.sh gives it, else -p 1 (CRF++'s own default is a thread per core)")
    refused = "\n\nRefused:\n\n" + "\n".join(f"- ({i}) {n}" for i, n in enumerate(notes, 1)) if notes else ""
    return (f"CRF++'s example corpora (`example/` in {crfpp['source']}; `crf_learn --version`: {crfpp['version']}), "
            f"each with its own template: CRF++ with the flags of each crf_learn line of the corpus's exec.sh "
            f"({threads}), seqbil as `seqbil train --template template --train train.data [--learner L]` (no "
            f"learner: the default; `--encoding euc-jp` for JapaneseNE), then `crf_test -m model test.data` and "
            f"`seqbil tag -m model test.data`. seqbil's settings are those its model keeps (`seqbil inspect`; "
            f"without --config seqbil takes its bundled conll2000 config's). Sentences: training / test. Test F1 "
            f"by conlleval over each output's last column (for basenp and seg the labels carry no type: base NPs "
            f"and words are the chunks). Train: the whole `crf_learn` or `seqbil train` process; iterations: "
            f"L-BFGS iterations, MIRA rounds or epochs.\n\n" + "\n".join(rows) + refused
            + f"\n\n{provenance(record)}\n")


def crf_speed_table(record):
    rows = ["| system | s per iteration | train, end to end (s) | training passes (s) | Python attribute building (s) "
            "| iterations | test score | peak RSS (MiB) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in record["systems"].items():
        rows.append(f"| {name} | {spread(r['iteration_seconds'], '{:.3f}')} | {spread(r['wall'], '{:.1f}')} | "
                    f"{spread(r['training_passes'], '{:.1f}')} | "
                    f"{spread(r['feature_seconds'], '{:.1f}') if 'feature_seconds' in r else '–'} | "
                    f"{r['iterations']['median']:.0f} | {r['f1']['median']:.2f} | {spread(r['rss_mib'], '{:.0f}')} |")
    ratio = record["ratios"]
    return (f"The `crf` learner against python-crfsuite's L-BFGS CRF on {record['corpus']}: c1 = {record['c1']:g}, "
            f"c2 = {record['c2']:g}, at most {record['max_iterations']} iterations, CRFsuite's default feature set "
            f"(the attribute-label pairs seen in training) in both. Seconds per iteration: the median over the run's "
            f"iterations (seqbil's `--log` seconds, CRFsuite's own per-iteration time). End to end: the whole "
            f"process, raw files in, model out; CRFsuite's attribute strings, built in Python and appended sentence "
            f"by sentence, are timed apart. Test score: conlleval F1 for chunks, token accuracy for part-of-speech "
            f"tags; after a few iterations it only shows that both sides trained a model, not what a finished "
            f"run scores.\n\n" + "\n".join(rows) +
            f"\n\nSeconds per iteration against CRFsuite's (median of the per-run ratios): --jobs 1 "
            f"{ratio['jobs1_vs_crfsuite']:.2f}, --jobs 2 {ratio['jobs2_vs_crfsuite']:.2f}; --jobs 2 against --jobs 1: "
            f"{ratio['jobs2_vs_jobs1']:.2f}. {provenance(record)}\n")


def sklearn_table(record):
    rows = ["| system | settings | fit (s) | fit / sklearn-crfsuite lbfgs | building the dicts (s) | predict (s) | "
            "test F1 | whole process peak RSS (MiB) | model (KiB) |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    ratios = record["fit_vs_sklearn_crfsuite_lbfgs"]
    for name, r in record["systems"].items():
        settings = ", ".join(f"{k}={v!r}" for k, v in r["options"].items())
        ratio = spread(ratios[name], "{:.2f}") if name in ratios else "1"
        rows.append(f"| {name} | `{settings}` | {spread(r['fit_seconds'], '{:.1f}')} | {ratio} | "
                    f"{spread(r['dict_seconds'], '{:.1f}')} | {spread(r['predict_seconds'], '{:.2f}')} | "
                    f"{r['f1']['median']:.2f} | {spread(r['rss_mib'], '{:.0f}')} | "
                    f"{r['model_bytes']['median'] / 1024:,.0f} |")
    return (f"`seqbil.sklearn.CRF` against sklearn-crfsuite's `CRF` on {record['corpus']}, each system in a process "
            f"of its own: the feature dicts built in Python (timed apart), then `fit` (features in, model out) and "
            f"`predict`. Test F1: conlleval's.\n\n" + "\n".join(rows) + f"\n\n{provenance(record)}\n")
def crf_chosen_table(record):
    run, sel = record["run"], record["run"]["selection"]
    rows = ["| c2 | held-out F1 | held-out log-likelihood | iterations |", "| --- | --- | --- | --- |"]
    for t in sel["tried"]:
        rows.append(f"| {t['c2']:g}{' (chosen)' if t['c2'] == sel['chosen']['c2'] else ''} | {t['value']:.2f} | "
                    f"{-t['nll']:.1f} | {', '.join(map(str, t['passes']))} |")
    return (f"`seqbil train --learner crf` with no `--c2` on {record['corpus']} (c1 = {record['c1']:g}, at most "
            f"{record['max_iterations']} iterations): c2 chosen on {sel['on']} data (held-out: the last tenth of "
            f"the training sentences, trained on the other nine tenths), then the model trained on all the training "
            f"data with it.\n\n" + "\n".join(rows) +
            f"\n\nChosen c2 {sel['chosen']['c2']:g}: test F1 {run['f1']:.2f} after {run['iterations']} iterations; "
            f"the whole run (the choice included) {run['wall']:.0f} s, peak RSS {run['rss_mib']:.0f} MiB. "
            f"{provenance(record)}\n")


def foreign_table(record):
    out = []
    c = record.get("crfpp")
    if c:
        t, sp, conv, mdl = c["test"], c["speed"], c["converted"], c["model"]
        rows = ["| system | tagging (s) | tokens/s | peak RSS (MiB) |", "| --- | --- | --- | --- |"]
        for name, r in sp["systems"].items():
            rows.append(f"| {name} | {spread(r['seconds'])} | {spread(r['tokens_per_s'], '{:,.0f}')} | "
                        f"{spread(r['rss_mib'], '{:.0f}')} |")
        out.append(
            f"**CRF++** ({c['version']}, built from its source with `{c['build']}`): `{mdl['command']}` on "
            f"{record['corpus']} with its chunking example's template ({mdl['iterations']} iterations, "
            f"{mdl['train_seconds']:.0f} s; binary model of {mdl['bytes'] / 2 ** 20:.1f} MiB), then `seqbil convert "
            f"--from crfpp` ({spread(conv['convert_seconds'])} s, {conv['bytes'] / 2 ** 20:.1f} MiB). On the test set "
            f"({t['sentences']:,} sentences, {t['tokens']:,} tokens) against `crf_test -v2`: "
            f"{t['labels_differ']} labels differ; the largest difference of a sentence's probability "
            f"{t['max_sequence_probability_diff']:.1e} and of a token marginal {t['max_token_marginal_diff']:.1e} "
            f"(crf_test prints six decimals). Tagging the test set {sp['copies']} times ({sp['tokens']:,} tokens) end "
            f"to end, one process each, start-up included: seqbil {spread(sp['speedup'])}× crf_test's tokens per "
            f"second (per-run ratios), {sp['labels_differ']} labels differ.\n\n" + "\n".join(rows))
    s = record.get("crfsuite")
    if s:
        t = s["test"]
        rows = ["| system | tagging the test set (s) |", "| --- | --- |"]
        for name, r in s["tagging"].items():
            rows.append(f"| {name} | {spread(r)} |")
        settings = ", ".join(f"{k} = {v:g}" for k, v in s["settings"].items())
        out.append(
            f"**python-crfsuite** ({s['python_crfsuite']}): trained on {record['corpus']} with sklearn-crfsuite's "
            f"tutorial feature dicts ({settings}; {s['train_seconds']:.0f} s), the model file opened by "
            f"`seqbil.sklearn.CRF(model_filename=...)`. On the test set ({t['sentences']:,} sentences, "
            f"{t['tokens']:,} tokens) against python-crfsuite's Tagger: {t['labels_differ']} labels differ, the largest "
            f"marginal difference {t['max_token_marginal_diff']:.1e}. Tagging, the feature dicts built once apart "
            f"({s['dict_seconds']:.1f} s): python-crfsuite's time over seqbil's {spread(s['speedup'])} (per-run ratios).\n\n" + "\n".join(rows))
    return "\n\n".join(out) + f"\n\n{provenance(record)}\n"


def wapiti_table(record):
    w, t, sp, conv, mdl = record["wapiti"], record["test"], record["speed"], record["converted"], record["model"]
    rows = ["| system | tagging (s) | tokens/s | peak RSS (MiB) |", "| --- | --- | --- | --- |"]
    for name, r in sp["systems"].items():
        rows.append(f"| {name} | {spread(r['seconds'])} | {spread(r['tokens_per_s'], '{:,.0f}')} | "
                    f"{spread(r['rss_mib'], '{:.0f}')} |")
    out = [f"**Wapiti** ({w['version']}, built from its source with `{w['build']}`): `{mdl['command']}` on "
           f"{record['corpus']} with CRF++'s chunking template read as patterns, its defaults ({mdl['iterations']} "
           f"iterations, {mdl['train_seconds']:.0f} s; a model of {mdl['bytes'] / 2 ** 20:.1f} MiB), then `seqbil convert "
           f"--from wapiti` ({spread(conv['convert_seconds'])} s, {conv['bytes'] / 2 ** 20:.1f} MiB). On the test set "
           f"({t['tokens']:,} tokens): against `wapiti label`, {t['labels_differ']} labels differ; against "
           f"`wapiti label -p -s` (`seqbil tag --posterior --marginals`), {t['posterior_labels_differ']} labels differ "
           f"and the largest difference of a token's marginal is {t['max_token_marginal_diff']:.1e} (Wapiti prints six "
           f"decimals). Tagging the test set {sp['copies']} times ({sp['tokens']:,} tokens) end to end, one process "
           f"each, start-up included: seqbil {spread(sp['speedup'])}× wapiti label's tokens per second (per-run "
           f"ratios), {sp['labels_differ']} labels differ.\n\n" + "\n".join(rows)]
    dat = record.get("dat")
    if dat:
        systems = list(next(iter(dat.values()))["f1"])
        lines = ["| corpus | pattern file | " + " | ".join(systems) + " |", "| --- | --- |" + " --- |" * len(systems)]
        for name, d in dat.items():
            best = max(d["f1"].values())
            lines.append(f"| {name} (`{d['train']}` / `{d['test']}`) | `{d['patterns']}` | " + " | ".join(
                (f"**{v:.2f}**" if v == best else f"{v:.2f}") for v in d["f1"].values()) + " |")
        out.append("Wapiti's own pattern files, given to `seqbil train --template` as they are (test F1, "
                   "conlleval's; seqbil crf with Wapiti's objective: `--learner crf --c1 0.5 --c2 0.00005`; Wapiti: "
                   "`wapiti train -p PATTERNS`):\n\n" + "\n".join(lines))
    return "\n\n".join(out) + f"\n\n{provenance(record)}\n"


def train_memory_table(record):
    out = []
    for c in record["corpora"].values():
        rows = ["| system | peak RSS (MiB) | against python-crfsuite ap |", "| --- | --- | --- |"]
        for name, r in c["systems"].items():
            rows.append(f"| {name} | {spread(r['rss_mib'], '{:.0f}')} | {c['vs_peer'][name]:.2f} |")
        out.append(f"{c['description']}:\n\n" + "\n".join(rows))
    return ("Peak RSS of a whole training process, raw files in and model out: seqbil's learners with the config's "
            "settings, 20 epochs (crf: c2 = 1 given, at most 100 iterations); python-crfsuite's averaged perceptron, "
            "20 iterations, its default feature set, the training file read a sentence at a time and each sentence's "
            "attributes built and appended as it is read (benchmarks/crfsuite_peer.py --stream).\n\n" + "\n\n".join(out) + f"\n\n{provenance(record)}\n")


def ipm_recovery_table(record):
    rows = ["| learner | run | killed after (epochs + s) | finished | weights as undisturbed | train, end to end (s) | "
            "peak RSS of the training process (MiB) | what the log says |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in record["rows"]:
        when = f"{r['killed_after_epochs']} + {r['then_seconds']:.2f}" if "killed_after_epochs" in r else "–"
        said = "; ".join(r.get("messages", [])) or (" ".join(r["error"]) if r.get("error") else "–")
        same = "–" if r["identical"] is None else "yes" if r["identical"] else "no"
        peak = f"{r['peak_rss_mib']:.0f}" if r.get("peak_rss_mib") else "–"
        rows.append(f"| {r['learner']} | {r['run']} | {when} | {'yes' if r['finished'] else 'no'} | {same} | "
                    f"{r['seconds']:.1f} | {peak} | {said} |")
    m = record["machine"]
    return (f"Iterative parameter mixing that loses a machine: `seqbil train --shards {record['shards']}` on the "
            f"SIGHAN 2005 pku training set (configs/sighan2005.toml) against a Dask cluster of {record['workers']} "
            f"workers (`dask worker`, each with its nanny); in each \"worker killed\" run one worker and its nanny "
            f"are killed with SIGKILL at a random moment and do not come back; in each \"driver killed\" run "
            f"(a checkpoint every epoch) the training process itself is, and `seqbil train --resume` goes on. "
            f"Weights: every array equal to the undisturbed run's.\n\n" + "\n".join(rows) +
            f"\n\n`{record['command']}` at commit {record['commit'][:12]}, {record['date']}, {m['cpu']} "
            f"({m['cores']} cores).\n")


def ipm_memory_table(record):
    def cell(s, f="{:.0f}"):
        return f"{f.format(s['median'])} ({f.format(s['min'])}–{f.format(s['max'])})"
    one = {r["learner"]: r["peak_rss_mib"]["median"] for r in record["rows"] if r["run"] == "one process"}
    rows = ["| learner | training | peak RSS of the training process (MiB) | against one process | "
            "train, end to end (s) | test F1 | shards made again (failed messages) |",
            "| --- | --- | --- | --- | --- | --- | --- |"]

    def events(r):  # over the runs, from their logs (a run on shards on a busy machine may remake one)
        if r["run"] == "one process" or "events" not in r:
            return "–"
        made, failed = (sum(e[k] for e in r["events"]) for k in ("shards_made_again", "message_errors"))
        return f"{made} ({failed})"
    for r in record["rows"]:
        rows.append(f"| {r['learner']} | {r['run']} | {cell(r['peak_rss_mib'])} | "
                    f"{r['peak_rss_mib']['median'] / one[r['learner']]:.2f} | {cell(r['seconds'], '{:.1f}')} | "
                    f"{r['test_f1']:.2f} | {events(r)} |")
    names = {"start": "choosing on held-out data (none on shards), the cluster started",
             "prepare": "reading and encoding (on shards: the shards read, the index merged)",
             "run_passes": "the passes", "after run_passes": "the cluster closed", "finish": "the final weights made",
             "compact": "compaction", "after compact": "the model saved"}
    stage_rows = ["| learner | stage | RSS at its end (MiB) | peak within it (MiB) |", "| --- | --- | --- | --- |"]
    for learner, items in record["stages"].items():
        for r in items:
            if r["stage"] in names:
                stage_rows.append(f"| {learner} | {names[r['stage']]} | {r['rss_mib']:.0f} | {r['peak_mib']:.0f} |")
    m = record["machine"]
    return (f"Peak RSS of the training process on {record['shards']} shards against training in one process, "
            f"the same commit: SIGHAN 2005 pku training set, configs/sighan2005.toml and its defaults (20 epochs, "
            f"float32 model) at temperature 1 (a run on shards fits none), raw file in and model out. The peak is the process's own VmHWM (the Dask scheduler "
            f"and workers are processes of their own, on the local cluster too). Median (min–max) of "
            f"{record['repeat']} runs.\n\n" + "\n".join(rows) +
            "\n\nWhere the training process's memory goes on the local cluster (one sampled run):\n\n" +
            "\n".join(stage_rows) + f"\n\n`{record['command']}` at commit {record['commit'][:12]}, "
            f"{record['date']}, {m['cpu']} ({m['cores']} cores).\n")


def tag_breakdown_table(record):
    def cell(s):
        return f"{s['median']:.3f} ({s['min']:.3f}–{s['max']:.3f})"
    paths = {}
    for r in record["rows"]:
        paths.setdefault(r["path"], []).append(r)
    rows = ["| path | stage | µs per token | share of the stages |", "| --- | --- | --- | --- |"]
    for path, items in paths.items():
        total = sum(r["us_per_token"]["median"] for r in items if not r["stage"].startswith("whole"))
        for r in items:
            share = "" if r["stage"].startswith("whole") else f"{100 * r['us_per_token']['median'] / total:.0f}%"
            rows.append(f"| {path} | {r['stage']} | {cell(r['us_per_token'])} | {share} |")
    m = record["machine"]
    return (f"Where a token's tagging time goes: {record['corpus']} ({record['tokens']:,} tokens, one block, in "
            f"one process), an sp model with CRF++'s chunking template ({record['labels']} labels). The reference "
            f"path is formats/ and features/ with Python strings (what `seqbil tag` ran before its compiled path, "
            f"and runs for what that does not take); the compiled path is `seqbil tag`'s. Viterbi: decoding the "
            f"same sequences with no attributes; scoring: the rest of the decode. Median (min–max) of "
            f"{record['repeat']} runs; the whole block also counts the checks of the input's bytes.\n\n"
            + "\n".join(rows) + f"\n\n`{record['command']}` at commit {record['commit'][:12]}, {record['date']}, "
            f"{m['cpu']} ({m['cores']} cores).\n")


def suite_table(record):
    """One row per corpus; per system its score, training CPU seconds, training peak RSS
    and model size (medians over the runs); the best score in bold; the average over the
    corpora where every system ran."""
    names = list(dict.fromkeys(r["system"] for c in record["corpora"].values() for r in c["rows"]))
    metric = {"accuracy": "acc", "chunk": "F1", "segment": "F1"}
    head = ["corpus", "metric"] + [f"{n} {what}" for n in names for what in ("score", "train CPU (s)",
                                                                              "RSS (MiB)", "model (KiB)")]
    rows = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] * len(head)) + " |"]
    notes, complete = [], {}

    def median(r, key):
        return statistics.median(run[key] for run in r["runs"])
    for name, c in record["corpora"].items():
        by = {r["system"]: r for r in c["rows"]}
        scores = {n: median(by[n], "score") for n in names if n in by and "error" not in by[n]}
        best = max(scores.values(), default=None)
        cells = [f"{name} ({c['train_tokens']:,} tokens)", metric[c["metric"]]]
        for n in names:
            r = by.get(n)
            if r is None or "error" in r:
                if r is not None:
                    notes += [] if r["error"] in notes else [r["error"]]
                cells += [f"({notes.index(r['error']) + 1})" if r is not None else "–", "–", "–", "–"]
                continue
            score = f"{scores[n]:.2f}"
            cells += [f"**{score}**" if scores[n] == best and len(scores) > 1 else score,
                      f"{median(r, 'train_cpu_s'):.1f}", f"{median(r, 'train_peak_rss_mib'):.0f}",
                      f"{median(r, 'model_bytes') / 1024:,.0f}"]
        if len(scores) == len(names):
            complete[name] = {n: [median(by[n], k) for k in ("score", "train_cpu_s", "train_peak_rss_mib",
                                                              "model_bytes")] for n in names}
        rows.append("| " + " | ".join(cells) + " |")
    if complete:
        cells = [f"average of {len(complete)}", ""]
        means = {n: [statistics.mean(v[n][i] for v in complete.values()) for i in range(4)] for n in names}
        best = max(m[0] for m in means.values())
        for n in names:
            s, cpu, rss, size = means[n]
            cells += [f"**{s:.2f}**" if s == best and len(names) > 1 else f"{s:.2f}", f"{cpu:.1f}", f"{rss:.0f}",
                      f"{size / 1024:,.0f}"]
        rows.append("| " + " | ".join(cells) + " |")
    commands = {}  # each system's distinct commands (one per task)
    for c in record["corpora"].values():
        for r in c["rows"]:
            if r.get("command") and r["command"] not in commands.setdefault(r["system"], []):
                commands[r["system"]].append(r["command"])
    parts = []  # CRFsuite's Python feature building, timed apart from its training call
    for name, c in record["corpora"].items():
        for r in c["rows"]:
            if "runs" in r and "feature_cpu_s" in r["runs"][0]:
                parts.append(f"{name} {median(r, 'feature_cpu_s'):.1f} of {median(r, 'train_cpu_s'):.1f} "
                             f"(its training call {median(r, 'crfsuite_train_cpu_s'):.1f})")
    features = ("\n\nCRFsuite's training CPU seconds spent building the features in Python and appending them: "
             + "; ".join(parts) + ".") if parts else ""
    failed = features + "\n\nNot run or failed:\n\n" + "\n".join(f"- ({i}) {n}" for i, n in enumerate(notes, 1)) \
        if notes else features
    how = "; ".join(f"{n}: " + " or ".join(f"`{cmd}`" for cmd in cmds) for n, cmds in commands.items())
    peers = record.get("peers", {})
    once = {k: v for k, v in record.items() if not (k == "repeat" and v == 1)}  # provenance: "one run"
    versions = ", ".join(f"{v['name']}: {v['version']}" for v in peers.values() if "version" in v)
    quick = " **--quick: a few iterations only; its scores say nothing of the systems.**" if record.get("quick") \
        else ""
    if record.get("complete") is False:
        quick += " **The run stopped before its last corpus: these are the corpora it finished.**"
    held = all(name in HELDOUT for name in record["corpora"])
    what = "Held-out corpora, kept apart from every choice of the defaults," if held else "The development suite,"
    if "parts" in record:  # run in parts (suite.py --append): each its own provenance, and its rows
        made, gone = [], []
        for i, part in enumerate(record["parts"]):
            ran = {}  # the systems this part ran on each corpus, and the corpora of each such group
            for name, c in record["corpora"].items():
                systems = ", ".join(r["system"] for r in c["rows"] if r["part"] == i)
                if systems:
                    ran.setdefault(systems, []).append(name)
            if ran:  # (a part whose rows were all run again later is in the record only)
                rows_of = "; ".join(systems + " on " + ", ".join(corpora) for systems, corpora in ran.items())
                made.append(f"Part {i + 1} ({rows_of}): "
                            + provenance({k: v for k, v in part.items() if not (k == "repeat" and v == 1)}))
            else:
                gone.append(str(i + 1))
        if gone:
            made.append(f"{'Parts' if len(gone) > 1 else 'Part'} {', '.join(gone)}: every row run again by a later "
                        f"part (in the record only).")
        made = " ".join(made)
    else:
        made = provenance(once)
    return (f"{what} scored on {'their' if held else 'its'} {record['split']} split by seqbil's scorer (acc: token accuracy; "
            f"F1: conlleval's for chunking, SIGHAN word F1 for segmentation), each system run as its users run it "
            f"on the same training file.{quick} Train CPU: user + sys seconds of the training process; RSS: its "
            f"peak; model: the model file. The best score of a row in bold; the average row is over the corpora "
            f"where every system ran. Commands, in each corpus's work folder (benchmarks/suite.py says what its files are): "
            f"{how}. {'Versions: ' + versions + '.' if versions else ''}\n\n" + "\n".join(rows) + failed
            + f"\n\n{made}\n")


def train_jobs_table(record):
    """--jobs 2 against --jobs 1 for the online learners (benchmarks/train_jobs.py)."""
    seeds = any("seed_f1" in r for c in record["corpora"].values() for r in c["learners"].values())
    rows = ["| corpus | learner | threads | mean epoch (s) | training passes (s) | end to end (s) | peak RSS (MiB) "
            "| test F1 |" + (" one thread, F1 over seeds (min–max) |" if seeds else ""),
            "| --- | --- | --- | --- | --- | --- | --- | --- |" + (" --- |" if seeds else "")]
    ratios = []
    for corpus, c in record["corpora"].items():
        for learner, r in c["learners"].items():
            for jobs in (1, 2):
                j, f1 = r[f"jobs{jobs}"], r.get("seed_f1")
                over = (f" {min(f1):.2f}–{max(f1):.2f} ({len(f1)}) |" if jobs == 1 and f1 else " |") if seeds else ""
                rows.append(f"| {corpus} | {learner} | {jobs} | {spread(j['epoch_s'], '{:.3f}')} | "
                            f"{spread(j['passes_s'])} | {spread(j['end_to_end_s'])} | "
                            f"{spread(j['peak_rss_mib'], '{:.0f}')} | {j['f1']:.2f} |" + over)
            ratios.append(f"{corpus} {learner} {spread(r['epoch_ratio'])}")
    return (f"`seqbil train --jobs 2` against `--jobs 1`: the online learners on threads (iterative parameter "
            f"mixing after every epoch), {record['epochs']} epochs, `--temperature 1`; CoNLL-2000 with CRF++'s "
            f"chunking template and the conll2000 config, pku (stand-in training set) with the sighan2005 config. "
            f"Mean epoch: the per-epoch seconds of `--log`, the mix included" +
            ("; bcd makes its own 20 passes. bol and bcd factor the 1st-order features: on CoNLL-2000 they read "
             "the conll2000 config's own templates (1st-order ones included), as CRF++'s chunking template has "
             "none. The one-thread run's F1 over seeds: the spread the order of the sentences alone makes.\n\n"
             if seeds else ".\n\n") +
            "\n".join(rows) +
            "\n\nMean epoch with 2 threads over 1 (per-run ratios, the runs alternating): " + "; ".join(ratios) +
            f".\n\n{provenance(record)}\n")


def calibration_cost_table(record):
    """A named online learner with its temperature fitted against --temperature 1
    (benchmarks/calibration_cost.py)."""
    rows = ["| corpus | learner | temperature | wall (s) | CPU (s) | peak RSS (MiB) | wall, fitted / T = 1 "
            "| CPU, fitted / T = 1 | test F1 |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for corpus, c in record["corpora"].items():
        for learner, r in c["learners"].items():
            for mode, name in (("t1", "1 (given)"), ("fitted", f"fitted, {r['fitted']['temperature']:.3g}")):
                m = r[mode]
                ratios = (f"{spread(r['wall_s_ratio'])} | {spread(r['cpu_s_ratio'])}" if mode == "fitted"
                          else "– | –")
                rows.append(f"| {corpus} | {learner} | {name} | {spread(m['wall_s'])} | {spread(m['cpu_s'])} | "
                            f"{spread(m['peak_rss_mib'], '{:.0f}')} | {ratios} | {m['f1']:.2f} |")
    return ("What fitting the temperature costs: `seqbil train --config CONFIG --learner LEARNER` (no dev set: "
            "the temperature fitted on the last tenth of the training sentences by a held-out run, on a second "
            "thread where a core is free) against the same run with `--temperature 1`; CoNLL-2000 with the "
            "conll2000 config, pku (stand-in training set) with the cws config, 20 epochs. Wall and CPU seconds of "
            "the whole process; the ratios are per pair of runs, the two alternating. Both runs give the same "
            "labels: T divides every score.\n\n" + "\n".join(rows) + f"\n\n{provenance(record)}\n")


def viterbi_labels_table(record):
    """First-order Viterbi per token against the labels, the full and the bounded
    search (benchmarks/viterbi_labels.py)."""
    kinds = list(dict.fromkeys(r["kind"] for r in record["rows"] if not r["kind"].startswith("real:")))
    cells = {(r["labels"], r["kind"]): r for r in record["rows"]}

    def cell(r):
        return f"{r['full']['median']:,.0f} → {r['fast']['median']:,.0f} ({r['speedup']:.2f}×)" if r else "–"
    rows = ["| labels | " + " | ".join(kinds) + " |", "| --- |" + " --- |" * len(kinds)]
    for labels in sorted({r["labels"] for r in record["rows"] if r["kind"] in kinds}):
        rows.append(f"| {labels} | " + " | ".join(cell(cells.get((labels, k))) for k in kinds) + " |")
    real = [r for r in record["rows"] if r["kind"].startswith("real:")]
    if real:
        rows += ["", "| trained model | labels | tokens | full → bounded (ns per token) |", "| --- | --- | --- | --- |"]
        rows += [f"| {r['kind'][5:]} | {r['labels']} | {r['tokens']:,} | {cell(r)} |" for r in real]
    return ("First-order Viterbi per token: the full search (S² label pairs per token) → the bounded search "
            "(`cython_ext/bounded.pxd`), median nanoseconds per token over the runs, and the speed-up of the "
            "medians; the same paths and scores in every run (checked). The kernels alone, on score tables built "
            "beforehand: synthetic ones of the kinds `benchmarks/viterbi_labels.py` describes (trained: one label "
            "leads at each token; +pair: a sparse 1st-order part; ambiguous: two to four labels close; uniform "
            "and ties: no label ahead, the worst cases)" + (", and those of trained models on their corpora"
                                                            if real else "") +
            ".\n\n" + "\n".join(rows) + f"\n\n{provenance(record)}\n")


def small_corpora_table(record):
    def point(p):
        return p["learner"] + (f" c2 {p['c2']:g}" if p["learner"] == "crf" else
                               f" ({p['epochs']} epochs)" if "epochs" in p else "")
    rows = ["| corpus | tokens | draw | best online, held-out | best CRF, held-out | chosen: dev | the other kind's "
            "best: dev | chosen − other |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    margins = {True: [], False: []}  # chosen − other on the dev split, by whether a CRF was chosen
    for r in record["samples"]:
        tried = [t for t in r["selection"].get("tried", []) if "value" in t]
        online = max((t for t in tried if t["learner"] != "crf"), key=lambda t: t["value"], default=None)
        crf = max((t for t in tried if t["learner"] == "crf"), key=lambda t: (t["value"], -t["nll"]), default=None)
        if "other_dev" in r:
            margins[r["chosen"]["learner"] == "crf"].append(r["dev"] - r["other_dev"])
        cells = ["–" if online is None else "%s %.2f" % (online["learner"], online["value"]),
                 "–" if crf is None else "%.2f" % crf["value"],
                 "%s: %.2f" % (point(r["chosen"]) if r["chosen"] else "–", r["dev"]),
                 "%s: %.2f" % (point(r["other"]), r["other_dev"]) if "other" in r else
                 "not scored" if r["chosen"] else "–",
                 "%+.2f" % (r["dev"] - r["other_dev"]) if "other_dev" in r else ""]
        rows.append(f"| {r['corpus']} | {r['tokens']:,} | {r['draw']} | " + " | ".join(cells) + " |")

    def said(crf, what):
        m = margins[crf]
        return (f"where {what} was chosen and the other kind was scored too ({len(m)} sample"
                f"{'s' if len(m) > 1 else ''}), the chosen model "
                f"scored higher on the dev split on {sum(d > 0 for d in m)}, lower on {sum(d < 0 for d in m)}, "
                f"{statistics.mean(m):+.2f} on average" if m else f"{what} was never chosen over a scored rival")
    summary = said(True, "a CRF")
    summary = f"{summary[0].upper()}{summary[1:]}; {said(False, 'an online learner')}."
    draws = f"{record['draws']} draw{'s' if record['draws'] > 1 else ''}"
    return (f"learner = auto on samples of the development suite's corpora small enough to be cross-validated "
            f"(sentences drawn at random from the training split up to {' or '.join(f'{s:,}' for s in record['sizes'])} "
            f"tokens, {draws} each), with the config each corpus has in the suite: the best held-out (10-fold "
            f"cross-validation) score of each kind of candidate; the chosen candidate, and the best of the other kind "
            f"(a CRF point where an online learner was chosen, an online learner where a CRF was) trained as named, "
            f"each on the whole sample, scored on the first {record['dev_sentences']} sentences of the dev split "
            f"(acc for POS, F1 otherwise). Not scored: the other kind was stopped by the time budget.\n\n" +
            "\n".join(rows) + f"\n\n{summary}\n\n{provenance(record)}\n")


RENDERERS = {"train_memory": train_memory_table, "train_speed": speed_table, "encode_speed": encode_table, "tag_speed": tag_table,
             "foreign_models": foreign_table, "model_size": size_table, "task_tag_speed": task_tag_table, "aso_speed": aso_table, "aso_shards": aso_shards_table,
             "rpa_speed": rpa_table, "dask_tag_speed": dask_tag_table,
             "ipm_speed": ipm_table, "calibration": calibration_table, "crf_speed": crf_speed_table,
             "crf_chosen": crf_chosen_table, "ipm_recovery": ipm_recovery_table, "ipm_memory": ipm_memory_table,
             "tag_breakdown": tag_breakdown_table, "crfpp_examples": crfpp_examples_table, "sklearn_speed": sklearn_table,
             "suite": suite_table, "wapiti_model": wapiti_table,
             "train_jobs": train_jobs_table, "calibration_cost": calibration_cost_table,
             "viterbi_labels": viterbi_labels_table, "small_corpora": small_corpora_table}


def render_record(record):
    return RENDERERS[record["benchmark"]](record)


def publish(path, record):
    """Write a benchmark's record (JSON) and its table (Markdown beside it); print the table."""
    from record import write_record
    write_record(path, record)
    md = Path(path).with_suffix(".md")
    md.write_text(render_record(record) + "\n", encoding="utf-8")
    print(md.read_text(encoding="utf-8"))


def read_csv_record(path):
    """(meta, rows) of an experiment's CSV: its '# key: value' header lines (command,
    commit, date, machine) and its rows as dicts."""
    import csv
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    meta = dict(line[2:].split(": ", 1) for line in lines if line.startswith("# ") and ": " in line)
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    return meta, rows


F1_METHODS = [("sp", "sp"), ("bol", "bol (block)"), ("bol-global", "bol (global)"), ("bcd", "bcd"),
              ("sp+0", "sp+0"), ("bol+0", "bol+0"), ("crf2", "crf2 (crfsuite)"), ("crf1", "crf1 (crfsuite)"),
              ("crfpp-l2", "crf2 (CRF++)"), ("crfpp-l1", "crf1 (CRF++)")]


def f1_summary():
    """Test F1 per corpus and method from the experiments' own files: Table 1 (pku,
    SXU) and the 100% point of Figure 3 (CoNLL-2000)."""
    sources = [("table1/table1.csv", lambda r: True), ("figure3/curve.csv", lambda r: r["percent"] == "100")]
    cells, cites = {}, []
    for name, keep in sources:
        meta, rows = read_csv_record(ROOT / "results" / name)
        for r in rows:
            if keep(r):
                cells[(r["corpus"], r["method"])] = float(r["f1"])
        cites.append(f"`results/{name}` (`{meta.get('command', '?').strip()}`, seqbil {meta.get('seqbil', '?')}, "
                     f"{meta.get('date', '?')}, {meta.get('machine', '?')})")
    corpora = [c for c in ("pku", "sxu", "conll2000") if any(k[0] == c for k in cells)]
    methods = [(m, label) for m, label in F1_METHODS if any(k[1] == m for k in cells)]
    names = {"pku": "pku (stand-in training set)", "sxu": "SXU", "conll2000": "CoNLL-2000"}
    out = ["| corpus | " + " | ".join(label for _, label in methods) + " |",
           "| --- |" + " --- |" * len(methods)]
    for c in corpora:
        out.append(f"| {names[c]} | " + " | ".join(f"{cells[(c, m)]:.2f}" if (c, m) in cells else "–"
                                                   for m, _ in methods) + " |")
    return "\n".join(out) + "\n\nFrom " + "; ".join(cites) + ".\n"


def multitask_summary():
    """Single-corpus against joint segmenters, test F1 (experiments/multitask.sh)."""
    record = json.loads((ROOT / "results" / "multitask" / "multitask.json").read_text(encoding="utf-8"))
    rows = [dict(zip(record["columns"], r)) for r in record["rows"]]
    learners = list(dict.fromkeys(r["learner"] for r in rows))
    tasks = list(dict.fromkeys(r["task"] for r in rows if r["task"] != "mean"))
    cell = {(r["learner"], r["task"]): r for r in rows}
    out = ["| corpus | " + " | ".join(f"{m} alone | {m} joint" for m in learners) + " |",
           "| --- |" + " --- | --- |" * len(learners)]
    for t in tasks:
        out.append(f"| {t} | " + " | ".join(f"{cell[(m, t)]['single_f1']:.2f} | {cell[(m, t)]['joint_f1']:.2f}"
                                            if (m, t) in cell else "– | –" for m in learners) + " |")
    out.append("| mean gain | " + " | ".join(f" | {cell[(m, 'mean')]['gain']:+.2f}" if (m, "mean") in cell
                                             else " | –" for m in learners) + " |")
    seeds = max(r["seeds"] or 0 for r in rows)
    return ("\n".join(out) + f"\n\nMean test F1 over {seeds} seeds; from `results/multitask/multitask.json` "
            f"(`{record['command'].strip()}`, seqbil {record['seqbil']}, {record['date']}, {record['machine']}).\n")


def aso_summary():
    """Test F1 without and with each structure from unlabeled text, for the smallest and
    the whole CoNLL-2000 training part and the segmentation corpora (experiments/aso.sh)."""
    record = json.loads((ROOT / "results" / "aso" / "aso.json").read_text(encoding="utf-8"))
    rows = [dict(zip(record["columns"], r)) for r in record["rows"]]
    kinds = list(dict.fromkeys(r["structure"] for r in rows))
    conll = sorted({r["corpus"] for r in rows if r["corpus"].startswith("conll")}, key=lambda c: int(c[5:]))
    shown = [c for c in conll if c in (conll[0], conll[-1])] + [c for c in dict.fromkeys(r["corpus"] for r in rows)
                                                             if not c.startswith("conll")]
    cell = {(r["corpus"], r["learner"], r["structure"]): r for r in rows}
    out = ["| corpus | learner | without | " + " | ".join(f"+ {k}" for k in kinds) + " |",
           "| --- | --- | --- |" + " --- |" * len(kinds)]
    for corpus in shown:
        name = ("CoNLL-2000" + ("" if corpus == "conll100" else f", first {corpus[5:]}%")
                if corpus.startswith("conll") else corpus)
        for learner in dict.fromkeys(r["learner"] for r in rows):
            got = [cell.get((corpus, learner, k)) for k in kinds]
            if not any(got):
                continue
            base = next(g for g in got if g)["f1_without"]
            out.append(f"| {name} | {learner} | {base} | " + " | ".join(
                f"{g['f1_with']} ({float(g['gain']):+.2f})" if g else "–" for g in got) + " |")
    seeds = max(int(r["seeds"]) for r in rows)
    return ("\n".join(out) + f"\n\nMean test F1 over {seeds} seeds (the gain in parentheses); from "
            f"`results/aso/aso.json` (`{record['command'].strip()}`, seqbil {record['seqbil']}, {record['date']}, "
            f"{record['machine']}).\n")


def aso_rawtext_summary():
    """The structure's gain on the whole CoNLL-2000 training set by the raw text it is
    learned from: its amount, and WSJ against other text of the same size
    (experiments/aso_rawtext.sh)."""
    record = json.loads((ROOT / "results" / "aso_rawtext" / "aso_rawtext.json").read_text(encoding="utf-8"))
    rows = [dict(zip(record["columns"], r)) for r in record["rows"]]
    learners = list(dict.fromkeys(r["learner"] for r in rows))
    texts = list(dict.fromkeys((r["structure"], r["text"], r["tokens"]) for r in rows if r["structure"] != "none"))
    cell = {(r["structure"], r["text"], r["learner"]): r for r in rows}
    names = {"1": "all", "wsj": "CoNLL-2000 training words (WSJ)"}
    out = ["| structure | raw text | tokens | " + " | ".join(learners) + " |",
           "| --- | --- | --- |" + " --- |" * len(learners),
           "| none | – | – | " + " | ".join(cell[("none", "", x)]["f1"] for x in learners) + " |"]
    for kind, text, tokens in texts:
        out.append(f"| {kind} | {names.get(text, f'1 sentence in {text}')} | {int(tokens):,} | " + " | ".join(
            f"{c['f1']} ({float(c['gain']):+.2f})" if (c := cell.get((kind, text, x))) else "–" for x in learners)
            + " |")
    seeds = max(int(r["seeds"]) for r in rows)
    peer = " crf: python-crfsuite's L2 CRF with the same features, one run (it is deterministic)." \
        if "crf" in learners else ""
    return ("\n".join(out) + f"\n\nMean test F1 over {seeds} seeds, the whole training set (the gain in "
            f"parentheses).{peer} From `results/aso_rawtext/aso_rawtext.json` (`{record['command'].strip()}`, seqbil "
            f"{record['seqbil']}, {record['date']}, {record['machine']}).\n")


def rpa_summary():
    """Test F1 of rpa against the same learner on fixed vectors, structured PA-II and sp
    on the same sparse templates (experiments/rpa_tagging.sh)."""
    record = json.loads((ROOT / "results" / "rpa_tagging" / "rpa_tagging.json").read_text(encoding="utf-8"))
    rows = [dict(zip(record["columns"], r)) for r in record["rows"]]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    cell = {(r["split"], r["method"]): r for r in rows}
    out = ["| training set | " + " | ".join(methods) + " |", "| --- |" + " --- |" * len(methods)]
    for split in dict.fromkeys(r["split"] for r in rows):
        size = split.lstrip("conlpos")
        name = (f"CoNLL-2000{', words only as vectors' if split.startswith('conllpos') else ''}" +
                ("" if size == "100" else f", first {size}%")) if split.startswith("conll") else split
        out.append(f"| {name} | " + " | ".join(f"{cell[(split, m)]['f1']} ({cell[(split, m)]['sd']})"
                                               if (split, m) in cell else "–" for m in methods) + " |")
    seeds = max(int(r["seeds"]) for r in rows)
    return ("\n".join(out) + f"\n\nMean test F1 (sd) over {seeds} seeds; from `results/rpa_tagging/rpa_tagging.json` "
            f"(`{record['command'].strip()}`, seqbil {record['seqbil']}, {record['date']}, {record['machine']}).\n")


def rpa_polarity_summary():
    """Accuracy of PA and RPA from the same initial vectors on movie-review polarity
    (experiments/rpa_polarity.sh)."""
    record = json.loads((ROOT / "results" / "rpa_polarity" / "rpa_polarity.json").read_text(encoding="utf-8"))
    cell = {(r["method"], r["setting"]): r for r in record["table"]}
    names = {"onehot": "one-hot words (Phi = I)", "rand50": "random, k = 50", "rand100": "random, k = 100",
             "aso50": "seqbil aso, k = 50", "aso100": "seqbil aso, k = 100"}
    out = ["| initial vectors | PA, one pass | RPA, one pass | PA, passes chosen | RPA, passes chosen |",
           "| --- | --- | --- | --- | --- |"]
    for vec in dict.fromkeys(r["method"].split("-", 1)[1] for r in record["table"]):
        out.append(f"| {names.get(vec, vec)} | " + " | ".join(
            f"{cell[(m + '-' + vec, s)]['mean']:.3f}" if (m + "-" + vec, s) in cell else "–"
            for s in ("one pass", "passes chosen") for m in ("pa", "rpa")) + " |")
    return ("\n".join(out) + f"\n\nMean accuracy over the {record['table'][0]['folds']} folds; from "
            f"`results/rpa_polarity/rpa_polarity.json` (`{record['command'].strip()}`, commit {record['commit'][:12]}, "
            f"{record['date']}).\n")


def headline():
    """Three comparisons with the peers, each from its benchmark record (same data,
    same run): the README's first table."""
    def rec(name):
        return json.loads((ROOT / "results" / f"{name}.json").read_text(encoding="utf-8"))
    speed, skl, foreign = rec("speed/conll2000"), rec("speed/sklearn"), rec("foreign/foreign")
    row = {r["system"]: r for r in speed["rows"]}
    sp, ap = row["seqbil sp"], row["crfsuite ap"]
    med = lambda d: d["median"]  # noqa: E731
    ours, theirs = skl["systems"]["seqbil lbfgs"], skl["systems"]["sklearn-crfsuite lbfgs"]
    tag = foreign["crfpp"]["speed"]
    out = ["| on CoNLL-2000 (train / test) | seqbil | peer |", "| --- | --- | --- |",
           f"| averaged perceptron, CRF++'s chunking template, {speed['epochs']} epochs: training, end to end "
           f"(files in, model out), model size and test F1 | {med(sp['train_end_to_end_s']):.1f} s, "
           f"{sp['model_mib']:.1f} MiB, F1 {sp['score']:.2f} "
           f"| CRFsuite `ap` {med(ap['train_end_to_end_s']):.1f} s (of which {med(ap['peer_features_s']):.1f} s "
           f"building its features in Python), {ap['model_mib']:.1f} MiB, F1 {ap['score']:.2f} |",
           f"| CRF by L-BFGS through sklearn-crfsuite's API (its tutorial's features, c1 = {skl['c1']}, "
           f"c2 = {skl['c2']}): `fit`, `predict` and test F1 | {med(ours['fit_seconds']):.1f} s, "
           f"{med(ours['predict_seconds']):.2f} s, F1 {med(ours['f1']) if isinstance(ours['f1'], dict) else ours['f1']:.2f} "
           f"| sklearn-crfsuite {med(theirs['fit_seconds']):.1f} s, {med(theirs['predict_seconds']):.2f} s, "
           f"F1 {med(theirs['f1']) if isinstance(theirs['f1'], dict) else theirs['f1']:.2f} |",
           f"| tagging with a model trained by CRF++, converted once (the test set {tag['copies']} times, one "
           f"process): tokens per second | {tag['systems']['seqbil tag']['tokens_per_s']['median']:,.0f} "
           f"({med(tag['speedup']):.2f}× crf_test's), labels that differ: {tag['labels_differ']} "
           f"| `crf_test` {tag['systems']['crf_test']['tokens_per_s']['median']:,.0f} |"]
    cites = "; ".join(f"`{r['command']}` at commit {r['commit'][:12]}, {r['date']}, {r['machine']['cpu']} "
                      f"({r['machine']['cores']} cores)" for r in (speed, skl, foreign))
    return "\n".join(out) + f"\n\nMedians of 5 runs, each system in a process of its own: {cites}.\n"


SPECIAL = {"headline": headline, "f1-summary": f1_summary, "multitask-summary": multitask_summary, "aso-summary": aso_summary,
           "aso-rawtext-summary": aso_rawtext_summary,
           "rpa-summary": rpa_summary, "rpa-polarity-summary": rpa_polarity_summary}


def render(name):
    if name in SPECIAL:
        return SPECIAL[name]()
    record = json.loads((ROOT / "results" / f"{name}.json").read_text(encoding="utf-8"))
    return RENDERERS[record["benchmark"]](record)


def readme_blocks(text):
    """[(name, current content)] of the generated blocks of a README text."""
    return [(m.group(2), m.group(3)) for m in BLOCK.finditer(text)]


PARAMS = re.compile(r"(<!-- params:begin -->\n)(.*?)(<!-- params:end -->)", re.S)
# a learner's own parameters: <!-- params:LEARNER --> ... <!-- /params -->
LEARNER_PARAMS = re.compile(r"(<!-- params:(?!begin)(\w+) -->\n)(.*?)(<!-- /params -->)", re.S)


def refresh(text):
    """The README text with its generated blocks rebuilt: the tables from their
    records, the option table from the parameter table."""
    from seqbil import params
    text = BLOCK.sub(lambda m: m.group(1) + render(m.group(2)) + m.group(4), text)
    text = LEARNER_PARAMS.sub(lambda m: m.group(1) + params.describe("markdown", m.group(2)) + m.group(4), text)
    return PARAMS.sub(lambda m: m.group(1) + params.describe("markdown") + m.group(3), text)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--readme", action="store_true", help="rewrite the generated blocks of README.md and docs/")
    args = ap.parse_args()
    if args.readme:
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
            text = path.read_text(encoding="utf-8")
            if (new := refresh(text)) != text:
                path.write_text(new, encoding="utf-8")
    for path in sorted((ROOT / "results").glob("*/*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        if record.get("benchmark") in RENDERERS:
            path.with_suffix(".md").write_text(RENDERERS[record["benchmark"]](record), encoding="utf-8")


if __name__ == "__main__":
    main()
