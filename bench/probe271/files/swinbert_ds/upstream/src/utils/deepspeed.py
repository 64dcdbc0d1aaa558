"""
Copyright (c) Microsoft Corporation.
Licensed under the MIT license.

DeepSpeed helpers: builds the DeepSpeed config dict from the command line and casts
the fp32 input dict to half precision (DeepSpeed's fp16 engine does not autocast inputs).
"""
import os
import json

import torch
from src.utils.logger import LOGGER as logger


def get_deepspeed_config(args):
    config_params = {
        'train_batch_size': args.effective_batch_size,
    }

    use_fp16 = args.deepspeed_fp16
    use_amp = not args.deepspeed_fp16  # by default, if not use deepspeed fp16, will enable deepspeed amp

    if use_amp:
        config_params['amp'] = {
            'enabled': True,
            'opt_level': f'O{args.amp_opt_level}',
        }

    if use_fp16:
        config_params['fp16'] = {
            'enabled': True,
        }

    gradient_clip = args.max_grad_norm
    if gradient_clip:
        config_params['gradient_clipping'] = gradient_clip

    config_params['flops_profiler'] = {
        'enabled': False,
        'profile_step': 1,
        'module_depth': -1,
        'top_modules': 3,
        'detailed': True,
    }

    if args.zero_opt_stage > 0:
        config_params['zero_optimization'] = {
            'stage': args.zero_opt_stage,
            'contiguous_gradients': True,
            'overlap_comm': True,
            'reduce_scatter': True,
        }
        if args.zero_cpu_offload:
            config_params['zero_optimization']['offload_optimizer'] = {
                'device': 'cpu',
                'pin_memory': True,
            }

    config_params['logging'] = {
        'steps_per_print': args.logging_steps * 10,
    }
    if hasattr(args, "zero_opt_stage") and args.zero_opt_stage > 0:
        config_params["zero_optimization"] = {
            "stage": args.zero_opt_stage
        }

    logger.info(json.dumps(config_params, indent=2))
    return config_params


def fp32_to_fp16(inputs):
    # deepspeed does not auto cast inputs.
    for k, v in inputs.items():
        if isinstance(v, torch.Tensor) and v.dtype == torch.float32:
            v = v.to(dtype=torch.half)
        inputs[k] = v
    return inputs


def fp32_to_bf16(inputs):
    for k, v in inputs.items():
        if isinstance(v, torch.Tensor) and v.dtype == torch.float32:
            v = v.to(dtype=torch.bfloat16)
        inputs[k] = v
    return inputs


def maybe_enable_tf32(args):
    """Ampere GPUs: let cuBLAS / cuDNN use TF32 for fp32 matmuls when training without fp16."""
    if getattr(args, 'deepspeed_fp16', False):
        return
    major, minor = torch.cuda.get_device_capability()
    if major >= 8:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        logger.info('Enabled TF32 matmul/conv on compute capability {}.{}'.format(major, minor))


def write_deepspeed_config(args, path):
    config = get_deepspeed_config(args)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'w') as f:
        json.dump(config, f, indent=2)
    return path
