#!/bin/bash
#SBATCH --job-name=cryodrgn-vae
#SBATCH --partition=gpu
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=16
#SBATCH --gres=gpu:a100:4
#SBATCH --mem=256G
#SBATCH --time=48:00:00
#SBATCH --output=logs/%x-%j.out
#
# Train a cryoDRGN heterogeneous VAE on a downsampled particle stack, then evaluate volumes along PC1.
#
#   sbatch scripts/slurm_train_vae.sh /scratch/EMPIAR-10076/L17 256 8
#
set -euo pipefail

DATADIR=${1:?usage: slurm_train_vae.sh DATADIR BOX ZDIM}
BOX=${2:-256}
ZDIM=${3:-8}
OUTDIR=${OUTDIR:-$DATADIR/cryodrgn/vae_z${ZDIM}_b${BOX}}
EPOCHS=${EPOCHS:-50}

module purge
module load cuda/11.8
module load cudnn/8.9-cuda11.8
module load anaconda3/2023.09
source activate cryodrgn

export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1,2,3}
export OMP_NUM_THREADS=${SLURM_CPUS_PER_TASK:-16}
# better allocator behaviour for the large decoder batches
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,max_split_size_mb:512

mkdir -p "$OUTDIR" logs

echo "== node: $(hostname)  job: ${SLURM_JOB_ID:-local}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv
python -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())"

PARTICLES=$DATADIR/particles.${BOX}.mrcs
POSES=$DATADIR/poses.pkl
CTF=$DATADIR/ctf.pkl

if [[ ! -f $PARTICLES ]]; then
    echo "downsampling particles to $BOX"
    cryodrgn downsample "$DATADIR/particles.mrcs" -D "$BOX" -o "$PARTICLES" --chunk 50000
fi

# log GPU utilisation every 60 s in the background
nvidia-smi dmon -s um -d 60 > "$OUTDIR/gpu_util.log" &
DMON_PID=$!

cryodrgn train_vae "$PARTICLES" \
    --poses "$POSES" \
    --ctf "$CTF" \
    --zdim "$ZDIM" \
    -n "$EPOCHS" \
    -b 32 \
    --enc-dim 1024 --enc-layers 3 \
    --dec-dim 1024 --dec-layers 3 \
    --multigpu \
    --lazy \
    -o "$OUTDIR" 2>&1 | tee "$OUTDIR/train.log"

kill $DMON_PID || true

LAST=$((EPOCHS - 1))
cryodrgn analyze "$OUTDIR" "$LAST" --Apix 1.6 --pc 2 --ksample 20

# volumes along PC1 on a single GPU
CUDA_VISIBLE_DEVICES=0 cryodrgn eval_vol "$OUTDIR/weights.$LAST.pkl" \
    -c "$OUTDIR/config.yaml" \
    --zfile "$OUTDIR/analyze.$LAST/pc1/z_values.txt" \
    -o "$OUTDIR/analyze.$LAST/pc1_vols" \
    --device 0 \
    --Apix 1.6

echo "done: $OUTDIR"
