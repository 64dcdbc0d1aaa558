from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


# NOTE: the extension only contains CPU code (grid subsampling and radius neighbor
# search are done on the host in the data loader), but it is built with the CUDA
# toolchain so that it links against the same torch/CUDA runtime as the model.
setup(
    name='geotransformer',
    version='1.0.0',
    ext_modules=[
        CUDAExtension(
            name='geotransformer.ext',
            sources=[
                'geotransformer/extensions/extra/cloud/cloud.cpp',
                'geotransformer/extensions/cpu/grid_subsampling/grid_subsampling.cpp',
                'geotransformer/extensions/cpu/grid_subsampling/grid_subsampling_cpu.cpp',
                'geotransformer/extensions/cpu/radius_neighbors/radius_neighbors.cpp',
                'geotransformer/extensions/cpu/radius_neighbors/radius_neighbors_cpu.cpp',
                'geotransformer/extensions/pybind.cpp',
            ],
        ),
    ],
    cmdclass={'build_ext': BuildExtension},
)
