#!/bin/bash
#SBATCH --job-name=deepconvlstm
#SBATCH --partition=gpu
#SBATCH --gres=gpu:1
#SBATCH --cpus-per-task=4
#SBATCH --mem=32G
#SBATCH --time=24:00:00
#SBATCH --output=logs/slurm-%j.out

# Runs the cross-participant experiments of "Improving Deep Learning for HAR with Motion Sensors"
# for all five datasets with the original (2-layer) and the improved (1-layer) DeepConvLSTM.

module load cuda/11.3
source ~/miniconda3/etc/profile.d/conda.sh
conda activate dl-for-har

nvidia-smi

for dataset in rwhar sbhar wetlab hhar opportunity; do
    for layers in 1 2; do
        python main.py \
            --dataset ${dataset} \
            --valid_type cross-participant \
            --network deepconvlstm \
            --nb_layers_lstm ${layers} \
            --nb_units_lstm 128 \
            --batch_size 100 \
            --epochs 30 \
            --lr 1e-4 \
            --seed 1 \
            --gpu cuda:0 \
            --logging \
            --save_analysis
    done
done
