#!/usr/bin/env bash
# Figure 3 of Wu & Sun: chunking learning curve on CoNLL-2000, bol with 0-order and
# 1st-order features and averaging, against sp and bcd.
NAME=figure3
USAGE="Trains bol, sp and bcd with configs/conll2000.toml (0-order + 1st-order templates,
averaged, T=20) on fixed-seed random parts of the CoNLL-2000 training set (10% ...
100%) and scores them on the test set with conlleval's F1; writes curve.csv, curve.md
and curve.png."
source "$(dirname "$0")/common.sh"
parse_options "$@"

if [ "$QUICK" = 1 ]; then
    PCTS=(50 100); EPOCHS=(--epochs 3 --bcd-epochs 1)
    train=$SAMPLES/conll2000_train.txt; test=$SAMPLES/conll2000_test.txt
else
    PCTS=(10 20 30 40 50 60 70 80 90 100); EPOCHS=()
    need_data conll2000 get_conll2000.sh
    train=$DATA/conll2000/train.txt; test=$DATA/conll2000/test.txt
fi

for pct in "${PCTS[@]}"; do
    echo "$NAME: conll2000, $pct% of $train"
    done_already "conll2000__sp__$pct" && done_already "conll2000__bcd__$pct" && done_already "conll2000__bol__$pct" \
        && continue
    part=$OUT/runs/conll2000.$pct.train
    "$PY" "$EXP/lib/subset.py" --format conll --fraction "$(fraction "$pct")" --seed 1 "$train" "$part"
    for learner in bol sp bcd; do
        train_eval "conll2000__${learner}__$pct" "$test" "" --config conll2000 --train "$part" "${EPOCHS[@]}" \
            --learner "$learner"
    done
    rm -f "$part"
done
report curve "$OUT" --title "Figure 3: chunking learning curve on CoNLL-2000"
