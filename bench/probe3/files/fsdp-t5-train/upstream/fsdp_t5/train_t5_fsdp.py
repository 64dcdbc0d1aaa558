"""Fine-tune T5 with FullyShardedDataParallel (bf16 mixed precision, activation checkpointing).

    torchrun --nnodes 1 --nproc_per_node 8 train_t5_fsdp.py --model t5-3b --epochs 2
"""
import argparse
import functools
import os
import time
from datetime import datetime

import torch
import torch.cuda.nccl as nccl
import torch.distributed as dist
from pkg_resources import packaging
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import (
    CheckpointImpl,
    apply_activation_checkpointing,
    checkpoint_wrapper,
)
from torch.distributed.fsdp import BackwardPrefetch, CPUOffload, FullStateDictConfig
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
from torch.distributed.fsdp import MixedPrecision, ShardingStrategy, StateDictType
from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm
from transformers import AutoTokenizer, T5ForConditionalGeneration
from transformers.models.t5.modeling_t5 import T5Block

from summarization_dataset import wikihow

# surface NCCL errors as exceptions instead of hangs
os.environ["TORCH_NCCL_ASYNC_ERROR_HANDLING"] = "1"
os.environ.setdefault("NCCL_SOCKET_IFNAME", "eth0")

bf16_ready = (
    torch.version.cuda
    and torch.cuda.is_bf16_supported()
    and packaging.version.parse(torch.version.cuda).release >= (11, 0)
    and dist.is_nccl_available()
    and nccl.version() >= (2, 10)
)

bfSixteen = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)
fpSixteen = MixedPrecision(param_dtype=torch.float16, reduce_dtype=torch.float16, buffer_dtype=torch.float16)


def setup():
    # initialize the process group
    dist.init_process_group("nccl")


def cleanup():
    dist.destroy_process_group()


def get_date_of_run():
    return datetime.now().strftime("%Y-%m-%d-%I:%M:%S_%p")


def format_metrics_to_gb(item):
    """quick function to format numbers to gigabyte and round to 4 digit precision"""
    return round(item / 2 ** 30, ndigits=4)


def train(args, model, rank, world_size, train_loader, optimizer, epoch, sampler=None):
    model.train()
    local_rank = int(os.environ['LOCAL_RANK'])
    fsdp_loss = torch.zeros(2).to(local_rank)
    if sampler:
        sampler.set_epoch(epoch)
    inner_pbar = tqdm(range(len(train_loader)), colour="blue", desc="r0 Training Epoch") if rank == 0 else None
    for batch in train_loader:
        for key in batch.keys():
            batch[key] = batch[key].to(local_rank)
        optimizer.zero_grad()
        output = model(input_ids=batch["source_ids"], attention_mask=batch["source_mask"], labels=batch["target_ids"])
        loss = output["loss"]
        loss.backward()
        optimizer.step()
        fsdp_loss[0] += loss.item()
        fsdp_loss[1] += len(batch)
        if rank == 0:
            inner_pbar.update(1)
    dist.all_reduce(fsdp_loss, op=dist.ReduceOp.SUM)
    train_accuracy = fsdp_loss[0] / fsdp_loss[1]
    if rank == 0:
        inner_pbar.close()
        print(f"Train Epoch: \t{epoch}, Loss: \t{train_accuracy:.4f}")
    return train_accuracy


def save_model(model, rank, args, epoch):
    save_policy = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    FSDP.set_state_dict_type(model, StateDictType.FULL_STATE_DICT, save_policy)
    cpu_state = model.state_dict()
    if rank == 0:
        save_name = args.model.replace("/", "-") + "-" + str(epoch) + ".pt"
        torch.save(cpu_state, save_name)
        print(f"--> saved {save_name}")


def fsdp_main(args):
    model = T5ForConditionalGeneration.from_pretrained(args.model)
    tokenizer = AutoTokenizer.from_pretrained(args.model)

    local_rank = int(os.environ['LOCAL_RANK'])
    rank = int(os.environ['RANK'])
    world_size = int(os.environ['WORLD_SIZE'])

    dataset = wikihow(tokenizer, 'train', 1500, 512, 150, False)
    sampler1 = DistributedSampler(dataset, rank=rank, num_replicas=world_size, shuffle=True)
    setup()

    train_kwargs = {'batch_size': args.batch_size, 'sampler': sampler1, 'num_workers': 2, 'pin_memory': True,
                    'shuffle': False}
    train_loader = DataLoader(dataset, **train_kwargs)

    t5_auto_wrap_policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={T5Block})
    sharding_strategy: ShardingStrategy = ShardingStrategy.SHARD_GRAD_OP  # for Zero2 and FULL_SHARD for Zero3
    torch.cuda.set_device(local_rank)

    init_start_event = torch.cuda.Event(enable_timing=True)
    init_end_event = torch.cuda.Event(enable_timing=True)

    if bf16_ready:
        mp_policy = bfSixteen
    else:
        mp_policy = None  # defaults to fp32

    # model is on CPU before input to FSDP
    model = FSDP(model,
                 auto_wrap_policy=t5_auto_wrap_policy,
                 mixed_precision=mp_policy,
                 sharding_strategy=sharding_strategy,
                 cpu_offload=CPUOffload(offload_params=args.cpu_offload),
                 backward_prefetch=BackwardPrefetch.BACKWARD_PRE,
                 device_id=torch.cuda.current_device(),
                 limit_all_gathers=True)

    if args.activation_checkpointing:
        non_reentrant_wrapper = functools.partial(checkpoint_wrapper, checkpoint_impl=CheckpointImpl.NO_REENTRANT)
        apply_activation_checkpointing(model, checkpoint_wrapper_fn=non_reentrant_wrapper,
                                       check_fn=lambda submodule: isinstance(submodule, T5Block))

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, fused=True)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=args.gamma)
    best_train_loss = float("inf")
    mem_alloc_tracker, mem_reserved_tracker = [], []

    init_start_event.record()
    for epoch in range(1, args.epochs + 1):
        t0 = time.time()
        train_loss = train(args, model, rank, world_size, train_loader, optimizer, epoch, sampler=sampler1)
        scheduler.step()
        if rank == 0:
            print(f"--> epoch {epoch} completed...entering save and stats zone")
            mem_alloc_tracker.append(format_metrics_to_gb(torch.cuda.memory_allocated()))
            mem_reserved_tracker.append(format_metrics_to_gb(torch.cuda.memory_reserved()))
            print(f"epoch time {time.time() - t0:.1f}s, reserved {mem_reserved_tracker[-1]} GB")
        if args.save_model and train_loss < best_train_loss:
            save_model(model, rank, args, epoch)
            best_train_loss = train_loss
    init_end_event.record()
    torch.cuda.synchronize()

    if rank == 0:
        print(f"CUDA event elapsed time: {init_start_event.elapsed_time(init_end_event) / 1000}sec")
        print(f"{model}")

    dist.barrier()
    torch.cuda.empty_cache()
    cleanup()


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='PyTorch T5 FSDP Example')
    parser.add_argument('--model', type=str, default='t5-base')
    parser.add_argument('--batch-size', type=int, default=4, metavar='N')
    parser.add_argument('--epochs', type=int, default=2, metavar='N')
    parser.add_argument('--lr', type=float, default=.002, metavar='LR')
    parser.add_argument('--gamma', type=float, default=0.7, metavar='M')
    parser.add_argument('--seed', type=int, default=1, metavar='S')
    parser.add_argument('--cpu-offload', action='store_true', default=False)
    parser.add_argument('--activation-checkpointing', action='store_true', default=True)
    parser.add_argument('--save-model', action='store_true', default=False)
    args = parser.parse_args()

    torch.manual_seed(args.seed)
    fsdp_main(args)
