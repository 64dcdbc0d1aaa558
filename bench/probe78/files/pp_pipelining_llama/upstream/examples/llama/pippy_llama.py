# Copyright (c) Meta Platforms, Inc. and affiliates
# Pipeline-parallel inference of Llama with torch.distributed.pipelining (GPipe schedule).
#
#   torchrun --nproc-per-node 4 pippy_llama.py --model meta-llama/Llama-2-7b-chat-hf --new-tokens 16
#
# The model is traced once on a micro-batch, cut into `world_size` stages at decoder-layer boundaries, and every
# rank builds only its own stage. Greedy decoding re-runs the full (un-cached) sequence through the pipeline.
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.distributed.pipelining import ScheduleGPipe, SplitPoint, pipeline
from transformers import AutoModelForCausalLM, AutoTokenizer


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", type=str, default="meta-llama/Llama-2-7b-chat-hf")
    parser.add_argument("--new-tokens", type=int, default=8)
    parser.add_argument("--chunks", type=int, default=4, help="number of micro-batches")
    parser.add_argument("--dtype", type=str, default="float16")
    return parser.parse_args()


def main():
    args = parse_args()
    rank = int(os.environ["RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))

    device = torch.device(f"cuda:{local_rank}")
    torch.cuda.set_device(device)
    dist.init_process_group(rank=rank, world_size=world_size)

    # Grab the model
    llama = AutoModelForCausalLM.from_pretrained(
        args.model, low_cpu_mem_usage=True, torch_dtype=getattr(torch, args.dtype)
    )
    llama.config.use_cache = False
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"

    full_batch_prompts = (
        "How do you", "I like to", "Can I help", "You need to",
        "The weather is", "I found a", "What is your", "You are so",
    )  # full batch size = 8
    mb_size = len(full_batch_prompts) // args.chunks

    llama.to(device).eval()

    # Cut model by equal number of layers per rank
    layers_per_rank = llama.config.num_hidden_layers // world_size
    if rank == 0:
        print(f"layers_per_rank = {layers_per_rank}")
    split_spec = {
        f"model.layers.{i * layers_per_rank}": SplitPoint.BEGINNING
        for i in range(1, world_size)
    }

    # Create a pipeline representation from the model
    mb_inputs = tokenizer(full_batch_prompts[:mb_size], return_tensors="pt", padding=True).to(device)
    pipe = pipeline(llama, mb_args=(mb_inputs["input_ids"],), split_spec=split_spec)

    # Create pipeline stage for each rank
    stage = pipe.build_stage(rank, device=device)
    del llama
    torch.cuda.empty_cache()

    # Attach to a schedule
    schedule = ScheduleGPipe(stage, args.chunks)

    inputs = tokenizer(full_batch_prompts, return_tensors="pt", padding=True).to(device)
    input_ids = inputs["input_ids"]

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    start_evt.record()
    wall0 = time.time()
    for step in range(args.new_tokens):
        # Only the first stage feeds inputs; the last stage gets the logits back
        if rank == 0:
            output = schedule.step(input_ids)
        else:
            output = schedule.step()

        if rank == world_size - 1:
            next_token = torch.argmax(output[:, -1, :], dim=-1, keepdim=True)
        else:
            next_token = torch.empty(input_ids.shape[0], 1, dtype=torch.long, device=device)
        # Broadcast the sampled token from the last stage so every rank grows the same sequence
        dist.broadcast(next_token, src=world_size - 1)
        input_ids = torch.cat([input_ids, next_token], dim=-1)
    end_evt.record()
    torch.cuda.synchronize(device)
    elapsed_ms = start_evt.elapsed_time(end_evt)

    peak = torch.cuda.max_memory_allocated(device) / 2**30
    print(f"[rank {rank}] {args.new_tokens} tokens in {elapsed_ms:.0f} ms "
          f"(wall {time.time() - wall0:.2f}s), peak memory {peak:.2f} GiB")

    if rank == world_size - 1:
        for text in tokenizer.batch_decode(input_ids, skip_special_tokens=True):
            print(text)

    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
