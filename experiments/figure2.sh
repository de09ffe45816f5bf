#!/usr/bin/env bash
# Figure 2 of Wu & Sun: convergence on pku, label error rate on held-out data after
# each iteration, for bol, sp and (with python-crfsuite) the CRFs.
NAME=figure2
USAGE="Trains bol and sp (T=20) and, when python-crfsuite is installed, crf2 and crf1
(L-BFGS, 150 iterations) on pku, scoring the test set after every iteration (CRFsuite's
holdout evaluation for the CRFs); writes convergence.csv, convergence.md and
convergence.png (label error rate against iterations)."
source "$(dirname "$0")/common.sh"
parse_options "$@"

if [ "$QUICK" = 1 ]; then
    EPOCHS=(--epochs 3); CRF_ITER=5
    train=$SAMPLES/pku_train.utf8; test=$SAMPLES/pku_test.utf8
else
    EPOCHS=(); CRF_ITER=150
    pku_corpus
    train=$PKU_TRAIN; test=$PKU_TEST
fi

echo "$NAME: pku ($train)"
for learner in bol sp; do
    train_eval "pku__$learner" "$test" "" --config sighan2005 --train "$train" --dev "$test" \
        "${EPOCHS[@]}" --learner "$learner"
done
if have_crfsuite; then
    for spec in "crf2|0|1" "crf1|1|0"; do
        IFS='|' read -r name c1 c2 <<< "$spec"
        crf "pku__$name" --config sighan2005 --train "$train" --test "$test" --iterations "$CRF_ITER" \
            --algorithm lbfgs --c1 "$c1" --c2 "$c2" --log "$OUT/runs/pku__$name.crf.jsonl"
    done
else
    no_crf_note
fi
report convergence "$OUT" --title "Figure 2: convergence on pku (label error rate on held-out data)"
