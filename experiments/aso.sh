#!/usr/bin/env bash
# Structure learned from unlabeled text (Ando & Zhang 2005, alternating structure
# optimization): chunking and segmentation with and without the structure's features.
NAME=aso
USAGE="Learns a structure with seqbil aso from the English raw text of data/unlabeled/en (4.3 M
tokens, none from the Wall Street Journal; Ando & Zhang used 15 M words of WSJ) and one from
the Chinese raw text of data/unlabeled/zh plus the pku stand-in's text (spaces removed),
recording time and peak memory. CoNLL-2000 (configs/conll2000.toml): first the structure's
scale and window on held-out data (the last 10% of the training set, learner bol), and for each
structure 20 or 40 epochs (the dense features slow the online learners' fit), then a
learning curve on the first 10%, 25%, 50% and 100% of the training set, sp and bol, 3 seeds,
scored on the test set: without a structure; with the word structure (aso: problems that
predict words); with Ando & Zhang's semi-supervised problems (semi: a POS tagger and a chunker
trained on the same labelled part tag the raw text, and the problems predict its chunk and
POS tags from each split); with both. pku and SXU (configs/cws.toml): with
and without the Chinese structure, sp and bol, 3 seeds. Writes aso*.csv, .json, .md and a
figure of F1 against training size.

  --unlabeled DIR  the raw text, with en/ and zh/ (default: DATA/unlabeled, installed by
              data_scripts/get_unlabeled.sh when missing)"
source "$(dirname "$0")/common.sh"
UNLABELED=""
args=()
while [ $# -gt 0 ]; do
    case $1 in
        --unlabeled) UNLABELED=${2:?--unlabeled needs a directory}; shift ;;
        *) args+=("$1") ;;
    esac
    shift
done
parse_options "${args[@]+"${args[@]}"}"

SEEDS=(1 2 3)
LEARNERS=(bol sp)
SIZES=(10 25 50 100)
SCALES=(0.1 0.2 0.3 0.5 1)
OTHER_SCALES=(0.1 0.3 1)
LONG=40  # epochs tried beside the config's 20
R=$OUT/runs
if [ "$QUICK" = 1 ]; then
    SEEDS=(1); SIZES=(50 100); SCALES=(0.3 1); OTHER_SCALES=(0.3 1); EPOCHS=(--epochs 3); LONG=6
    TRAIN=$SAMPLES/conll2000_train.txt; TEST=$SAMPLES/conll2000_test.txt
    # raw text: the words of the training sample; the characters of the pku sample
    "${PYI[@]}" -c 'import sys
for block in open(sys.argv[1], encoding="utf-8").read().split("\n\n"):
    words = [line.split()[0] for line in block.splitlines() if line.strip()]
    if words: print(" ".join(words))' "$TRAIN" > "$R/en.txt"
    EN=("$R/en.txt"); ASO=(--targets 50 --dim 8 --aux-epochs 1)
    cws=("pku|$SAMPLES/pku_train.utf8|$SAMPLES/pku_test.utf8|$SAMPLES/pku_train.utf8")
    "${PYI[@]}" -c 'import sys
for line in open(sys.argv[1], encoding="utf-8"): print("".join(line.split()))' "$SAMPLES/pku_train.utf8" > "$R/zh.txt"
    ZH=("$R/zh.txt")
else
    EPOCHS=(); ASO=()
    need_data conll2000 get_conll2000.sh
    need_data sighan2008-sxu get_sighan2005.sh
    pku_corpus
    TRAIN=$DATA/conll2000/train.txt; TEST=$DATA/conll2000/test.txt
    UNLABELED=${UNLABELED:-$DATA/unlabeled}
    [ -d "$UNLABELED" ] || need_data unlabeled get_unlabeled.sh
    EN=("$UNLABELED"/en/*.txt.gz)
    "${PYI[@]}" -c 'import gzip, sys
data = open(sys.argv[1], "rb").read()
text = (gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data).decode("utf-8")
for line in text.splitlines():
    if line.strip(): print("".join(line.split()))' "$PKU_TRAIN" > "$R/pku_text.txt"
    ZH=("$UNLABELED"/zh/*.txt.gz "$R/pku_text.txt")
    x=$DATA/sighan2008-sxu
    cws=("pku|$PKU_TRAIN|$PKU_TEST|$DATA/sighan2005/pku_training_words.utf8" "sxu|$x/train.txt|$x/test.txt|$x/train.txt")
fi

# 1. the structures (time and peak memory of one run each; benchmarks/aso_speed.py repeats them)
for lang in en zh; do
    [ -s "$R/$lang.sbs" ] && continue
    echo "$NAME: learning the $lang structure"
    if [ $lang = en ]; then files=("${EN[@]}"); cfg=(); else files=("${ZH[@]}"); cfg=(--config cws); fi
    "$PY" "$EXP/lib/aso.py" measure "$R/$lang.aso.json" -- "${SEQBIL[@]}" aso -q "${cfg[@]}" --jobs 2 \
        --unlabeled "${files[@]}" --out "$R/$lang.sbs" "${ASO[@]}"
done

# run NAME TEST TRAIN-ARGS...: common.sh's train_eval, with the words of $wordlist (if any)
# for the OOV figures and the epochs of --quick (an --epochs in TRAIN-ARGS comes after them
# and wins)
run() {
    local name=$1 test=$2
    shift 2
    train_eval "$name" "$test" "$wordlist" "${EPOCHS[@]+"${EPOCHS[@]}"}" "$@"
}

# 2. scale and window on held-out training data (CoNLL-2000, bol)
echo "$NAME: scale and window on held-out data"
"$PY" "$EXP/lib/subset.py" --format conll --first 0.9 "$TRAIN" "$R/conll.train90" "$R/conll.held10"
wordlist=""
spawn run held__none__bol__1 "$R/conll.held10" --config conll2000 --train "$R/conll.train90" --learner bol
for scale in "${SCALES[@]}"; do
    for window in 0 -1,0,1; do
        spawn run "held__s${scale}w${window}__bol__1" "$R/conll.held10" --config conll2000 --train "$R/conll.train90" \
            --learner bol --structure "$R/en.sbs" --structure-scale "$scale" --structure-window="$window"
    done
done
sync_runs
read -r SCALE WINDOW < <("$PY" "$EXP/lib/aso.py" choose "$OUT")
[ -n "$WINDOW" ] || { echo "$0: no choice of scale" >&2; exit 1; }
echo "$NAME: scale $SCALE, window $WINDOW (best held-out F1)"
WITH=(--structure-scale "$SCALE" --structure-window="$WINDOW")

# semi_structure PART NAME: common.sh's semi-supervised structure $R/semi_NAME.sbs, with the
# POS tagger and chunker trained on PART (the labelled data at hand)
semi_structure() {
    local part=$1 name=$2 t=$R/semi_$2
    [ -s "$t.sbs" ] && return 0
    echo "  semi-supervised structure from $(basename "$part")"
    semi_tag "$part" "$R/raw.tokens" "$t"
    semi_learn "$t.raw.chunk" "$t.sbs" "$t.aso.json"
    rm -f "$t.raw.chunk"
}
[ -s "$R/raw.tokens" ] || raw_tokens "$R/raw.tokens" "${EN[@]}"
semi_structure "$R/conll.train90" held
# the scale of the semi-supervised structure and of both together, at the chosen window
for scale in "${OTHER_SCALES[@]}"; do
    spawn run "held__semi-s${scale}__bol__1" "$R/conll.held10" --config conll2000 --train "$R/conll.train90" \
        --learner bol --structure "$R/semi_held.sbs" --structure-scale "$scale" --structure-window="$WINDOW"
    spawn run "held__both-s${scale}__bol__1" "$R/conll.held10" --config conll2000 --train "$R/conll.train90" \
        --learner bol --structure "$R/en.sbs" --structure "$R/semi_held.sbs" --structure-scale "$scale" \
        --structure-window="$WINDOW"
done
sync_runs
SEMI_SCALE=$("$PY" "$EXP/lib/aso.py" choose "$OUT" --kind semi)
BOTH_SCALE=$("$PY" "$EXP/lib/aso.py" choose "$OUT" --kind both)
echo "$NAME: scale $SEMI_SCALE for the semi-supervised structure, $BOTH_SCALE for both (best held-out F1)"
# the epochs of each structure (and of none) at its scale: the config's, or $LONG if better
held=("$R/conll.held10" --config conll2000 --train "$R/conll.train90" --learner bol --epochs "$LONG")
spawn run "held__none-e${LONG}__bol__1" "${held[@]}"
spawn run "held__aso-e${LONG}__bol__1" "${held[@]}" --structure "$R/en.sbs" "${WITH[@]}"
spawn run "held__semi-e${LONG}__bol__1" "${held[@]}" --structure "$R/semi_held.sbs" --structure-scale "$SEMI_SCALE" \
    --structure-window="$WINDOW"
spawn run "held__both-e${LONG}__bol__1" "${held[@]}" --structure "$R/en.sbs" --structure "$R/semi_held.sbs" \
    --structure-scale "$BOTH_SCALE" --structure-window="$WINDOW"
sync_runs
read -r EP_none EP_aso EP_semi EP_both < <("$PY" "$EXP/lib/aso.py" epochs "$OUT" \
    --scale "$SCALE" --window="$WINDOW" --semi "$SEMI_SCALE" --both "$BOTH_SCALE")
[ -n "$EP_both" ] || { echo "$0: no choice of epochs" >&2; exit 1; }
echo "$NAME: epochs $EP_none without a structure, $EP_aso with words, $EP_semi with chunk tags, $EP_both with both \
(best held-out F1)"

# 3. the learning curve on CoNLL-2000
echo "$NAME: CoNLL-2000 learning curve"
for size in "${SIZES[@]}"; do
    part=$R/conll.first$size
    "$PY" "$EXP/lib/subset.py" --format conll --first "$(awk -v s="$size" 'BEGIN { print s / 100 }')" "$TRAIN" "$part"
    semi_structure "$part" "$size"
    for seed in "${SEEDS[@]}"; do
        for learner in "${LEARNERS[@]}"; do
            common=("$TEST" --config conll2000 --train "$part" --learner "$learner" --seed "$seed")
            spawn run "conll${size}__none__${learner}__${seed}" "${common[@]}" --epochs "$EP_none"
            spawn run "conll${size}__aso__${learner}__${seed}" "${common[@]}" --epochs "$EP_aso" --structure "$R/en.sbs" \
                "${WITH[@]}"
            spawn run "conll${size}__semi__${learner}__${seed}" "${common[@]}" --epochs "$EP_semi" \
                --structure "$R/semi_$size.sbs" --structure-scale "$SEMI_SCALE" --structure-window="$WINDOW"
            spawn run "conll${size}__both__${learner}__${seed}" "${common[@]}" --epochs "$EP_both" --structure "$R/en.sbs" \
                --structure "$R/semi_$size.sbs" --structure-scale "$BOTH_SCALE" --structure-window="$WINDOW"
        done
    done
done

sync_runs

# 4. segmentation
echo "$NAME: segmentation"
for spec in "${cws[@]}"; do
    IFS='|' read -r c train test wordlist <<< "$spec"
    for seed in "${SEEDS[@]}"; do
        for learner in "${LEARNERS[@]}"; do
            spawn run "${c}__none__${learner}__${seed}" "$test" --config cws --train "$train" --learner "$learner" \
                --seed "$seed"
            spawn run "${c}__aso__${learner}__${seed}" "$test" --config cws --train "$train" --learner "$learner" \
                --seed "$seed" --structure "$R/zh.sbs" "${WITH[@]}"
        done
    done
done
sync_runs
wordlist=""
rm -f "$R"/conll.* "$R/pku_text.txt" "$R/raw.tokens"

"$PY" "$EXP/lib/aso.py" report "$OUT" --title "Structure from unlabeled text (alternating structure optimization)"
