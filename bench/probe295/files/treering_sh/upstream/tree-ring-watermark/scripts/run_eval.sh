#!/bin/bash
# Tree-Ring main results: clean + attacked images, SD 2.1 base, 1000 prompts of Stable-Diffusion-Prompts.
# Usage: bash scripts/run_eval.sh [n_prompts]
#   single GPU by default; set SHARDS=4 to split the prompts over 4 GPUs.

N=${1:-1000}
SHARDS=${SHARDS:-1}
REF="--reference_model ViT-g-14 --reference_model_pretrain laion2b_s12b_b42k"
WM="--w_channel 3 --w_pattern ring --w_radius 10"

export CUDA_VISIBLE_DEVICES=0
export HF_HOME=${HF_HOME:-/data/hf_cache}
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
export TOKENIZERS_PARALLELISM=false

if [ "$SHARDS" -gt 1 ]; then
  PER=$((N / SHARDS))
  for i in $(seq 0 $((SHARDS - 1))); do
    CUDA_VISIBLE_DEVICES=$i python run_tree_ring_watermark.py --run_name no_attack_shard$i $WM \
      --start $((i * PER)) --end $(((i + 1) * PER)) --with_tracking $REF &
  done
  wait
  exit 0
fi

# no attack
python run_tree_ring_watermark.py --run_name no_attack $WM --start 0 --end $N --with_tracking $REF

# rotation
python run_tree_ring_watermark.py --run_name rotation $WM --start 0 --end $N --r_degree 75 --with_tracking

# jpeg
python run_tree_ring_watermark.py --run_name jpeg $WM --start 0 --end $N --jpeg_ratio 25 --with_tracking

# cropping
python run_tree_ring_watermark.py --run_name cropping $WM --start 0 --end $N --crop_scale 0.75 --crop_ratio 0.75 --with_tracking

# blurring
python run_tree_ring_watermark.py --run_name blurring $WM --start 0 --end $N --gaussian_blur_r 4 --with_tracking

# noise
python run_tree_ring_watermark.py --run_name noise $WM --start 0 --end $N --gaussian_std 0.1 --with_tracking

# color jitter
python run_tree_ring_watermark.py --run_name color_jitter $WM --start 0 --end $N --brightness_factor 6 --with_tracking
