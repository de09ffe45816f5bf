#!/usr/bin/env bash
# The re-embedding passive-aggressive learner (rpa) in sequence labelling: CoNLL-2000
# chunking (10%, 25% and 100% of the training set) and pku segmentation, against the same
# learner on fixed vectors (rpa --freeze-embeddings), against it on the sparse templates
# alone (structured PA-II) and against sp, all on the same sparse templates; and the same
# on CoNLL-2000 with the sparse templates that read the words left out, so that words
# reach the model only through their vectors.
NAME=rpa_tagging
USAGE="The sparse templates are those of configs/conll2000.toml and configs/sighan2005.toml;
conllpos drops those of configs/conll2000.toml that read the words (column 0). The vector
rows add %emb[-1,0], %emb[0,0] and %emb[1,0] over k = 50 vectors: random (the
embeddings setting random:50, drawn per seed), or learned from raw text by seqbil aso
(its current-word split; English text for CoNLL-2000, Chinese for pku, from --unlabeled DIR,
default data/unlabeled, else ../shared/data/unlabeled). Every learner averages. Chosen for each
training set (CoNLL-2000's first 10% and 25% and the whole set, pku) on the last 10% of the
whole training set held out, training on that set (the whole set: on the other 90%): the
epochs (up to 30) of each method, C (0.1 or 1) of the PA rows, and lambda (0.001 to 10,
C = 1) of rpa; then 3 seeds on the test sets. Writes
rpa_tagging.csv, .json and .md (and rpa_tagging_held.* for the choices).
--quick: the bundled samples, 3 epochs, one seed, k = 10, a small grid."
source "$(dirname "$0")/common.sh"
take_unlabeled "$@"
parse_options ${ARGS[@]+"${ARGS[@]}"}
R=$OUT/runs

if [ "$QUICK" = 1 ]; then
    EMAX=3 K=10 SEEDS=(1) SIZES=(100) CS=(1) LAMBDAS=(0.1 1) ASO=(--targets 50)
    CONLL_TRAIN=$SAMPLES/conll2000_train.txt CONLL_TEST=$SAMPLES/conll2000_test.txt
    PKU_TRAIN=$SAMPLES/pku_train.utf8 PKU_TEST=$SAMPLES/pku_test.utf8
    sample_text "$R/en.txt"
    EN=("$R/en.txt") ZH=("$PKU_TRAIN")
else
    EMAX=30 K=50 SEEDS=(1 2 3) SIZES=(10 25 100) CS=(0.1 1) LAMBDAS=(0.001 0.01 0.1 1 10) ASO=()
    need_data conll2000 get_conll2000.sh
    CONLL_TRAIN=$DATA/conll2000/train.txt CONLL_TEST=$DATA/conll2000/test.txt
    pku_corpus
    find_unlabeled
    EN=("$UNLABELED"/en/*.txt.gz) ZH=("$UNLABELED"/zh/*.txt.gz "$PKU_TRAIN")
fi

# 1. word (character) vectors from raw text; the pku training text is segmented: aso
# reads its lines as characters, spaces dropped
learn_vectors "$R/en.vec" conll $K "${EN[@]}"
learn_vectors "$R/zh.vec" sighan $K "${ZH[@]}"

# 2. per corpus, the sparse templates of its config (for conllpos, those that do not read
# the words) and the same with the vector rows
CORPORA=(conll conllpos pku)
for spec in conll:conll2000:all conllpos:conll2000:nowords pku:sighan2005:all; do
    IFS=: read -r corpus config which <<< "$spec"
    "$PY" "$EXP/lib/rpa_tagging.py" templates "$config" "$which" "$R/$corpus.template" "$R/$corpus.emb.template"
done

# spawn_eval NAME TEST TRAIN-ARGS...: train_eval in the background
spawn_eval() { spawn train_eval "$1" "$2" "" "${@:3}"; }
# method_args CORPUS METHOD: the options of a method (without the held-out choices)
method_args() {
    local corpus=$1 method=$2 lang vec
    if [ "$corpus" = pku ]; then lang=zh; else lang=en; fi
    case $method in
        sp) echo "--learner sp --template $R/$corpus.template" ;;
        pa) echo "--learner rpa --template $R/$corpus.template" ;;
        *) vec=${method#*-}; [ "$vec" = aso ] && vec=$R/$lang.vec || vec=random:$K
           echo "--learner rpa --template $R/$corpus.emb.template --embeddings $vec" \
                "$([ "${method%%-*}" = frozen ] && echo --freeze-embeddings)" ;;
    esac
}
METHODS=(sp pa frozen-rand rpa-rand frozen-aso rpa-aso)

# 3. held-out choices, per training set: every run scores the held-out part (the last 10% of
# the whole training set) after each epoch; it trains on that training set (the first N%,
# inside the other 90%) or, for the whole set, on the other 90%
for corpus in "${CORPORA[@]}"; do
    if [ $corpus != pku ]; then
        train=$CONLL_TRAIN cfg=(--config conll2000 --averaged) fmt=conll sizes=("${SIZES[@]}")
    else
        train=$PKU_TRAIN cfg=(--config sighan2005 --averaged) fmt=sighan sizes=(100)
    fi
    "$PY" "$EXP/lib/subset.py" --format $fmt --first 0.9 "$train" "$R/$corpus.train90" "$R/$corpus.held10"
    for size in "${sizes[@]}"; do
        if [ "$size" = 100 ]; then
            split=$corpus part=$R/$corpus.train90
        else
            split=$corpus$size part=$R/$corpus.first$size
            "$PY" "$EXP/lib/subset.py" --format $fmt --first "$(fraction "$size")" "$train" "$part"
        fi
        echo "$NAME: $split, choices on held-out data"
        for method in "${METHODS[@]}"; do
            read -ra margs <<< "$(method_args $corpus "$method")"
            case $method in
                sp) grid=("") ;;
                rpa-*) grid=(); for l in "${LAMBDAS[@]}"; do grid+=("--lambda $l"); done ;;
                *) grid=(); for c in "${CS[@]}"; do grid+=("-C $c"); done ;;
            esac
            for g in "${grid[@]}"; do
                read -ra gargs <<< "$g"
                tag=$(echo "$g" | tr -d ' -')
                spawn_eval "held${split}__${method}${tag:+-$tag}__1" "$R/$corpus.held10" "${cfg[@]}" "${margs[@]}" \
                    ${gargs[@]+"${gargs[@]}"} --train "$part" --dev "$R/$corpus.held10" --epochs $EMAX
            done
        done
    done
done
sync_runs

# 4. test runs, each training set with its held-out choices
for corpus in "${CORPORA[@]}"; do
    echo "$NAME: $corpus, test runs"
    if [ $corpus != pku ]; then
        cfg=(--config conll2000 --averaged) test=$CONLL_TEST
        parts=()
        for size in "${SIZES[@]}"; do
            "$PY" "$EXP/lib/subset.py" --format conll --first "$(fraction "$size")" "$CONLL_TRAIN" "$R/conll.first$size"
            parts+=("$corpus$size|$R/conll.first$size")
        done
    else
        cfg=(--config sighan2005 --averaged) test=$PKU_TEST parts=("pku|$PKU_TRAIN")
    fi
    for spec in "${parts[@]}"; do
        split=${spec%%|*}
        while read -r method epochs choice; do
            read -ra margs <<< "$(method_args $corpus "$method")"
            read -ra cargs <<< "$choice"
            for seed in "${SEEDS[@]}"; do
                spawn_eval "${split}__${method}__$seed" "$test" "${cfg[@]}" "${margs[@]}" ${cargs[@]+"${cargs[@]}"} \
                    --train "${spec#*|}" --epochs "$epochs" --seed "$seed"
            done
        done < <("$PY" "$EXP/lib/rpa_tagging.py" choose "$OUT" "${split%100}")
    done
done
sync_runs
rm -f "$R"/*.first* "$R"/*.train90 "$R"/*.held10

"$PY" "$EXP/lib/rpa_tagging.py" report "$OUT" --title "Re-embedding passive-aggressive learning in sequence labelling"
