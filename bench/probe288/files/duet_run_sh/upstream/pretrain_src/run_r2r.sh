#!/bin/bash
# Pre-train the DUET/HAMT cross-modal transformer on R2R (+ PREVALENT aug)
# with 4 GPUs on one node.

NODE_RANK=0
NUM_GPUS=4
outdir=../datasets/R2R/exprs_map/pretrain/cmt-vitbase-mlm.mrc.sap-init.lxmert-aug.speaker

export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=0
export OMP_NUM_THREADS=4

# train
CUDA_VISIBLE_DEVICES='0,1,2,3' python -m torch.distributed.launch \
    --nproc_per_node=${NUM_GPUS} --node_rank $NODE_RANK --master_port=$((RANDOM + 10000)) \
    main_r2r.py --world_size ${NUM_GPUS} \
    --vlnbert cmt \
    --model_config config/r2r_model_config.json \
    --config config/r2r_pretrain.json \
    --output_dir $outdir
