import os

import torch
from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension, CUDA_HOME

this_dir = os.path.dirname(os.path.abspath(__file__))

requirements = ["torch>=1.11", "einops", "pyyaml", "tensorboard", "pandas", "joblib", "h5py"]


def get_version():
    with open(os.path.join(this_dir, "libs", "version.py")) as f:
        exec(compile(f.read(), "version.py", "exec"))
    return locals()["__version__"]


def get_extensions():
    extensions = [
        # 1D NMS is tiny and runs on CPU (OpenMP)
        CppExtension(
            name="nms_1d_cpu",
            sources=["./csrc/nms_cpu.cpp"],
            extra_compile_args=["-fopenmp"],
        ),
    ]

    if CUDA_HOME is None:
        raise RuntimeError("CUDA_HOME not found; the temporal RoI-Align extension needs nvcc")

    # default to the common archs if the user did not ask for any
    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.0;6.1;7.0;7.5;8.0;8.6+PTX")

    extensions.append(
        CUDAExtension(
            name="temporal_roi_align_cuda",
            sources=[
                "./csrc/temporal_roi_align.cpp",
                "./csrc/temporal_roi_align_cuda.cu",
            ],
            define_macros=[("WITH_CUDA", None)],
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--use_fast_math", "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF2_OPERATORS__"],
            },
        )
    )
    return extensions


setup(
    name="surveillance_event_det",
    version=get_version(),
    author="the authors",
    description="Temporal localisation of anomalous events in surveillance video",
    packages=find_packages(exclude=("configs", "tools", "tests")),
    install_requires=requirements,
    python_requires=">=3.7",
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension},
)
