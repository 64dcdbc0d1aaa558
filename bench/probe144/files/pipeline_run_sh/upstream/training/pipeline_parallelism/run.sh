#!/bin/bash

# 2-stage pipeline on the first two GPUs of this node; keep the rest free for eval jobs.
# The launcher translates --include into the per-rank visible-device mask.
deepspeed --include localhost:0,1 train.py --deepspeed_config=ds_config.json -p 2 --steps=200 --backend nccl
