#!/usr/bin/env bash
# Section 4 of Denis & Ralaivola (2017), Figure 1: PA-II against the re-embedding PA
# (RPA, seqbil/classify.py) on the synthetic two-concept task as the embedding's noise
# variance grows; and Figure 2's picture of both hyperplanes.
NAME=rpa_synthetic
USAGE="n = 500 one-word documents over p = 1,000 words, two hidden concepts, noisy embedding
Phi + E (E_ij ~ N(0, variance)); 80/10/10 split, footnote 1's grid chosen on dev, 10 draws
per noise variance. Writes rpa_synthetic.csv (noise_variance,pa,rpa: mean test accuracy),
rpa_synthetic.json (run record, chosen hyper-parameters, spread), rpa_synthetic.png and
rpa_figure2.png; when the grid's low edge binds, the same with the grid extended below it
(rpa_synthetic_extended.*).

  --noise LIST  comma-separated noise variances (default 0,1,...,10; --quick: 0,4,10)
  --written     RPA's inner loop as Algorithm 1 is written (each step from the current
                inner iterate) instead of anchored at (w_t, Phi_t)
  --quick       3 noise variances, 2 draws: well under a minute"
source "$(dirname "$0")/common.sh"
source "$EXP/lib/driver.sh"
DRIVER_FLAGS="--written"
DRIVER_VALUED="--noise"
DATA_NOTE="synthetic, drawn by experiments/lib/rpa_synthetic.py"
parse_driver_options "$@"
run_driver rpa_synthetic.py
