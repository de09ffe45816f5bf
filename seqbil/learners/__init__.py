"""Learners, one per module, behind the interface in base.py."""
from .bcd import CoordinateDescent
from .bol import Bilinear
from .sp import Perceptron

LEARNERS = {cls.name: cls for cls in (Perceptron, Bilinear, CoordinateDescent)}
