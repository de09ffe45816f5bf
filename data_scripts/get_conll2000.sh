#!/usr/bin/env bash
# Fetch the CoNLL-2000 chunking corpus into data/conll2000/ (see --help).
set -euo pipefail

PROG=get_conll2000
# shellcheck source=common.sh
. "$(dirname -- "${BASH_SOURCE[0]}")/common.sh"

BASE_URL=https://www.clips.uantwerpen.be/conll2000/chunking
FILES=(train.txt test.txt)
declare -A MD5=(
    [train.txt]=2e2f24e90e20fcb910ab2251b5ed8cd0
    [test.txt]=56944df34be553b72a2a634e539a0951
)

usage() {
    cat <<EOF
Usage: bash data_scripts/get_conll2000.sh [--from DIR] [--out DIR] [--force]

Installs the CoNLL-2000 chunking corpus (Tjong Kim Sang & Buchholz, 2000) as
  <out>/conll2000/train.txt   (8,936 sentences; md5 ${MD5[train.txt]})
  <out>/conll2000/test.txt    (2,012 sentences; md5 ${MD5[test.txt]})
one "word POS chunk" token per line, blank line between sentences.

Without --from it downloads $BASE_URL/{train,test}.txt.gz;
if that fails it falls back to the local copy in <repo>/../shared/data
(or \$SEQBIL_LOCAL_DATA) and says so.  The md5 of both files is checked
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

Environment: SEQBIL_LOCAL_DATA, SEQBIL_DL_TIMEOUT, SEQBIL_DL_MAX_TIME (see common.sh).
EOF
}

FROM='' OUT='' FORCE=0
while (($#)); do
    case $1 in
        --from) (($# >= 2)) || die "--from needs a directory (try --help)"; FROM=$2; shift 2 ;;
        --from=*) FROM=${1#*=}; shift ;;
        --out) (($# >= 2)) || die "--out needs a directory (try --help)"; OUT=$2; shift 2 ;;
        --out=*) OUT=${1#*=}; shift ;;
        --force) FORCE=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) printf '%s: error: unknown argument: %s (try --help)\n' "$PROG" "$1" >&2; exit 2 ;;
    esac
done

DEST="${OUT:-$SEQBIL_DATA_DIR}/conll2000"
TRIED=()   # what was tried, for the final error message

up_to_date() {
    local f
    for f in "${FILES[@]}"; do seqbil_check_md5 "$DEST/$f" "${MD5[$f]}" || return 1; done
}

# find_local DIR: set SRC[train.txt], SRC[test.txt] from DIR or DIR/conll2000.
declare -A SRC=()
find_local() {
    local dir=$1 d f ok
    if [[ ! -d $dir ]]; then
        TRIED+=("local copy $(seqbil_showpath "$dir"): no such directory")
        return 1
    fi
    for d in "$dir" "$dir/conll2000"; do
        ok=1
        for f in "${FILES[@]}"; do
            seqbil_find "SRC[$f]" "$d/$f" || ok=0
        done
        ((ok)) && return 0
    done
    TRIED+=("local copy $(seqbil_showpath "$dir"): no {train,test}.txt[.gz] in it or in its conll2000/ subdirectory")
    return 1
}

# stage WHAT: unpack SRC[*] into a staging directory inside DEST and check the md5s.
STAGE=
stage() {
    local what=$1 f sum
    if [[ -z $STAGE ]]; then
        seqbil_mkdir "$DEST"
        seqbil_mktempdir STAGE "$DEST"
    fi
    for f in "${FILES[@]}"; do
        if ! seqbil_extract "${SRC[$f]}" "$STAGE/$f"; then
            TRIED+=("$what: could not read/unpack ${SRC[$f]}")
            return 1
        fi
        sum=$(seqbil_md5 "$STAGE/$f")
        if [[ $sum != "${MD5[$f]}" ]]; then
            TRIED+=("$what: $f has md5 $sum, expected ${MD5[$f]}")
            rm -f -- "$STAGE/$f"
            return 1
        fi
    done
}

from_local() {   # DIR
    find_local "$1" || return 1
    if ((!FORCE)) && up_to_date; then
        say "up to date: $(seqbil_showpath "$DEST")/{train,test}.txt have the right md5; nothing to do"
        exit 0
    fi
    stage "local copy $(seqbil_showpath "$1")"
}

from_download() {
    local f
    seqbil_mktempdir WORK
    for f in "${FILES[@]}"; do
        say "downloading $BASE_URL/$f.gz"
        if ! seqbil_download "$BASE_URL/$f.gz" "$WORK/$f.gz"; then
            TRIED+=("download $BASE_URL/$f.gz: $SEQBIL_DL_ERROR")
            return 1
        fi
        SRC[$f]=$WORK/$f.gz
    done
    stage "download from $BASE_URL"
}

fail() {
    local t
    {
        printf '%s: error: could not obtain CoNLL-2000. Tried:\n' "$PROG"
        for t in "${TRIED[@]}"; do printf '  - %s\n' "$t"; done
        printf 'Point --from at a directory holding train.txt.gz and test.txt.gz (or train.txt and test.txt),\n'
        printf 'directly or in a conll2000/ subdirectory, e.g.:\n'
        printf '  bash data_scripts/get_conll2000.sh --from ../shared/data\n'
    } >&2
    exit 1
}

if [[ -n $FROM ]]; then
    from_local "$FROM" || fail
    SOURCE="local copy $(seqbil_showpath "$FROM")"
else
    if ((!FORCE)) && up_to_date; then
        say "up to date: $(seqbil_showpath "$DEST")/{train,test}.txt have the right md5; nothing to do"
        exit 0
    fi
    if from_download; then
        SOURCE=$BASE_URL
    else
        warn "${TRIED[-1]}"
        say "download failed; falling back to the local copy in $(seqbil_showpath "$SEQBIL_LOCAL_DATA")"
        from_local "$SEQBIL_LOCAL_DATA" || fail
        SOURCE="local copy $(seqbil_showpath "$SEQBIL_LOCAL_DATA"), as the download failed"
    fi
fi

for f in "${FILES[@]}"; do mv -f -- "$STAGE/$f" "$DEST/$f"; done
say "installed $(seqbil_showpath "$DEST")/train.txt and test.txt (md5 verified) from $SOURCE"
