#!/usr/bin/env bash
# What dictionary and character-type features add to segmentation, chosen on dev splits:
# configs/cws.toml and its parts, with bol and sp, on a 90% / 10% split of each training
# set; then configs/cws.toml on the official test sets.
NAME=cws_features
USAGE="Splits the pku and SXU training sets into 90% training and a 10% dev set (fixed seed) and
trains bol and sp (averaged, T=20) with: the paper's templates with the 0-order extension
(paper+0), plus character types (+types), plus a dictionary of the training words used
without jackknifing (+dict-all) or jackknifed over 5 folds (+dict), and everything
(configs/cws.toml); scores the dev sets. Then trains configs/cws.toml on the whole
training sets and scores the test sets. Writes cws_features.csv and .md."
source "$(dirname "$0")/common.sh"
parse_options "$@"

if [ "$QUICK" = 1 ]; then
    EPOCHS=(--epochs 3)
    corpora=("sample|$SAMPLES/pku_train.utf8|$SAMPLES/pku_test.utf8|$SAMPLES/pku_train.utf8")
else
    EPOCHS=()
    need_data sighan2005 get_sighan2005.sh
    mapfile -t corpora < <(sighan_corpora)
fi

# template files of the variants: the config's templates, some groups left out
"${PYI[@]}" - "$ROOT/configs/cws.toml" "$OUT/runs" <<'PY'
import sys, tomllib
from pathlib import Path
templates = tomllib.loads(Path(sys.argv[1]).read_text())["features"]["templates"]
dictionary = lambda t: "%dict" in t
types = lambda t: "chartype" in t
variants = {"paper+0": lambda t: not dictionary(t) and not types(t), "+types": lambda t: not dictionary(t),
            "+dict": lambda t: not types(t), "cws": lambda t: True}
for name, keep in variants.items():
    Path(sys.argv[2], f"{name}.template").write_text("\n".join(t for t in templates if keep(t)) + "\n")
PY

for spec in "${corpora[@]}"; do
    IFS='|' read -r c train test words <<< "$spec"
    part=$OUT/runs/$c.train90; dev=$OUT/runs/$c.dev10
    "$PY" "$EXP/lib/subset.py" --format sighan --fraction 0.9 --seed 1 "$train" "$part" "$dev"
    echo "$NAME: $c dev split of $train"
    for learner in bol sp; do
        for variant in paper+0 +types +dict cws; do
            train_eval "${c}-dev__${variant}__$learner" "$dev" "$part" --config cws --train "$part" \
                --template "$OUT/runs/$variant.template" --learner "$learner" "${EPOCHS[@]}"
        done
        train_eval "${c}-dev__+dict-all__$learner" "$dev" "$part" --config cws --train "$part" \
            --template "$OUT/runs/+dict.template" --dict-folds 0 --learner "$learner" "${EPOCHS[@]}"
    done
    rm -f "$part" "$dev"
    echo "$NAME: $c test"
    for learner in bol sp; do
        train_eval "${c}-test__cws__$learner" "$test" "$words" --config cws --train "$train" --learner "$learner" \
            "${EPOCHS[@]}"
    done
done
report cws "$OUT" --title "Segmentation features: dictionary and character types (dev splits, then test)"
