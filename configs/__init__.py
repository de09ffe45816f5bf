"""The configs shipped with seqbil (installed as the package seqbil.configs)."""
