"""
esim_torch: GPU event camera simulator (ESIM) for PyTorch, part of vid2e.

Generates events from a sequence of (log-)intensity frames on the GPU: every pixel keeps a reference
log intensity and emits ON/OFF events with linearly interpolated timestamps whenever the log intensity
crosses the contrast threshold.

    pip install .          # from esim_torch/
"""
import glob
import os
import shutil

from setuptools import Command, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

ROOT = os.path.dirname(os.path.abspath(__file__))

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.1;7.0;7.5;8.0;8.6+PTX")


def read_requirements():
    req = os.path.join(ROOT, "requirements.txt")
    if not os.path.exists(req):
        return ["torch", "numpy"]
    with open(req) as f:
        return [line.strip() for line in f if line.strip() and not line.startswith("#")]


class CleanCommand(Command):
    """python setup.py clean_all: removes build/, *.egg-info and the compiled esim_cuda*.so."""

    user_options = []

    def initialize_options(self):
        pass

    def finalize_options(self):
        pass

    def run(self):
        for pattern in ("build", "*.egg-info", "esim_cuda*.so"):
            for path in glob.glob(os.path.join(ROOT, pattern)):
                print(f"removing {path}")
                if os.path.isdir(path):
                    shutil.rmtree(path)
                else:
                    os.remove(path)


sources = sorted(glob.glob(os.path.join("src", "*.cpp"))) + sorted(glob.glob(os.path.join("src", "*.cu")))

setup(
    name="esim_torch",
    version="0.1.0",
    description="GPU implementation of the ESIM event camera simulator",
    packages=["esim_torch"],
    package_dir={"esim_torch": "esim_torch"},
    ext_modules=[
        CUDAExtension(
            name="esim_cuda",
            sources=sources,
            include_dirs=[os.path.join(ROOT, "include")],
            extra_compile_args={
                "cxx": ["-O3", "-g0"],
                "nvcc": ["-O3", "--expt-extended-lambda", "-Xptxas=-v"],
            },
        )
    ],
    cmdclass={"build_ext": BuildExtension, "clean_all": CleanCommand},
    install_requires=read_requirements(),
    python_requires=">=3.7",
)
