# Builds the C++ temporal sampler used by sampler.py (ParallelSampler / TemporalGraphBlock).
# CPU only: the sampler runs on the host with OpenMP and hands CSR blocks to the trainer,
# which moves them to the GPU itself (utils.to_dgl_blocks / prepare_input).
#
#   python setup.py build_ext --inplace
from setuptools import setup
from pybind11.setup_helpers import Pybind11Extension, build_ext

ext_modules = [
    Pybind11Extension("sampler_core",
        ['sampler_core.cpp'],
        extra_compile_args = ['-fopenmp'],
        extra_link_args = ['-fopenmp'],),
]

setup(
    name = "sampler_core",
    version = "0.0.1",
    author = "TGL authors",
    url = "https://github.com/amazon-research/tgl",
    description = "Parallel Sampling for Temporal Graphs",
    ext_modules = ext_modules,
    cmdclass={"build_ext": build_ext},
)
