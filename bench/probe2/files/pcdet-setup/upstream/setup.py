import os
import subprocess

from setuptools import find_packages, setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

# Build for the common data-center and workstation GPUs unless the user overrides it.
os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "7.0;7.5;8.0;8.6+PTX")

NVCC_FLAGS = [
    "-O2",
    "--use_fast_math",
    "-D__CUDA_NO_HALF_OPERATORS__",
    "-D__CUDA_NO_HALF_CONVERSIONS__",
    "-gencode=arch=compute_80,code=sm_80",
]


def get_git_commit_number():
    if not os.path.exists(".git"):
        return "0000000"

    cmd_out = subprocess.run(["git", "rev-parse", "HEAD"], stdout=subprocess.PIPE)
    git_commit_number = cmd_out.stdout.decode("utf-8")[:7]
    return git_commit_number


def make_cuda_ext(name, module, sources):
    cuda_ext = CUDAExtension(
        name="%s.%s" % (module, name),
        sources=[os.path.join(*module.split("."), src) for src in sources],
        extra_compile_args={"cxx": ["-g", "-O2"], "nvcc": NVCC_FLAGS},
    )
    return cuda_ext


def write_version_to_file(version, target_file):
    with open(target_file, "w") as f:
        print('__version__ = "%s"' % version, file=f)


if __name__ == "__main__":
    version = "0.6.0+%s" % get_git_commit_number()
    write_version_to_file(version, "pcdet_lite/version.py")

    setup(
        name="pcdet_lite",
        version=version,
        description="A general codebase for 3D object detection from point clouds (synthetic imitation)",
        install_requires=[
            "numpy<2",
            "llvmlite",
            "numba",
            "tensorboardX",
            "easydict",
            "pyyaml",
            "scikit-image",
            "tqdm",
            "SharedArray",
            "spconv-cu118",
            "cumm-cu118",
        ],
        license="Apache License 2.0",
        packages=find_packages(exclude=["tools", "data", "output"]),
        cmdclass={
            "build_ext": BuildExtension,
        },
        ext_modules=[
            make_cuda_ext(
                name="iou3d_nms_cuda",
                module="pcdet_lite.ops.iou3d_nms",
                sources=[
                    "src/iou3d_cpu.cpp",
                    "src/iou3d_nms_api.cpp",
                    "src/iou3d_nms.cpp",
                    "src/iou3d_nms_kernel.cu",
                ],
            ),
            make_cuda_ext(
                name="roiaware_pool3d_cuda",
                module="pcdet_lite.ops.roiaware_pool3d",
                sources=[
                    "src/roiaware_pool3d.cpp",
                    "src/roiaware_pool3d_kernel.cu",
                ],
            ),
            make_cuda_ext(
                name="pointnet2_batch_cuda",
                module="pcdet_lite.ops.pointnet2.pointnet2_batch",
                sources=[
                    "src/pointnet2_api.cpp",
                    "src/ball_query.cpp",
                    "src/ball_query_gpu.cu",
                    "src/group_points.cpp",
                    "src/group_points_gpu.cu",
                    "src/interpolate.cpp",
                    "src/interpolate_gpu.cu",
                    "src/sampling.cpp",
                    "src/sampling_gpu.cu",
                ],
            ),
            make_cuda_ext(
                name="voxel_layer",
                module="pcdet_lite.ops.voxel",
                sources=[
                    "src/voxelization.cpp",
                    "src/scatter_points_cuda.cu",
                    "src/voxelization_cuda.cu",
                ],
            ),
        ],
    )
