"""Device / distributed helpers shared by the classification trainers (resnet, mobilenet, efficientnet).

All trainers call, in this order::

    args.device = init_device(args)
    init_distributed(args)
    set_seed(args.seed + get_rank())
    model = wrap_model(model.to(args.device), args)

so that the training scripts themselves never touch ``torch.cuda`` directly.
"""
import logging
import os
import random
import socket
from contextlib import contextmanager

import numpy as np
import torch
import torch.distributed as dist

logger = logging.getLogger(__name__)

_LOCAL_RANK = 0


def _find_free_port():
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def get_rank():
    return dist.get_rank() if dist.is_available() and dist.is_initialized() else 0


def get_world_size():
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


def is_main_process():
    return get_rank() == 0


def init_device(args):
    """Pick the device for this process.

    ``--device`` may be ``auto`` (default), ``cuda``, ``cuda:N`` or ``cpu``. With torchrun the local
    rank decides the GPU index.
    """
    global _LOCAL_RANK
    _LOCAL_RANK = int(os.environ.get("LOCAL_RANK", args.local_rank if hasattr(args, "local_rank") else 0))

    if args.device == "cpu":
        return torch.device("cpu")

    if torch.cuda.is_available():
        if args.device.startswith("cuda:"):
            index = int(args.device.split(":")[1])
        else:
            index = _LOCAL_RANK
        torch.cuda.set_device(index)
        return torch.device("cuda", index)

    logger.warning("CUDA not available, falling back to CPU - this will be very slow")
    return torch.device("cpu")


def init_distributed(args):
    """Initialise torch.distributed from torchrun / SLURM environment variables."""
    if "WORLD_SIZE" in os.environ:
        args.world_size = int(os.environ["WORLD_SIZE"])
        args.rank = int(os.environ["RANK"])
    elif "SLURM_PROCID" in os.environ:
        args.rank = int(os.environ["SLURM_PROCID"])
        args.world_size = int(os.environ["SLURM_NTASKS"])
        os.environ.setdefault("MASTER_ADDR", os.environ.get("SLURM_LAUNCH_NODE_IPADDR", "127.0.0.1"))
        os.environ.setdefault("MASTER_PORT", str(_find_free_port()))
    else:
        args.world_size = 1
        args.rank = 0

    args.distributed = args.world_size > 1
    if not args.distributed:
        return

    # surface NCCL errors instead of hanging forever in a collective
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")

    backend = "nccl" if args.device.type == "cuda" else "gloo"
    dist.init_process_group(backend=backend, init_method="env://",
                            world_size=args.world_size, rank=args.rank)
    logger.info("initialised %s process group: rank %d / %d", backend, args.rank, args.world_size)
    barrier()


def barrier():
    if not (dist.is_available() and dist.is_initialized()):
        return
    if dist.get_backend() == "nccl":
        dist.barrier(device_ids=[torch.cuda.current_device()])
    else:
        dist.barrier()


def set_seed(seed, deterministic=False):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    if deterministic:
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        torch.use_deterministic_algorithms(True, warn_only=True)
        os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"


def wrap_model(model, args):
    """SyncBN + DDP for distributed runs; nothing for single device."""
    if not args.distributed:
        return model
    if getattr(args, "sync_bn", False):
        model = torch.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    if args.device.type == "cuda":
        return torch.nn.parallel.DistributedDataParallel(
            model, device_ids=[args.device.index], output_device=args.device.index,
            bucket_cap_mb=getattr(args, "bucket_cap_mb", 25))
    return torch.nn.parallel.DistributedDataParallel(model)


def get_autocast(args):
    """Context manager for the forward pass (fp16 autocast when --amp)."""
    return torch.cuda.amp.autocast(enabled=getattr(args, "amp", False))


def get_grad_scaler(args):
    return torch.cuda.amp.GradScaler(enabled=getattr(args, "amp", False),
                                     init_scale=getattr(args, "init_loss_scale", 2.0 ** 16))


@contextmanager
def torch_distributed_zero_first(local_rank):
    """Make all processes wait for the local master (e.g. dataset download / cache build)."""
    if local_rank not in (-1, 0):
        barrier()
    yield
    if local_rank == 0:
        barrier()


def reduce_mean(tensor):
    if get_world_size() == 1:
        return tensor
    rt = tensor.detach().clone()
    dist.all_reduce(rt, op=dist.ReduceOp.SUM)
    rt /= get_world_size()
    return rt


def memory_summary(device):
    """One-line memory usage string for the progress log."""
    if device.type != "cuda":
        return ""
    alloc = torch.cuda.memory_allocated(device) / 2 ** 20
    reserved = torch.cuda.memory_reserved(device) / 2 ** 20
    peak = torch.cuda.max_memory_allocated(device) / 2 ** 20
    return "mem {:.0f}/{:.0f}MB (peak {:.0f}MB)".format(alloc, reserved, peak)


def cleanup():
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
