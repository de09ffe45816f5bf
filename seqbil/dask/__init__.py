"""seqbil on a Dask cluster (the extra: pip install "seqbil[dask]").

- tag_files(model, inputs, output_dir): what `seqbil tag --output-dir` runs: every
  input file cut into partitions at sentence boundaries, tagged on the workers (the
  model memory-mapped once per worker), written as one output file per input file.
- tag_bag(bag, model): the labels of every sentence of a dask.bag.

The cluster is a local one made for the call (a scheduler and worker processes, each
a process of its own: cluster.local_cluster), or any running scheduler (`scheduler=`, or a Client given as `client=`). Files are read and written
by the workers, so with a scheduler on other machines the model, the inputs and the
output directory must be at the same paths on every machine (a shared file system).
Without the extra, importing this module works and the calls say what to install.
"""
from .tagging import tag_bag, tag_files

__all__ = ["tag_files", "tag_bag"]
