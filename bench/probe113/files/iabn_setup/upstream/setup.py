import os
from os import path, listdir

import setuptools
import torch
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CppExtension, CUDA_HOME

here = path.abspath(path.dirname(__file__))

with open(path.join(here, "README.md"), encoding="utf-8") as f:
    long_description = f.read()


def find_sources(root_dir, with_cuda=True):
    extensions = [".cpp", ".cu"] if with_cuda else [".cpp"]
    sources = []
    for subdir in listdir(root_dir):
        if path.isdir(path.join(root_dir, subdir)):
            sources += find_sources(path.join(root_dir, subdir), with_cuda)
        elif path.splitext(subdir)[1] in extensions:
            sources.append(path.join(root_dir, subdir))
    return sources


def get_extensions():
    # Build for all the archs we have in the lab unless the user overrides it
    if os.getenv("TORCH_CUDA_ARCH_LIST") is None:
        os.environ["TORCH_CUDA_ARCH_LIST"] = "6.0;6.1;7.0;7.5"

    if (torch.cuda.is_available() and CUDA_HOME is not None) or os.getenv("FORCE_CUDA", "0") == "1":
        ext = CUDAExtension(
            name="inplace_abn._backend",
            sources=find_sources("src", with_cuda=True),
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "--expt-extended-lambda"],
            },
            include_dirs=[path.join(here, "include")],
            define_macros=[("WITH_CUDA", 1)],
        )
    else:
        print("CUDA not found, building the CPU-only version of inplace_abn (much slower)")
        ext = CppExtension(
            name="inplace_abn._backend",
            sources=find_sources("src", with_cuda=False),
            extra_compile_args={"cxx": ["-O3"]},
            include_dirs=[path.join(here, "include")],
        )
    return [ext]


setuptools.setup(
    # Meta-data
    name="inplace-abn",
    author="Lorenzo Porzi",
    author_email="lorenzo@mapillary.com",
    description="In-Place Activated BatchNorm for Memory-Optimized Training of DNNs",
    long_description=long_description,
    long_description_content_type="text/markdown",
    url="https://github.com/mapillary/inplace_abn",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3.6",
        "Programming Language :: Python :: 3.7",
        "Programming Language :: Python :: 3.8",
        "License :: OSI Approved :: BSD License",
        "Environment :: GPU :: NVIDIA CUDA",
    ],

    # Versioning
    use_scm_version={"root": ".", "relative_to": __file__, "write_to": "inplace_abn/_version.py"},

    # Requirements
    setup_requires=["setuptools_scm"],
    install_requires=["torch>=1.5"],
    python_requires=">=3, <4",

    # Package description
    packages=[
        "inplace_abn",
    ],
    ext_modules=get_extensions(),
    cmdclass={"build_ext": BuildExtension}
)
