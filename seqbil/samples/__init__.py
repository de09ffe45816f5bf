"""Small corpora shipped with seqbil: the default training run and the tests use them."""
from importlib import resources

# per corpus format: (training sample, test sample); a bare `seqbil train` trains on the first and
# chooses its settings on held-out training data, never on the test sample
# (the CRFsuite samples: the first 200 and 100 sentences of the CoNLL ones with the attributes
# of CRFsuite's chunking example, written by data_scripts/crfsuite_sample.py)
SAMPLES = {"conll": ("conll2000_train.txt", "conll2000_test.txt"), "sighan": ("pku_train.utf8", "pku_test.utf8"),
           "crfsuite": ("conll2000_train.crfsuite.gz", "conll2000_test.crfsuite.gz")}


def sample_path(name):
    """Path of a bundled sample file."""
    return resources.files(__name__) / name
