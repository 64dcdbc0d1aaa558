"""Build script for the PointNet++ CUDA ops used by the 3D point-cloud policy encoders.

    cd third_party/pointnet2_ops_lib && pip install .

The extension is compiled for every architecture listed in TORCH_CUDA_ARCH_LIST; set it yourself to shorten the
build (e.g. TORCH_CUDA_ARCH_LIST="8.6" for an RTX 3090 workstation driving the robot).
"""
import glob
import os
import os.path as osp

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

this_dir = osp.dirname(osp.abspath(__file__))
_ext_src_root = osp.join("pointnet2_ops", "_ext-src")
_ext_sources = glob.glob(osp.join(_ext_src_root, "src", "*.cpp")) + glob.glob(
    osp.join(_ext_src_root, "src", "*.cu")
)
_ext_headers = glob.glob(osp.join(_ext_src_root, "include", "*"))

requirements = ["torch>=1.4"]


def _read_long_description():
    readme = osp.join(this_dir, "README.md")
    if osp.exists(readme):
        with open(readme, encoding="utf-8") as f:
            return f.read()
    return "PointNet++ ops (furthest point sampling, ball query, grouping, three-NN interpolation)"

exec(open(osp.join("pointnet2_ops", "_version.py")).read())

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "6.0;6.1;6.2;7.0;7.5;8.0;8.6;8.9;9.0+PTX")

setup(
    name="pointnet2_ops",
    version=__version__,  # noqa: F821
    author="Erik Wijmans",
    description="PointNet++ CUDA operations",
    long_description=_read_long_description(),
    long_description_content_type="text/markdown",
    packages=find_packages(),
    install_requires=requirements,
    ext_modules=[
        CUDAExtension(
            name="pointnet2_ops._ext",
            sources=_ext_sources,
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "-Xfatbin", "-compress-all", "--use_fast_math"],
            },
            include_dirs=[osp.join(this_dir, _ext_src_root, "include")],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    include_package_data=True,
    package_data={"pointnet2_ops": ["_ext-src/include/*.h", "_ext-src/include/*.cuh"]},
    python_requires=">=3.7",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Operating System :: POSIX :: Linux",
        "Environment :: GPU :: NVIDIA CUDA",
    ],
)
