#!/usr/bin/env python3
"""SynthMorph command-line interface (PyTorch build).

    mri_synthmorph register [-m {deform,affine,rigid,joint}] [-o MOVED] [-t TRANS]
                            [-g] [-j THREADS] moving fixed
    mri_synthmorph apply TRANS IMAGE OUTPUT

Registers MOVING to FIXED. Images need not be pre-aligned or resampled to a common
grid; the tool works in world space using the image headers.
"""

import argparse
import os
import sys
import textwrap
import time

import torch

from synthmorph import registration, utility

# Default model weights, looked up relative to FREESURFER_HOME or the package.
WEIGHTS = {
    'affine': 'synthmorph.affine.2.pt',
    'deform': 'synthmorph.deform.3.pt',
    'joint': 'synthmorph.joint.3.pt',
    'rigid': 'synthmorph.rigid.1.pt',
}

METHODS = tuple(WEIGHTS)


def rewrap(text, width=None, hard='\t\n', hard_indent=0):
    """Rewrap text such that lines fill the available horizontal space."""
    if width is None:
        width = os.get_terminal_size().columns - 2 if sys.stdout.isatty() else 78
    out = []
    for paragraph in text.split('\n\n'):
        out.append(textwrap.fill(textwrap.dedent(paragraph).strip(), width=width))
    return '\n\n'.join(out)


def register_command(argv):
    p = argparse.ArgumentParser(prog='mri_synthmorph register',
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                description=rewrap(__doc__))
    p.add_argument('moving', help='Moving input image.')
    p.add_argument('fixed', help='Fixed input image.')
    p.add_argument('-m', '--model', choices=METHODS, default='joint',
                   help='Transformation model ("joint").')
    p.add_argument('-o', '--out-moving', metavar='IMAGE', help='Moved output image.')
    p.add_argument('-O', '--out-fixed', metavar='IMAGE', help='Fixed output image.')
    p.add_argument('-t', '--trans', metavar='FILE', help='Output transform from moving to fixed space.')
    p.add_argument('-T', '--inverse', metavar='FILE', help='Output transform from fixed to moving space.')
    p.add_argument('-H', '--header-only', action='store_true', help='Adjust the moving image header.')
    p.add_argument('-i', '--init', metavar='FILE', help='Initial linear transform.')
    p.add_argument('-j', '--threads', metavar='N', type=int, help='Number of TensorFlow/PyTorch threads.')
    p.add_argument('-g', '--gpu', action='store_true',
                   help='Use the GPU in environment variable CUDA_VISIBLE_DEVICES or GPU 0 if the '
                        'variable is unset or empty.')
    p.add_argument('-s', '--smooth', metavar='S', type=float, default=1.0,
                   help='Regularization parameter lambda for the hyper-network (1.0).')
    p.add_argument('-e', '--extent', type=int, choices=(192, 256), default=256,
                   help='Isotropic extent of the registration space in unit voxels (256).')
    p.add_argument('-w', '--weights', metavar='FILE', action='append',
                   help='Alternative weights; repeat for joint registration.')
    p.add_argument('--half', action='store_true',
                   help='Run the network in float16 on the GPU (faster, less memory).')
    p.add_argument('-v', '--verbose', action='store_true', help='Print more output.')
    arg = p.parse_args(argv)

    if arg.header_only and arg.model not in ('affine', 'rigid'):
        p.error('-H/--header-only requires an affine or rigid model')

    # Device selection. Leave CUDA_VISIBLE_DEVICES to the user so that schedulers
    # (SLURM, SGE) can pin the job to a GPU; default to the first one otherwise.
    if arg.gpu:
        os.environ.setdefault('CUDA_VISIBLE_DEVICES', '0')
        if not os.environ['CUDA_VISIBLE_DEVICES']:
            os.environ['CUDA_VISIBLE_DEVICES'] = '0'
        device = torch.device('cuda')
        torch.backends.cudnn.benchmark = True
    else:
        device = torch.device('cpu')
        if arg.threads:
            torch.set_num_threads(arg.threads)

    if arg.gpu and not torch.cuda.is_available():
        p.error('--gpu was given but no CUDA device is available')

    weights = arg.weights
    if not weights:
        weights = [utility.find_weights(WEIGHTS[arg.model])]
        if arg.model == 'joint':
            weights.insert(0, utility.find_weights(WEIGHTS['affine']))

    start = time.time()
    registration.register(arg, weights=weights, device=device)
    if arg.verbose:
        print(f'Registration took {time.time() - start:.1f} s on {device}')


def apply_command(argv):
    p = argparse.ArgumentParser(prog='mri_synthmorph apply')
    p.add_argument('trans', help='Transform file (LTA or displacement field).')
    p.add_argument('image', help='Input image.')
    p.add_argument('output', help='Output image.')
    p.add_argument('-m', '--method', choices=('linear', 'nearest'), default='linear')
    p.add_argument('-t', '--type', choices=('float32', 'uint8', 'int32'), default='float32')
    arg = p.parse_args(argv)
    registration.apply(arg)


def main():
    commands = {'register': register_command, 'apply': apply_command}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        print(f'usage: mri_synthmorph {{{",".join(commands)}}} ...', file=sys.stderr)
        sys.exit(1)
    commands[sys.argv[1]](sys.argv[2:])


if __name__ == '__main__':
    main()
