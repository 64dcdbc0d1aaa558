"""Data-parallel training of torch_em / micro_sam models on several GPUs of one node.

Usage (from a training script):

    from torch_em.multi_gpu_training import train_multi_gpu
    train_multi_gpu(model_callable=..., model_kwargs=..., train_dataset_callable=..., ...)

This spawns one process per visible GPU and wraps the model in DistributedDataParallel.
"""
import os
from functools import partial
from typing import Any, Callable, Dict, Optional

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.utils.data
from torch.nn.parallel import DistributedDataParallel as DDP

import torch_em


def setup(rank, world_size):
    """@private
    """
    os.environ["MASTER_ADDR"] = os.environ.get("MASTER_ADDR", "localhost")
    os.environ["MASTER_PORT"] = os.environ.get("MASTER_PORT", "12355")
    # make NCCL errors surface instead of hanging forever
    os.environ.setdefault("NCCL_ASYNC_ERROR_HANDLING", "1")
    dist.init_process_group("nccl", rank=rank, world_size=world_size)


def cleanup():
    """@private
    """
    dist.destroy_process_group()


def _create_data_loader(ds_callable, ds_kwargs, loader_kwargs, world_size, rank):
    # Create the dataset.
    ds = ds_callable(**ds_kwargs)

    # Create the sampler.
    # Set shuffle on the sampler instead of the loader.
    shuffle = loader_kwargs.pop("shuffle", False)
    sampler = torch.utils.data.distributed.DistributedSampler(ds, num_replicas=world_size, rank=rank, shuffle=shuffle)

    # Create the loader.
    loader = torch.utils.data.DataLoader(ds, sampler=sampler, **loader_kwargs)
    loader.shuffle = shuffle

    return loader


class DDP(DDP):
    """Wrapper for the PyTorch DDP that exposes the attributes of the wrapped model.
    """
    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)


def _train_impl(
    rank: int,
    world_size: int,
    model_callable: Callable[[Any], torch.nn.Module],
    model_kwargs: Dict[str, Any],
    train_dataset_callable: Callable[[Any], torch.utils.data.Dataset],
    train_dataset_kwargs: Dict[str, Any],
    val_dataset_callable: Callable[[Any], torch.utils.data.Dataset],
    val_dataset_kwargs: Dict[str, Any],
    loader_kwargs: Dict[str, Any],
    iterations: int,
    find_unused_parameters: bool = True,
    optimizer_callable: Optional[Callable] = None,
    optimizer_kwargs: Optional[Dict[str, Any]] = None,
    lr_scheduler_callable: Optional[Callable] = None,
    lr_scheduler_kwargs: Optional[Dict[str, Any]] = None,
    trainer_callable: Optional[Callable] = None,
    **kwargs
):
    assert "device" not in kwargs
    print(f"Running DDP on rank {rank}.")
    setup(rank, world_size)
    torch.cuda.set_device(rank)

    model = model_callable(**model_kwargs).to(rank)
    ddp_model = DDP(model, device_ids=[rank], find_unused_parameters=find_unused_parameters)

    if optimizer_callable is None:
        optimizer = torch.optim.Adam(ddp_model.parameters(), lr=kwargs.pop("learning_rate", 1e-4))
    else:
        optimizer = optimizer_callable(ddp_model.parameters(), **(optimizer_kwargs or {}))
    lr_scheduler = None
    if lr_scheduler_callable is not None:
        lr_scheduler = lr_scheduler_callable(optimizer, **(lr_scheduler_kwargs or {}))

    train_loader = _create_data_loader(train_dataset_callable, train_dataset_kwargs, loader_kwargs, world_size, rank)
    val_loader = _create_data_loader(val_dataset_callable, val_dataset_kwargs, loader_kwargs, world_size, rank)

    if trainer_callable is None:
        trainer_callable = torch_em.default_segmentation_trainer
    trainer = trainer_callable(
        model=ddp_model,
        train_loader=train_loader,
        val_loader=val_loader,
        optimizer=optimizer,
        lr_scheduler=lr_scheduler,
        device=rank,
        rank=rank,
        **kwargs
    )
    trainer.fit(iterations=iterations)

    # make sure every rank finished writing before tearing down the process group
    torch.cuda.synchronize()
    dist.barrier()
    cleanup()


def train_multi_gpu(
    model_callable: Callable[[Any], torch.nn.Module],
    model_kwargs: Dict[str, Any],
    train_dataset_callable: Callable[[Any], torch.utils.data.Dataset],
    train_dataset_kwargs: Dict[str, Any],
    val_dataset_callable: Callable[[Any], torch.utils.data.Dataset],
    val_dataset_kwargs: Dict[str, Any],
    loader_kwargs: Dict[str, Any],
    iterations: int,
    find_unused_parameters: bool = True,
    **kwargs
) -> None:
    """Run data parallel training on multiple local GPUs via torch.distributed.

    This function will run training on all available local GPUs in parallel.
    To use it, the function / classes and keywords for the model and data have to be passed.
    Note that this is necessary for the multiprocessing to work correctly.

    Args:
        model_callable: Function or class to create the model.
        model_kwargs: Keyword arguments for `model_callable`.
        train_dataset_callable: Function or class to create the training dataset.
        train_dataset_kwargs: Keyword arguments for `train_dataset_callable`.
        val_dataset_callable: Function or class to create the validation dataset.
        val_dataset_kwargs: Keyword arguments for `val_dataset_callable`.
        loader_kwargs: Keyword arguments for the torch data loader.
        iterations: Number of iterations to train for.
        find_unused_parameters: Whether to find unused parameters of the model to exclude from the optimization.
        kwargs: All other keyword arguments will be passed to `torch_em.default_segmentation_trainer`.
    """
    world_size = torch.cuda.device_count()
    if world_size < 2:
        raise RuntimeError(
            f"Multi-GPU training needs at least two visible GPUs, found {world_size}. "
            "Check CUDA_VISIBLE_DEVICES or use the single GPU trainer."
        )
    train = partial(
        _train_impl,
        model_callable=model_callable,
        model_kwargs=model_kwargs,
        train_dataset_callable=train_dataset_callable,
        train_dataset_kwargs=train_dataset_kwargs,
        val_dataset_callable=val_dataset_callable,
        val_dataset_kwargs=val_dataset_kwargs,
        loader_kwargs=loader_kwargs,
        iterations=iterations,
        find_unused_parameters=find_unused_parameters,
        **kwargs
    )
    mp.spawn(train, args=(world_size,), nprocs=world_size, join=True)
