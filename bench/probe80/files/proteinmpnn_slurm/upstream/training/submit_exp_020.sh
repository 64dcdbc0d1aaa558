#!/bin/bash
#SBATCH -p gpu
#SBATCH --mem=128g
#SBATCH --gres=gpu:a100:1
#SBATCH -c 12
#SBATCH -t 7-00:00:00
#SBATCH --output=exp_020_%j.out
#SBATCH --error=exp_020_%j.err
#
# Train ProteinMPNN (v_48_020: 48 neighbours, 0.20 A backbone noise) on the
# PDB snapshot of 2021-08-02. One A100 is enough; a full run takes ~5 days.
#
#   sbatch submit_exp_020.sh                 # fresh run
#   RESUME=1 sbatch submit_exp_020.sh        # continue from epoch_last.pt

set -eo pipefail

EXP_NAME="exp_020"
DATA_DIR="${DATA_DIR:-/projects/ml/proteinmpnn/pdb_2021aug02}"
OUT_DIR="${OUT_DIR:-./${EXP_NAME}}"
NOISE="0.20"
NUM_NEIGHBORS=48

module purge
module load cuda/11.3
module load gcc/9.3.0

source activate mlfold-test

# Slurm gives us exactly one GPU; make sure PyTorch only sees that one.
export CUDA_VISIBLE_DEVICES=${SLURM_LOCALID:-0}
export PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-12}

echo "host: $(hostname)  job: ${SLURM_JOB_ID:-interactive}"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"

RESUME_ARGS=""
if [[ "${RESUME:-0}" == "1" && -f "${OUT_DIR}/model_weights/epoch_last.pt" ]]; then
    RESUME_ARGS="--previous_checkpoint ${OUT_DIR}/model_weights/epoch_last.pt"
    echo "resuming from ${OUT_DIR}/model_weights/epoch_last.pt"
fi

mkdir -p "${OUT_DIR}"
cp "$0" "${OUT_DIR}/submit_script.sh" || true

python ./training.py \
           --path_for_outputs "${OUT_DIR}" \
           --path_for_training_data "${DATA_DIR}" \
           --num_examples_per_epoch 1000 \
           --save_model_every_n_epochs 50 \
           --num_neighbors ${NUM_NEIGHBORS} \
           --backbone_noise ${NOISE} \
           --batch_size 10000 \
           --max_protein_length 10000 \
           --mixed_precision True \
           ${RESUME_ARGS}

echo "finished at $(date)"
# keep a copy of the final log next to the weights
cp "${OUT_DIR}/log.txt" "${OUT_DIR}/log_${SLURM_JOB_ID:-local}.txt" || true
