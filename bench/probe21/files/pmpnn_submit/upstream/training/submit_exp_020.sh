#!/bin/bash
#SBATCH -p gpu
#SBATCH --mem=128g
#SBATCH --gres=gpu:a100:1
#SBATCH -c 12
#SBATCH -t 7-00:00:00
#SBATCH --output=exp_020.out
#
# Train a ProteinMPNN model with 48 neighbours and 0.20 A backbone noise.
# One A100 is enough; mixed precision is on by default in training.py.

set -euo pipefail

source activate mlfold

module load cuda/11.3

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
export CUDA_LAUNCH_BLOCKING=0
export OMP_NUM_THREADS=12

DATA=/projects/ml/pdb_2021aug02
OUT=./exp_020

mkdir -p "${OUT}"

# record the node we ran on, useful when comparing GPU generations
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "${OUT}/gpu_info.csv"
hostname >> "${OUT}/gpu_info.csv"

python ./training.py \
    --path_for_outputs "${OUT}" \
    --path_for_training_data "${DATA}" \
    --num_neighbors 48 \
    --backbone_noise 0.20 \
    --num_epochs 150 \
    --batch_size 10000 \
    --max_protein_length 10000 \
    --num_examples_per_epoch 1000000 \
    --reload_data_every_n_epochs 4 \
    --gradient_norm -1.0 \
    --mixed_precision True

# ---------------------------------------------------------------------------
# Quick held-out evaluation of the last checkpoint on the test clusters.
# Runs the inference script over a handful of PDBs and reports recovery.
# ---------------------------------------------------------------------------
EVAL_DIR="${OUT}/eval"
mkdir -p "${EVAL_DIR}"

for pdb in 5L33 6MRR 1QYS 2KL8; do
    python ../protein_mpnn_run.py \
        --pdb_path "${DATA}/test_pdbs/${pdb}.pdb" \
        --path_to_model_weights "${OUT}/model_weights" \
        --model_name epoch_last \
        --out_folder "${EVAL_DIR}/${pdb}" \
        --num_seq_per_target 8 \
        --sampling_temp "0.1" \
        --seed 37 \
        --batch_size 8
done

# sequence recovery summary (CPU only, plain python)
python - "${EVAL_DIR}" <<'PY'
import glob, sys, os
root = sys.argv[1]
n = 0
for fa in sorted(glob.glob(os.path.join(root, "*", "seqs", "*.fa"))):
    with open(fa) as fh:
        header = fh.readline().strip()
    print(os.path.basename(fa), header[:80])
    n += 1
print(f"{n} evaluation files")
PY

# print a short summary from the log
tail -n 5 "${OUT}/log.txt"
echo "done on $(hostname) at $(date)"
