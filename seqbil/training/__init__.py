"""Training runs, in named stages, each callable on its own:

- `settings`: the settings checked against each other (`check_run`), the templates and
  the learner (`check_settings`), before anything is read;
- `selection`: what is chosen on held-out data first (`select`: a CRF's coefficients,
  the temperature of an online learner's probabilities); `alongside`: a named online
  learner's temperature fitted on a second thread while the run goes on;
- `reading`, `shards`, `prepare`: the corpus read and encoded once (`prepare`: a `Run`),
  in this process or on the shards of a Dask cluster, and the learner made
  (`make_learner`);
- `passes`: the pass loop (`run_passes`: progress, dev scores, checkpoints, Ctrl-C);
- `finishing`: the model and its record (`finish`, `set_temperature`, `compact`);
- `run`: `train`, the whole run, which saves the model atomically (also on Ctrl-C).
"""
from .finishing import compact, finish, set_temperature
from .passes import CHUNK, graceful_stop, run_passes, score_run
from .prepare import Run, carried_weights, make_learner, prepare
from .reading import file_record
from .run import train
from .selection import CV_FOLDS, CV_TOKENS, select
from .settings import check_run, check_settings, load_templates, run_inputs, settings_header, task_list

__all__ = ["CHUNK", "CV_FOLDS", "CV_TOKENS", "Run", "carried_weights", "check_run", "check_settings", "compact",
           "file_record", "finish", "graceful_stop", "load_templates", "make_learner", "prepare", "run_inputs",
           "run_passes", "score_run", "select", "set_temperature", "settings_header", "task_list", "train"]
