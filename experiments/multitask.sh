#!/usr/bin/env bash
# Online multi-task learning across segmentation standards (Cavallanti, Cesa-Bianchi &
# Gentile 2008): one joint model of pku, SXU, udc, wtb and zx against a model per corpus.
NAME=multitask
USAGE="Trains configs/cws.toml (bol, and sp) on each of pku (stand-in), SXU, udc, wtb and zx alone,
and on all five as tasks of one model (--task). First the coupling b is chosen on dev sets
(udc, wtb, zx: their own; pku, SXU: 10% of the training set held out, fixed seed): the b
with the best mean dev F1 over tasks and learners. Then, with that b, single and joint
models on the full training sets, scored on the test sets, over 5 shuffling seeds; and the
joint model with an extra corpus added as a sixth task (as and msr: each a held-out check
built from a SIGHAN 2005 test set split 80/20, as no training set for them is at hand),
over 3 seeds. Logs the mistakes of every task while learning, coupled and with b = 0
(independent). Writes multitask*.csv, .json, .md and a figure."
source "$(dirname "$0")/common.sh"
parse_options "$@"

COUPLINGS=(1 4 16 64)
SEEDS=(1 2 3 4 5)
EXTRA_SEEDS=(1 2 3)
LEARNERS=(bol sp)
if [ "$QUICK" = 1 ]; then
    # two standards of the bundled sample: its words, and its characters paired
    COUPLINGS=(1 4); SEEDS=(1 2); EXTRA_SEEDS=(1); EPOCHS=(--epochs 3)
    q=$OUT/runs/quick; mkdir -p "$q"
    cp "$SAMPLES/pku_train.utf8" "$q/words.train"; cp "$SAMPLES/pku_test.utf8" "$q/words.test"
    for part in train test; do
        "${PYI[@]}" -c 'import sys
for line in open(sys.argv[1], encoding="utf-8"):
    s = "".join(line.split())
    print(" ".join(s[i:i + 2] for i in range(0, len(s), 2)))' "$q/words.$part" > "$q/pairs.$part"
    done
    head -n 60 "$q/words.test" > "$q/extra.train"; tail -n +61 "$q/words.test" > "$q/extra.test"
    # name|train|dev|test|words (dev "": 10% of train held out)
    corpora=("words|$q/words.train||$q/words.test|$q/words.train" "pairs|$q/pairs.train||$q/pairs.test|$q/pairs.train")
    extras=("extra|$q/extra.train|$q/extra.test|$q/extra.train")
else
    EPOCHS=()
    need_data sighan2005 get_sighan2005.sh
    need_data sighan2008-sxu get_sighan2005.sh
    need_data cws-more get_cws_more.sh
    pku_corpus
    s=$DATA/sighan2005; x=$DATA/sighan2008-sxu; m=$DATA/cws-more
    corpora=("pku|$PKU_TRAIN||$PKU_TEST|$s/pku_training_words.utf8" "sxu|$x/train.txt||$x/test.txt|$x/train.txt")
    for c in udc wtb zx; do corpora+=("$c|$m/$c/train.txt|$m/$c/dev.txt|$m/$c/test.txt|$m/$c/train.txt"); done
    # extra tasks: a SIGHAN 2005 test set split 80/20 into training and test parts
    extras=()
    for c in as msr; do
        "$PY" "$EXP/lib/subset.py" --format sighan --fraction 0.8 --seed 1 "$s/${c}_test_gold.utf8" \
            "$OUT/runs/$c.train80" "$OUT/runs/$c.test20"
        extras+=("$c|$OUT/runs/$c.train80|$OUT/runs/$c.test20|$OUT/runs/$c.train80")
    done
fi

# timed RUN ARGS...: seqbil train, its wall time (seconds, end to end) in RUN.time
timed() {
    local r=$OUT/runs/$1 t0 t1
    shift
    t0=$(date +%s.%N)
    if ! "${SEQBIL[@]}" train -q --model "$r.sbm" --log "$r.jsonl" "$@" > "$r.out" 2>&1; then
        cat "$r.out" >&2
        return 1
    fi
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' > "$r.time"
    stat -c %s "$r.sbm" > "$r.size"
}

# score RUN TASK TEST WORDS: RUN.TASK.eval.json (TASK "-": a single-task model, RUN.eval.json)
score() {
    local r=$OUT/runs/$1 out=$OUT/runs/$1.$2.eval.json args=()
    if [ "$2" = - ]; then out=$r.eval.json; else args=(--task "$2"); fi
    "${SEQBIL[@]}" eval --model "$r.sbm" --data "$3" --words "$4" "${args[@]}" --json > "$out.tmp"
    mv "$out.tmp" "$out"
}

finished() { [ -s "$OUT/runs/$1.done" ]; }
finish() { rm -f "$OUT/runs/$1.sbm"; echo ok > "$OUT/runs/$1.done"; }  # models are large; sizes are kept

# single SPLIT NAME TRAIN TEST WORDS LEARNER SEED: a model of one corpus
single() {
    local run=${1}-${2}__single__${6}__${7}
    finished "$run" && return 0
    echo "  $run"
    timed "$run" --config cws --train "$3" --learner "$6" --seed "$7" "${EPOCHS[@]}"
    score "$run" - "$4" "$5"
    finish "$run"
}

# joint SPLIT TAG B LEARNER SEED SPEC...: one model of the tasks SPEC (name|train|dev|test|words)
joint() {
    local split=$1 tag=$2 b=$3 learner=$4 seed=$5
    shift 5
    local run=${split}__${tag}-b${b}__${learner}__${seed}
    finished "$run" && return 0
    echo "  $run"
    local flags=() spec name train dev test words
    for spec in "$@"; do
        IFS='|' read -r name train dev test words <<< "$spec"
        flags+=(--task "$name=$train")
    done
    timed "$run" --config cws "${flags[@]}" --coupling "$b" --learner "$learner" --seed "$seed" "${EPOCHS[@]}"
    for spec in "$@"; do
        IFS='|' read -r name train dev test words <<< "$spec"
        score "$run" "$name" "$test" "$words"
    done
    finish "$run"
}

# 1. the coupling, on dev sets
echo "$NAME: choosing the coupling on dev sets"
devspecs=()
for spec in "${corpora[@]}"; do
    IFS='|' read -r c train dev test words <<< "$spec"
    if [ -z "$dev" ]; then
        part=$OUT/runs/$c.train90; dev=$OUT/runs/$c.dev10
        "$PY" "$EXP/lib/subset.py" --format sighan --fraction 0.9 --seed 1 "$train" "$part" "$dev"
        train=$part
    fi
    devspecs+=("$c|$train||$dev|$train")
done
for learner in "${LEARNERS[@]}"; do
    for spec in "${devspecs[@]}"; do
        IFS='|' read -r c train _ dev words <<< "$spec"
        single dev "$c" "$train" "$dev" "$words" "$learner" 1
    done
    for b in "${COUPLINGS[@]}"; do joint dev joint "$b" "$learner" 1 "${devspecs[@]}"; done
done
B=$("$PY" "$EXP/lib/multitask.py" choose "$OUT")
echo "$NAME: coupling b = $B (best mean dev F1)"

# 2. single and joint models on the test sets; the mistakes with b = 0
echo "$NAME: test sets"
for seed in "${SEEDS[@]}"; do
    for learner in "${LEARNERS[@]}"; do
        for spec in "${corpora[@]}"; do
            IFS='|' read -r c train _ test words <<< "$spec"
            single test "$c" "$train" "$test" "$words" "$learner" "$seed"
        done
        joint test joint "$B" "$learner" "$seed" "${corpora[@]}"
    done
done
for learner in "${LEARNERS[@]}"; do joint test joint 0 "$learner" 1 "${corpora[@]}"; done

# 3. an extra corpus as one more task
echo "$NAME: an extra corpus as a sixth task"
for spec in "${extras[@]}"; do
    IFS='|' read -r c train test words <<< "$spec"
    for seed in "${EXTRA_SEEDS[@]}"; do
        for learner in "${LEARNERS[@]}"; do
            single extra "$c" "$train" "$test" "$words" "$learner" "$seed"
            joint "extra-$c" joint "$B" "$learner" "$seed" "${corpora[@]}" "$c|$train||$test|$words"
        done
    done
done
rm -f "$OUT"/runs/*.train90 "$OUT"/runs/*.dev10 "$OUT"/runs/*.train80 "$OUT"/runs/*.test20

"$PY" "$EXP/lib/multitask.py" report "$OUT" --title "Multi-task learning across segmentation standards"
