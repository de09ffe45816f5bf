#!/usr/bin/env bash
# Table 1 of Wu & Sun: word segmentation F1 of bol (block and the
# paper's literal global mode), bcd and sp, bol and sp with the 0-order extension, plus CRFs
# (python-crfsuite, with the optional `bench` extra; CRF++, the paper's CRF tool, when
# crf_learn is on the PATH), next to the paper's figures.
NAME=table1
USAGE="Trains bol (block and global), bcd and sp (T=20, C=1, R=4, configs/sighan2005.toml), and
bol and sp with 0-order features too (configs/sighan2005_0order.toml), on every SIGHAN 2005
corpus whose training set is present and on SIGHAN 2008 SXU; adds
crf2 (L-BFGS, L2) and crf1 (L1) rows with python-crfsuite, and crfpp-l2 / crfpp-l1 rows with
CRF++ when crf_learn and crf_test are on the PATH; writes table1.md and table1.csv."
source "$(dirname "$0")/common.sh"
parse_options "$@"

corpora=()
if [ "$QUICK" = 1 ]; then
    EPOCHS=(--epochs 3 --bcd-epochs 1); CRF_ITER=10
    corpora+=("sample|$SAMPLES/pku_train.utf8|$SAMPLES/pku_test.utf8|$SAMPLES/pku_train.utf8")
else
    EPOCHS=(); CRF_ITER=150
    need_data sighan2005 get_sighan2005.sh
    mapfile -t corpora < <(sighan_corpora)
fi

for spec in "${corpora[@]}"; do
    IFS='|' read -r c train test words <<< "$spec"
    echo "$NAME: $c ($train)"
    common=(--config sighan2005 --train "$train" "${EPOCHS[@]}")
    train_eval "${c}__bol" "$test" "$words" "${common[@]}" --learner bol --rank1 block
    train_eval "${c}__bol-global" "$test" "$words" "${common[@]}" --learner bol --rank1 global
    train_eval "${c}__bcd" "$test" "$words" "${common[@]}" --learner bcd
    train_eval "${c}__sp" "$test" "$words" "${common[@]}" --learner sp
    ext=(--config sighan2005_0order --train "$train" "${EPOCHS[@]}")  # the 0-order extension
    train_eval "${c}__bol+0" "$test" "$words" "${ext[@]}" --learner bol
    train_eval "${c}__sp+0" "$test" "$words" "${ext[@]}" --learner sp
    if have_crfsuite; then
        peer_args=(--config sighan2005 --train "$train" --test "$test" --iterations "$CRF_ITER")
        crf "${c}__crf2" "${peer_args[@]}" --algorithm lbfgs --c1 0 --c2 1
        crf "${c}__crf1" "${peer_args[@]}" --algorithm lbfgs --c1 1 --c2 0
    fi
    if have_crfpp; then  # CRF++ to convergence (its defaults), B templates conjoined with label pairs
        peer_args=(--config sighan2005 --train "$train" --test "$test")
        [ "$QUICK" = 1 ] && peer_args+=(--max-iterations "$CRF_ITER")
        crfpp "${c}__crfpp-l2" "${peer_args[@]}" --algorithm CRF-L2
        crfpp "${c}__crfpp-l1" "${peer_args[@]}" --algorithm CRF-L1
    fi
done
have_crfsuite || no_crf_note
report table1 "$OUT" --title "Table 1: word segmentation, seqbil against Wu & Sun (2015)"
