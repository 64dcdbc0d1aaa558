"""Build the CUDA extension used by PointFlow (k-NN gather for the dynamic graph conv).

    python setup.py build_ext --inplace
"""
import os
import glob

from setuptools import setup, find_packages
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

this_dir = os.path.dirname(os.path.abspath(__file__))
src_dir = os.path.join("pointmvsnet", "functions", "src")


def get_sources():
    sources = [os.path.join(src_dir, "main.cpp")]
    sources += sorted(glob.glob(os.path.join(src_dir, "*.cpp")))
    # de-duplicate while keeping order
    seen = set()
    return [s for s in sources if not (s in seen or seen.add(s))]


setup(
    name="pointmvsnet",
    version="0.1.0",
    author="Rui Chen",
    description="Point-Based Multi-View Stereo Network",
    packages=find_packages(exclude=("configs", "tests", "tools")),
    install_requires=["numpy", "yacs", "opencv-python", "tensorboardX", "plyfile"],
    ext_modules=[
        CUDAExtension(
            name="pointmvsnet.functions.dgcnn_ext",
            sources=get_sources() + [
                os.path.join(src_dir, "gather_knn_kernel.cu"),
            ],
            extra_compile_args={"cxx": ["-g", "-O2"],
                                "nvcc": ["-O2", "-gencode=arch=compute_61,code=sm_61",
                                         "-gencode=arch=compute_70,code=sm_70"]},
        ),
    ],
    cmdclass={"build_ext": BuildExtension},
    zip_safe=False,
)
