"""CoNLL-2000 chunking (the conll2000 command, get_conll2000.sh): train.txt and test.txt
downloaded from the shared task's site or taken from a local copy, unpacked, checked against
their official md5 and installed into <out>/conll2000/."""
import os
import sys

from . import common

CONLL_PROG = "get_conll2000"
CONLL_URL = "https://www.clips.uantwerpen.be/conll2000/chunking"
CONLL_FILES = ("train.txt", "test.txt")
# md5 of the official uncompressed files
CONLL_MD5 = {
    "train.txt": "2e2f24e90e20fcb910ab2251b5ed8cd0",
    "test.txt": "56944df34be553b72a2a634e539a0951",
}

CONLL_USAGE = f"""\
Usage: bash data_scripts/get_conll2000.sh [--from DIR] [--out DIR] [--force]
   or: python3 data_scripts/corpora.py conll2000 [--from DIR] [--out DIR] [--force]

Installs the CoNLL-2000 chunking corpus (Tjong Kim Sang & Buchholz, 2000) as
  <out>/conll2000/train.txt   (8,936 sentences; md5 {CONLL_MD5['train.txt']})
  <out>/conll2000/test.txt    (2,012 sentences; md5 {CONLL_MD5['test.txt']})
one "word POS chunk" token per line, blank line between sentences.

Without --from it downloads {CONLL_URL}/{{train,test}}.txt.gz;
if that fails it falls back to the local copy in <repo>/../shared/data
(or $SEQBIL_LOCAL_DATA) and says so.  The md5 of both files is checked
before anything is installed; files are written atomically.  When the
installed files already have the right checksums nothing is done.

Options:
  --from DIR   take a local copy instead of downloading.  DIR holds
               train.txt.gz and test.txt.gz (or uncompressed train.txt and
               test.txt), directly or in a conll2000/ subdirectory, e.g.
               --from ../shared/data  or  --from ../shared/data/conll2000
  --out DIR    data directory to install into (default: <repo>/data);
               the files go to DIR/conll2000/
  --force      reinstall even if the installed files are up to date
  -h, --help   show this help

Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see data_scripts/README.md).
"""


def conll_up_to_date(dest, md5):
    return all(os.path.isfile(f"{dest}/{f}") and common.file_digest(f"{dest}/{f}", "md5") == md5[f]
               for f in CONLL_FILES)


def find_conll(directory, tried):
    """{name: source file} for train.txt and test.txt in DIRECTORY or DIRECTORY/conll2000."""
    if not os.path.isdir(directory):
        tried.append(f"local copy {common.showpath(directory)}: no such directory")
        return None
    for d in (directory, f"{directory}/conll2000"):
        sources = {f: common.find_file(f"{d}/{f}") for f in CONLL_FILES}
        if all(sources.values()):
            return sources
    tried.append(f"local copy {common.showpath(directory)}: "
                 "no {train,test}.txt[.gz] in it or in its conll2000/ subdirectory")
    return None


def stage_conll(sources, stage, what, md5, tried):
    """Unpack SOURCES into STAGE and check their md5; False (a note in TRIED) if that fails."""
    for f in CONLL_FILES:
        if not common.extract(sources[f], f"{stage}/{f}"):
            tried.append(f"{what}: could not read/unpack {sources[f]}")
            return False
        digest = common.file_digest(f"{stage}/{f}", "md5")
        if digest != md5[f]:
            tried.append(f"{what}: {f} has md5 {digest}, expected {md5[f]}")
            common.remove_file(f"{stage}/{f}")
            return False
    return True


def download_conll(work, tried):
    """Download train.txt.gz and test.txt.gz into WORK: {name: file}, or None."""
    files = common.download_files(CONLL_PROG, [f"{CONLL_URL}/{f}.gz" for f in CONLL_FILES], work, tried)
    return None if files is None else dict(zip(CONLL_FILES, files))


def conll_failed(tried):
    lines = [f"{CONLL_PROG}: error: could not obtain CoNLL-2000. Tried:", *(f"  - {t}" for t in tried),
             "Point --from at a directory holding train.txt.gz and test.txt.gz (or train.txt and test.txt),",
             "directly or in a conll2000/ subdirectory, e.g.:",
             "  bash data_scripts/get_conll2000.sh --from ../shared/data"]
    print("\n".join(lines), file=sys.stderr, flush=True)
    return 1


def install_conll2000(out=None, source=None, force=False, md5=None):
    """Install CoNLL-2000 into OUT/conll2000 (OUT default <repo>/data), from the local copy
    SOURCE or, without SOURCE, by download, falling back on the local copy.  Returns the exit status."""
    md5 = CONLL_MD5 if md5 is None else md5
    dest = f"{out or common.DATA_DIR}/conll2000"
    tried = []
    with common.Scratch() as scratch:
        stage = None

        def stage_from(sources, what):
            nonlocal stage
            if stage is None:
                scratch.makedirs(dest)
                stage = scratch.tempdir(dest)  # beside the output, so that installing is a rename
            return stage_conll(sources, stage, what, md5, tried)

        def from_local(directory):
            """'up to date', 'staged' or None (failed)."""
            sources = find_conll(directory, tried)
            if sources is None:
                return None
            if not force and conll_up_to_date(dest, md5):
                return "up to date"
            return "staged" if stage_from(sources, f"local copy {common.showpath(directory)}") else None

        try:
            if source:
                outcome = from_local(source)
                origin = f"local copy {common.showpath(source)}"
            else:
                if not force and conll_up_to_date(dest, md5):
                    outcome = "up to date"
                else:
                    sources = download_conll(scratch.work(), tried)
                    if sources is not None and stage_from(sources, f"download from {CONLL_URL}"):
                        outcome, origin = "staged", CONLL_URL
                    else:
                        local = common.local_data_dir()
                        common.warn(CONLL_PROG, tried[-1])
                        common.say(CONLL_PROG, "download failed; falling back to the local copy in "
                                               f"{common.showpath(local)}")
                        outcome = from_local(local)
                        origin = f"local copy {common.showpath(local)}, as the download failed"
            if outcome is None:
                return conll_failed(tried)
            if outcome == "up to date":
                common.say(CONLL_PROG, f"up to date: {common.showpath(dest)}/{{train,test}}.txt have the right md5; "
                                       "nothing to do")
                return 0
            for f in CONLL_FILES:
                os.replace(f"{stage}/{f}", f"{dest}/{f}")
        except BrokenPipeError:
            raise  # corpora.main() ends the run quietly
        except (common.Fatal, OSError) as e:
            common.error(CONLL_PROG, str(e))
            return 1
    common.say(CONLL_PROG, f"installed {common.showpath(dest)}/train.txt and test.txt (md5 verified) "
                           f"from {origin}")
    return 0
