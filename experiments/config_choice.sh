#!/usr/bin/env bash
# The learner of each shipped config (conll2000, pos, ner, cws) chosen again on dev data,
# crf among the candidates; and python-crfsuite's L-BFGS CRF against seqbil on the same
# rich word features.
NAME=config_choice
USAGE="Dev splits: CoNLL-2000's training set, its first 90% of the sentences to train and the last
10% as dev, as chunking (conll2000.toml), as POS tagging (the word and POS columns, pos.toml)
and as chunking from the words alone (the word and chunk columns, ner.toml); for cws.toml the
pku stand-in and SXU training sets split the same way, and udc, wtb and zx with their own dev
sets. No test set is read. Candidates per corpus: the config as shipped (its learner) and the
same templates with each of sp, bol, crf, pa and arow, all with --temperature 1 and otherwise
the config's settings (crf chooses its own c2 within the training part). On the POS and
words-only chunking splits also a template of the usual rich word features (word, lower case,
prefixes and suffixes up to 3, shape, title/upper/digit flags, at -1, 0 and +1): seqbil's crf,
crf with CRFsuite's settings and the config's learner on it, and python-crfsuite's L-BFGS CRF
(c1 = c2 = 0.1, 100 iterations) on the same template. Writes config_choice.csv, .json and .md
(dev score, the CPU seconds of one training run, the c2 crf chose) and config_choice_winners.*.
--skip-corpus NAME (pku, sxu, udc, wtb, zx, chunking, pos, chunk-words) leaves a corpus out,
--skip-run FEATURES:SYSTEM (e.g. rich:crf) a candidate on every corpus; --why TEXT says why in
the report.
--quick: the first 60 sentences of the bundled CoNLL-2000 sample and the bundled pku sample,
3 epochs (crf: 3 iterations; CRFsuite: 10)."
source "$(dirname "$0")/common.sh"
source "$EXP/lib/driver.sh"
DATA_NOTE="conll2000, sighan2005 (pku), sighan2008-sxu and cws-more (udc, wtb, zx) from @DATA@"
[[ " $* " == *" --quick "* ]] &&
    DATA_NOTE="bundled samples (the first 60 sentences of the CoNLL-2000 sample; the pku sample)"
DRIVER_VALUED="--skip-corpus --skip-run --why"
parse_driver_options "$@"
R=$OUT/runs

# dev_split NAME FORMAT TRAIN: R/NAME.train90 and R/NAME.dev10, the first 90% of the
# sentences and the last 10%
dev_split() {
    "$PY" "$EXP/lib/subset.py" --format "$2" --first 0.9 "$3" "$R/$1.train90" "$R/$1.dev10"
}

if [ "$QUICK" = 1 ]; then
    "$PY" "$EXP/lib/subset.py" --format conll --first 0.12 "$SAMPLES/conll2000_train.txt" "$R/conll.sample"
    conll=$R/conll.sample
    dev_split pku sighan "$SAMPLES/pku_train.utf8"
    cws=("sample|$R/pku.train90|$R/pku.dev10")
else
    need_data conll2000 get_conll2000.sh
    need_data sighan2008-sxu get_sighan2005.sh
    need_data cws-more get_cws_more.sh
    pku_corpus
    conll=$DATA/conll2000/train.txt
    dev_split pku sighan "$PKU_TRAIN"
    dev_split sxu sighan "$DATA/sighan2008-sxu/train.txt"
    cws=("pku|$R/pku.train90|$R/pku.dev10" "sxu|$R/sxu.train90|$R/sxu.dev10")
    for c in udc wtb zx; do cws+=("$c|$DATA/cws-more/$c/train.txt|$DATA/cws-more/$c/dev.txt"); done
fi

# CoNLL-2000 as three tasks: chunking (word POS chunk), POS tagging (word POS) and
# chunking from the words alone (word chunk)
dev_split chunking conll "$conll"
for part in train90 dev10; do
    cut -d' ' -f1,2 "$R/chunking.$part" > "$R/pos.$part"
    cut -d' ' -f1,3 "$R/chunking.$part" > "$R/chunk-words.$part"
done
DRIVER_ARGS+=(--corpus "chunking|conll2000|$R/chunking.train90|$R/chunking.dev10"
              --corpus "pos|pos|$R/pos.train90|$R/pos.dev10"
              --corpus "chunk-words|ner|$R/chunk-words.train90|$R/chunk-words.dev10")
for spec in "${cws[@]}"; do DRIVER_ARGS+=(--corpus "${spec%%|*}|cws|${spec#*|}"); done
have_crfsuite || no_crf_note

run_driver config_choice.py
rm -f "$R"/*.train90 "$R"/*.dev10 "$R/conll.sample"
