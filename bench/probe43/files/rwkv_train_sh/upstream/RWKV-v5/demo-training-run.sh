#!/bin/bash
#######################################################################################################################
#
# Run demo-training-prepare.sh with the same MODEL_TYPE & N_LAYER & N_EMBD first
# Or, rename your base model to rwkv-init.pth and put it in the output folder
#
# The trainer will load the last rwkv-*.pth in the folder, such that it can continue from a stopped run
# Therefore check the log (### Loading rwkv-xxx.pth... ###), and make sure you don't have extra rwkv-*.pth there
#
#######################################################################################################################
set -euo pipefail

# ---- toolchain: the wkv kernels are JIT-compiled by torch.utils.cpp_extension on first run ----
export CUDA_HOME=/usr/local/cuda-12.1
export PATH=$CUDA_HOME/bin:$PATH
export LD_LIBRARY_PATH=$CUDA_HOME/lib64:${LD_LIBRARY_PATH:-}
export TORCH_CUDA_ARCH_LIST="8.0;8.6;8.9;9.0"
export TORCH_EXTENSIONS_DIR=$HOME/.cache/torch_extensions/rwkv
export MAX_JOBS=16

# ---- which cards ----
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
GPU_PER_NODE=$(nvidia-smi --query-gpu=index --format=csv,noheader | wc -l)
N_NODE=${N_NODE:-1}

# ---- multi-node rendezvous (Lightning reads these) ----
export MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
export MASTER_PORT=${MASTER_PORT:-29500}
export NODE_RANK=${NODE_RANK:-0}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=0
export NCCL_DEBUG=WARN

# ---- RWKV runtime switches ----
export RWKV_JIT_ON=1
export RWKV_FLOAT_MODE=bf16

MODEL_TYPE="x052" # x052 => rwkv-5.2 (rwkv-5 final)
N_LAYER="12"
N_EMBD="768"
CTX_LEN="512" # !!! change magic_prime if you change ctx_len !!!
PROJ_DIR="out/L"$N_LAYER"-D"$N_EMBD"-"$MODEL_TYPE
M_BSZ="16" # takes ~9G VRAM here => reduce this to save VRAM, increase this for faster speed
LR_INIT="6e-4"
LR_FINAL="6e-5"
GRAD_CP=1 # 1 => slower, save VRAM; 0 => faster, more VRAM
EPOCH_SAVE=10 # save every 10 "miniepochs" (1 miniepoch = 40320 * ctx_len tokens) => decrease if your GPU is weak
DS_BUCKET_MB=2 # set to 2 for consumer GPUs, set to 200 for A100 / H100 (affects speed & vram usage)

mkdir -p "$PROJ_DIR"
echo "Training $MODEL_TYPE L$N_LAYER D$N_EMBD on $N_NODE x $GPU_PER_NODE GPUs -> $PROJ_DIR"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$PROJ_DIR/gpus.csv"

python train.py --load_model "0" --wandb "Test" --proj_dir $PROJ_DIR --my_testing $MODEL_TYPE \
 --ctx_len $CTX_LEN --my_pile_stage 3 --epoch_count 999999 --epoch_begin 0 \
 --data_file "data/minipile" --my_exit_tokens 1498226207 --magic_prime 2926181 \
 --num_nodes $N_NODE --micro_bsz $M_BSZ --n_layer $N_LAYER --n_embd $N_EMBD --pre_ffn 0 --head_qk 0 \
 --lr_init $LR_INIT --lr_final $LR_FINAL --warmup_steps 10 --beta1 0.9 --beta2 0.99 --adam_eps 1e-8 --my_pile_edecay 0 --data_type "binidx" --vocab_size 65536 \
 --weight_decay 0.001 --epoch_save $EPOCH_SAVE --head_size_a 64 \
 --accelerator gpu --devices $GPU_PER_NODE --precision bf16 \
 --strategy deepspeed_stage_2 --grad_cp $GRAD_CP --enable_progress_bar True --ds_bucket_mb $DS_BUCKET_MB \
 2>&1 | tee -a "$PROJ_DIR/train.log"
