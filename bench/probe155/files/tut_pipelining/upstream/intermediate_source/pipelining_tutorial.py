"""
Introduction to Distributed Pipeline Parallelism
=================================================

This tutorial uses a gpt-style transformer model to demonstrate implementing
distributed pipeline parallelism with `torch.distributed.pipelining
<https://pytorch.org/docs/main/distributed.pipelining.html>`__ APIs.

Run it with 2 GPUs on one host::

    torchrun --nnodes 1 --nproc_per_node 2 pipelining_tutorial.py

Use ``--schedule 1f1b`` to try the one-forward-one-backward schedule instead of GPipe.
"""
import argparse
import os
import time
from dataclasses import dataclass

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.distributed.pipelining import (
    pipeline,
    PipelineStage,
    Schedule1F1B,
    ScheduleGPipe,
    SplitPoint,
)


######################################################################
# Step 1: Define the model
# ------------------------
@dataclass
class ModelArgs:
    dim: int = 512
    n_layers: int = 8
    n_heads: int = 8
    vocab_size: int = 10000


class Transformer(nn.Module):
    def __init__(self, model_args: ModelArgs):
        super().__init__()

        self.tok_embeddings = nn.Embedding(model_args.vocab_size, model_args.dim)

        # Using a ModuleDict lets us delete layers witout affecting names,
        # ensuring checkpoints will correctly save and load.
        self.layers = torch.nn.ModuleDict()
        for layer_id in range(model_args.n_layers):
            self.layers[str(layer_id)] = nn.TransformerDecoderLayer(model_args.dim, model_args.n_heads)

        self.norm = nn.LayerNorm(model_args.dim)
        self.output = nn.Linear(model_args.dim, model_args.vocab_size)

    def forward(self, tokens: torch.Tensor):
        # Handling layers being 'None' at runtime enables easy pipeline splitting
        h = self.tok_embeddings(tokens) if self.tok_embeddings else tokens

        for layer in self.layers.values():
            h = layer(h, h)

        h = self.norm(h) if self.norm else h
        output = self.output(h).clone() if self.output else h
        return output


######################################################################
# Step 2: Initialize distributed
# ------------------------------
# ``torchrun`` sets ``LOCAL_RANK`` / ``WORLD_SIZE``; each rank owns one GPU and one stage.
def init_distributed():
    global rank, device, pp_group, stage_index, num_stages
    rank = int(os.environ["LOCAL_RANK"])
    world_size = int(os.environ["WORLD_SIZE"])
    device = torch.device(f"cuda:{rank}") if torch.cuda.is_available() else torch.device("cpu")
    dist.init_process_group()

    # This group can be a sub-group in the N-D parallel case
    pp_group = dist.new_group()
    stage_index = rank
    num_stages = world_size


######################################################################
# Step 3: Split the model into stages
# -----------------------------------
def manual_model_split(model) -> PipelineStage:
    if stage_index == 0:
        # prepare the first stage model
        for i in range(4, 8):
            del model.layers[str(i)]
        model.norm = None
        model.output = None

    elif stage_index == 1:
        # prepare the second stage model
        for i in range(4):
            del model.layers[str(i)]
        model.tok_embeddings = None

    stage = PipelineStage(
        model,
        stage_index,
        num_stages,
        device,
    )
    return stage


def tracer_model_split(model, example_input_microbatch) -> PipelineStage:
    pipe = pipeline(
        module=model,
        mb_args=(example_input_microbatch,),
        split_spec={
            "layers.4": SplitPoint.BEGINNING,
        },
    )
    stage = pipe.build_stage(stage_index, device, pp_group)
    return stage


######################################################################
# Step 4: Run the schedule
# ------------------------
if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--schedule", choices=["gpipe", "1f1b"], default="gpipe")
    parser.add_argument("--tracer", action="store_true", help="split with the pipeline() tracer")
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    init_distributed()
    num_microbatches = 4
    model_args = ModelArgs()
    model = Transformer(model_args)

    # Dummy data
    x = torch.ones(32, 500, dtype=torch.long)
    y = torch.randint(0, model_args.vocab_size, (32, 500), dtype=torch.long)
    example_input_microbatch = x.chunk(num_microbatches)[0]

    if args.tracer:
        # Option 2: Tracer model splitting
        stage = tracer_model_split(model, example_input_microbatch)
    else:
        # Option 1: Manual model splitting
        stage = manual_model_split(model)

    model.to(device)
    x = x.to(device)
    y = y.to(device)

    def tokenwise_loss_fn(outputs, targets):
        loss_fn = nn.CrossEntropyLoss()
        outputs = outputs.reshape(-1, model_args.vocab_size)
        targets = targets.reshape(-1)
        return loss_fn(outputs, targets)

    schedule_cls = ScheduleGPipe if args.schedule == "gpipe" else Schedule1F1B
    schedule = schedule_cls(stage, n_microbatches=num_microbatches, loss_fn=tokenwise_loss_fn)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3)

    start_evt = torch.cuda.Event(enable_timing=True)
    end_evt = torch.cuda.Event(enable_timing=True)
    for step in range(args.steps):
        optimizer.zero_grad()
        start_evt.record()
        if rank == 0:
            schedule.step(x)
        elif rank == 1:
            losses = []
            output = schedule.step(target=y, losses=losses)
            print(f"step {step} losses: {[l.item() for l in losses]}")
        end_evt.record()
        optimizer.step()
        torch.cuda.synchronize()
        print(f"[rank {rank}] step {step} took {start_evt.elapsed_time(end_evt):.1f} ms")

    dist.destroy_process_group()
