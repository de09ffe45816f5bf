#!/usr/bin/env bash
# How much of a difference between two learners is shuffling noise: the same runs with
# five shuffling seeds, on pku (with and without the 0-order extension and averaging)
# and on CoNLL-2000.
NAME=seeds
USAGE="Trains bol and sp with shuffling seeds 1 to 5: on pku with configs/sighan2005.toml and
configs/sighan2005_0order.toml (bol+0, sp+0), each without averaging (the configs' setting)
and with it (-avg); on CoNLL-2000 with configs/conll2000.toml (averaged). Scores the test
sets and writes seeds.csv and seeds.md (mean, standard deviation, range, and at how many
seeds each learner is ahead)."
source "$(dirname "$0")/common.sh"
parse_options "$@"

if [ "$QUICK" = 1 ]; then
    SEEDS=(1 2); EPOCHS=(--epochs 3)
    pku_train=$SAMPLES/pku_train.utf8; pku_test=$SAMPLES/pku_test.utf8
    conll_train=$SAMPLES/conll2000_train.txt; conll_test=$SAMPLES/conll2000_test.txt
else
    SEEDS=(1 2 3 4 5); EPOCHS=()
    pku_corpus
    pku_train=$PKU_TRAIN; pku_test=$PKU_TEST
    need_data conll2000 get_conll2000.sh
    conll_train=$DATA/conll2000/train.txt; conll_test=$DATA/conll2000/test.txt
fi

for seed in "${SEEDS[@]}"; do
    echo "$NAME: seed $seed"
    for learner in bol sp; do
        for spec in "sighan2005|" "sighan2005_0order|+0"; do
            IFS='|' read -r config suffix <<< "$spec"
            common=(--config "$config" --train "$pku_train" --seed "$seed" "${EPOCHS[@]}" --learner "$learner")
            train_eval "pku__${learner}${suffix}__$seed" "$pku_test" "" "${common[@]}" --no-averaged
            train_eval "pku__${learner}${suffix}-avg__$seed" "$pku_test" "" "${common[@]}" --averaged
        done
        train_eval "conll2000__${learner}__$seed" "$conll_test" "" --config conll2000 --train "$conll_train" \
            --seed "$seed" "${EPOCHS[@]}" --learner "$learner"
    done
done
report seeds "$OUT" --title "Shuffling seeds: test F1 of bol and sp over five seeds"
