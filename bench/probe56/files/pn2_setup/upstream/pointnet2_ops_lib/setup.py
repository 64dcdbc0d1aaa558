"""Build script for the pointnet2_ops CUDA kernels.

    pip install pointnet2_ops_lib/.

The kernels live in pointnet2_ops/_ext-src (ball_query, group_points, interpolate, sampling).
"""
import glob
import os
import os.path as osp
import re
import subprocess

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension, CUDA_HOME

this_dir = osp.dirname(osp.abspath(__file__))
_ext_src_root = osp.join("pointnet2_ops", "_ext-src")
_ext_sources = glob.glob(osp.join(_ext_src_root, "src", "*.cpp")) + glob.glob(
    osp.join(_ext_src_root, "src", "*.cu")
)
_ext_headers = glob.glob(osp.join(_ext_src_root, "include", "*"))

requirements = ["torch>=1.4"]

exec(open(osp.join("pointnet2_ops", "_version.py")).read())


def _toolkit_version():
    """Return (major, minor) of the toolkit that will compile the kernels."""
    if CUDA_HOME is None:
        raise RuntimeError("pointnet2_ops needs nvcc: set CUDA_HOME to your CUDA toolkit")
    out = subprocess.check_output([osp.join(CUDA_HOME, "bin", "nvcc"), "--version"]).decode()
    m = re.search(r"release (\d+)\.(\d+)", out)
    return int(m.group(1)), int(m.group(2))


_major, _minor = _toolkit_version()
if (_major, _minor) >= (11, 0):
    _arch = "6.0;6.1;6.2;7.0;7.5;8.0;8.6+PTX"
else:
    _arch = "3.7+PTX;5.0;6.0;6.1;6.2;7.0;7.5"
os.environ["TORCH_CUDA_ARCH_LIST"] = _arch

with open(osp.join(this_dir, "README.md"), encoding="utf-8") as f:
    long_description = f.read()

setup(
    name="pointnet2_ops",
    version=__version__,  # noqa: F821  (defined by the exec above)
    author="Erik Wijmans",
    description="PointNet++ sampling / grouping / interpolation ops",
    long_description=long_description,
    long_description_content_type="text/markdown",
    packages=find_packages(),
    install_requires=requirements,
    ext_modules=[
        CUDAExtension(
            name="pointnet2_ops._ext",
            sources=_ext_sources,
            extra_compile_args={
                "cxx": ["-O3"],
                "nvcc": ["-O3", "-Xfatbin", "-compress-all"],
            },
            include_dirs=[osp.join(this_dir, _ext_src_root, "include")],
            depends=_ext_headers,
        )
    ],
    cmdclass={"build_ext": BuildExtension},
    include_package_data=True,
    python_requires=">=3.6",
    classifiers=[
        "Programming Language :: Python :: 3",
        "License :: OSI Approved :: The Unlicense (Unlicense)",
        "Environment :: GPU :: NVIDIA CUDA",
    ],
)
