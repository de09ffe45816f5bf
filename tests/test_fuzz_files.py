"""Files from strangers, fuzzed with knowledge of their structure (fuzz_harness.py):
mutants of seqbil's models, checkpoints and structures with valid checksums, of CRF++
and CRFsuite models and of corpora go through every reader and command, each in a
child process whose address space is capped. Every run ends normally or with a clear
error; no case ends in a traceback, a signal, a hang or an out-of-memory error.

SEQBIL_FUZZ_FILE_CASES sets the cases per family (default 300: 2,100 in all); the
cases are seeded, and a failure names the case, which
`python tests/fuzz_harness.py --family F --seed S --only N` runs again.
"""
import os

import pytest

from fuzz_harness import FAMILIES, run_campaign

CASES = int(os.environ.get("SEQBIL_FUZZ_FILE_CASES", 300))
SEED = 20261128
GROUPS = {"models": ("sbm", "crfsuite", "sbs"), "the-rest": ("ckpt", "crfpp-text", "crfpp-binary", "corpus")}


@pytest.mark.parametrize("families", list(GROUPS.values()), ids=list(GROUPS))
def test_mutated_files_end_normally_or_in_a_clear_error(families, tmp_path):
    for family in families:
        summary = run_campaign(family, CASES, SEED, tmp_path)
        assert not summary["failures"], "\n".join(
            f"{family} case {f['case']} ({f.get('seed_file', '?')}, {f.get('run', '?')}; reproduce: python "
            f"tests/fuzz_harness.py --family {family} --seed {SEED} --only {f['case']}): {f['what'][:1500]}"
            for f in summary["failures"][:5])
        assert summary["ended"] == CASES
        # the mutants reach past the first check: some runs end normally, most are refused
        assert summary["runs"].get("ok", 0) > 0 and summary["runs"].get("refused", 0) > 0, summary


def test_every_family_is_fuzzed():
    assert sorted(f for group in GROUPS.values() for f in group) == sorted(FAMILIES)


def test_the_kept_inputs_of_the_coverage_guided_fuzzer_are_read_or_refused():
    """Every input kept for tests/fuzz_atheris.py, through its target as the fuzzer runs
    it (without atheris): the seed files are read, and whatever a run kept is read or
    refused with seqbil's documented error (replay raises anything else)."""
    from fuzz_atheris import TARGETS, replay
    results = replay()
    assert set(results) == set(TARGETS)
    for target, files in results.items():
        seeds = {name: read for name, read in files.items() if name.startswith("seed-")}
        assert seeds and all(seeds.values()), (target, files)
