import logging
import os
import socket

import torch
import yaml


def mapping_processes_to_gpu_device_from_yaml_file_mpi(
    process_id, worker_number, gpu_util_file, gpu_util_key, args=None
):
    """Map every MPI process to a GPU following a ``gpu_mapping.yaml`` file.

    The yaml file looks like::

        mapping_default:
            host1: [3, 3, 3, 2]   # 11 processes on host1: 3 on GPU0, 3 on GPU1, ...
            host2: [2, 2, 2, 2]

    The process with id ``process_id`` (0 is the server) is mapped to the
    ``i``-th GPU of the host it lands on. When no file is given every process
    is put on the CPU, which is what the unit tests do.
    """
    if gpu_util_file is None:
        logging.info(" !!!!!!!!!!!!!!!!!!! gpu_util_file is None. Using cpu.")
        device = torch.device("cpu")
        logging.info(device)
        return device
    else:
        with open(gpu_util_file, "r") as f:
            gpu_util_yaml = yaml.load(f, Loader=yaml.FullLoader)
            # gpu_util_num_process = 'gpu_util_' + str(worker_number)
            # gpu_util = gpu_util_yaml[gpu_util_num_process]
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
                % (
                    process_id,
                    gpu_util_map[process_id][0],
                    socket.gethostname(),
                    gpu_util_map[process_id][1],
                )
            )
            logging.info("i = {}, worker_number = {}".format(i, worker_number))
            assert i == worker_number
        if args is not None and getattr(args, "using_gpu", True) is False:
            device = torch.device("cpu")
            return device
        torch.cuda.set_device(gpu_util_map[process_id][1])
        device = torch.device("cuda:" + str(gpu_util_map[process_id][1]))
        logging.info(
            "process_id = {}, GPU device = {}".format(process_id, device)
        )
        return device


def mapping_processes_to_gpu_device_from_gpu_util_parse(
    process_id, worker_number, gpu_util_parse
):
    """Same as above but the mapping comes from a command-line string.

    ``--gpu_util_parse "host1:3,3,3,2;host2:2,2,2,2"``
    """
    if gpu_util_parse is None:
        device = torch.device("cpu")
        logging.info(
            " !!!!!!!!!!!!!!!!!!! gpu_util_parse is None. Using cpu: {}".format(device)
        )
        return device
    gpu_util_map = {}
    i = 0
    for host_entry in gpu_util_parse.split(";"):
        host, counts = host_entry.split(":")
        for gpu_j, num_process_on_gpu in enumerate(counts.split(",")):
            for _ in range(int(num_process_on_gpu)):
                gpu_util_map[i] = (host, gpu_j)
                i += 1
    assert i == worker_number, "gpu_util_parse lists %d processes, expected %d" % (
        i,
        worker_number,
    )
    local_gpu = gpu_util_map[process_id][1]
    device = torch.device("cuda:%d" % local_gpu if torch.cuda.is_available() else "cpu")
    logging.info(
        "process_id = %d, host = %s, device = %s"
        % (process_id, gpu_util_map[process_id][0], device)
    )
    return device


def mapping_single_process_to_gpu(gpu_id=None):
    """Single-process (standalone simulation) mapping: one GPU or the CPU."""
    if gpu_id is None:
        gpu_id = int(os.environ.get("LOCAL_RANK", 0))
    if torch.cuda.is_available() and gpu_id < torch.cuda.device_count():
        device = torch.device("cuda:" + str(gpu_id))
    else:
        device = torch.device("cpu")
    logging.info("single process device = {}".format(device))
    return device


def log_gpu_mapping_summary(gpu_util_file, gpu_util_key):
    """Pretty print how many processes each GPU of each host will receive."""
    if gpu_util_file is None or not os.path.exists(gpu_util_file):
        logging.info("no gpu mapping file, every process runs on cpu")
        return
    with open(gpu_util_file, "r") as f:
        gpu_util = yaml.safe_load(f)[gpu_util_key]
    for host, per_gpu in gpu_util.items():
        total = sum(per_gpu)
        logging.info(
            "host %s: %d processes over %d GPUs (%s)"
            % (host, total, len(per_gpu), ", ".join(str(x) for x in per_gpu))
        )
