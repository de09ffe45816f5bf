#!/usr/bin/env bash
# Figure 1 of Wu & Sun: learning curves on word segmentation, F1 of bol, bcd and sp
# as an offset from the mean of the three, training on 10%, 20%, ..., 100%.
NAME=figure1
USAGE="For each SIGHAN corpus with a training set (pku, SXU, and msr/cityu/as when present),
trains bol, bcd and sp on fixed-seed random parts of the training set (10% ... 100%,
each part containing the smaller ones) and scores them on the test set; writes
curve.csv, curve.md and curve.png (F1 offset from the mean of the methods)."
source "$(dirname "$0")/common.sh"
parse_options "$@"

corpora=()
if [ "$QUICK" = 1 ]; then
    PCTS=(50 100); EPOCHS=(--epochs 3 --bcd-epochs 1)
    corpora+=("sample|$SAMPLES/pku_train.utf8|$SAMPLES/pku_test.utf8")
else
    PCTS=(10 20 30 40 50 60 70 80 90 100); EPOCHS=()
    need_data sighan2005 get_sighan2005.sh
    mapfile -t corpora < <(sighan_corpora)
fi

for spec in "${corpora[@]}"; do
    IFS='|' read -r c train test _ <<< "$spec"
    for pct in "${PCTS[@]}"; do
        part=$OUT/runs/$c.$pct.train
        echo "$NAME: $c, $pct% of $train"
        done_already "${c}__sp__$pct" && done_already "${c}__bcd__$pct" && done_already "${c}__bol__$pct" && continue
        "$PY" "$EXP/lib/subset.py" --format sighan --fraction "$(fraction "$pct")" --seed 1 "$train" "$part"
        common=(--config sighan2005 --train "$part" "${EPOCHS[@]}")
        for learner in bol bcd sp; do
            train_eval "${c}__${learner}__$pct" "$test" "" "${common[@]}" --learner "$learner"
        done
        rm -f "$part"
    done
done
report offset-curve "$OUT" --title "Figure 1: word segmentation learning curves (offset from the mean F1)"
