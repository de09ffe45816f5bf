# Shared by the experiment scripts (sourced, not run): options, data, run records.
# A script sets NAME and USAGE, sources this file, then calls parse_options "$@".
set -euo pipefail

EXP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$EXP")
PY=${PYTHON:-python3}
# Every `-c` and `-m` runs with -P (Python 3.11+), so that the current directory is not
# put first on sys.path: run from the repository root, it would shadow the installed
# seqbil with the source tree, which has no compiled kernels unless built in place.
# Scripts ("$PY" FILE) need no -P: their own directory comes first, and it holds no seqbil.
PYI=("$PY" -P)
SEQBIL=("${PYI[@]}" -m seqbil)
QUICK=0
FRESH=0
DATA=$ROOT/data
OUT=""
# portable PATH: a path as a record keeps it (benchmarks/record.py: portable): relative to
# the checkout inside it, from the last folder named as one of the checkout's on (data/,
# a copy of experiments/ ...), else its name
portable() {
    local path=$1 at="" i parts
    case $path in
        "$ROOT"/*) echo "${path#"$ROOT"/}"; return ;;
        /*) ;;
        *) echo "$path"; return ;;
    esac
    IFS=/ read -ra parts <<< "${path#/}"
    for i in "${!parts[@]}"; do
        case ${parts[$i]} in data|results|experiments|benchmarks|configs|data_scripts|tests) at=$i ;; esac
    done
    if [ -n "$at" ]; then (IFS=/; echo "${parts[*]:$at}"); else echo "${parts[-1]}"; fi
}
# Recorded relative to the checkout, which the record names by its commit.
COMMAND_LINE="experiments/$(basename "$0")"
for arg in "$@"; do COMMAND_LINE+=" $(portable "$arg")"; done

usage() {
    cat <<EOF
usage: $0 [--quick] [--data DIR] [--out DIR] [--fresh]

$USAGE

  --quick     the small samples shipped with seqbil and few passes: a smoke test of a
              few minutes (writes under results/quick/ by default)
  --data DIR  corpora as data_scripts/ installs them (default: data/; installed there
              from the official sources, or ../shared/data, when missing)
  --out DIR   where the results go (default: results/$NAME)
  --fresh     rerun everything (by default, runs already finished are kept, so an
              interrupted experiment continues where it stopped)
EOF
}

parse_options() {
    while [ $# -gt 0 ]; do
        case $1 in
            --quick) QUICK=1 ;;
            --fresh) FRESH=1 ;;
            --data) DATA=${2:?--data needs a directory}; shift ;;
            --out) OUT=${2:?--out needs a directory}; shift ;;
            -h|--help) usage; exit 0 ;;
            *) echo "$0: unknown option $1 (see --help)" >&2; exit 2 ;;
        esac
        shift
    done
    if [ -z "$OUT" ]; then
        if [ "$QUICK" = 1 ]; then OUT=$ROOT/results/quick/$NAME; else OUT=$ROOT/results/$NAME; fi
    fi
    [ "$FRESH" = 1 ] && rm -rf "$OUT/runs"
    mkdir -p "$OUT/runs"
    "${PYI[@]}" -c "" 2>/dev/null || { echo "$0: $PY is older than Python 3.11 (seqbil needs 3.11+)" >&2; exit 1; }
    "${PYI[@]}" -c "import seqbil" 2>/dev/null ||
        { echo "$0: seqbil is not importable by $PY (pip install ., or set PYTHONPATH to a" \
               "checkout built in place)" >&2; exit 1; }
    SAMPLES=$("${PYI[@]}" -c "from seqbil.samples import sample_path; print(sample_path(''))")
    write_meta
    echo "$NAME: results go to $OUT"
}

# write_meta: OUT/meta.txt, the run details. The checkout is "+modified" when files outside
# results/ differ from its commit (checked before meta.txt, itself under results/, is written).
write_meta() {
    local cpu commit
    cpu=$(grep -m1 "model name" /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)
    commit=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
    [ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no -- . ':!results' 2>/dev/null)" ] ||
        commit+=+modified
    {
        echo "experiment: $NAME"
        echo "command: $COMMAND_LINE"
        echo "seqbil: $("${PYI[@]}" -c 'import seqbil; print(seqbil.__version__)') (git $commit)"
        echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "machine: $(uname -srm), ${cpu:-unknown CPU}, $(nproc 2>/dev/null || echo ?) cores," \
             "$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo 2>/dev/null)"
        echo "python: $("${PYI[@]}" -c 'import sys; print(sys.version.split()[0])')," \
             "numpy $("${PYI[@]}" -c 'import numpy; print(numpy.__version__)')"
        echo "data: $([ "$QUICK" = 1 ] && echo "bundled samples in $(portable "$SAMPLES")" || portable "$DATA")"
    } > "$OUT/meta.txt"
}

# need_data CORPUS_DIR SCRIPT: make sure $DATA/CORPUS_DIR exists, installing it with
# data_scripts/SCRIPT into the default data/ directory when it does not.
need_data() {
    [ -d "$DATA/$1" ] && return 0
    if [ "$DATA" != "$ROOT/data" ]; then
        echo "$0: $DATA/$1 not found (install it with data_scripts/$2 --out $DATA)" >&2
        exit 1
    fi
    echo "$NAME: installing $1 with data_scripts/$2"
    bash "$ROOT/data_scripts/$2" >&2
}

# sighan_corpora: one line "name|train|test gold|training words" per SIGHAN corpus that
# has a training set (pku, msr, cityu, as, then SIGHAN 2008 SXU); says which are skipped.
# Call need_data sighan2005 first.
sighan_corpora() {
    local d=$DATA/sighan2005 c train
    for c in pku msr cityu as; do
        train=$d/${c}_training.utf8
        [ -f "$train" ] || train=$d/${c}_training.approx.utf8  # the local stand-in for pku
        if [ -f "$train" ]; then
            echo "$c|$train|$d/${c}_test_gold.utf8|$d/${c}_training_words.utf8"
        else
            echo "$NAME: $c: no training set in $d (only its word list): skipped" >&2
        fi
    done
    local x=$DATA/sighan2008-sxu
    if [ -d "$x" ]; then echo "sxu|$x/train.txt|$x/test.txt|$x/train.txt"; fi
}

# pku_corpus: sets PKU_TRAIN and PKU_TEST (gold) from the installed SIGHAN 2005 data.
pku_corpus() {
    need_data sighan2005 get_sighan2005.sh
    IFS='|' read -r _ PKU_TRAIN PKU_TEST _ < <(sighan_corpora 2>/dev/null | grep "^pku|" || true)
    if [ -z "${PKU_TRAIN:-}" ]; then
        echo "$0: no pku training set in $DATA/sighan2005" >&2
        exit 1
    fi
}

done_already() { [ -s "$OUT/runs/$1.eval.json" ] || [ -s "$OUT/runs/$1.crf.json" ]; }

# train_eval RUN TEST WORDS TRAIN-ARGS...: train, score on TEST (WORDS: training
# words for the OOV figures, or ""), keep the log, the scores, the model size and the
# wall seconds of the train command (RUN.time).
train_eval() {
    local run=$1 test=$2 words=$3 t0 t1
    shift 3
    done_already "$run" && return 0
    local r=$OUT/runs/$run
    echo "  $run"
    t0=$(date +%s.%N)
    # the experiments score labellings, not probabilities: no temperature is fitted
    if ! "${SEQBIL[@]}" train -q --temperature 1 --model "$r.sbm" --log "$r.jsonl" "$@" > "$r.out" 2>&1; then
        cat "$r.out" >&2
        return 1
    fi
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' > "$r.time"
    stat -c %s "$r.sbm" > "$r.size"
    "${SEQBIL[@]}" eval --model "$r.sbm" --data "$test" ${words:+--words "$words"} --json > "$r.eval.json.tmp"
    mv "$r.eval.json.tmp" "$r.eval.json"
    rm -f "$r.sbm"  # models are large; the size is kept
}

have_crfsuite() { "${PYI[@]}" -c "import pycrfsuite" 2>/dev/null; }

have_crfpp() { command -v crf_learn > /dev/null && command -v crf_test > /dev/null; }

# peer SCRIPT RUN PEER-ARGS...: benchmarks/SCRIPT (a CRF peer) on the same corpus and
# templates; it prints the JSON kept as RUN.crf.json.
peer() {
    local script=$1 run=$2
    shift 2
    done_already "$run" && return 0
    echo "  $run"
    "$PY" "$ROOT/benchmarks/$script" "$@" > "$OUT/runs/$run.crf.json.tmp"
    mv "$OUT/runs/$run.crf.json.tmp" "$OUT/runs/$run.crf.json"
}
crf() { peer crfsuite_peer.py "$@"; }   # python-crfsuite
crfpp() { peer crfpp_peer.py "$@"; }    # CRF++

no_crf_note() {
    echo "$NAME: python-crfsuite is not installed: no CRF rows (pip install 'seqbil[bench]')"
}

# spawn COMMAND ARGS...: run COMMAND in the background, at most PARALLEL (default 2) at
# a time (each run is one process on one core; the times recorded are of runs sharing
# the machine); sync_runs waits for them all and stops if one failed
PARALLEL=${PARALLEL:-2}
pids=()
spawn() {
    while [ "$(jobs -rp | wc -l)" -ge "$PARALLEL" ]; do wait -n || true; done
    "$@" &
    pids+=($!)
}
sync_runs() {
    local pid failed=0
    for pid in "${pids[@]+"${pids[@]}"}"; do wait "$pid" || failed=1; done
    pids=()
    [ "$failed" = 0 ] || { echo "$0: a run failed (see above)" >&2; exit 1; }
}

# take_unlabeled ARGS...: UNLABELED from an --unlabeled DIR among ARGS, and ARGS (an
# array) the other arguments, for the scripts that read raw text
take_unlabeled() {
    UNLABELED="" ARGS=()
    while [ $# -gt 0 ]; do
        if [ "$1" = --unlabeled ]; then UNLABELED=${2:?--unlabeled needs a directory}; shift; else ARGS+=("$1"); fi
        shift
    done
}

# find_unlabeled: UNLABELED, unless given, is data/unlabeled, else ../shared/data/unlabeled,
# else installed into data/ by data_scripts/get_unlabeled.sh
find_unlabeled() {
    [ -n "$UNLABELED" ] && return 0
    UNLABELED=$DATA/unlabeled
    [ -d "$UNLABELED" ] || [ ! -d "$ROOT/../shared/data/unlabeled" ] || UNLABELED=$ROOT/../shared/data/unlabeled
    [ -d "$UNLABELED" ] || need_data unlabeled get_unlabeled.sh
}

# words_text IN OUT: the first column of IN (a token per line, a blank line after each
# sentence: CoNLL files, raw_tokens) as raw text, a sentence per line
words_text() { awk 'NF { n++; printf "%s ", $1; next } n { print ""; n = 0 } END { if (n) print "" }' "$1" > "$2"; }

# sample_text OUT: the bundled CoNLL-2000 sample's words as raw text
sample_text() { words_text "$SAMPLES/conll2000_train.txt" "$1"; }

# learn_vectors VEC FORMAT K FILE...: word (for sighan, character) vectors of dimension K
# from the raw text FILE... with seqbil aso's split that reads only the token itself (the
# last of its default splits), written to VEC unless it is there; ASO: more aso options.
# The messages of seqbil aso go to VEC without .vec, plus .aso.out.
learn_vectors() {
    local vec=$1 fmt=$2 k=$3 split log=${1%.vec}.aso.out
    shift 3
    [ -s "$vec" ] && return 0
    echo "$NAME: vectors (k = $k) with seqbil aso from $# raw text file(s)"
    split=$("${PYI[@]}" -c 'import sys; from seqbil.features.structure import DEFAULT_SPLITS
print(DEFAULT_SPLITS[sys.argv[1]][-1])' "$fmt")
    "${SEQBIL[@]}" aso -q --jobs 2 --format "$fmt" --split "$split" --dim "$k" ${ASO[@]+"${ASO[@]}"} \
        --unlabeled "$@" --out "$vec.sbs" --vectors "$vec.tmp" > "$log" 2>&1 || { cat "$log" >&2; exit 1; }
    mv "$vec.tmp" "$vec"
    rm -f "$vec.sbs"
}

# raw_tokens OUT FILE...: the raw text FILE... (a sentence per line, plain or gzip) a token
# per line with a blank line after each sentence, as seqbil tag reads CoNLL files
raw_tokens() {
    local out=$1
    shift
    "${PYI[@]}" -c 'import gzip, sys
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")
    for line in text.splitlines():
        if line.split(): sys.stdout.write("\n".join(line.split()) + "\n\n")' "$@" > "$out.tmp"
    mv "$out.tmp" "$out"
}

# Ando & Zhang's semi-supervised problems (chunking): problems that predict the chunk tags
# at and around a token from its own word and tag, the chunk tag from the two tokens before
# and from the two after, and the POS tag from the words and tags before and after
SEMI_SPLITS=(
    --split "cur: %x[0,0]|lower %x[0,0]|suffix:2 %x[0,0]|suffix:3 %x[0,0]|shape %x[0,1] -> -1 0 1 @2"
    --split "left: %x[-1,0]|lower %x[-2,0]|lower %x[-1,1] %x[-2,1] %x[-2,1]/%x[-1,1] -> 0 @2"
    --split "right: %x[1,0]|lower %x[2,0]|lower %x[1,1] %x[2,1] %x[1,1]/%x[2,1] -> 0 @2"
    --split "lpos: %x[-1,0]|lower %x[-2,0]|lower %x[-1,1] %x[-2,1] -> 0 @1"
    --split "rpos: %x[1,0]|lower %x[2,0]|lower %x[1,1] %x[2,1] -> 0 @1"
)

# semi_tag PART RAW T: a POS tagger (configs/pos.toml) and a chunker (configs/conll2000.toml)
# trained on PART (word POS chunk) tag RAW (from raw_tokens) into T.raw.chunk; their
# messages go to T.out; EPOCHS: more train options
semi_tag() {
    local part=$1 raw=$2 t=$3
    awk 'NF == 0 { print; next } { print $1, $2 }' "$part" > "$t.pos"
    "${SEQBIL[@]}" train -q --temperature 1 --config pos --train "$t.pos" --model "$t.pos.sbm" \
        ${EPOCHS[@]+"${EPOCHS[@]}"} > "$t.out" 2>&1
    "${SEQBIL[@]}" train -q --temperature 1 --config conll2000 --train "$part" --model "$t.chunk.sbm" \
        ${EPOCHS[@]+"${EPOCHS[@]}"} \
        >> "$t.out" 2>&1
    "${SEQBIL[@]}" tag -m "$t.pos.sbm" -i "$raw" -o "$t.raw.pos" --jobs 2
    "${SEQBIL[@]}" tag -m "$t.chunk.sbm" -i "$t.raw.pos" -o "$t.raw.chunk" --jobs 2
    rm -f "$t.pos" "$t.raw.pos" "$t".*.sbm
}

# semi_learn TAGGED SBS RECORD: the structure of SEMI_SPLITS learned from TAGGED (from
# semi_tag), its wall time and peak memory in RECORD; ASO: more aso options
semi_learn() {
    local tagged=$1 sbs=$2 record=$3
    "$PY" "$EXP/lib/aso.py" measure "$record" -- "${SEQBIL[@]}" aso -q --jobs 2 --unlabeled-format columns \
        --unlabeled "$tagged" --out "$sbs.tmp" ${ASO[@]+"${ASO[@]}"} "${SEMI_SPLITS[@]}"
    mv "$sbs.tmp" "$sbs"
}

fraction() { awk -v p="$1" 'BEGIN { print p / 100 }'; }

report() {
    "$PY" "$EXP/lib/report.py" "$@"
}
