"""Build seqbil's Cython kernels; everything else about the package (its metadata,
dependencies, extras and files) is in pyproject.toml.

Every cython_ext/NAME.pyx becomes the module seqbil._kernels.NAME, so a new
learner's kernel needs no change here."""
import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
KERNELS = sorted(p.stem for p in (HERE / "cython_ext").glob("*.pyx"))

extensions = [
    Extension(
        f"seqbil._kernels.{name}",
        [f"cython_ext/{name}.pyx"],
        include_dirs=[numpy.get_include(), "cython_ext"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=["-O3"],
    )
    for name in KERNELS
]

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                             "cdivision": True, "initializedcheck": False},
        nthreads=CORES,
    ),
    # the kernels compile on every core: the install is the longest step of a fresh setup
    options={"build_ext": {"parallel": CORES}},
)
