"""Build seqbil's Cython kernels; everything else about the package (its metadata,
dependencies, extras and files) is in pyproject.toml.

Every cython_ext/NAME.pyx becomes the module seqbil._kernels.NAME, so a new
learner's kernel needs no change here. The code Cython writes into every module that
takes a memoryview (the memoryview type, slicing, buffer checks) is compiled once, into
seqbil._kernels._cyutility, which the others import: built into each of them it was
about half of the compiler's time, and the build is the longest step of a fresh set-up."""
import os
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

HERE = Path(__file__).parent
KERNELS = sorted(p.stem for p in (HERE / "cython_ext").glob("*.pyx"))

# -g0: no debug information (Python's own CFLAGS ask for it), a fifth of the compile time
FLAGS = ["-O3", "-g0"]
extensions = [
    Extension(
        f"seqbil._kernels.{name}",
        [f"cython_ext/{name}.pyx"],
        include_dirs=[numpy.get_include(), "cython_ext"],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=FLAGS,
    )
    for name in KERNELS
]
SHARED = "seqbil._kernels._cyutility"
# cythonize writes this file itself, from Cython's own utility code
extensions.append(Extension(SHARED, ["cython_ext/_cyutility.c"], extra_compile_args=FLAGS))

CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                             "cdivision": True, "initializedcheck": False},
        nthreads=CORES,
        shared_utility_qualified_name=SHARED,
    ),
    # the kernels compile on every core: the install is the longest step of a fresh setup
    options={"build_ext": {"parallel": CORES}},
)
