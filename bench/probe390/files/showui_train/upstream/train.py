import argparse
import os
import shutil
import sys
import time
import json
import datetime
from functools import partial

import deepspeed
import torch
import torch.distributed as dist
import transformers
import wandb
from peft import LoraConfig, get_peft_model
from torch.utils.tensorboard import SummaryWriter
from transformers import AutoProcessor, BitsAndBytesConfig

from data.dataset import HybridDataset, collate_fn
from model.showui.modeling_showui import ShowUIForConditionalGeneration
from model.showui.processing_showui import ShowUIProcessor
from utils.utils import (AverageMeter, ProgressMeter, Summary, dict_to_cuda,
                         save_args_to_json, print_rank0)
from main.eval_screenspot import validate_screenspot


def parse_args(args):
    parser = argparse.ArgumentParser(description="ShowUI Model Training")
    parser.add_argument("--local_rank", default=0, type=int, help="node rank")
    parser.add_argument("--model_id", default="Qwen/Qwen2-VL-2B-Instruct")
    parser.add_argument("--version", default="showlab/ShowUI-2B")
    parser.add_argument("--max_visual_tokens", default=1344, type=int)
    parser.add_argument("--model_max_length", default=8192, type=int)
    parser.add_argument(
        "--precision",
        default="bf16",
        type=str,
        choices=["fp32", "bf16", "fp16"],
        help="precision for training",
    )
    parser.add_argument("--attn_imple", default="flash_attention_2", type=str,
                        choices=["eager", "sdpa", "flash_attention_2"])
    parser.add_argument("--use_qlora", action="store_true", default=False)
    parser.add_argument("--load_in_4bit", action="store_true", default=False)
    parser.add_argument("--min_visual_tokens", default=256, type=int)
    parser.add_argument("--lora_r", default=8, type=int)
    parser.add_argument("--lora_alpha", default=16, type=int)
    parser.add_argument("--lora_dropout", default=0.05, type=float)
    parser.add_argument("--lora_target_modules", default="qkv_proj", type=str)
    parser.add_argument("--freeze_lm_embed", action="store_true", default=True)

    # UI graph: select only one token per connected component of identical patches
    parser.add_argument("--uigraph_train", action="store_true", default=True)
    parser.add_argument("--uigraph_test", action="store_true", default=False)
    parser.add_argument("--uigraph_diff", default=1, type=int)
    parser.add_argument("--uigraph_rand", action="store_true", default=False)
    parser.add_argument("--uimask_pre", action="store_true", default=True)
    parser.add_argument("--uimask_ratio", default=0.5, type=float)
    parser.add_argument("--lm_skip_ratio", default=0.5, type=float)
    parser.add_argument("--lm_skip_layer", default="[1,28,0]", type=str)

    # data
    parser.add_argument("--dataset_dir", default="./dataset", type=str)
    parser.add_argument("--train_dataset", default="showui-desktop", type=str)
    parser.add_argument("--train_json", default="hf_train", type=str)
    parser.add_argument("--train_ratio", default="1", type=str)
    parser.add_argument("--val_dataset", default="screenspot", type=str)
    parser.add_argument("--val_json", default="hf_test_full", type=str)
    parser.add_argument("--num_turn", default=1, type=int)
    parser.add_argument("--shuffle_image_token", action="store_true", default=False)
    parser.add_argument("--random_sample", action="store_true", default=True)
    parser.add_argument("--record_sample", action="store_true", default=False)

    # training
    parser.add_argument("--log_base_dir", default="./runs", type=str)
    parser.add_argument("--exp_id", default="debug", type=str)
    parser.add_argument("--epochs", default=10, type=int)
    parser.add_argument("--steps_per_epoch", default=500, type=int)
    parser.add_argument("--batch_size", default=1, type=int, help="batch size per device per step")
    parser.add_argument("--grad_accumulation_steps", default=1, type=int)
    parser.add_argument("--val_batch_size", default=1, type=int)
    parser.add_argument("--workers", default=16, type=int)
    parser.add_argument("--lr", default=0.0003, type=float)
    parser.add_argument("--warmup_steps", default=100, type=int)
    parser.add_argument("--beta1", default=0.9, type=float)
    parser.add_argument("--beta2", default=0.95, type=float)
    parser.add_argument("--ds_zero", choices=["zero1", "zero2", "zero3"], default="zero2", type=str)
    parser.add_argument("--gradient_checkpointing", action="store_true", default=True)
    parser.add_argument("--eval_only", action="store_true", default=False)
    parser.add_argument("--no_eval", action="store_true", default=False)
    parser.add_argument("--print_freq", default=1, type=int)
    parser.add_argument("--start_epoch", default=0, type=int)
    parser.add_argument("--auto_resume", action="store_true", default=True)
    parser.add_argument("--resume", default="", type=str)
    parser.add_argument("--wandb_key", default=None, type=str)
    return parser.parse_args(args)


def main(args):
    args = parse_args(args)
    args.distributed = int(os.environ.get("WORLD_SIZE", 1)) > 1
    args.log_dir = os.path.join(args.log_base_dir, args.exp_id)
    args.global_rank = int(os.environ.get("RANK", 0))
    args.world_size = int(os.environ.get("WORLD_SIZE", 1))

    torch.cuda.set_device(args.local_rank)
    deepspeed.init_distributed(dist_backend="nccl")

    if args.global_rank == 0:
        os.makedirs(args.log_dir, exist_ok=True)
        writer = SummaryWriter(args.log_dir)
        save_args_to_json(args, os.path.join(args.log_dir, "args.json"))
        if args.wandb_key is not None:
            wandb.login(key=args.wandb_key)
            wandb.init(project="ShowUI", name=args.exp_id, config=vars(args), dir=args.log_dir)
    else:
        writer = None

    # Create model
    processor = ShowUIProcessor.from_pretrained(
        args.model_id,
        min_pixels=args.min_visual_tokens * 28 * 28,
        max_pixels=args.max_visual_tokens * 28 * 28,
        model_max_length=args.model_max_length,
        uigraph_train=args.uigraph_train, uigraph_test=args.uigraph_test,
        uigraph_diff=args.uigraph_diff, uigraph_rand=args.uigraph_rand,
        uimask_pre=args.uimask_pre, uimask_ratio=args.uimask_ratio,
    )

    torch_dtype = torch.float32
    if args.precision == "bf16":
        torch_dtype = torch.bfloat16
    elif args.precision == "fp16":
        torch_dtype = torch.half

    bnb_config = None
    if args.use_qlora:
        bnb_config = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_compute_dtype=torch_dtype,
            bnb_4bit_use_double_quant=True,
            llm_int8_skip_modules=["visual", "lm_head"],
        )

    lm_skip_layer = eval(args.lm_skip_layer)
    model = ShowUIForConditionalGeneration.from_pretrained(
        args.model_id,
        torch_dtype=torch_dtype,
        low_cpu_mem_usage=True,
        _attn_implementation=args.attn_imple,
        quantization_config=bnb_config,
        device_map=f"cuda:{args.local_rank}" if args.use_qlora else None,
        lm_skip_ratio=args.lm_skip_ratio,
        lm_skip_layer=lm_skip_layer,
    )
    model.config.use_cache = False
    model.config.tokenizer_model_max_length = processor.tokenizer.model_max_length

    if args.gradient_checkpointing:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
        model.enable_input_require_grads()

    lora_r = args.lora_r
    if lora_r > 0:
        def find_linear_layers(model, lora_target_modules):
            cls = torch.nn.Linear
            lora_module_names = set()
            for name, module in model.named_modules():
                if isinstance(module, cls) and all(
                    [x not in name for x in ["visual", "lm_head"]]
                ) and any([x in name for x in lora_target_modules]):
                    lora_module_names.add(name)
            return sorted(list(lora_module_names))

        lora_target_modules = find_linear_layers(model, args.lora_target_modules.split(","))
        lora_config = LoraConfig(
            r=lora_r,
            lora_alpha=args.lora_alpha,
            target_modules=lora_target_modules,
            lora_dropout=args.lora_dropout,
            bias="none",
            task_type="CAUSAL_LM",
        )
        model = get_peft_model(model, lora_config)
        model.print_trainable_parameters()

    if args.freeze_lm_embed:
        for p in model.get_input_embeddings().parameters():
            p.requires_grad = False

    # Dataset
    train_dataset = HybridDataset(
        processor,
        inference=False,
        args=args,
    )
    val_dataset = HybridDataset(
        processor,
        inference=True,
        args=args,
        dataset=args.val_dataset,
        json_data=args.val_json,
    ) if not args.no_eval else None
    print_rank0(f"Training with {len(train_dataset)} examples.")

    ds_config = {
        "train_micro_batch_size_per_gpu": args.batch_size,
        "gradient_accumulation_steps": args.grad_accumulation_steps,
        "optimizer": {
            "type": "AdamW",
            "params": {
                "lr": args.lr,
                "weight_decay": 0.0,
                "betas": (args.beta1, args.beta2),
            },
        },
        "scheduler": {
            "type": "WarmupDecayLR",
            "params": {
                "total_num_steps": args.epochs * args.steps_per_epoch,
                "warmup_min_lr": 0,
                "warmup_max_lr": args.lr,
                "warmup_num_steps": args.warmup_steps,
                "warmup_type": "linear",
            },
        },
        "fp16": {
            "enabled": args.precision == "fp16",
        },
        "bf16": {
            "enabled": args.precision == "bf16",
        },
        "gradient_clipping": 1.0,
        "zero_optimization": {
            "stage": int(args.ds_zero[-1]),
            "contiguous_gradients": True,
            "overlap_comm": True,
            "reduce_scatter": True,
            "reduce_bucket_size": 5e8,
            "allgather_bucket_size": 5e8,
        },
    }

    model_engine, optimizer, train_loader, scheduler = deepspeed.initialize(
        model=model,
        model_parameters=[p for p in model.parameters() if p.requires_grad],
        training_data=train_dataset,
        collate_fn=partial(collate_fn, processor=processor),
        config=ds_config,
    )

    # resume deepspeed checkpoint
    if args.auto_resume and len(args.resume) == 0:
        resume = os.path.join(args.log_dir, "ckpt_model")
        if os.path.exists(resume):
            args.resume = resume

    if args.resume:
        load_path, client_state = model_engine.load_checkpoint(args.resume)
        with open(os.path.join(args.resume, "latest"), "r") as f:
            ckpt_dir = f.readlines()[0].strip()
        args.start_epoch = int(ckpt_dir.replace("global_step", "")) // args.steps_per_epoch
        print_rank0(
            "resume training from {}, start from epoch {}".format(args.resume, args.start_epoch)
        )

    # validation dataset
    if val_dataset is not None:
        assert args.val_batch_size == 1
        val_sampler = torch.utils.data.distributed.DistributedSampler(
            val_dataset, shuffle=False, drop_last=False
        )
        val_loader = torch.utils.data.DataLoader(
            val_dataset,
            batch_size=args.val_batch_size,
            shuffle=False,
            num_workers=args.workers,
            pin_memory=False,
            sampler=val_sampler,
            collate_fn=partial(collate_fn, processor=processor),
        )
    else:
        val_loader = None

    train_iter = iter(train_loader)
    best_score, cur_ap = 0.0, 0.0

    if args.eval_only:
        validate_screenspot(val_loader, model_engine, processor, 0, 0, writer, args)
        return

    for epoch in range(args.start_epoch, args.epochs):
        # train for one epoch
        train_iter, global_step = train(
            train_loader,
            model_engine,
            epoch,
            scheduler,
            writer,
            train_iter,
            args,
        )

        if args.no_eval is False:
            score = validate_screenspot(val_loader, model_engine, processor, epoch, global_step, writer, args)
            is_best = score > best_score
            best_score = max(score, best_score)
        else:
            is_best = True

        if args.no_eval or is_best:
            save_dir = os.path.join(args.log_dir, "ckpt_model")
            if args.global_rank == 0:
                torch.save(
                    {"epoch": epoch},
                    os.path.join(args.log_dir, "meta_log_score{:.3f}.pth".format(best_score)),
                )
                if os.path.exists(save_dir):
                    shutil.rmtree(save_dir)
            torch.distributed.barrier()
            model_engine.save_checkpoint(save_dir)


def train(
    train_loader,
    model,
    epoch,
    scheduler,
    writer,
    train_iter,
    args,
):
    """Main training loop."""
    batch_time = AverageMeter("Time", ":6.3f")
    data_time = AverageMeter("Data", ":6.3f")
    losses = AverageMeter("Loss", ":.4f")
    progress = ProgressMeter(
        args.steps_per_epoch,
        [batch_time, losses],
        prefix="Epoch: [{}]".format(epoch),
    )

    # switch to train mode
    model.train()
    end = time.time()
    for global_step in range(args.steps_per_epoch):
        for i in range(args.grad_accumulation_steps):
            try:
                input_dict = next(train_iter)
            except StopIteration:
                train_iter = iter(train_loader)
                input_dict = next(train_iter)

            data_time.update(time.time() - end)
            input_dict = dict_to_cuda(input_dict)

            if args.precision == "fp16":
                input_dict["pixel_values"] = input_dict["pixel_values"].half()
            elif args.precision == "bf16":
                input_dict["pixel_values"] = input_dict["pixel_values"].bfloat16()
            else:
                input_dict["pixel_values"] = input_dict["pixel_values"].float()

            output_dict = model(**input_dict)
            loss = output_dict["loss"]
            losses.update(loss.item(), input_dict["input_ids"].size(0))
            model.backward(loss)
            model.step()

        # measure elapsed time
        batch_time.update(time.time() - end)
        end = time.time()

        if global_step % args.print_freq == 0:
            if args.distributed:
                batch_time.all_reduce()
                data_time.all_reduce()
                losses.all_reduce()

            if args.global_rank == 0:
                progress.display(global_step + 1)
                curr_step = epoch * args.steps_per_epoch + global_step
                writer.add_scalar("train/loss", losses.avg, curr_step)
                writer.add_scalar("metrics/total_secs_per_batch", batch_time.avg, curr_step)
                writer.add_scalar("metrics/data_secs_per_batch", data_time.avg, curr_step)
                writer.add_scalar("metrics/max_mem_alloc_gb",
                                  torch.cuda.max_memory_allocated() / 1024 ** 3, curr_step)
                if args.wandb_key is not None:
                    wandb.log({"train/loss": losses.avg, "train/lr": scheduler.get_last_lr()[0]}, step=curr_step)

            batch_time.reset()
            data_time.reset()
            losses.reset()

        if global_step != 0:
            curr_lr = scheduler.get_last_lr()
            if args.global_rank == 0:
                writer.add_scalar("train/lr", curr_lr[0], global_step)

    torch.cuda.empty_cache()
    return train_iter, global_step


if __name__ == "__main__":
    main(sys.argv[1:])
