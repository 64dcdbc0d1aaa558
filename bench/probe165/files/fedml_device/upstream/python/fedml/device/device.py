import logging
import os

import torch

from ..constants import (
    FEDML_CROSS_CLOUD_SCENARIO_HIERARCHICAL,
    FEDML_CROSS_DEVICE_SCENARIO,
    FEDML_CROSS_SILO_SCENARIO_HIERARCHICAL,
    FEDML_CROSS_SILO_SCENARIO_HORIZONTAL,
    FEDML_SIMULATION_TYPE_MPI,
    FEDML_SIMULATION_TYPE_NCCL,
    FEDML_SIMULATION_TYPE_SP,
    FEDML_TRAINING_PLATFORM_CROSS_CLOUD,
    FEDML_TRAINING_PLATFORM_CROSS_DEVICE,
    FEDML_TRAINING_PLATFORM_CROSS_SILO,
    FEDML_TRAINING_PLATFORM_SIMULATION,
)
from ..core.distributed.gpu_mapping_mpi import (
    mapping_processes_to_gpu_device_from_gpu_util_parse,
    mapping_processes_to_gpu_device_from_yaml_file_mpi,
)


def get_device_type(args):
    """Return one of "gpu", "mps" or "cpu" according to the config and the host."""
    if hasattr(args, "device_type"):
        if args.device_type == "cpu":
            device_type = "cpu"
        elif args.device_type == "gpu":
            if torch.cuda.is_available():
                device_type = "gpu"
            else:
                print("ML engine install was not built with GPU enabled")
                device_type = "cpu"
        elif args.device_type == "mps":
            # Macbook M1: https://pytorch.org/docs/master/notes/mps.html
            if not torch.backends.mps.is_available():
                if not torch.backends.mps.is_built():
                    print(
                        "MPS not available because the current PyTorch install was not "
                        "built with MPS enabled."
                    )
                else:
                    print(
                        "MPS not available because the current MacOS version is not 12.3+ "
                        "and/or you do not have an MPS-enabled device on this machine."
                    )
                device_type = "cpu"
            else:
                device_type = "mps"
        else:
            raise Exception("do not support device type = {}".format(args.device_type))
    else:
        if args.using_gpu:
            device_type = "gpu" if torch.cuda.is_available() else "cpu"
        else:
            device_type = "cpu"
    return device_type


def _torch_device_from_type(device_type, device_id=0):
    if device_type == "gpu":
        return torch.device("cuda:" + str(device_id))
    if device_type == "mps":
        return torch.device("mps")
    return torch.device("cpu")


def get_device(args):
    if args.training_type == FEDML_TRAINING_PLATFORM_SIMULATION and args.backend == FEDML_SIMULATION_TYPE_SP:
        if not hasattr(args, "gpu_id"):
            args.gpu_id = 0
        device_type = get_device_type(args)
        device = _torch_device_from_type(device_type, args.gpu_id)
        logging.info("device = {}".format(device))
        return device
    elif args.training_type == FEDML_TRAINING_PLATFORM_SIMULATION and args.backend == FEDML_SIMULATION_TYPE_MPI:
        device = mapping_processes_to_gpu_device_from_yaml_file_mpi(
            args.process_id,
            args.worker_num,
            args.gpu_mapping_file if args.using_gpu else None,
            args.gpu_mapping_key,
            args=args,
        )
        return device
    elif args.training_type == FEDML_TRAINING_PLATFORM_SIMULATION and args.backend == FEDML_SIMULATION_TYPE_NCCL:
        from .gpu_mapping_cross_silo import mapping_processes_to_gpu_device_from_yaml_file_cross_silo

        if args.using_gpu:
            device = mapping_processes_to_gpu_device_from_yaml_file_cross_silo(
                args.rank,
                args.worker_num,
                args.gpu_mapping_file if args.using_gpu else None,
                args.gpu_mapping_key,
            )
        else:
            device = torch.device("cpu")
        return device
    elif args.training_type == FEDML_TRAINING_PLATFORM_CROSS_SILO:
        if args.scenario == FEDML_CROSS_SILO_SCENARIO_HIERARCHICAL:
            from .gpu_mapping_cross_silo import mapping_processes_to_gpu_device_from_yaml_file_cross_silo

            device_type = get_device_type(args)
            # each silo runs torch DDP inside; LOCAL_RANK picks the GPU of this process
            local_rank = int(os.environ.get("LOCAL_RANK", 0))
            if device_type == "gpu":
                torch.cuda.set_device(local_rank)
            device = mapping_processes_to_gpu_device_from_yaml_file_cross_silo(
                args.proc_rank_in_silo,
                args.n_proc_in_silo,
                args.gpu_mapping_file if args.using_gpu else None,
                args.gpu_mapping_key,
            ) if device_type == "gpu" and getattr(args, "gpu_mapping_file", None) else _torch_device_from_type(device_type, local_rank)
            logging.info("device = {}".format(device))
            return device
        elif args.scenario == FEDML_CROSS_SILO_SCENARIO_HORIZONTAL:
            if getattr(args, "gpu_util_parse", None) is not None:
                device = mapping_processes_to_gpu_device_from_gpu_util_parse(
                    args.rank, args.worker_num + 1, args.gpu_util_parse
                )
                return device
            device_type = get_device_type(args)
            gpu_id = getattr(args, "gpu_id", 0)
            device = _torch_device_from_type(device_type, gpu_id)
            logging.info("device = {}".format(device))
            return device
        else:
            raise Exception("the scenario {} is not defined".format(args.scenario))
    elif args.training_type == FEDML_TRAINING_PLATFORM_CROSS_CLOUD:
        if args.scenario == FEDML_CROSS_CLOUD_SCENARIO_HIERARCHICAL:
            device_type = get_device_type(args)
            device = _torch_device_from_type(device_type, int(os.environ.get("LOCAL_RANK", 0)))
            return device
        device_type = get_device_type(args)
        return _torch_device_from_type(device_type, getattr(args, "gpu_id", 0))
    elif args.training_type == FEDML_TRAINING_PLATFORM_CROSS_DEVICE:
        if args.scenario == FEDML_CROSS_DEVICE_SCENARIO:
            # the server of cross-device FL aggregates on the CPU by default
            device_type = "cpu" if not args.using_gpu else get_device_type(args)
            return _torch_device_from_type(device_type, getattr(args, "gpu_id", 0))
        raise Exception("the scenario {} is not defined".format(args.scenario))
    else:
        raise Exception("the training type {} is not defined!".format(args.training_type))


def is_gpu_device(device):
    """Used by the trainers to decide whether to wrap the model for mixed precision."""
    return getattr(device, "type", str(device)).startswith("cuda")
