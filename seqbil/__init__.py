"""seqbil: sequence labelling with rank-1 bilinear models learned online."""

__version__ = "0.1.0"
