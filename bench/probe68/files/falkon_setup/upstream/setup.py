import glob
import os
import os.path as osp
import sys
from typing import Any, List, Tuple

from setuptools import find_packages, setup

try:
    import torch
    from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension
except ImportError:
    raise ImportError("PyTorch must be pre-installed before installing Falkon.")

WITH_CUDA = (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1"
WITH_KEOPS = os.getenv("WITH_KEOPS", "1") == "1"
CURRENT_DIR = osp.dirname(osp.abspath(__file__))


def get_version(root_dir: str) -> str:
    with open(os.path.join(root_dir, "VERSION")) as version_file:
        version = version_file.read().strip()
    return version


def torch_version():
    import torch
    version = torch.__version__
    split_version = version.split(".")
    # With torch 1.10.0 the version 'number' include CUDA version (e.g. '1.10.0+cu102').
    # Here we remove the CUDA version.
    for i in range(len(split_version)):
        if "+" in split_version[i]:
            split_version[i] = split_version[i].split("+")[0]
    return [int(v) for v in split_version]


def torch_version_macros():
    int_version = torch_version()
    return [("TORCH_VERSION_MAJOR", int_version[0]),
            ("TORCH_VERSION_MINOR", int_version[1]),
            ("TORCH_VERSION_PATCH", int_version[2])]


def get_extensions():
    extensions_dir = osp.join(CURRENT_DIR, "falkon", "c_ext")

    main_files = glob.glob(osp.join(extensions_dir, "*.cpp"))
    cpu_files = glob.glob(osp.join(extensions_dir, "ops", "cpu", "*.cpp"))
    cuda_files = glob.glob(osp.join(extensions_dir, "ops", "cuda", "*.cu"))
    cuda_cpp_files = glob.glob(osp.join(extensions_dir, "ops", "cuda", "*.cpp"))

    extension = CppExtension
    sources = main_files + cpu_files
    define_macros: List[Tuple[str, Any]] = torch_version_macros()
    libraries = []
    extra_compile_args = {"cxx": ["-O3"]}
    extra_link_args = []
    if sys.platform != "win32":
        extra_compile_args["cxx"] += ["-fopenmp"]
        extra_link_args += ["-fopenmp"]

    if WITH_CUDA:
        extension = CUDAExtension
        sources += cuda_files + cuda_cpp_files
        define_macros += [("WITH_CUDA", None)]
        nvcc_flags = os.getenv("NVCC_FLAGS", "")
        nvcc_flags = [] if nvcc_flags == "" else nvcc_flags.split(" ")
        nvcc_flags += ["--expt-relaxed-constexpr", "--expt-extended-lambda", "-O3", "-lineinfo"]
        if torch.version.cuda is not None and int(torch.version.cuda.split(".")[0]) >= 11:
            nvcc_flags += ["-std=c++17"]
        extra_compile_args["nvcc"] = nvcc_flags
        libraries += ["cusolver", "cublas", "cusparse"]

    if not os.environ.get("TORCH_CUDA_ARCH_LIST") and WITH_CUDA:
        os.environ["TORCH_CUDA_ARCH_LIST"] = "6.0;7.0;7.5;8.0;8.6;9.0+PTX"

    return [
        extension(
            "falkon.c_ext._C",
            sources=sources,
            include_dirs=[extensions_dir],
            define_macros=define_macros,
            extra_compile_args=extra_compile_args,
            extra_link_args=extra_link_args,
            libraries=libraries,
        )
    ]


# Requirements
install_requires = [
    "torch>=2.0",
    "scipy",
    "numpy",
    "scikit-learn",
    "psutil",
]
if WITH_KEOPS:
    install_requires += ["pykeops>=2.1"]
if WITH_CUDA:
    install_requires += ["cupy-cuda12x"]

test_requires = [
    "pandas",
    "pytest",
    "pytest-cov",
    "coverage",
    "codecov",
    "flake8",
]
doc_requires = [
    "pandas",
    "numpydoc",
    "sphinx",
    "nbsphinx",
    "sphinx-rtd-theme",
    "matplotlib",
    "jupyter",
    "ghp-import",
    # There is also pandoc
]

setup(
    name="falkon",
    version=get_version("falkon"),
    description="Fast, GPU enabled, approximate kernel ridge regression solver.",
    python_requires=">=3.8",
    tests_require=test_requires,
    extras_require={"test": test_requires, "doc": doc_requires},
    ext_modules=get_extensions(),
    packages=find_packages(exclude=["*.tests", "*.tests.*", "tests.*", "tests"]),
    cmdclass={"build_ext": BuildExtension.with_options(no_python_abi_suffix=True)},
    install_requires=install_requires,
    include_package_data=True,  # Since we have a MANIFEST.in this will take all from there.
)
