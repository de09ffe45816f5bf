"""A training corpus read on the shards of a Dask cluster: what the workers report of
their parts, and the feature index their counts make (the one one process would build)."""
from ..errors import ConfigError, InputError
from ..features.dictionaries import parse_specs as dictionary_specs
from ..features.index import FeatureIndex, merge_vocabularies


def survey_shards(mixer, settings, templates):
    """Every shard read on its worker: what the index and the run need of each
    (dask/ipm_shards.py: shard_survey), in shard order."""
    specs = dictionary_specs(settings.dictionaries, settings.origin("dictionaries"))
    train_words = any(specs.get(name) == "train" for name in templates.dictionaries)
    if train_words and settings.dict_folds >= 2:
        raise ConfigError(settings.origin("shards"), 0, "iterative parameter mixing (shards) cannot "
                          "encode a shard with jackknifed dictionaries: set dict_folds = 0")
    columns = sorted({t.refs[0][1].column for t in templates.vector_templates})
    out = mixer.survey({"fields": templates.fields, "normalize": settings.normalize,
                        "length_cap": settings.dict_length_cap, "columns": columns,
                        "min_length": settings.dict_min_length, "words": train_words})
    if not sum(r["sentences"] for r in out):
        raise InputError(mixer.spec["name"], 0, "no sentences in file")
    return out


class ColumnValues:
    """The distinct values of some columns over the shards, as Corpus.column gives
    them (what the vectors keep their rows for)."""

    def __init__(self, surveyed):
        self.values = {}
        for r in surveyed:
            for c, values in r["columns"].items():
                self.values.setdefault(c, {}).update(dict.fromkeys(values))

    def column(self, c, fold=None):
        values = list(self.values.get(c, ()))
        return (list(dict.fromkeys(map(fold, values))) if fold else values), None


def index_of_shards(mixer, settings, templates, labels, surveyed, lexicons, vectors, structure, witness):
    """(index, witnesses, fingerprint): the feature index the shards' counts make (the
    one FeatureIndex.build makes of the whole corpus); with witness, the label
    sequences in which an I- tag starts a chunk, one per shard that has one (what
    detect_scheme needs to tell IOB1); and the CRC of the shards' encodings, which
    they now keep."""
    fields = {f: merge_vocabularies([r["vocabularies"][i] for r in surveyed]) for i, f in enumerate(templates.fields)}
    attributes = merge_vocabularies([r["names"] for r in surveyed]) if templates.items else None
    counter = FeatureIndex(templates, fields, [None, None], settings.normalize, None, lexicons,
                           settings.dict_length_cap, attributes)
    counted = mixer.count(counter, witness)
    counts = [[[c["counts"][order][t] for c in counted] for t in range(len(counted[0]["counts"][order]))]
              for order in (0, 1)]
    names = sum(c["names"] for c in counted) if templates.items else None
    witnesses = [c["witness"] for c in counted if c["witness"] is not None]
    del counted
    index = FeatureIndex.from_counts(templates, fields, counts, settings.min_count, settings.normalize,
                                     lexicons, settings.dict_length_cap, attributes, names)
    del counts
    index.vectors, index.structure = vectors, structure
    return index, witnesses, mixer.encode(index, templates, labels)
