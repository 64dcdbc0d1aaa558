import logging
import os
import socket

import torch
import yaml

from ..constants import (
    FEDML_CROSS_CLOUD_SCENARIO_HIERARCHICAL,
    FEDML_CROSS_DEVICE,
    FEDML_CROSS_SILO_SCENARIO_HIERARCHICAL,
    FEDML_CROSS_SILO_SCENARIO_HORIZONTAL,
    FEDML_SIMULATION_TYPE_MPI,
    FEDML_SIMULATION_TYPE_NCCL,
    FEDML_SIMULATION_TYPE_SP,
    FEDML_TRAINING_PLATFORM_CROSS_CLOUD,
    FEDML_TRAINING_PLATFORM_CROSS_SILO,
    FEDML_TRAINING_PLATFORM_SIMULATION,
)


def mapping_processes_to_gpu_device_from_yaml_file(process_id, worker_number, gpu_util_file, gpu_util_key):
    """
    gpu_mapping.yaml maps host names to the number of processes that run on each of
    its GPUs, e.g.

        mapping_default:
            host1: [3, 3, 3, 2]     # 11 processes on host1, three on GPU0 ...

    The i-th process is placed on the GPU whose cumulative slot range contains i.
    """
    if gpu_util_file is None:
        logging.info(" !!!!!!!!!!!!!!!!! Following is GPU mapping ------> CPU ONLY")
        return None
    with open(gpu_util_file, "r") as f:
        gpu_util_yaml = yaml.safe_load(f)
        gpu_util = gpu_util_yaml[gpu_util_key]
        logging.info("gpu_util = {}".format(gpu_util))

    gpu_util_map = {}
    i = 0
    for host, gpus_util_map_host in gpu_util.items():
        for gpu_j, num_process_on_gpu in enumerate(gpus_util_map_host):
            for _ in range(num_process_on_gpu):
                gpu_util_map[i] = (host, gpu_j)
                i += 1
    logging.info(
        "Process %d running on host: %s, gethostname: %s, local_gpu_id: %d ..."
        % (process_id, gpu_util_map[process_id][0], socket.gethostname(), gpu_util_map[process_id][1])
    )
    logging.info("i = {}, worker_number = {}".format(i, worker_number))
    assert i == worker_number

    gpu_id = gpu_util_map[process_id][1]
    torch.cuda.set_device(gpu_id)
    device = torch.device("cuda:" + str(gpu_id))
    logging.info("process_id = {}, GPU device = {}".format(process_id, device))
    return device


def _using_gpu(args) -> bool:
    return hasattr(args, "using_gpu") and args.using_gpu and torch.cuda.is_available()


def _device_from_type(args, gpu_id):
    device_type = getattr(args, "device_type", "gpu")
    if device_type == "gpu":
        return torch.device("cuda:" + str(gpu_id))
    elif device_type == "mps":
        # macOS Metal backend for single-machine debugging
        return torch.device("mps")
    return torch.device("cpu")


def get_device(args):
    if args.training_type == FEDML_TRAINING_PLATFORM_SIMULATION and args.backend == FEDML_SIMULATION_TYPE_SP:
        if _using_gpu(args):
            gpu_id = getattr(args, "gpu_id", 0)
            device = _device_from_type(args, gpu_id)
        else:
            device = torch.device("cpu")
        logging.info("device = {}".format(device))
        return device

    elif args.training_type == FEDML_TRAINING_PLATFORM_SIMULATION and args.backend == FEDML_SIMULATION_TYPE_MPI:
        device = mapping_processes_to_gpu_device_from_yaml_file(
            args.process_id,
            args.worker_num,
            args.gpu_mapping_file if _using_gpu(args) else None,
            args.gpu_mapping_key,
        )
        return device if device is not None else torch.device("cpu")

    elif args.training_type == FEDML_TRAINING_PLATFORM_SIMULATION and args.backend == FEDML_SIMULATION_TYPE_NCCL:
        # one process per GPU, launched with torch.distributed.run
        local_rank = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)

    elif args.training_type == FEDML_TRAINING_PLATFORM_CROSS_SILO:
        if args.scenario == FEDML_CROSS_SILO_SCENARIO_HIERARCHICAL:
            # silo-internal DDP: the launcher sets LOCAL_RANK, GPU index = local rank
            gpu_id = args.local_rank if _using_gpu(args) else None
        else:
            gpu_id = getattr(args, "gpu_id", 0) if _using_gpu(args) else None

        if gpu_id is None:
            device = torch.device("cpu")
        else:
            if getattr(args, "gpu_mapping_file", None):
                device = mapping_processes_to_gpu_device_from_yaml_file(
                    args.rank, args.client_num_per_round + 1, args.gpu_mapping_file, args.gpu_mapping_key
                )
            else:
                device = _device_from_type(args, gpu_id)
        logging.info("device = {}".format(device))
        return device

    elif args.training_type == FEDML_TRAINING_PLATFORM_CROSS_CLOUD:
        if _using_gpu(args):
            device = torch.device("cuda:" + str(args.local_rank))
        else:
            device = torch.device("cpu")
        return device

    elif args.training_type == FEDML_CROSS_DEVICE:
        # mobile clients train on-device (MNN); the server aggregates on CPU
        return torch.device("cpu")

    else:
        raise Exception("the training type {} is not defined!".format(args.training_type))


def get_device_type(args) -> str:
    if _using_gpu(args):
        return getattr(args, "device_type", "gpu")
    return "cpu"


def get_gpu_count() -> int:
    return torch.cuda.device_count() if torch.cuda.is_available() else 0
