#!/usr/bin/env bash
# How the structure's gain on CoNLL-2000 chunking depends on the raw text it is learned
# from: its amount (an eighth, a quarter, half and all of the English raw text) and its
# domain (the words of the CoNLL-2000 training set, which is Wall Street Journal text,
# against as many tokens of the other raw text).
NAME=aso_rawtext
USAGE="The word structure (seqbil aso's default English splits) and the semi-supervised one
(experiments/aso.sh: a POS tagger and a chunker trained on the whole CoNLL-2000 training set
tag the raw text; problems predict its chunk and POS tags) are learned from every 8th, 4th
and 2nd sentence of the English raw text of --unlabeled DIR (default data/unlabeled, else
../shared/data/unlabeled) and from all of it; the word structure also from the words of the
CoNLL-2000 training set and from every 20th raw sentence (about as many tokens). Each is
used by bol and sp, trained on the whole training set with 3 seeds and scored on the test
set, with the settings experiments/aso.sh chose on held-out data (results/aso/aso.md): the
word structure at scale 0.1 and 20 epochs, the semi-supervised one at 0.3 and 40 epochs,
window -1,0,1. Beside them, python-crfsuite's L2 CRF (L-BFGS, c2 = 1, at most 1000
iterations) with the same templates, without and with the structures from all the raw
text, when it is installed. Writes aso_rawtext.csv, .json and .md and a figure of the gain
against the tokens of raw text.
--quick: the bundled samples' words as raw text, 3 epochs, one seed, small structures."
source "$(dirname "$0")/common.sh"
take_unlabeled "$@"
parse_options ${ARGS[@]+"${ARGS[@]}"}
R=$OUT/runs

SEEDS=(1 2 3)
LEARNERS=(bol sp)
WORDS=(--structure-scale 0.1 --structure-window=-1,0,1 --epochs 20)
SEMI=(--structure-scale 0.3 --structure-window=-1,0,1 --epochs 40)
EVERY=(8 4 2 1)  # every Nth sentence of the raw text
CRF_ITER=1000
if [ "$QUICK" = 1 ]; then
    SEEDS=(1) EVERY=(2 1) CRF_ITER=10 WORDS+=(--epochs 3) SEMI+=(--epochs 3) EPOCHS=(--epochs 3) ASO=(--targets 50 --dim 8)
    TRAIN=$SAMPLES/conll2000_train.txt TEST=$SAMPLES/conll2000_test.txt
    sample_text "$R/en.txt"
    EN=("$R/en.txt")
else
    EPOCHS=() ASO=()
    need_data conll2000 get_conll2000.sh
    TRAIN=$DATA/conll2000/train.txt TEST=$DATA/conll2000/test.txt
    find_unlabeled
    EN=("$UNLABELED"/en/*.txt.gz)
fi

# 1. the texts: every Nth non-blank line of the raw text (in file order), the training set's
# words, and every 20th line; their sizes in texts.json
[ -s "$R/raw.tokens" ] || raw_tokens "$R/raw.tokens" "${EN[@]}"
words_text "$R/raw.tokens" "$R/text.1"
for n in "${EVERY[@]}" 20; do
    [ "$n" = 1 ] || awk -v n="$n" '(NR - 1) % n == 0' "$R/text.1" > "$R/text.$n"
done
words_text "$TRAIN" "$R/text.wsj"
"$PY" "$EXP/lib/aso_rawtext.py" texts "$R" > "$R/texts.json"

# 2. the structures
for text in "${EVERY[@]}" 20 wsj; do
    [ -s "$R/words.$text.sbs" ] && continue
    echo "$NAME: the word structure from text.$text"
    "$PY" "$EXP/lib/aso.py" measure "$R/words.$text.aso.json" -- "${SEQBIL[@]}" aso -q --jobs 2 \
        --unlabeled "$R/text.$text" --out "$R/words.$text.sbs.tmp" ${ASO[@]+"${ASO[@]}"}
    mv "$R/words.$text.sbs.tmp" "$R/words.$text.sbs"
done
if [ ! -s "$R/semi.1.sbs" ]; then
    echo "$NAME: tagging the raw text for the semi-supervised structures"
    semi_tag "$TRAIN" "$R/raw.tokens" "$R/semi"
    for n in "${EVERY[@]}"; do
        [ -s "$R/semi.$n.sbs" ] && continue
        echo "$NAME: the semi-supervised structure from 1 sentence in $n"
        awk -v n="$n" 'BEGIN { RS = ""; ORS = "\n\n" } (NR - 1) % n == 0' "$R/semi.raw.chunk" > "$R/semi.$n.tagged"
        semi_learn "$R/semi.$n.tagged" "$R/semi.$n.sbs" "$R/semi.$n.aso.json"
        rm -f "$R/semi.$n.tagged"
    done
    rm -f "$R/semi.raw.chunk"
fi

# 3. chunking with each structure: runs conll100__COND__LEARNER__SEED, COND none,
# words-TEXT or semi-N
echo "$NAME: CoNLL-2000 with each structure"
for seed in "${SEEDS[@]}"; do
    for learner in "${LEARNERS[@]}"; do
        common=("$TEST" "" --config conll2000 --train "$TRAIN" --learner "$learner" --seed "$seed")
        spawn train_eval "conll100__none__${learner}__${seed}" "${common[@]}" ${EPOCHS[@]+"${EPOCHS[@]}"}
        for text in "${EVERY[@]}" 20 wsj; do
            spawn train_eval "conll100__words-${text}__${learner}__${seed}" "${common[@]}" \
                --structure "$R/words.$text.sbs" "${WORDS[@]}"
        done
        for n in "${EVERY[@]}"; do
            spawn train_eval "conll100__semi-${n}__${learner}__${seed}" "${common[@]}" \
                --structure "$R/semi.$n.sbs" "${SEMI[@]}"
        done
    done
done
sync_runs
# 4. the peer: python-crfsuite's L2 CRF (L-BFGS, c2 = 1, at most $CRF_ITER iterations) with the
# config's templates, without and with the structures from all the raw text
if have_crfsuite; then
    echo "$NAME: CRFsuite with the same features"
    peer_args=(--config conll2000 --train "$TRAIN" --test "$TEST" --iterations "$CRF_ITER" --c2 1)
    spawn crf "conll100__none__crf__1" "${peer_args[@]}"
    spawn crf "conll100__words-1__crf__1" "${peer_args[@]}" --structure "$R/words.1.sbs" --structure-scale 0.1 \
        --structure-window=-1,0,1
    spawn crf "conll100__semi-1__crf__1" "${peer_args[@]}" --structure "$R/semi.1.sbs" --structure-scale 0.3 \
        --structure-window=-1,0,1
    sync_runs
else
    no_crf_note
fi
rm -f "$R/raw.tokens" "$R"/text.*

"$PY" "$EXP/lib/aso_rawtext.py" report "$OUT" --title "Structure from unlabeled text: how much raw text, and from where"
