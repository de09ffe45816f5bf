"""Build seqbil: the Python package plus the Cython kernels in cython_ext/.

Every cython_ext/NAME.pyx becomes the module seqbil._kernels.NAME, so a new
learner's kernel needs no change here."""
from pathlib import Path

import numpy
from Cython.Build import cythonize
from setuptools import Extension, find_packages, setup

HERE = Path(__file__).parent
KERNELS = sorted(p.stem for p in (HERE / "cython_ext").glob("*.pyx"))
# the site's requirements, one list for this extra and for CI's `pip install -r docs/requirements.txt`
DOCS = [line.strip() for line in (HERE / "docs" / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")]

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


def version():
    for line in (HERE / "seqbil" / "_version.py").read_text().splitlines():
        if line.startswith("__version__"):
            return line.split('"')[1]
    raise RuntimeError("no __version__ in seqbil/_version.py")


setup(
    name="seqbil",
    version=version(),
    description="Sequence labelling with rank-1 bilinear models learned online (Wu & Sun)",
    long_description=(HERE / "README.md").read_text(encoding="utf-8"),
    long_description_content_type="text/markdown",
    python_requires=">=3.11",
    packages=find_packages(include=["seqbil", "seqbil.*"]) + ["seqbil.configs"],
    # The top-level configs/ directory ships inside the package as seqbil.configs.
    package_dir={"seqbil.configs": "configs"},
    package_data={"seqbil.samples": ["*.txt", "*.utf8", "*.gz"], "seqbil.configs": ["*.toml", "*.template"]},
    ext_modules=cythonize(
        extensions,
        compiler_directives={"language_level": "3", "boundscheck": False, "wraparound": False,
                             "cdivision": True, "initializedcheck": False},
    ),
    install_requires=["numpy>=1.24", "scipy>=1.10", "click>=8.1", "tqdm>=4.60"],
    extras_require={
        # the tests run the Dask code on a local cluster too, and compare
        # seqbil.optimize with the C liblbfgs that pylbfgs wraps, and read
        # the models python-crfsuite trains
        "test": ["pytest>=7", "hypothesis>=6", "dask[distributed]>=2023.6", "pylbfgs>=0.2", "scikit-learn>=1.0",
                 "python-crfsuite>=0.9"],
        "dask": ["dask[distributed]>=2023.6", "bokeh>=3.1"],  # bokeh: the dashboard
        "bench": ["python-crfsuite>=0.9", "sklearn-crfsuite>=0.5"],
        "sklearn": ["scikit-learn>=1.0"],  # seqbil.sklearn: the sklearn-crfsuite drop-in
        "plots": ["matplotlib>=3.5"],
        "docs": DOCS,  # the documentation site
    },
    entry_points={"console_scripts": ["seqbil=seqbil.cli:main"]},
    zip_safe=False,
)
