#!/usr/bin/env bash
# Large-scale VLP pretraining of UniVTG on Ego4D point labels + VideoCC interval labels + CLIP curve labels.
# Usage: bash scripts/pretrain/pretrain_sf_clip.sh [extra args passed to main/train_vlp_ddp.py]
# Tested on 8 x A100 (80G); reduce bsz if you run on 4 x V100.

dset_type=vlp
dset_name=vlp
clip_length=2
gpu_num=8
master_port=2333

model_id=univtg
exp_id=pt

######## data paths
train_path=()
train_path+=(data/point_egoclip_wo_val.jsonl)
train_path+=(data/interval_videocc.jsonl)
train_path+=(data/curve_5_window.jsonl)

eval_path=data/qvhighlights/metadata/qvhighlights_val.jsonl
eval_split_name=val

######## setup video+text features
feat_root=../data
# qvhl_root=../data/qvhighlights

# video features
v_feat_dim=0
v_feat_dirs=()
v_feat_types=slowfast_clip
if [[ ${v_feat_types} == *"slowfast"* ]]; then
  v_feat_dirs+=(${feat_root}/vid_slowfast)
  (( v_feat_dim += 2304 ))  # double brackets for arithmetic op, no need to use ${v_feat_dim}
fi
if [[ ${v_feat_types} == *"i3d"* ]]; then
  v_feat_dirs+=(${feat_root}/vid_i3d)
  (( v_feat_dim += 1024 ))
fi
if [[ ${v_feat_types} == *"c3d"* ]]; then
  v_feat_dirs+=(${feat_root}/vid_c3d)
  (( v_feat_dim += 500 ))
fi
if [[ ${v_feat_types} == *"clip"* ]]; then
  v_feat_dirs+=(${feat_root}/vid_clip)
  (( v_feat_dim += 512 ))
fi

# text features
t_feat_type=clip
if [[ ${t_feat_type} == "clip" ]]; then
  t_feat_dir=${feat_root}/txt_clip
  t_feat_dim=512
else
  echo "Wrong arg for t_feat_type."
  exit 1
fi

#### training
bsz=64
eval_bsz=32
num_workers=8
epoch=100
lr=1e-4
lr_drop=200
lr_warmup=10
wd=1e-4

input_dropout=0.5
dropout=0
droppath=0.1

eval_epoch=5
enc_layers=4
eval_mode=add
round_multiple=-1
hidden_dim=1024

b_loss_coef=10
g_loss_coef=1
eos_coef=0.1
f_loss_coef=10
s_loss_intra_coef=0.1
s_loss_inter_coef=1

main_metric=MR-full-R1@0.3-key
nms_thd=0.7
max_before_nms=1000

ctx_mode=video_tef
use_cache=-1
easy_negative_only=1

export NCCL_DEBUG=WARN
export OMP_NUM_THREADS=4

CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 PYTHONPATH=$PYTHONPATH:. \
python -m torch.distributed.launch --nproc_per_node=${gpu_num} --master_port ${master_port} \
main/train_vlp_ddp.py \
--dset_type ${dset_type}   \
--dset_name ${dset_name} \
--clip_length ${clip_length} \
--exp_id ${exp_id} \
--use_cache ${use_cache} \
--max_es_cnt -1 \
--model_id ${model_id} \
--bsz ${bsz} \
--eval_bsz ${eval_bsz} \
--num_workers ${num_workers} \
--n_epoch ${epoch} \
--lr ${lr} \
--lr_drop ${lr_drop} \
--lr_warmup ${lr_warmup} \
--wd ${wd} \
--input_dropout ${input_dropout} \
--dropout ${dropout} \
--droppath ${droppath} \
--eval_epoch ${eval_epoch} \
--enc_layers ${enc_layers} \
--eval_mode ${eval_mode} \
--round_multiple ${round_multiple} \
--hidden_dim ${hidden_dim} \
--b_loss_coef ${b_loss_coef} \
--g_loss_coef ${g_loss_coef} \
--eos_coef ${eos_coef} \
--f_loss_coef ${f_loss_coef}  \
--s_loss_intra_coef ${s_loss_intra_coef}  \
--s_loss_inter_coef ${s_loss_inter_coef}  \
--main_metric ${main_metric} \
--nms_thd ${nms_thd} \
--easy_negative_only ${easy_negative_only} \
--max_before_nms ${max_before_nms} \
--ctx_mode ${ctx_mode} \
--train_path ${train_path[@]} \
--eval_path ${eval_path} \
--eval_split_name ${eval_split_name} \
--v_feat_dirs ${v_feat_dirs[@]} \
--v_feat_dim ${v_feat_dim} \
--t_feat_dir ${t_feat_dir} \
--t_feat_dim ${t_feat_dim} \
${@:1}
