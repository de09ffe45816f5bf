"""The SIGHAN word segmentation data (the sighan2005 command, get_sighan2005.sh): the SIGHAN
2005 bakeoff's pku, msr, cityu and as files from the official icwb2-data.zip or a local copy
(Big5 files converted to UTF-8) into <out>/sighan2005/, and SIGHAN 2008 SXU, which has no usable
public download, from a local copy into <out>/sighan2008-sxu/."""
import os
import sys
import tempfile
import zipfile
import zlib

from . import common

SIGHAN_PROG = "get_sighan2005"
SIGHAN_URL = "http://sighan.cs.uchicago.edu/bakeoff2005/data/icwb2-data.zip"
SIGHAN_CORPORA = ("pku", "msr", "cityu", "as")
ONLY_CHOICES = ("sighan2005", "sighan2008-sxu")
PKU_STAND_IN = "pku_training.approx.utf8"  # in the local copy only: see data_scripts/README.md
# Extensions of the Big5 files that some versions of icwb2-data have instead of .utf8
BIG5_EXTENSIONS = {"cityu": ("txt",), "as": ("b5", "txt")}

SIGHAN_USAGE = f"""\
Usage: bash data_scripts/get_sighan2005.sh [--from PATH] [--out DIR] [--only WHICH] [--force]
   or: python3 data_scripts/corpora.py sighan2005 [--from PATH] [--out DIR] [--only WHICH] [--force]

SIGHAN 2005 (Second International Chinese Word Segmentation Bakeoff), corpora
pku msr cityu as, installed as (whatever the source has):
  <out>/sighan2005/<c>_training.utf8        segmented training set
  <out>/sighan2005/<c>_test.utf8            raw test text
  <out>/sighan2005/<c>_test_gold.utf8       segmented gold test set
  <out>/sighan2005/<c>_training_words.utf8  training word list (for OOV scoring)
  <out>/sighan2005/score                    the bakeoff's scoring script (if present)
  <out>/sighan2005/SHA256SUMS               sha256 of the installed files
All files are UTF-8 (Big5 training/test files of cityu and as, found in some
versions of the archive, are converted from {common.BIG5} as glibc's iconv does;
for as, from {common.CP950} if {common.BIG5} fails).

Without --from it downloads {SIGHAN_URL}
and, if that fails, uses the local copy in <repo>/../shared/data (or
$SEQBIL_LOCAL_DATA) and says so.  The local copy has no official training
sets: for pku it has the stand-in pku_training.approx.utf8 (installed under
that name, never as pku_training.utf8); msr, cityu and as are test-only there.

No checksums of the official files are known, so the sha256 of what was
installed is recorded in SHA256SUMS; the next run checks the installed files
against it and does nothing when they match (use --force to reinstall).

SIGHAN 2008 SXU (fourth bakeoff, simplified Chinese) has no official public
download URL that can be used, so it is installed from a local copy only:
a directory containing sighan2008-sxu/{{train,test}}.txt[.gz] (the --from
directory, or <repo>/../shared/data without --from) gives
  <out>/sighan2008-sxu/train.txt, test.txt, SHA256SUMS
If no such copy is found it is skipped with a notice.

Options:
  --from PATH  take a local copy instead of downloading.  PATH is one of:
               a directory with a sighan2005/ subdirectory (e.g. ../shared/data),
               a sighan2005/ directory of (optionally .gz) files,
               an unpacked icwb2-data directory (training/ testing/ gold/ scripts/),
               a directory holding icwb2-data/ or icwb2-data.zip, or the zip itself
  --out DIR    data directory to install into (default: <repo>/data)
  --only WHICH install only sighan2005 or only sighan2008-sxu
  --force      reinstall even if the installed files are up to date
  -h, --help   show this help

Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see data_scripts/README.md).
"""


def find_text(corpus, directory, subdir, stems):
    """(source, encoding) for STEM.utf8 in DIRECTORY/SUBDIR or DIRECTORY (each also .gz),
    or, for cityu and as, for the Big5 files some versions of the archive have instead."""
    for stem in stems:
        if src := common.find_file(f"{directory}/{subdir}/{stem}.utf8", f"{directory}/{stem}.utf8"):
            return src, None
    for stem in stems:
        for ext in BIG5_EXTENSIONS.get(corpus, ()):
            if src := common.find_file(f"{directory}/{subdir}/{stem}.{ext}", f"{directory}/{stem}.{ext}"):
                return src, common.BIG5
    return None


def plan_sighan2005(directory):
    """What DIRECTORY (icwb2-data layout, or flat) provides for SIGHAN 2005."""
    plan = []
    d = directory
    for c in SIGHAN_CORPORA:
        if found := find_text(c, d, "training", [f"{c}_training"]):
            plan.append(common.PlanItem(f"{c}_training.utf8", *found))
        elif c == "pku" and (src := common.find_file(f"{d}/training/{PKU_STAND_IN}", f"{d}/{PKU_STAND_IN}")):
            plan.append(common.PlanItem(PKU_STAND_IN, src, None))
        # (the official archive calls the as gold file as_testing_gold.utf8)
        for name, subdir, stems in ((f"{c}_test.utf8", "testing", [f"{c}_test"]),
                                    (f"{c}_test_gold.utf8", "gold", [f"{c}_test_gold", f"{c}_testing_gold"]),
                                    (f"{c}_training_words.utf8", "gold", [f"{c}_training_words"])):
            if found := find_text(c, d, subdir, stems):
                plan.append(common.PlanItem(name, *found))
    if src := common.find_file(f"{d}/scripts/score", f"{d}/score"):
        plan.append(common.PlanItem("score", src, None))
    return plan


def plan_sighan2008(directory):
    """SIGHAN 2008 SXU from DIRECTORY/sighan2008-sxu, or DIRECTORY itself if it is sighan2008-sxu."""
    for d in (f"{directory}/sighan2008-sxu", directory):
        if d == directory and os.path.basename(common.showpath(directory)) != "sighan2008-sxu":
            continue
        train, test = common.find_file(f"{d}/train.txt"), common.find_file(f"{d}/test.txt")
        if train and test:
            return [common.PlanItem("train.txt", train, None), common.PlanItem("test.txt", test, None)]
    return []


def sighan_from_zip(path, what, scratch, tried):
    if not common.is_zip(path):
        tried.append(f"{what}: not a zip file")
        return None
    unpacked = tempfile.mkdtemp(prefix="unzip.", dir=scratch.work())
    try:
        with zipfile.ZipFile(path) as archive:
            archive.extractall(unpacked)
    except (OSError, EOFError, ValueError, RuntimeError, zlib.error, zipfile.BadZipFile):
        tried.append(f"{what}: could not unpack it")
        return None
    for d in (f"{unpacked}/icwb2-data", unpacked):
        if os.path.isdir(d) and (plan := plan_sighan2005(d)):
            return common.Found(plan, what)
    tried.append(f"{what}: no icwb2-data files in it")
    return None


def sighan_from_path(path, scratch, tried):
    """SIGHAN 2005 from a local directory or zip file."""
    show = common.showpath(path)
    if os.path.isfile(path):
        return sighan_from_zip(path, show, scratch, tried)
    if not os.path.isdir(path):
        tried.append(f"local copy {show}: no such file or directory")
        return None
    for d in (f"{path}/sighan2005", f"{path}/icwb2-data", path):
        if os.path.isdir(d) and (plan := plan_sighan2005(d)):
            return common.Found(plan, f"local copy {common.showpath(d)}")
    if os.path.isfile(f"{path}/icwb2-data.zip"):
        return sighan_from_zip(f"{path}/icwb2-data.zip", f"{show}/icwb2-data.zip", scratch, tried)
    tried.append(f"local copy {show}: no SIGHAN 2005 files (<c>_test.utf8, <c>_test_gold.utf8, ...) in it, "
                 "in its sighan2005/ or icwb2-data/ subdirectory, nor an icwb2-data.zip")
    return None


def sighan_download(scratch, tried):
    if (files := common.download_files(SIGHAN_PROG, [SIGHAN_URL], scratch.work(), tried)) is None:
        return None
    return sighan_from_zip(files[0], f"download from {SIGHAN_URL}", scratch, tried)



def report_sighan2005(dest):
    """Say which corpora in DEST have a training set and which are test-only."""
    names = set(common.manifest_names(dest))
    common.say(SIGHAN_PROG, f"SIGHAN 2005 in {common.showpath(dest)}:")
    with_training, test_only = [], []
    for c in SIGHAN_CORPORA:
        if f"{c}_training.utf8" in names:
            training = f"{c}_training.utf8"
            with_training.append(c)
        elif c == "pku" and PKU_STAND_IN in names:
            training = f"{PKU_STAND_IN} (stand-in)"
            with_training.append("pku(stand-in)")
        else:
            training = "none"
            test_only.append(c)
        parts = "".join(f" {part}" if f"{c}_{part}.utf8" in names else f" (no {part})"
                        for part in ("test", "test_gold", "training_words"))
        print(f"  {c:<6} training: {training:<36}{parts}", flush=True)
    if "score" not in names:
        print("  (no scoring script in this source; the official one is scripts/score in icwb2-data.zip)", flush=True)
    common.say(SIGHAN_PROG, f"with a training set: {' '.join(with_training) or 'none'}; "
                            f"test-only: {' '.join(test_only) or 'none'}")
    if PKU_STAND_IN in names and "pku_training.utf8" not in names:
        common.say(SIGHAN_PROG, "notice: pku training = local stand-in pku_training.approx.utf8 (People's Daily 1998, "
                                "not the official pku_training.utf8; F1 only approximately comparable)")


def sighan2005_failed(tried, source):
    lines = [f"{SIGHAN_PROG}: error: could not obtain SIGHAN 2005 (icwb2-data). Tried:", *(f"  - {t}" for t in tried),
             "Point --from at the local copy (a directory with sighan2005/, a sighan2005/ directory,",
             "an unpacked icwb2-data directory, or icwb2-data.zip), e.g.:",
             "  bash data_scripts/get_sighan2005.sh --from ../shared/data"]
    if source and os.path.exists(source) and plan_sighan2008(source):
        lines.append(f"({common.showpath(source)} does hold SIGHAN 2008 SXU; to install only that, "
                     "add --only sighan2008-sxu)")
    print("\n".join(lines), file=sys.stderr, flush=True)
    return 1


def install_sighan2005(dest, source, force, scratch):
    tried = []
    problem = None  # why the installed files are not up to date, if that was checked
    if source:
        found = sighan_from_path(source, scratch, tried)
        if found is None:
            return sighan2005_failed(tried, source)
        if not force:
            problem = common.manifest_verify(dest, [item.name for item in found.plan])
            if problem is None:
                common.say(SIGHAN_PROG, f"up to date: {common.showpath(dest)} matches its {common.MANIFEST}; "
                                        "nothing to do")
                report_sighan2005(dest)
                return 0
    else:
        if not force:
            problem = common.manifest_verify(dest)
            if problem is None:
                common.say(SIGHAN_PROG, f"up to date: {common.showpath(dest)} matches its {common.MANIFEST}; "
                                        "nothing to do (--force to reinstall)")
                report_sighan2005(dest)
                return 0
        found = sighan_download(scratch, tried)
        if found is None:
            local = common.local_data_dir()
            common.warn(SIGHAN_PROG, tried[-1])
            common.say(SIGHAN_PROG, f"download failed; falling back to the local copy in {common.showpath(local)}")
            found = sighan_from_path(local, scratch, tried)
            if found is None:
                return sighan2005_failed(tried, None)
            found = found._replace(description=f"{found.description}, as the download failed")
    if problem and os.path.isfile(f"{dest}/{common.MANIFEST}"):
        common.say(SIGHAN_PROG, f"reinstalling: {problem}")
    if not common.install_plan(SIGHAN_PROG, dest, found, scratch):
        return 1
    report_sighan2005(dest)
    return 0


def install_sighan2008(dest, source, only, force, scratch):
    """SIGHAN 2008 SXU, from SOURCE or the local copy (it has no usable public download)."""
    source = source or common.local_data_dir()
    show = common.showpath(source)
    plan = plan_sighan2008(source) if os.path.exists(source) else []
    expected = ["train.txt", "test.txt"]
    if plan:
        found = common.Found(plan, f"local copy {common.showpath(os.path.dirname(plan[0].source))}")
        problem = None if force else common.manifest_verify(dest, expected)
        if not force and problem is None:
            common.say(SIGHAN_PROG, f"up to date: {common.showpath(dest)} (SIGHAN 2008 SXU) matches its "
                                    f"{common.MANIFEST}; nothing to do")
            return 0
        if problem and os.path.isfile(f"{dest}/{common.MANIFEST}"):
            common.say(SIGHAN_PROG, f"reinstalling SIGHAN 2008 SXU: {problem}")
        return 0 if common.install_plan(SIGHAN_PROG, dest, found, scratch) else 1
    if only == "sighan2008-sxu":
        print(f"{SIGHAN_PROG}: error: SIGHAN 2008 SXU: no sighan2008-sxu/{{train,test}}.txt[.gz] in {show}.\n"
              "It has no usable public download URL; point --from at a directory containing sighan2008-sxu/, e.g.:\n"
              "  bash data_scripts/get_sighan2005.sh --only sighan2008-sxu --from ../shared/data",
              file=sys.stderr, flush=True)
        return 1
    if common.manifest_verify(dest, expected) is None:
        common.say(SIGHAN_PROG, f"SIGHAN 2008 SXU: no local copy in {show}, "
                                f"but {common.showpath(dest)} is installed and matches its {common.MANIFEST}")
    else:
        common.say(SIGHAN_PROG, "notice: SIGHAN 2008 SXU not installed: "
                                f"no sighan2008-sxu/{{train,test}}.txt[.gz] in {show} "
                                "(there is no public download; use --from DIR with DIR/sighan2008-sxu/)")
    return 0


def install_sighan(out=None, source=None, only=None, force=False):
    """Install SIGHAN 2005 into OUT/sighan2005 and SIGHAN 2008 SXU into OUT/sighan2008-sxu
    (OUT default <repo>/data; ONLY: one of them).  Returns the exit status."""
    if only and only not in ONLY_CHOICES:
        raise ValueError(f"only must be one of {ONLY_CHOICES}, not {only!r}")
    root = out or common.DATA_DIR
    status = 0
    with common.Scratch() as scratch:
        try:
            if only != "sighan2008-sxu":
                status = install_sighan2005(f"{root}/sighan2005", source, force, scratch)
            # (after a SIGHAN 2005 failure its error is the whole story; SXU is not attempted)
            if only != "sighan2005" and status == 0:
                status = install_sighan2008(f"{root}/sighan2008-sxu", source, only, force, scratch)
        except BrokenPipeError:
            raise  # corpora.main() ends the run quietly
        except (common.Fatal, OSError) as e:
            common.error(SIGHAN_PROG, str(e))
            return 1
    return status
