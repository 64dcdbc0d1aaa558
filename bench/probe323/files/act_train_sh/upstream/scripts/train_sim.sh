#!/usr/bin/env bash
# Train / evaluate ACT on the two simulated ALOHA tasks.
# One task per GPU so both can run at the same time on a 2-GPU workstation:
#   bash scripts/train_sim.sh transfer   -> GPU 0
#   bash scripts/train_sim.sh insertion  -> GPU 1
#   bash scripts/train_sim.sh eval <task>
set -e

TASK=${1:-transfer}
CKPT_ROOT=${CKPT_ROOT:-$HOME/act_ckpts}
export MUJOCO_GL=egl

cd "$(dirname "$0")/.."

case "$TASK" in
  transfer)
    CUDA_VISIBLE_DEVICES=0 python3 imitate_episodes.py \
      --task_name sim_transfer_cube_scripted \
      --ckpt_dir "$CKPT_ROOT/sim_transfer_cube_scripted" \
      --policy_class ACT --kl_weight 10 --chunk_size 100 --hidden_dim 512 --batch_size 8 --dim_feedforward 3200 \
      --num_epochs 2000 --lr 1e-5 \
      --seed 0
    ;;
  insertion)
    CUDA_VISIBLE_DEVICES=1 python3 imitate_episodes.py \
      --task_name sim_insertion_scripted \
      --ckpt_dir "$CKPT_ROOT/sim_insertion_scripted" \
      --policy_class ACT --kl_weight 10 --chunk_size 100 --hidden_dim 512 --batch_size 8 --dim_feedforward 3200 \
      --num_epochs 2000 --lr 1e-5 \
      --seed 0
    ;;
  eval)
    EVAL_TASK=${2:-sim_transfer_cube_scripted}
    # evaluation renders offscreen; any free GPU works
    CUDA_VISIBLE_DEVICES=${EVAL_GPU:-0} python3 imitate_episodes.py \
      --task_name "$EVAL_TASK" \
      --ckpt_dir "$CKPT_ROOT/$EVAL_TASK" \
      --policy_class ACT --kl_weight 10 --chunk_size 100 --hidden_dim 512 --batch_size 8 --dim_feedforward 3200 \
      --num_epochs 2000 --lr 1e-5 \
      --seed 0 --eval --temporal_agg
    ;;
  *)
    echo "unknown task: $TASK (expected transfer | insertion | eval)" >&2
    exit 1
    ;;
esac
