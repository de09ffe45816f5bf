# shellcheck shell=bash
# shellcheck disable=SC2034  # variables here are used by the scripts that source this file
# Shared helpers for the data_scripts/get_*.sh scripts.  Source it; do not run it.
#
# Provides: repository root and default locations, messages, temporary files that
# are removed on exit, download (curl or wget, with timeouts), md5/sha256,
# decompress-if-gzipped (optionally converting the encoding to UTF-8), unzip,
# and SHA256SUMS manifests.
#
# Environment:
#   SEQBIL_LOCAL_DATA    local copy of the corpora to fall back on when a download
#                        fails (default: <repo>/../shared/data)
#   SEQBIL_DL_TIMEOUT    connect timeout for downloads, seconds (default 20)
#   SEQBIL_DL_MAX_TIME   maximum time per download, seconds (default 1800)

# Repository root = parent of the directory holding this file.
SEQBIL_ROOT=$(cd -P -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd)
SEQBIL_DATA_DIR="$SEQBIL_ROOT/data"
SEQBIL_LOCAL_DATA=${SEQBIL_LOCAL_DATA:-$SEQBIL_ROOT/../shared/data}
SEQBIL_DL_TIMEOUT=${SEQBIL_DL_TIMEOUT:-20}
SEQBIL_DL_MAX_TIME=${SEQBIL_DL_MAX_TIME:-1800}
PROG=${PROG:-$(basename -- "$0" .sh)}

say()  { printf '%s: %s\n' "$PROG" "$*"; }
warn() { printf '%s: warning: %s\n' "$PROG" "$*" >&2; }
die()  { printf '%s: error: %s\n' "$PROG" "$*" >&2; exit 1; }

# Absolute, normalized form of a path whose directory exists (the path itself need not).
seqbil_abspath() {
    local p=$1
    if [[ -d $p ]]; then (cd -P -- "$p" && pwd)
    else printf '%s/%s\n' "$(cd -P -- "$(dirname -- "$p")" && pwd)" "$(basename -- "$p")"
    fi
}

# Pretty form of a path for messages (normalized when it exists).
seqbil_showpath() {
    if [[ -e $1 ]]; then seqbil_abspath "$1"; else printf '%s\n' "$1"; fi
}

# ---------------------------------------------------------------- temporary files
# Everything registered here is removed when the script exits, however it exits,
# so an interrupted run never leaves a half-written file behind.
_SEQBIL_TMP=()
_SEQBIL_NEWDIRS=()
_seqbil_cleanup() {
    local p
    for p in "${_SEQBIL_TMP[@]}"; do [[ -n $p ]] && rm -rf -- "$p"; done
    # directories this run created and left empty (a failed run) are removed again
    for p in "${_SEQBIL_NEWDIRS[@]}"; do rmdir -- "$p" 2>/dev/null || true; done
}
trap _seqbil_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE

# seqbil_mkdir DIR: mkdir -p DIR; the directories it creates are removed again
# on exit if they are still empty then.
seqbil_mkdir() {
    local d=$1
    while [[ ! -d $d ]]; do _SEQBIL_NEWDIRS+=("$d"); d=$(dirname -- "$d"); done
    mkdir -p -- "$1" || die "cannot create directory $1"
}

# seqbil_mktempdir VAR [PARENT]: make a private temporary directory (inside PARENT,
# default $TMPDIR) that is removed on exit, and store its path in VAR.
# Output files are first written to such a directory inside the output directory,
# so that the final `mv` is an atomic rename on the same file system.
seqbil_mktempdir() {
    local _var=$1 _parent=${2:-${TMPDIR:-/tmp}} _d
    _d=$(mktemp -d -- "$_parent/.seqbil-tmp.XXXXXX") || die "cannot create a temporary directory in $_parent"
    _SEQBIL_TMP+=("$_d")
    printf -v "$_var" '%s' "$_d"
}

# ---------------------------------------------------------------- checksums
seqbil_md5() {
    if command -v md5sum >/dev/null 2>&1; then md5sum <"$1" | cut -d' ' -f1
    elif command -v md5 >/dev/null 2>&1; then md5 -q -- "$1"
    else die "need md5sum (coreutils) or md5"
    fi
}

seqbil_sha256() {
    if command -v sha256sum >/dev/null 2>&1; then sha256sum <"$1" | cut -d' ' -f1
    elif command -v shasum >/dev/null 2>&1; then shasum -a 256 <"$1" | cut -d' ' -f1
    else die "need sha256sum (coreutils) or shasum"
    fi
}

# seqbil_check_md5 FILE MD5: true when FILE exists and has that md5.
seqbil_check_md5() {
    [[ -f $1 ]] && [[ $(seqbil_md5 "$1") == "$2" ]]
}

# seqbil_manifest_names DIR: names listed in DIR/SHA256SUMS, one a line.
seqbil_manifest_names() {
    [[ -f $1/SHA256SUMS ]] || return 0
    sed -n 's/^[0-9a-f]\{64\} [ *]//p' -- "$1/SHA256SUMS"
}

# seqbil_manifest_verify DIR [NAME...]: true when DIR/SHA256SUMS exists, every file
# it lists exists with that sha256, and each NAME given is listed in it.
# On failure SEQBIL_MANIFEST_PROBLEM says why.
SEQBIL_MANIFEST_PROBLEM=
seqbil_manifest_verify() {
    local dir=$1 hash name n=0 listed
    shift
    SEQBIL_MANIFEST_PROBLEM=
    if [[ ! -f $dir/SHA256SUMS ]]; then SEQBIL_MANIFEST_PROBLEM="no $dir/SHA256SUMS"; return 1; fi
    while read -r hash name; do
        [[ -z ${hash:-} ]] && continue
        name=${name#\*}
        n=$((n + 1))
        if [[ ! -f $dir/$name ]]; then SEQBIL_MANIFEST_PROBLEM="$name is missing"; return 1; fi
        if [[ $(seqbil_sha256 "$dir/$name") != "$hash" ]]; then
            SEQBIL_MANIFEST_PROBLEM="$name does not match its sha256 in SHA256SUMS"; return 1
        fi
    done <"$dir/SHA256SUMS"
    if ((n == 0)); then SEQBIL_MANIFEST_PROBLEM="$dir/SHA256SUMS is empty"; return 1; fi
    listed=$(seqbil_manifest_names "$dir")
    for name in "$@"; do
        if ! grep -Fxq -- "$name" <<<"$listed"; then
            SEQBIL_MANIFEST_PROBLEM="$name (available in the source) is not installed yet"; return 1
        fi
    done
}

# seqbil_manifest_write DIR NAME...: write DIR/SHA256SUMS (atomically) for the NAMEs.
seqbil_manifest_write() {
    local dir=$1 name tmp
    shift
    tmp=$(mktemp -- "$dir/.SHA256SUMS.tmp.XXXXXX")
    _SEQBIL_TMP+=("$tmp")
    for name in "$@"; do
        printf '%s  %s\n' "$(seqbil_sha256 "$dir/$name")" "$name"
    done >"$tmp"
    chmod 644 -- "$tmp"
    mv -f -- "$tmp" "$dir/SHA256SUMS"
}

# ---------------------------------------------------------------- files
# seqbil_find VAR PATH...: store in VAR the first PATH that exists as a file,
# trying each PATH as given and then PATH.gz.  False (and VAR empty) if none does.
seqbil_find() {
    local _var=$1 _p
    shift
    printf -v "$_var" '%s' ""
    for _p in "$@"; do
        if [[ -f $_p ]]; then printf -v "$_var" '%s' "$_p"; return 0; fi
        if [[ -f $_p.gz ]]; then printf -v "$_var" '%s' "$_p.gz"; return 0; fi
    done
    return 1
}

_seqbil_is_gzip() {
    [[ $1 == *.gz ]] || [[ $(head -c 2 -- "$1" | od -An -tx1 | tr -d ' \n') == 1f8b ]]
}

# seqbil_extract SRC DEST [ENCODING]: write SRC to DEST, gunzipping it if it is
# gzip-compressed and converting it from ENCODING to UTF-8 if ENCODING is given.
# DEST should be a temporary file; it is removed if anything fails.
seqbil_extract() {
    local src=$1 dest=$2 enc=${3:-}
    if ! {
        if _seqbil_is_gzip "$src"; then gzip -dc -- "$src"; else cat -- "$src"; fi |
            if [[ -n $enc ]]; then iconv -f "$enc" -t UTF-8; else cat; fi
    } >"$dest"; then
        rm -f -- "$dest"
        return 1
    fi
    chmod 644 -- "$dest"
}

# seqbil_unzip ZIP DIR: unpack ZIP into DIR (unzip, or python3's zipfile if unzip is missing).
seqbil_unzip() {
    if command -v unzip >/dev/null 2>&1; then
        unzip -q -o -- "$1" -d "$2"
    elif command -v python3 >/dev/null 2>&1; then
        python3 -m zipfile -e "$1" "$2"
    else
        warn "cannot unpack $1: neither unzip nor python3 is installed"
        return 1
    fi
}

_seqbil_is_zip() {
    [[ -f $1 ]] && [[ $(head -c 4 -- "$1" | od -An -tx1 | tr -d ' \n') == 504b0304 ]]
}

# ---------------------------------------------------------------- download
# seqbil_download URL DEST: download URL to DEST (removed again on failure).
# On failure SEQBIL_DL_ERROR holds the downloader's last error line.
SEQBIL_DL_ERROR=
seqbil_download() {
    local url=$1 dest=$2 errf rc=0
    SEQBIL_DL_ERROR=
    errf=$(mktemp -- "${TMPDIR:-/tmp}/.seqbil-dl-err.XXXXXX")
    _SEQBIL_TMP+=("$errf")
    if command -v curl >/dev/null 2>&1; then
        curl -fsSL --connect-timeout "$SEQBIL_DL_TIMEOUT" --max-time "$SEQBIL_DL_MAX_TIME" \
            --retry 2 -o "$dest" -- "$url" 2>"$errf" || rc=$?
    elif command -v wget >/dev/null 2>&1; then
        wget -q --timeout="$SEQBIL_DL_TIMEOUT" --tries=3 -O "$dest" -- "$url" 2>"$errf" || rc=$?
        ((rc == 0)) || echo "wget exit status $rc" >>"$errf"
    else
        echo "neither curl nor wget is installed" >"$errf"
        rc=127
    fi
    if ((rc != 0)); then
        SEQBIL_DL_ERROR=$(grep -v '^[[:space:]]*$' -- "$errf" | tail -n 1)
        SEQBIL_DL_ERROR=${SEQBIL_DL_ERROR:-exit status $rc}
        rm -f -- "$dest"
        return 1
    fi
}
