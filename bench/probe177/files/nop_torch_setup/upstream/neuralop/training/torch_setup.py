import os
import random

import numpy as np
import torch
import neuralop.mpu.comm as comm


def setup(config):
    """A convenience function to intialize the device, setup torch settings and
    check multi-grid and other values. It sets up distributed communitation, if used.

    Parameters
    ----------
    config : dict
        this function checks:
        * config.distributed (use_distributed, seed)
        * config.data (n_train, batch_size, test_batch_sizes, n_tests, test_resolutions)

    Returns
    -------
    device : torch.device
        the device on which this process should train
    is_logger : bool
        True on the single process that writes logs / checkpoints
    """
    if config.distributed.use_distributed:
        comm.init(config, verbose=config.verbose)

        # Set process 0 to log screen and wandb
        is_logger = comm.get_world_rank() == 0

        # Set device and random seed
        device = torch.device(f"cuda:{comm.get_local_rank()}")
        seed = config.distributed.seed + comm.get_data_parallel_rank()

        # Ensure every iteration has the same amount of data
        assert (
            config.data.n_train % config.data.batch_size == 0
        ), f"The number of training samples={config.data.n_train} cannot be divided by the batch_size={config.data.batch_size}."
        for j in range(len(config.data.test_batch_sizes)):
            assert (
                config.data.n_tests[j] % config.data.test_batch_sizes[j] == 0
            ), f"The number of training samples={config.data.n_tests[j]} cannot be divided by the batch_size={config.data.test_batch_sizes[j]} for test resolution {config.data.test_resolutions[j]}."

        # Ensure batch can be evenly split among the data-parallel group
        # NOTE: Distributed introduces batch_size = local_batch_size * data_parallel_size
        assert (
            config.data.batch_size % comm.get_data_parallel_size() == 0
        ), f"Batch of size {config.data.batch_size} can be evenly split among the data-parallel group={comm.get_data_parallel_size()}."
        config.data.batch_size = config.data.batch_size // comm.get_data_parallel_size()

        # Ensure batch can be evenly split among the model-parallel group
        if config.patching.levels > 0:
            assert (
                config.data.batch_size * (2 ** (2 * config.patching.levels)) % comm.get_model_parallel_size() == 0
            ), (
                f"With MG patching, total batch-size of {config.data.batch_size * (2 ** (2 * config.patching.levels))}"
                f" ({config.data.batch_size} times {(2 ** (2 * config.patching.levels))}). However, this total batch-size cannot be evenly split among the {comm.get_model_parallel_size()} model-parallel groups."
            )
            for b_size in config.data.test_batch_sizes:
                assert (
                    b_size * (2 ** (2 * config.patching.levels)) % comm.get_model_parallel_size() == 0
                ), f"With MG patching, for test resolution of {config.data.test_resolutions[j]} the total batch-size is {b_size * (2 ** (2 * config.patching.levels))} ({b_size} times {(2 ** (2 * config.patching.levels))}). However, this total batch-size cannot be evenly split among the {comm.get_model_parallel_size()} model-parallel groups."

    else:
        is_logger = True
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        if "seed" in config.distributed:
            seed = config.distributed.seed
        else:
            seed = None

    # Set device, random seed and optimization
    if torch.cuda.is_available():
        torch.cuda.set_device(device.index)

        if "seed" in config.distributed:
            torch.cuda.manual_seed(seed)

        torch.backends.cudnn.benchmark = True
        torch.backends.cudnn.deterministic = False

    if seed is not None:
        torch.manual_seed(seed)
        np.random.seed(seed)
        random.seed(seed)

    # TF32 on Ampere+ is fine for FNO training (spectral weights are complex64 anyway)
    torch.backends.cuda.matmul.allow_tf32 = True

    return device, is_logger


def print_device_banner(device, is_logger):
    """Print a short description of the hardware this process is running on."""
    if not is_logger:
        return
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        print(
            f"Using GPU {device.index}: {props.name} "
            f"({props.total_memory / 2**30:.1f} GiB, sm_{props.major}{props.minor}, {props.multi_processor_count} SMs)"
        )
    else:
        print(f"Using device {device} (no CUDA device found, training will be slow)")
    print(f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
