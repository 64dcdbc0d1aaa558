#! /bin/sh
# Cross-entropy pre-training of the UpDown (topdown) model followed by
# self-critical sequence training with CIDEr-D reward.
#
# usage: GPU=1 sh scripts/train_updown_sc.sh [id]
#
# Needs data/cocotalk.json, data/cocotalk_label.h5, data/cocobu_{fc,att,box}
# (see data/README.md) and data/coco-train-idxs.p for the cached CIDEr tokens.

set -e

id=${1:-"topdown"}
GPU=${GPU:-0}
ckpt_path="log_"$id

if [ ! -d $ckpt_path ]; then
  mkdir $ckpt_path
fi
if [ ! -f $ckpt_path"/infos_"$id".pkl" ]; then
  start_from=""
else
  start_from="--start_from "$ckpt_path
fi

export CUDA_VISIBLE_DEVICES=$GPU

# ---- stage 1: cross entropy, 30 epochs -------------------------------------
python train.py --id $id --caption_model topdown \
  --input_json data/cocotalk.json --input_fc_dir data/cocobu_fc \
  --input_att_dir data/cocobu_att --input_label_h5 data/cocotalk_label.h5 \
  --batch_size 10 --learning_rate 5e-4 --learning_rate_decay_start 0 \
  --scheduled_sampling_start 0 --checkpoint_path $ckpt_path $start_from \
  --save_checkpoint_every 6000 --language_eval 1 --val_images_use 5000 \
  --max_epochs 30 --rnn_size 1000 --input_encoding_size 1000 \
  --att_feat_size 2048 --att_hid_size 512

# ---- stage 2: self-critical, from the best XE checkpoint -------------------
sc_id=${id}_rl
sc_path="log_"$sc_id
mkdir -p $sc_path
bash scripts/copy_model.sh $id $sc_id

python train.py --id $sc_id --caption_model topdown \
  --input_json data/cocotalk.json --input_fc_dir data/cocobu_fc \
  --input_att_dir data/cocobu_att --input_label_h5 data/cocotalk_label.h5 \
  --batch_size 10 --learning_rate 5e-5 --start_from $sc_path \
  --checkpoint_path $sc_path --save_checkpoint_every 6000 \
  --language_eval 1 --val_images_use 5000 --self_critical_after 30 \
  --cached_tokens coco-train-idxs --max_epochs 60 --rnn_size 1000 \
  --input_encoding_size 1000 --att_feat_size 2048 --att_hid_size 512

# ---- evaluate on the Karpathy test split -----------------------------------
python eval.py --model $sc_path/model-best.pth --infos_path $sc_path/infos_$sc_id-best.pkl \
  --dump_images 0 --num_images 5000 --language_eval 1 --beam_size 5 --split test \
  --device cuda
