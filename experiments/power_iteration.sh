#!/usr/bin/env bash
# The paper's check that R <= 4 power-iteration steps suffice (section 6.1): dev F1
# and the angle between the R-step pair and the exact top singular
# pair, for R = 1, 2, 4, 8, in both bol modes, on a 10% dev split of pku training.
NAME=power_iteration
USAGE="Splits the pku training set into 90% training and a 10% dev set (fixed seed), trains
bol in block and global mode with R = 1, 2, 4, 8 (T=20, C=1) and --diagnose (an exact
SVD of every Theta block after each pass), and writes power_iteration.csv and .md."
source "$(dirname "$0")/common.sh"
parse_options "$@"

if [ "$QUICK" = 1 ]; then
    RS=(1 4); EPOCHS=(--epochs 3)
    source_train=$SAMPLES/pku_train.utf8
else
    RS=(1 2 4 8); EPOCHS=()
    pku_corpus
    source_train=$PKU_TRAIN
fi
train=$OUT/runs/pku.train90; dev=$OUT/runs/pku.dev10
"$PY" "$EXP/lib/subset.py" --format sighan --fraction 0.9 --seed 1 "$source_train" "$train" "$dev"

echo "$NAME: pku ($source_train), 90% / 10%"
for mode in block global; do
    for R in "${RS[@]}"; do
        train_eval "pku__${mode}__$R" "$dev" "" --config sighan2005 --train "$train" "${EPOCHS[@]}" \
            --learner bol --rank1 "$mode" --power-steps "$R" --diagnose
    done
done
rm -f "$train" "$dev"
report power "$OUT" --title "Power iteration: R steps against the exact top singular pair (pku, 10% dev split)"
