#!/usr/bin/env bash
# Section 5 of Denis & Ralaivola (2017) on movie-review polarity (Pang & Lee 2004):
# PA-II on fixed word vectors, random or learned from raw text by seqbil aso, RPA
# re-embedding them (k = 50, 100), and PA-II on one-hot words, in the corpus's standard
# 10-fold cross-validation.
NAME=rpa_polarity
USAGE="Reads polarity/reviews.tsv.gz (not in the repository: under --data, else data/ or
../shared/data). Per fold, hyper-parameters chosen on the next fold over section 5.4's grid
(C = 10^-6..10^6, lambda = 10^-3..10^3, passes 1, 5, 10), then retrained on the nine
training folds; one pass and the chosen number of passes. The learned vectors: seqbil aso's
current-word split (its default), k = 50 and 100, on the English raw text of --unlabeled DIR
(default: data/unlabeled, else ../shared/data/unlabeled) but for the movie reviews
themselves, kept in OUT/runs. Writes
rpa_polarity.csv (method,setting,accuracy,sd,folds) and rpa_polarity.json (run record,
choices per fold). --quick: 2 folds of 600 reviews, a small grid, vectors from the bundled
CoNLL-2000 sample's words. --extended: RPA only, lambda in
10^-5..10^3 (below the grid's edge too), written to rpa_polarity_extended.*"
source "$(dirname "$0")/common.sh"
source "$EXP/lib/driver.sh"
take_unlabeled "$@"
set -- ${ARGS[@]+"${ARGS[@]}"}
DRIVER_FLAGS="--extended"
DATA_NOTE="polarity/reviews.tsv from @DATA@ (or, when that is the default data/ and lacks it, ../shared/data)"
parse_driver_options "$@"
# data/ is only the default place: without it, lib/rpa_polarity.py looks in ../shared/data too
[ "$DATA" != "$ROOT/data" ] && DRIVER_ARGS+=(--data "$DATA")

# word vectors from raw text
if [ "$QUICK" = 1 ]; then
    sample_text "$OUT/runs/raw.txt"
    TEXT=("$OUT/runs/raw.txt"); ASO=(--targets 50)
else
    find_unlabeled
    # not movie_reviews.txt.gz: the reviews themselves, test folds included
    TEXT=() ASO=()
    for f in "$UNLABELED"/en/*.txt.gz; do [ "$(basename "$f")" = movie_reviews.txt.gz ] || TEXT+=("$f"); done
fi
for k in 50 100; do
    learn_vectors "$OUT/runs/aso$k.vec" conll $k "${TEXT[@]}"
    DRIVER_ARGS+=(--vectors "aso$k=$OUT/runs/aso$k.vec")
done
run_driver rpa_polarity.py
