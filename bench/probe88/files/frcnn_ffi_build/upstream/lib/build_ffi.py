"""Build the cffi extensions under lib/model (nms, roi_pooling, roi_align, roi_crop).

Run ``sh make.sh`` first: it compiles the *_kernel.cu files with nvcc into
``src/*_kernel.cu.o`` objects that are linked into the extensions below.
"""
from __future__ import print_function
import os
import sys

import torch
from torch.utils.ffi import create_extension

this_file = os.path.dirname(os.path.realpath(__file__))

# name -> (C sources, headers, CUDA glue sources, CUDA glue headers, nvcc objects)
MODULES = {
    'nms': (
        [], [],
        ['src/nms_cuda.c'], ['src/nms_cuda.h'],
        ['src/nms_cuda_kernel.cu.o']),
    'roi_pooling': (
        ['src/roi_pooling.c'], ['src/roi_pooling.h'],
        ['src/roi_pooling_cuda.c'], ['src/roi_pooling_cuda.h'],
        ['src/roi_pooling.cu.o']),
    'roi_align': (
        ['src/roi_align.c'], ['src/roi_align.h'],
        ['src/roi_align_cuda.c'], ['src/roi_align_cuda.h'],
        ['src/roi_align_kernel.cu.o']),
    'roi_crop': (
        ['src/roi_crop.c'], ['src/roi_crop.h'],
        ['src/roi_crop_cuda.c'], ['src/roi_crop_cuda.h'],
        ['src/roi_crop_cuda_kernel.cu.o']),
}


def make_ffi(name, spec):
    sources, headers, cuda_sources, cuda_headers, objects = spec
    root = os.path.join(this_file, 'model', name)
    defines = []
    extra_objects = []
    with_cuda = False

    if torch.cuda.is_available():
        print('Including CUDA code for {}.'.format(name))
        sources = sources + cuda_sources
        headers = headers + cuda_headers
        defines += [('WITH_CUDA', None)]
        with_cuda = True
        extra_objects = [os.path.join(root, fname) for fname in objects]
        missing = [o for o in extra_objects if not os.path.exists(o)]
        if missing:
            sys.exit('missing nvcc objects {} -- run make.sh first'.format(missing))
    elif not sources:
        print('skipping {}: it only has a GPU implementation'.format(name))
        return None

    return create_extension(
        '_ext.' + name,
        headers=headers,
        sources=sources,
        define_macros=defines,
        relative_to=os.path.join(root, 'build.py'),
        with_cuda=with_cuda,
        extra_objects=extra_objects,
        extra_compile_args=['-std=c99'],
    )


def main(names):
    built = []
    for name in names:
        ffi = make_ffi(name, MODULES[name])
        if ffi is None:
            continue
        cwd = os.getcwd()
        os.chdir(os.path.join(this_file, 'model', name))
        try:
            ffi.build()
        finally:
            os.chdir(cwd)
        built.append(name)
    print('built: {}'.format(', '.join(built) or 'nothing'))


if __name__ == '__main__':
    main(sys.argv[1:] or sorted(MODULES))
