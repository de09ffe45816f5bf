"""What the peer scripts share: the corpus options, the corpora and templates read as
seqbil reads them, and the test score."""
from seqbil.evaluation import choose_metric, score
from seqbil.features.index import normalizer
from seqbil.features.templates import read_template_file
from seqbil.formats import make_format, read_corpus
from seqbil.params import find_config, resolve


def add_arguments(ap):
    ap.add_argument("--config", required=True, help="seqbil config (path or bundled name)")
    ap.add_argument("--template", help="CRF++ template file instead of the config's templates")
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)


class PeerCorpus:
    """settings, fmt, fold (the config's normaliser, or None), template texts, train, test."""

    def __init__(self, args):
        self.settings, _ = resolve(find_config(args.config))
        self.fmt = make_format(self.settings["format"], None, self.settings["label_column"])
        self.fold = normalizer(self.settings["normalize"])
        self.texts = [t.text for t in read_template_file(args.template)] if args.template \
            else self.settings["templates"]
        self.train = read_corpus(self.fmt, args.train, self.settings["encoding"])
        self.test = read_corpus(self.fmt, args.test, self.settings["encoding"])

    def score(self, pred):
        """Test F1 and the rest: conlleval for chunking, the SIGHAN scorer for segmentation."""
        gold = [s.labels for s in self.test]
        metric, _ = choose_metric({y for g in gold for y in g}, self.fmt.name, self.settings["metric"])
        return score(metric, gold, pred, scheme=self.settings["scheme"],
                     chars=[s.columns[0] for s in self.test] if metric == "segment" else None)
