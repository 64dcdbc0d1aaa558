#  Copyright (c) Facebook, Inc. and its affiliates.
#  All rights reserved.
#
#  This source code is licensed under the license found in the
#  LICENSE file in the root directory of this source tree.

"""
This file contains primitives for multi-gpu communication.
This is useful when doing distributed training.
"""

import os
import pickle
import socket
import subprocess

import torch
import torch.distributed as dist


def get_world_size():
    if not dist.is_available():
        return 1
    if not dist.is_initialized():
        return 1
    return dist.get_world_size()


def get_rank():
    if not dist.is_available():
        return 0
    if not dist.is_initialized():
        return 0
    return dist.get_rank()


def is_main_process():
    return get_rank() == 0


def synchronize():
    """
    Helper function to synchronize (barrier) among all processes when
    using distributed training
    """
    if not dist.is_available():
        return
    if not dist.is_initialized():
        return
    world_size = dist.get_world_size()
    if world_size == 1:
        return
    dist.barrier()


def init_distributed_mode(args):
    """
    Handle single and multi-GPU / multi-node / SLURM jobs.
    Initialize the following variables:
        - n_nodes
        - node_id
        - local_rank
        - global_rank
        - world_size
    """
    args.cpu = False
    is_slurm_job = 'SLURM_JOB_ID' in os.environ and not args.debug_slurm
    print("SLURM job: %s" % str(is_slurm_job))

    # SLURM job
    if is_slurm_job:
        assert args.local_rank == -1   # on the cluster, this is handled by SLURM

        SLURM_VARIABLES = [
            'SLURM_JOB_ID',
            'SLURM_JOB_NODELIST', 'SLURM_JOB_NUM_NODES', 'SLURM_NTASKS', 'SLURM_TASKS_PER_NODE',
            'SLURM_MEM_PER_NODE', 'SLURM_MEM_PER_CPU',
            'SLURM_NODEID', 'SLURM_PROCID', 'SLURM_LOCALID', 'SLURM_TASK_PID'
        ]

        PREFIX = "%i - " % int(os.environ['SLURM_PROCID'])
        for name in SLURM_VARIABLES:
            value = os.environ.get(name, None)
            print(PREFIX + "%s: %s" % (name, str(value)))

        # # job ID
        # args.job_id = os.environ['SLURM_JOB_ID']

        # number of nodes / node ID
        args.n_nodes = int(os.environ['SLURM_JOB_NUM_NODES'])
        args.node_id = int(os.environ['SLURM_NODEID'])

        # local rank on the current node / global rank
        args.local_rank = int(os.environ['SLURM_LOCALID'])
        args.global_rank = int(os.environ['SLURM_PROCID'])

        # number of processes / GPUs per node
        args.world_size = int(os.environ['SLURM_NTASKS'])
        args.n_gpu_per_node = args.world_size // args.n_nodes

        # define master address and master port
        hostnames = subprocess.check_output(['scontrol', 'show', 'hostnames', os.environ['SLURM_JOB_NODELIST']])
        args.master_addr = hostnames.split()[0].decode('utf-8')
        assert 10001 <= args.master_port <= 20000 or args.world_size == 1
        print(PREFIX + "Master address: %s" % args.master_addr)
        print(PREFIX + "Master port   : %i" % args.master_port)

        # set environment variables for 'env://'
        os.environ['MASTER_ADDR'] = args.master_addr
        os.environ['MASTER_PORT'] = str(args.master_port)
        os.environ['WORLD_SIZE'] = str(args.world_size)
        os.environ['RANK'] = str(args.global_rank)

    # multi-GPU job (local or multi-node) - jobs started with torch.distributed.launch
    elif args.local_rank != -1:

        assert args.master_port == -1

        # read environment variables
        args.global_rank = int(os.environ['RANK'])
        args.world_size = int(os.environ['WORLD_SIZE'])
        args.n_gpu_per_node = int(os.environ.get('NGPU', torch.cuda.device_count()))

        # number of nodes / node ID
        args.n_nodes = args.world_size // args.n_gpu_per_node
        args.node_id = args.global_rank // args.n_gpu_per_node

    # local job (single GPU)
    else:
        assert args.local_rank == -1
        assert args.master_port == -1
        args.n_nodes = 1
        args.node_id = 0
        args.local_rank = 0
        args.global_rank = 0
        args.world_size = 1
        args.n_gpu_per_node = 1

    # sanity checks
    assert args.n_nodes >= 1
    assert 0 <= args.node_id < args.n_nodes
    assert 0 <= args.local_rank <= args.global_rank < args.world_size
    assert args.world_size == args.n_nodes * args.n_gpu_per_node

    # define whether this is the master process / if we are in distributed mode
    args.is_master = args.node_id == 0 and args.local_rank == 0
    args.multi_node = args.n_nodes > 1
    args.multi_gpu = args.world_size > 1
    args.global_num_workers = args.world_size

    # summary
    PREFIX = "%i - " % args.global_rank
    print(PREFIX + "Number of nodes: %i" % args.n_nodes)
    print(PREFIX + "Node ID        : %i" % args.node_id)
    print(PREFIX + "Local rank     : %i" % args.local_rank)
    print(PREFIX + "Global rank    : %i" % args.global_rank)
    print(PREFIX + "World size     : %i" % args.world_size)
    print(PREFIX + "GPUs per node  : %i" % args.n_gpu_per_node)
    print(PREFIX + "Master         : %s" % str(args.is_master))
    print(PREFIX + "Multi-node     : %s" % str(args.multi_node))
    print(PREFIX + "Multi-GPU      : %s" % str(args.multi_gpu))
    print(PREFIX + "Hostname       : %s" % socket.gethostname())

    # set GPU device
    torch.cuda.set_device(args.local_rank)

    # initialize multi-GPU
    if args.multi_gpu:

        # http://pytorch.apachecn.org/en/0.3.0/distributed.html#environment-variable-initialization
        # 'env://' will read these environment variables:
        # MASTER_PORT - required; has to be a free port on machine with rank 0
        # MASTER_ADDR - required (except for rank 0); address of rank 0 node
        # WORLD_SIZE - required; can be set either here, or in a call to init function
        # RANK - required; can be set either here, or in a call to init function

        print("Initializing PyTorch distributed ...")
        torch.distributed.init_process_group(
            init_method='env://',
            backend='nccl',
        )


def all_gather(data):
    """
    Run all_gather on arbitrary picklable data (not necessarily tensors)
    Args:
        data: any picklable object
    Returns:
        list[data]: list of data gathered from each rank
    """
    world_size = get_world_size()
    if world_size == 1:
        return [data]

    # serialized to a Tensor
    buffer = pickle.dumps(data)
    storage = torch.ByteStorage.from_buffer(buffer)
    tensor = torch.ByteTensor(storage).to("cuda")

    # obtain Tensor size of each rank
    local_size = torch.LongTensor([tensor.numel()]).to("cuda")
    size_list = [torch.LongTensor([0]).to("cuda") for _ in range(world_size)]
    dist.all_gather(size_list, local_size)
    size_list = [int(size.item()) for size in size_list]
    max_size = max(size_list)

    # receiving Tensor from all ranks
    # we pad the tensor because torch all_gather does not support
    # gathering tensors of different shapes
    tensor_list = []
    for _ in size_list:
        tensor_list.append(torch.ByteTensor(size=(max_size,)).to("cuda"))
    if local_size != max_size:
        padding = torch.ByteTensor(size=(max_size - local_size,)).to("cuda")
        tensor = torch.cat((tensor, padding), dim=0)
    dist.all_gather(tensor_list, tensor)

    data_list = []
    for size, tensor in zip(size_list, tensor_list):
        buffer = tensor.cpu().numpy().tobytes()[:size]
        data_list.append(pickle.loads(buffer))

    return data_list


def reduce_dict(input_dict, average=True):
    """
    Args:
        input_dict (dict): all the values will be reduced
        average (bool): whether to do average or sum
    Reduce the values in the dictionary from all processes so that process with rank
    0 has the averaged results. Returns a dict with the same fields as
    input_dict, after reduction.
    """
    world_size = get_world_size()
    if world_size < 2:
        return input_dict
    with torch.no_grad():
        names = []
        values = []
        # sort the keys so that they are consistent across processes
        for k in sorted(input_dict.keys()):
            names.append(k)
            values.append(input_dict[k])
        values = torch.stack(values, dim=0)
        dist.reduce(values, dst=0)
        if dist.get_rank() == 0 and average:
            # only main process gets accumulated, so only divide by
            # world_size in this case
            values /= world_size
        reduced_dict = {k: v for k, v in zip(names, values)}
    return reduced_dict
