"""Build script for the Lyft 3D detection solution package (lib/), OpenPCDet-style.

    python setup.py develop

Compiles the CUDA ops under lib/ops (3D IoU / rotated NMS, RoI-aware pooling, PointNet++ stacks).
Set TORCH_CUDA_ARCH_LIST to the compute capabilities of the training machines to speed up the build.
"""
import os
import subprocess

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6")


def get_git_commit_number():
    if not os.path.exists(".git"):
        return "0000000"
    cmd_out = subprocess.run(["git", "rev-parse", "HEAD"], stdout=subprocess.PIPE)
    return cmd_out.stdout.decode("utf-8")[:7]


def make_cuda_ext(name, module, sources):
    return CUDAExtension(
        name="%s.%s" % (module, name),
        sources=[os.path.join(*module.split("."), src) for src in sources],
        extra_compile_args={
            "cxx": ["-O3", "-std=c++17"],
            "nvcc": ["-O3", "--use_fast_math", "-D__CUDA_NO_HALF_OPERATORS__", "-D__CUDA_NO_HALF_CONVERSIONS__"],
        },
    )


def write_version_to_file(version, target_file):
    with open(target_file, "w") as f:
        print('__version__ = "%s"' % version, file=f)


if __name__ == "__main__":
    version = "0.3.0+%s" % get_git_commit_number()
    write_version_to_file(version, "lib/version.py")

    setup(
        name="lyft3d",
        version=version,
        description="Lyft 3D Object Detection for Autonomous Vehicles - 3rd place solution",
        install_requires=[
            "numpy<1.24",
            "llvmlite",
            "numba",
            "tensorboardX",
            "easydict",
            "pyyaml",
            "scikit-image",
            "tqdm",
            "lyft-dataset-sdk",
            "spconv-cu113",
            "cumm-cu113",
        ],
        author="kaggle-lyft3d team",
        license="Apache License 2.0",
        packages=find_packages(exclude=["tools", "data", "output"]),
        cmdclass={
            "build_ext": BuildExtension,
        },
        ext_modules=[
            make_cuda_ext(
                name="iou3d_nms_cuda",
                module="lib.ops.iou3d_nms",
                sources=[
                    "src/iou3d_cpu.cpp",
                    "src/iou3d_nms_api.cpp",
                    "src/iou3d_nms.cpp",
                    "src/iou3d_nms_kernel.cu",
                ],
            ),
            make_cuda_ext(
                name="roiaware_pool3d_cuda",
                module="lib.ops.roiaware_pool3d",
                sources=[
                    "src/roiaware_pool3d.cpp",
                    "src/roiaware_pool3d_kernel.cu",
                ],
            ),
            make_cuda_ext(
                name="pointnet2_stack_cuda",
                module="lib.ops.pointnet2.pointnet2_stack",
                sources=[
                    "src/pointnet2_api.cpp",
                    "src/ball_query.cpp",
                    "src/ball_query_gpu.cu",
                    "src/group_points.cpp",
                    "src/group_points_gpu.cu",
                    "src/sampling.cpp",
                    "src/sampling_gpu.cu",
                    "src/interpolate.cpp",
                ],
            ),
        ],
    )
