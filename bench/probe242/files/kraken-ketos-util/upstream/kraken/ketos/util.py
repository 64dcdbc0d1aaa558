#
# Copyright 2022 Benjamin Kiessling
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
# or implied. See the License for the specific language governing
# permissions and limitations under the License.
"""
kraken.ketos.util
~~~~~~~~~~~~~~~~~~~~

Command line driver helpers
"""
import glob
import logging
import os
from typing import List, Optional, Tuple, Union

import click

logging.captureWarnings(True)
logger = logging.getLogger('kraken')


def _validate_manifests(ctx, param, value):
    images = []
    for manifest in value:
        try:
            for entry in manifest.readlines():
                im_p = entry.rstrip('\r\n')
                if os.path.isfile(im_p):
                    images.append(im_p)
                else:
                    logger.warning('Invalid entry "{}" in {}'.format(im_p, manifest.name))
        except UnicodeDecodeError:
            raise click.BadOptionUsage(param,
                                       f'File {manifest.name} is not a text file. Please '
                                       'ensure that the argument to `-t`/`-e` is a manifest '
                                       'file containing paths to training data (one per '
                                       'line).',
                                       ctx=ctx)
    return images


def _expand_gt(ctx, param, value):
    images = []
    for expression in value:
        images.extend([x for x in glob.iglob(expression, recursive=True) if os.path.isfile(x)])
    return images


def message(msg, **styles):
    if logger.getEffectiveLevel() >= 30:
        click.secho(msg, **styles)


def to_ptl_device(device: str) -> Tuple[str, Optional[Union[str, List[int]]]]:
    """
    Converts a torch-style device string (``cpu``, ``cuda:0``, ``mps``, ...)
    into the ``accelerator``/``devices`` pair expected by the lightning
    Trainer.

    Args:
        device: device string as accepted by the ``-d``/``--device`` option.

    Returns:
        A tuple (accelerator, devices).

    Raises:
        Exception if the device string is not understood.
    """
    if device.strip() == 'auto':
        return 'auto', 'auto'
    elif any([device.startswith(x) for x in ['tpu', 'cuda', 'hpu', 'ipu']]):
        dev, idx = device.split(':')
        if dev == 'cuda':
            dev = 'gpu'
        return dev, [int(idx)]
    elif device.startswith('mps'):
        return 'mps', 'auto'
    elif device == 'cpu':
        return 'cpu', 'auto'
    raise Exception(f'Invalid pytorch device {device}')


def to_torch_device(device: str) -> str:
    """
    Inverse of :func:`to_ptl_device` for code paths that do not go through
    lightning (``kraken ocr``, ``ketos test``). Accepts both the torch
    spelling and the lightning one (``gpu:1``).
    """
    device = device.strip()
    if device.startswith('gpu'):
        _, _, idx = device.partition(':')
        return f'cuda:{idx or 0}'
    return device


def _validate_merging(ctx, param, value):
    """
    Maps baseline/region merging to a dict of merge structures.
    """
    if not value:
        return None
    merge_dict = {}
    try:
        for m in value:
            lexer = m.split(':')
            if len(lexer) != 2:
                raise ValueError(f'Invalid merge definition {m}')
            k, v = lexer
            merge_dict[v] = k
    except Exception:
        raise click.BadParameter('Mappings must be in format target:src')
    return merge_dict


def _fast_dev_run_check(precision: str, device: str) -> None:
    # 16-bit (and bf16) mixed precision only works on GPUs in lightning 2.x;
    # on CPU it silently falls back to bf16-mixed which is painfully slow
    if precision in ('16', '16-mixed') and not device.startswith(('cuda', 'gpu', 'auto')):
        logger.warning(f'Precision {precision} requested on device {device}. '
                       'Mixed precision training is only supported on GPUs.')
