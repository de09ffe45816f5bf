#!/usr/bin/env bash
# The shipped POS and NER configs (template functions: lower case, affixes, shapes)
# against python-crfsuite's L-BFGS CRF with the same features, on CoNLL-2000.
NAME=taggers
USAGE="Makes two tasks of CoNLL-2000: POS tagging (words and POS tags) and chunking from the
words alone (words and chunk tags, as NER data has them). Trains configs/pos.toml and
configs/ner.toml with sp and bol, and python-crfsuite's L2 CRF (L-BFGS, c2 = 1) with the same
templates, on 90% of the training set scored on the other 10% (dev, where the configs were
chosen), then on the whole training set scored on the test set. Writes taggers.csv and .md."
source "$(dirname "$0")/common.sh"
parse_options "$@"

if [ "$QUICK" = 1 ]; then
    EPOCHS=(--epochs 3); CRF_ITER=10
    train=$SAMPLES/conll2000_train.txt; test=$SAMPLES/conll2000_test.txt
else
    EPOCHS=(); CRF_ITER=1000
    need_data conll2000 get_conll2000.sh
    train=$DATA/conll2000/train.txt; test=$DATA/conll2000/test.txt
fi
W=$OUT/runs
"$PY" "$EXP/lib/subset.py" --format conll --fraction 0.9 --seed 1 "$train" "$W/train90" "$W/dev10"
for task in pos chunk; do
    column=$([ "$task" = pos ] && echo 2 || echo 3)
    config=$([ "$task" = pos ] && echo pos || echo ner)
    for part in train90 dev10; do cut -d' ' -f1,"$column" "$W/$part" > "$W/$task.$part"; done
    cut -d' ' -f1,"$column" "$train" > "$W/$task.train"
    cut -d' ' -f1,"$column" "$test" > "$W/$task.test"
    echo "$NAME: $task ($config.toml)"
    for learner in sp bol; do
        train_eval "$task-dev__seqbil-$learner" "$W/$task.dev10" "" --config "$config" --train "$W/$task.train90" \
            --dev "$W/$task.dev10" --learner "$learner" "${EPOCHS[@]}"
    done
    train_eval "$task-test__seqbil" "$W/$task.test" "" --config "$config" --train "$W/$task.train" "${EPOCHS[@]}"
    if have_crfsuite; then
        crf "$task-dev__crf-lbfgs" --config "$config" --train "$W/$task.train90" --test "$W/$task.dev10" \
            --iterations "$CRF_ITER" --c2 1
        crf "$task-test__crf-lbfgs" --config "$config" --train "$W/$task.train" --test "$W/$task.test" \
            --iterations "$CRF_ITER" --c2 1
    fi
done
rm -f "$W"/*.train90 "$W"/*.dev10 "$W"/*.train "$W"/*.test "$W/train90" "$W/dev10"
have_crfsuite || no_crf_note
report taggers "$OUT" --title "POS tagging and chunking from words: seqbil's configs against CRFsuite"
