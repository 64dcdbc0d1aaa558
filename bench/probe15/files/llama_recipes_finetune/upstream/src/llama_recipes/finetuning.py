import os
import random
from pkg_resources import packaging

import fire
import numpy as np
import torch
import torch.distributed as dist
import torch.optim as optim
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision, ShardingStrategy
from torch.distributed.fsdp.fully_sharded_data_parallel import CPUOffload
from torch.optim.lr_scheduler import StepLR
from torch.cuda import nccl
from transformers import AutoTokenizer, LlamaForCausalLM, BitsAndBytesConfig
from transformers.models.llama.modeling_llama import LlamaDecoderLayer

from llama_recipes.configs import fsdp_config as FSDP_CONFIG, train_config as TRAIN_CONFIG
from llama_recipes.policies import apply_fsdp_checkpointing, get_llama_wrapper
from llama_recipes.utils.config_utils import update_config, generate_peft_config, get_dataloader_kwargs
from llama_recipes.utils.dataset_utils import get_preprocessed_dataset
from llama_recipes.utils.train_utils import train, print_model_size


def setup():
    """Initialize the process group for distributed training"""
    dist.init_process_group("nccl")


def setup_environ_flags(rank):
    """Set environment flags for debugging purposes"""
    os.environ["TORCH_SHOW_CPP_STACKTRACES"] = str(1)
    os.environ["NCCL_ASYNC_ERROR_HANDLING"] = str(1)
    if rank == 0:
        print("--> Running with torch dist debug set to detail")


def clear_gpu_cache(rank=None):
    """Clear the GPU cache for all ranks"""
    if rank == 0:
        print("Clearing GPU cache for all ranks")
    torch.cuda.empty_cache()


def get_mixed_precision_policy(rank):
    verify_bfloat_support = (
        torch.version.cuda
        and torch.cuda.is_bf16_supported()
        and packaging.version.parse(torch.version.cuda).release >= (11, 0)
        and dist.is_nccl_available()
        and nccl.version() >= (2, 10)
    )
    if verify_bfloat_support:
        if rank == 0:
            print("bFloat16 enabled for mixed precision - using bfSixteen policy")
        return MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.bfloat16, buffer_dtype=torch.bfloat16)
    if rank == 0:
        print("bFloat16 support not present. Using FP32, and not mixed precision")
    return None


def main(**kwargs):
    train_config, fsdp_config = TRAIN_CONFIG(), FSDP_CONFIG()
    update_config((train_config, fsdp_config), **kwargs)

    torch.cuda.manual_seed(train_config.seed)
    torch.manual_seed(train_config.seed)
    random.seed(train_config.seed)
    np.random.seed(train_config.seed)

    if train_config.enable_fsdp:
        setup()
        local_rank = int(os.environ["LOCAL_RANK"])
        rank = int(os.environ["RANK"])
        world_size = int(os.environ["WORLD_SIZE"])

    if torch.distributed.is_initialized():
        torch.cuda.set_device(local_rank)
        clear_gpu_cache(local_rank)
        setup_environ_flags(rank)

    bnb_config = None
    if train_config.quantization:
        bnb_config = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                        bnb_4bit_compute_dtype=torch.bfloat16)

    model = LlamaForCausalLM.from_pretrained(
        train_config.model_name,
        quantization_config=bnb_config,
        use_cache=False,
        attn_implementation="sdpa" if train_config.use_fast_kernels else None,
        device_map="auto" if train_config.quantization and not train_config.enable_fsdp else None,
        torch_dtype=torch.float16 if train_config.use_fp16 else torch.bfloat16,
    )
    tokenizer = AutoTokenizer.from_pretrained(train_config.model_name)
    tokenizer.pad_token_id = tokenizer.eos_token_id
    print_model_size(model, train_config, rank if train_config.enable_fsdp else 0)

    if train_config.use_peft:
        from peft import get_peft_model
        model = get_peft_model(model, generate_peft_config(train_config, kwargs))
        model.print_trainable_parameters()

    if train_config.enable_fsdp:
        mixed_precision_policy = get_mixed_precision_policy(rank) if fsdp_config.mixed_precision else None
        wrapping_policy = get_llama_wrapper()
        model = FSDP(
            model,
            auto_wrap_policy=wrapping_policy,
            cpu_offload=CPUOffload(offload_params=True) if fsdp_config.fsdp_cpu_offload else None,
            mixed_precision=mixed_precision_policy if not fsdp_config.pure_bf16 else None,
            sharding_strategy=fsdp_config.sharding_strategy,
            device_id=torch.cuda.current_device(),
            limit_all_gathers=True,
            sync_module_states=train_config.low_cpu_fsdp,
            param_init_fn=(lambda module: module.to_empty(device=torch.device("cuda"), recurse=False))
            if train_config.low_cpu_fsdp and rank != 0 else None,
        )
        if fsdp_config.fsdp_activation_checkpointing:
            apply_fsdp_checkpointing(model)
    elif not train_config.quantization:
        model.to("cuda")

    dataset_train = get_preprocessed_dataset(tokenizer, train_config.dataset, split="train")
    train_dl_kwargs = get_dataloader_kwargs(train_config, dataset_train, tokenizer, "train")
    train_dataloader = torch.utils.data.DataLoader(dataset_train, num_workers=train_config.num_workers_dataloader,
                                                   pin_memory=True, **train_dl_kwargs)

    optimizer = optim.AdamW(model.parameters(), lr=train_config.lr, weight_decay=train_config.weight_decay)
    scheduler = StepLR(optimizer, step_size=1, gamma=train_config.gamma)
    results = train(model, train_dataloader, None, tokenizer, optimizer, scheduler,
                    train_config.gradient_accumulation_steps, train_config, fsdp_config if train_config.enable_fsdp else None,
                    local_rank if train_config.enable_fsdp else None, rank if train_config.enable_fsdp else None)
    if not train_config.enable_fsdp or rank == 0:
        [print(f"Key: {k}, Value: {v}") for k, v in results.items()]


if __name__ == "__main__":
    fire.main = main
    fire.Fire(main)
