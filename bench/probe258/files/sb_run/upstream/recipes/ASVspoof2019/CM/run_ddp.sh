#!/bin/bash
# Train the WavLM spoofing CM on 4 GPUs with DDP, then score ASVspoof 2021 DF
# and In-the-Wild with the best checkpoint.
#
#   bash run_ddp.sh /data/ASVspoof2019/LA [hparams/train_wavlm_spoof.yaml]

set -e

DATA=${1:?data folder}
HPARAMS=${2:-hparams/train_wavlm_spoof.yaml}
NGPU=4

export CUDA_VISIBLE_DEVICES=0,1,2,3
export OMP_NUM_THREADS=8

torchrun --standalone --nproc_per_node=${NGPU} train_spoof.py ${HPARAMS} \
    --data_folder=${DATA} \
    --distributed_launch \
    --distributed_backend=nccl \
    --auto_mix_prec \
    --find_unused_parameters

# single-GPU scoring
for SET in df21 itw; do
    python score_spoof.py ${HPARAMS} \
        --data_folder=${DATA} \
        --test_annotation=manifests/${SET}.csv \
        --device=cuda:0 \
        --score_file=results/scores_${SET}.txt
done
