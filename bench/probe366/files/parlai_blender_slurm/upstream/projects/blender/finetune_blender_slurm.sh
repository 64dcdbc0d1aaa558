#!/bin/bash
#SBATCH --job-name=blender_bst_ft
#SBATCH --output=/checkpoint/%u/jobs/blender_bst_ft/%j.out
#SBATCH --error=/checkpoint/%u/jobs/blender_bst_ft/%j.err
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=8
#SBATCH --gres=gpu:8
#SBATCH --cpus-per-task=10
#SBATCH --mem=480G
#SBATCH --time=72:00:00
#SBATCH --partition=learnfair
#SBATCH --signal=USR1@60
#
# Fine-tune the 2.7B Blender model on the blended skill talk tasks, 2 nodes x
# 8 x 32GB V100s. One SLURM task per GPU; parlai distributed_train reads
# SLURM_PROCID / SLURM_LOCALID itself (see parlai/utils/distributed.py).
set -e

# sanity: show what GPUs we got
nvidia-smi

export NCCL_SOCKET_IFNAME=^docker0,lo
export PYTHONUNBUFFERED=1

MF=/checkpoint/$USER/blender/bst_ft_2.7B/model
mkdir -p "$(dirname "$MF")"

srun --label parlai distributed_train \
    -t blended_skill_talk,wizard_of_wikipedia,convai2:normalized,empathetic_dialogues \
    --multitask-weights 1,3,3,3 -veps 0.25 --attention-dropout 0.0 --batchsize 16 \
    --model transformer/generator --embedding-size 2560 --ffn-size 10240 \
    --variant prelayernorm --n-heads 32 --n-positions 128 --n-encoder-layers 2 \
    --n-decoder-layers 24 --history-add-global-end-token end --delimiter '  ' \
    --dict-tokenizer bytelevelbpe --dropout 0.1 --fp16 True --fp16-impl mem_efficient \
    --init-model zoo:blender/reddit_3B/model --dict-file zoo:blender/reddit_3B/model.dict \
    --label-truncate 128 --log_every_n_secs 10 -lr 7e-06 --lr-scheduler reduceonplateau \
    --lr-scheduler-patience 3 --optimizer adam --relu-dropout 0.0 --activation gelu \
    --save-after-valid True --text-truncate 128 --truncate 128 --warmup_updates 100 \
    --update-freq 2 --gradient-clip 0.1 --skip-generation True -vp 10 -vmt ppl -vmm min \
    --port 61337 --model-file "$MF"
