#!/usr/bin/env bash
# Which feature-dict attributes bol reads as 1st-order features (seqbil.sklearn.CRF's
# first_order), chosen on dev data.
NAME=dict_features
USAGE="CoNLL-2000's training set split 90 / 10 (its last tenth the dev part), as chunking and as
POS tagging, with sklearn-crfsuite's tutorial feature dicts: bol with no 1st-order attributes,
with every attribute 1st-order, and (chunking) with the POS keys; ap and lbfgs beside them.
Writes dict_features.csv, .json and .md. --quick: the bundled sample, 3 epochs."
source "$(dirname "$0")/common.sh"
source "$EXP/lib/driver.sh"
DATA_NOTE="conll2000 from @DATA@"
[[ " $* " == *" --quick "* ]] && DATA_NOTE="the bundled CoNLL-2000 sample"
parse_driver_options "$@"
R=$OUT/runs
if [ "$QUICK" = 1 ]; then
    src=$SAMPLES/conll2000_train.txt
else
    need_data conll2000 get_conll2000.sh
    src=$DATA/conll2000/train.txt
fi
"$PY" "$EXP/lib/subset.py" --format conll --first 0.9 "$src" "$R/train90" "$R/dev10"
DRIVER_ARGS+=(--train "$R/train90" --dev "$R/dev10")
run_driver dict_features.py
rm -f "$R/train90" "$R/dev10"
