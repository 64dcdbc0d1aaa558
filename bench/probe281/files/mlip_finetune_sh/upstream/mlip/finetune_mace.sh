#!/bin/bash
# Fine-tune MACE-MP-0 (medium) on the relaxation trajectories of the latest
# active-learning round. Multi-GPU via torchrun + MACE's --distributed mode.
#
#   sbatch mlip/finetune_mace.sh round3
#
#SBATCH --job-name=mace-ft
#SBATCH --nodes=1
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node=4
#SBATCH --cpus-per-task=32
#SBATCH --mem=256G
#SBATCH --time=48:00:00
#SBATCH --output=logs/%x-%j.out

ROUND=${1:-round3}

module purge
module load cuda/12.1
source ~/miniconda3/etc/profile.d/conda.sh
conda activate mace

export CUDA_VISIBLE_DEVICES=0,1,2,3
export NCCL_DEBUG=WARN
export NCCL_P2P_DISABLE=0
export OMP_NUM_THREADS=8
export PYTHONUNBUFFERED=1

NGPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
MASTER_PORT=$((29500 + RANDOM % 1000))

mkdir -p "runs/mace_ft_${ROUND}" logs

python - <<PY
import yaml
cfg = yaml.safe_load(open("mlip/configs/mace_finetune.yaml"))
cfg["train_file"] = "data/${ROUND}/train.xyz"
cfg["test_file"] = "data/${ROUND}/test.xyz"
yaml.safe_dump(cfg, open("runs/mace_ft_${ROUND}/config.yaml", "w"))
PY

torchrun --standalone --nnodes=1 --nproc_per_node="$NGPUS" --master_port="$MASTER_PORT" \
    "$(which mace_run_train)" \
    --config "runs/mace_ft_${ROUND}/config.yaml" \
    --name "mace_ft_${ROUND}" \
    --work_dir "runs/mace_ft_${ROUND}" \
    --distributed \
    --launcher torchrun \
    --device cuda

# convert the best checkpoint for ASE use (relax/relax_mace.py --model <path>)
python -c "
import torch, glob
ckpt = sorted(glob.glob('runs/mace_ft_${ROUND}/checkpoints/*_stagetwo.model'))[-1]
model = torch.load(ckpt, map_location='cpu')
torch.save(model, 'runs/mace_ft_${ROUND}/mace_ft_${ROUND}.model')
print('exported', ckpt)
"
