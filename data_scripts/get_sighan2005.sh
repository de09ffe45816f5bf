#!/usr/bin/env bash
# Fetch the SIGHAN 2005 word segmentation bakeoff data (icwb2-data) into
# data/sighan2005/, and the SIGHAN 2008 SXU corpus from a local copy into
# data/sighan2008-sxu/ (see --help).
set -euo pipefail

PROG=get_sighan2005
# shellcheck source=common.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

URL=http://sighan.cs.uchicago.edu/bakeoff2005/data/icwb2-data.zip
CORPORA=(pku msr cityu as)
BIG5='BIG5-HKSCS'

usage() {
    cat <<EOF
Usage: bash data_scripts/get_sighan2005.sh [--from PATH] [--out DIR] [--only WHICH] [--force]

SIGHAN 2005 (Second International Chinese Word Segmentation Bakeoff), corpora
pku msr cityu as, installed as (whatever the source has):
  <out>/sighan2005/<c>_training.utf8        segmented training set
  <out>/sighan2005/<c>_test.utf8            raw test text
  <out>/sighan2005/<c>_test_gold.utf8       segmented gold test set
  <out>/sighan2005/<c>_training_words.utf8  training word list (for OOV scoring)
  <out>/sighan2005/score                    the bakeoff's scoring script (if present)
  <out>/sighan2005/SHA256SUMS               sha256 of the installed files
All files are UTF-8 (Big5 training/test files of cityu and as, found in some
versions of the archive, are converted with iconv -f $BIG5).

Without --from it downloads $URL
and, if that fails, uses the local copy in <repo>/../shared/data (or
\$SEQBIL_LOCAL_DATA) and says so.  The local copy has no official training
sets: for pku it has the stand-in pku_training.approx.utf8 (installed under
that name, never as pku_training.utf8); msr, cityu and as are test-only there.

No checksums of the official files are known, so the sha256 of what was
installed is recorded in SHA256SUMS; the next run checks the installed files
against it and does nothing when they match (use --force to reinstall).

SIGHAN 2008 SXU (fourth bakeoff, simplified Chinese) has no official public
download URL that can be used, so it is installed from a local copy only:
a directory containing sighan2008-sxu/{train,test}.txt[.gz] (the --from
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

Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see common.sh).
EOF
}

FROM='' OUT='' ONLY='' FORCE=0
while (($#)); do
    case $1 in
        --from) (($# >= 2)) || die "--from needs a path (try --help)"; FROM=$2; shift 2 ;;
        --from=*) FROM=${1#*=}; shift ;;
        --out) (($# >= 2)) || die "--out needs a directory (try --help)"; OUT=$2; shift 2 ;;
        --out=*) OUT=${1#*=}; shift ;;
        --only) (($# >= 2)) || die "--only needs sighan2005 or sighan2008-sxu"; ONLY=$2; shift 2 ;;
        --only=*) ONLY=${1#*=}; shift ;;
        --force) FORCE=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) printf '%s: error: unknown argument: %s (try --help)\n' "$PROG" "$1" >&2; exit 2 ;;
    esac
done
case $ONLY in
    '' | sighan2005 | sighan2008-sxu) ;;
    *) die "--only takes sighan2005 or sighan2008-sxu, not '$ONLY'" ;;
esac

OUT_ROOT=${OUT:-$SEQBIL_DATA_DIR}
DEST05=$OUT_ROOT/sighan2005
DEST08=$OUT_ROOT/sighan2008-sxu
RC=0
WORK=

work_dir() { [[ -n $WORK ]] || seqbil_mktempdir WORK; }

# ------------------------------------------------------------------ plans
# A plan is what a source provides: target name, source file, source encoding
# (empty = already UTF-8).
P_DST=() P_SRC=() P_ENC=()
plan_reset() { P_DST=() P_SRC=() P_ENC=(); }
plan_add() { P_DST+=("$1"); P_SRC+=("$2"); P_ENC+=("$3"); }

# find_text VAR_SRC VAR_ENC CORPUS DIR SUBDIR STEM...: find STEM.utf8 in DIR/SUBDIR or DIR
# (each also as .gz); for cityu and as also the Big5 versions (.txt, .b5).
find_text() {
    local _vs=$1 _ve=$2 c=$3 d=$4 sub=$5 stem ext exts=()
    shift 5
    printf -v "$_ve" '%s' ""
    for stem in "$@"; do
        seqbil_find "$_vs" "$d/$sub/$stem.utf8" "$d/$stem.utf8" && return 0
    done
    case $c in cityu) exts=(txt) ;; as) exts=(b5 txt) ;; esac
    for stem in "$@"; do
        for ext in "${exts[@]}"; do
            if seqbil_find "$_vs" "$d/$sub/$stem.$ext" "$d/$stem.$ext"; then
                printf -v "$_ve" '%s' "$BIG5"
                return 0
            fi
        done
    done
    return 1
}

# plan05 DIR: what DIR provides for SIGHAN 2005 (icwb2-data layout or flat).
plan05() {
    local d=$1 c src enc
    plan_reset
    for c in "${CORPORA[@]}"; do
        if find_text src enc "$c" "$d" training "${c}_training"; then
            plan_add "${c}_training.utf8" "$src" "$enc"
        elif [[ $c == pku ]] && seqbil_find src "$d/training/pku_training.approx.utf8" "$d/pku_training.approx.utf8"; then
            plan_add pku_training.approx.utf8 "$src" ""
        fi
        find_text src enc "$c" "$d" testing "${c}_test" && plan_add "${c}_test.utf8" "$src" "$enc"
        # (the official archive calls the as gold file as_testing_gold.utf8)
        find_text src enc "$c" "$d" gold "${c}_test_gold" "${c}_testing_gold" && plan_add "${c}_test_gold.utf8" "$src" "$enc"
        find_text src enc "$c" "$d" gold "${c}_training_words" && plan_add "${c}_training_words.utf8" "$src" "$enc"
    done
    seqbil_find src "$d/scripts/score" "$d/score" && plan_add score "$src" ""
    ((${#P_DST[@]} > 0))
}

# plan08 DIR: SIGHAN 2008 SXU from DIR/sighan2008-sxu (or DIR itself if it is sighan2008-sxu).
plan08() {
    local d src_tr src_te
    plan_reset
    for d in "$1/sighan2008-sxu" "$1"; do
        [[ $d == "$1" && $(basename -- "$(seqbil_abspath "$1")") != sighan2008-sxu ]] && continue
        if seqbil_find src_tr "$d/train.txt" && seqbil_find src_te "$d/test.txt"; then
            plan_add train.txt "$src_tr" ""
            plan_add test.txt "$src_te" ""
            return 0
        fi
    done
    return 1
}

# ------------------------------------------------------------------ sources
TRIED=()
SRC_DESC=

# from_zip ZIP WHAT: unpack ZIP and plan from it.
from_zip() {
    local zip=$1 what=$2 u d
    if ! _seqbil_is_zip "$zip"; then TRIED+=("$what: not a zip file"); return 1; fi
    work_dir
    u=$(mktemp -d -- "$WORK/unzip.XXXXXX")
    if ! seqbil_unzip "$zip" "$u"; then TRIED+=("$what: could not unpack it"); return 1; fi
    for d in "$u/icwb2-data" "$u"; do
        if [[ -d $d ]] && plan05 "$d"; then SRC_DESC=$what; return 0; fi
    done
    TRIED+=("$what: no icwb2-data files in it")
    return 1
}

# from_path PATH: plan SIGHAN 2005 from a local directory or zip file.
from_path() {
    local p=$1 show d
    show=$(seqbil_showpath "$p")
    if [[ -f $p ]]; then from_zip "$p" "$show"; return; fi
    if [[ ! -d $p ]]; then TRIED+=("local copy $show: no such file or directory"); return 1; fi
    for d in "$p/sighan2005" "$p/icwb2-data" "$p"; do
        if [[ -d $d ]] && plan05 "$d"; then SRC_DESC="local copy $(seqbil_showpath "$d")"; return 0; fi
    done
    if [[ -f $p/icwb2-data.zip ]]; then from_zip "$p/icwb2-data.zip" "$show/icwb2-data.zip"; return; fi
    TRIED+=("local copy $show: no SIGHAN 2005 files (<c>_test.utf8, <c>_test_gold.utf8, ...) in it, in its sighan2005/ or icwb2-data/ subdirectory, nor an icwb2-data.zip")
    return 1
}

from_download() {
    work_dir
    say "downloading $URL"
    if ! seqbil_download "$URL" "$WORK/icwb2-data.zip"; then
        TRIED+=("download $URL: $SEQBIL_DL_ERROR")
        return 1
    fi
    from_zip "$WORK/icwb2-data.zip" "download from $URL"
}

# ------------------------------------------------------------------ install
# install_plan DEST: write every planned file into DEST atomically, then SHA256SUMS.
install_plan() {
    local dest=$1 stage i dst src enc old n names=()
    seqbil_mkdir "$dest"
    seqbil_mktempdir stage "$dest"
    for i in "${!P_DST[@]}"; do
        dst=${P_DST[i]} src=${P_SRC[i]} enc=${P_ENC[i]}
        if seqbil_extract "$src" "$stage/$dst" "$enc"; then
            [[ -n $enc ]] && say "converted $(basename -- "$src") from $enc to UTF-8"
        elif [[ -n $enc && $dst == as_* ]] && seqbil_extract "$src" "$stage/$dst" CP950; then
            say "converted $(basename -- "$src") from CP950 to UTF-8"
        else
            warn "skipping $dst: could not read${enc:+/convert from $enc} $src"
            continue
        fi
        names+=("$dst")
    done
    ((${#names[@]} > 0)) || { warn "nothing could be installed into $dest"; return 1; }
    old=$(seqbil_manifest_names "$dest")
    rm -f -- "$dest/SHA256SUMS"   # an interrupted run must not look up to date
    for n in "${names[@]}"; do mv -f -- "$stage/$n" "$dest/$n"; done
    [[ -f $dest/score ]] && chmod 755 -- "$dest/score"
    seqbil_manifest_write "$dest" "${names[@]}"
    while IFS= read -r n; do
        [[ -n $n && -f $dest/$n ]] || continue
        printf '%s\n' "${names[@]}" | grep -Fxq -- "$n" ||
            warn "kept $n from an earlier install (not in this source; no longer listed in SHA256SUMS)"
    done <<<"$old"
    say "installed ${#names[@]} files into $(seqbil_showpath "$dest") from $SRC_DESC (sha256 in SHA256SUMS)"
}

report05() {
    local names c tr parts f with=() only=()
    names=$(seqbil_manifest_names "$DEST05")
    has() { grep -Fxq -- "$1" <<<"$names"; }
    say "SIGHAN 2005 in $(seqbil_showpath "$DEST05"):"
    for c in "${CORPORA[@]}"; do
        if has "${c}_training.utf8"; then tr="${c}_training.utf8"; with+=("$c")
        elif [[ $c == pku ]] && has pku_training.approx.utf8; then tr="pku_training.approx.utf8 (stand-in)"; with+=("pku(stand-in)")
        else tr="none"; only+=("$c")
        fi
        parts=
        for f in test test_gold training_words; do
            has "${c}_$f.utf8" && parts+=" $f" || parts+=" (no $f)"
        done
        printf '  %-6s training: %-36s%s\n' "$c" "$tr" "$parts"
    done
    has score || printf '  (no scoring script in this source; the official one is scripts/score in icwb2-data.zip)\n'
    say "with a training set: ${with[*]:-none}; test-only: ${only[*]:-none}"
    if has pku_training.approx.utf8 && ! has pku_training.utf8; then
        say "notice: pku training = local stand-in pku_training.approx.utf8 (People's Daily 1998, not the official pku_training.utf8; F1 only approximately comparable)"
    fi
}

fail05() {
    local t
    {
        printf '%s: error: could not obtain SIGHAN 2005 (icwb2-data). Tried:\n' "$PROG"
        for t in "${TRIED[@]}"; do printf '  - %s\n' "$t"; done
        printf 'Point --from at the local copy (a directory with sighan2005/, a sighan2005/ directory,\n'
        printf 'an unpacked icwb2-data directory, or icwb2-data.zip), e.g.:\n'
        printf '  bash data_scripts/get_sighan2005.sh --from ../shared/data\n'
        if [[ -n $FROM && -e $FROM ]] && plan08 "$FROM"; then
            printf '(%s does hold SIGHAN 2008 SXU; to install only that, add --only sighan2008-sxu)\n' "$(seqbil_showpath "$FROM")"
        fi
    } >&2
    RC=1
}

# ------------------------------------------------------------------ SIGHAN 2005
do05() {
    if [[ -n $FROM ]]; then
        from_path "$FROM" || { fail05; return; }
        if ((!FORCE)) && seqbil_manifest_verify "$DEST05" "${P_DST[@]}"; then
            say "up to date: $(seqbil_showpath "$DEST05") matches its SHA256SUMS; nothing to do"
            report05
            return
        fi
    else
        if ((!FORCE)) && seqbil_manifest_verify "$DEST05"; then
            say "up to date: $(seqbil_showpath "$DEST05") matches its SHA256SUMS; nothing to do (--force to reinstall)"
            report05
            return
        fi
        if ! from_download; then
            warn "${TRIED[-1]}"
            say "download failed; falling back to the local copy in $(seqbil_showpath "$SEQBIL_LOCAL_DATA")"
            from_path "$SEQBIL_LOCAL_DATA" || { fail05; return; }
            SRC_DESC+=", as the download failed"
        fi
    fi
    [[ -f $DEST05/SHA256SUMS ]] && [[ -n $SEQBIL_MANIFEST_PROBLEM ]] && say "reinstalling: $SEQBIL_MANIFEST_PROBLEM"
    install_plan "$DEST05" || { RC=1; return; }
    report05
}

# ------------------------------------------------------------------ SIGHAN 2008 SXU
do08() {
    local src=${FROM:-$SEQBIL_LOCAL_DATA} show
    show=$(seqbil_showpath "$src")
    if [[ -e $src ]] && plan08 "$src"; then
        SRC_DESC="local copy $(seqbil_showpath "$(dirname -- "${P_SRC[0]}")")"
        if ((!FORCE)) && seqbil_manifest_verify "$DEST08" "${P_DST[@]}"; then
            say "up to date: $(seqbil_showpath "$DEST08") (SIGHAN 2008 SXU) matches its SHA256SUMS; nothing to do"
            return
        fi
        [[ -f $DEST08/SHA256SUMS ]] && say "reinstalling SIGHAN 2008 SXU: $SEQBIL_MANIFEST_PROBLEM"
        install_plan "$DEST08" || RC=1
        return
    fi
    if [[ $ONLY == sighan2008-sxu ]]; then
        printf '%s: error: SIGHAN 2008 SXU: no sighan2008-sxu/{train,test}.txt[.gz] in %s.\n' "$PROG" "$show" >&2
        printf 'It has no usable public download URL; point --from at a directory containing sighan2008-sxu/, e.g.:\n' >&2
        printf '  bash data_scripts/get_sighan2005.sh --only sighan2008-sxu --from ../shared/data\n' >&2
        RC=1
    elif seqbil_manifest_verify "$DEST08" train.txt test.txt; then
        say "SIGHAN 2008 SXU: no local copy in $show, but $(seqbil_showpath "$DEST08") is installed and matches its SHA256SUMS"
    else
        say "notice: SIGHAN 2008 SXU not installed: no sighan2008-sxu/{train,test}.txt[.gz] in $show (there is no public download; use --from DIR with DIR/sighan2008-sxu/)"
    fi
}

[[ $ONLY == sighan2008-sxu ]] || do05
# (after a SIGHAN 2005 failure the error above is the whole story; SXU is not attempted)
[[ $ONLY == sighan2005 ]] || ((RC != 0)) || do08
exit "$RC"
