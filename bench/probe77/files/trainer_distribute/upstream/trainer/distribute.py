#!/usr/bin/env python3
# -*- coding: utf-8 -*-
"""Launch a 👟Trainer training script in DDP mode, one process per GPU.

    python -m trainer.distribute --script recipes/ljspeech/vits_tts/train_vits.py --gpus "0,1,2,3"

Every child gets the same visible-device list and its own ``--rank``; the script itself
calls ``init_distributed`` (see ``trainer/utils/distributed.py``).
"""

import os
import pathlib
import subprocess
import sys
import time

import torch

from trainer import TrainerArgs, logger


def get_gpus(args):
    """Resolve the GPU ids to launch on.

    Priority: the CUDA_VISIBLE_DEVICES environment variable, then ``--gpus``, then every
    device torch can see.
    """
    if "CUDA_VISIBLE_DEVICES" in os.environ:
        gpus = os.environ["CUDA_VISIBLE_DEVICES"]
    elif args.gpus:
        gpus = args.gpus
    else:
        gpus = ",".join(str(i) for i in range(torch.cuda.device_count()))
    gpus = [g.strip() for g in gpus.split(",") if g.strip()]
    if not gpus:
        logger.error(" [!] No GPU found for distributed training.")
        sys.exit(1)
    return gpus


def build_command(args, unargs, group_id):
    # set arguments for train.py
    folder_path = pathlib.Path(__file__).parent.absolute()
    if os.path.exists(os.path.join(folder_path, args.script)):
        command = [os.path.join(folder_path, args.script)]
    else:
        command = [args.script]

    # Pass all the TrainerArgs fields
    command.append(f"--continue_path={args.continue_path}")
    command.append(f"--restore_path={args.restore_path}")
    command.append(f"--group_id=group_{group_id}")
    command.append("--use_ddp=true")
    command += unargs
    command.append("")
    return command


def distribute():
    """
    Call 👟Trainer training script in DDP mode.
    """
    parser = TrainerArgs().init_argparse(arg_prefix="")
    parser.add_argument("--script", type=str, help="Target training script to distibute.")
    parser.add_argument(
        "--gpus",
        type=str,
        help='GPU IDs to be used for distributed training in the format ```"0,1"```. Used by ```distribute.py```.',
    )
    parser.add_argument("--log_all_ranks", action="store_true", help="Keep stdout of every rank, not only rank 0.")
    args, unargs = parser.parse_known_args()

    gpus = get_gpus(args)
    group_id = time.strftime("%Y_%m_%d-%H%M%S")
    command = build_command(args, unargs, group_id)

    # run processes
    processes = []
    for rank, local_gpu_id in enumerate(gpus):
        my_env = os.environ.copy()
        my_env["PYTHON_EGG_CACHE"] = f"/tmp/tmp{local_gpu_id}"
        my_env["RANK"] = f"{rank}"
        my_env["CUDA_VISIBLE_DEVICES"] = f"{','.join(gpus)}"
        command[-1] = f"--rank={rank}"
        # prevent stdout for processes with rank != 0
        stdout = None if rank == 0 or args.log_all_ranks else subprocess.DEVNULL
        p = subprocess.Popen([sys.executable] + command, stdout=stdout, env=my_env)  # pylint: disable=consider-using-with
        processes.append(p)
        logger.info(command)

    exit_codes = []
    try:
        for p in processes:
            exit_codes.append(p.wait())
    except KeyboardInterrupt:
        for p in processes:
            p.terminate()
        raise
    if any(code != 0 for code in exit_codes):
        logger.error(" [!] A worker failed with exit codes %s", exit_codes)
        sys.exit(1)


if __name__ == "__main__":
    distribute()
