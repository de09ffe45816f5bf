"""Small corpora shipped with seqbil: the default training run and the tests use them."""
from importlib import resources

# per corpus format: (training sample, held-out sample)
SAMPLES = {"conll": ("conll2000_train.txt", "conll2000_test.txt"), "sighan": ("pku_train.utf8", "pku_test.utf8")}


def sample_path(name):
    """Path of a bundled sample file."""
    return resources.files(__name__) / name
