"""Learners, one per module, behind the interfaces in base.py.

A learner is registered by naming its module in MODULES; the module defines an
OnlineLearner or BatchLearner subclass decorated with @register. The CLI choices, the
parameter table, `seqbil params` and `seqbil inspect` all read LEARNERS.
"""
from importlib import import_module

from .base import REGISTRY as LEARNERS, BatchLearner, Learner, OnlineLearner, register

MODULES = ("sp", "bol", "bcd", "rpa", "pa", "arow", "crf", "l2sgd")

for _module in MODULES:
    import_module(f".{_module}", __name__)

__all__ = ["LEARNERS", "BatchLearner", "Learner", "OnlineLearner", "register"]
