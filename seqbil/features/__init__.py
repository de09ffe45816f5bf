"""Features: CRF++ templates (templates.py) and Wapiti's patterns (patterns.py), the
attribute dictionary that maps instantiated templates to ids (index.py), and corpora
encoded once into integer arrays (dataset.py)."""
from .dataset import Dataset, encode
from .index import FeatureIndex
from .patterns import read_template_file
from .templates import Template, TemplateSet, parse_template

__all__ = ["Dataset", "FeatureIndex", "Template", "TemplateSet", "encode", "parse_template", "read_template_file"]
