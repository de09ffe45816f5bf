#!/usr/bin/env bash
# Figure 3 of Wu & Sun: chunking learning curve on CoNLL-2000, bol with 0-order and
# 1st-order features and averaging, against sp and bcd.
NAME=figure3
USAGE="Trains bol, sp and bcd with configs/conll2000.toml (0-order + 1st-order templates,
averaged, T=20) on fixed-seed random parts of the CoNLL-2000 training set (10% ...
100%) and scores them on the test set with conlleval's F1; on the whole training set also CRF++
(standard chunking template) and python-crfsuite's L2 CRF when installed; writes curve.csv, curve.md
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
# CRF peers on the whole training set: CRF++ with its standard chunking template and
# defaults, python-crfsuite's L2 CRF with the config's templates and with CRF++'s template
if [ "$QUICK" = 0 ]; then
    peer_args=(--config conll2000 --train "$train" --test "$test")
    if have_crfpp; then
        crfpp "conll2000__crfpp-l2__100" "${peer_args[@]}" --template "$ROOT/configs/crfpp_chunking.template"
    fi
    if have_crfsuite; then
        crf "conll2000__crf2__100" "${peer_args[@]}" --iterations 1000 --c2 1
        crf "conll2000__crf2-crfpp__100" "${peer_args[@]}" --iterations 1000 --c2 1 \
            --template "$ROOT/configs/crfpp_chunking.template"
    fi
fi
report curve "$OUT" --title "Figure 3: chunking learning curve on CoNLL-2000"
