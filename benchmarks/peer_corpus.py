"""What the peer scripts share: the corpus options, the corpora and templates read as
seqbil reads them, and the test score."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from seqbil.corpus import make_format  # noqa: E402
from seqbil.features import normalizer  # noqa: E402
from seqbil.scoring import score  # noqa: E402
from seqbil.templates import read_template_file  # noqa: E402
from seqbil.train import find_config, read_corpus, resolve_settings  # noqa: E402


def add_arguments(ap):
    ap.add_argument("--config", required=True, help="seqbil config (path or bundled name)")
    ap.add_argument("--template", help="CRF++ template file instead of the config's templates")
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)


class PeerCorpus:
    """settings, fmt, fold (the config's normaliser, or None), template texts, train, test."""

    def __init__(self, args):
        self.settings = resolve_settings(find_config(args.config), {})
        self.fmt = make_format(self.settings["format"], None, self.settings["label_column"])
        self.fold = normalizer(self.settings["normalize"])
        self.texts = [t.text for t in read_template_file(args.template)] if args.template \
            else self.settings["templates"]
        self.train = read_corpus(self.fmt, args.train, self.settings["encoding"])
        self.test = read_corpus(self.fmt, args.test, self.settings["encoding"])

    def score(self, pred):
        """Test F1 and the rest: conlleval for chunking, the SIGHAN scorer for segmentation."""
        kind = self.settings["evaluation"] if self.settings["evaluation"] != "auto" else "chunk"
        return score(self.fmt, kind, [s.labels for s in self.test], pred, self.test)
