#!/usr/bin/env bash
# Train, freeze, test and compress a DPA-2 water model with the PyTorch backend on all local GPUs,
# then run a short LAMMPS NPT check with the frozen model.
#
#   bash run_pt.sh            # uses every GPU on the node
#   GPUS=0,1 bash run_pt.sh   # restrict to two GPUs
set -eo pipefail

cd "$(dirname "$0")"

export CUDA_VISIBLE_DEVICES=${GPUS:-$(nvidia-smi --query-gpu=index --format=csv,noheader | paste -sd, -)}
NGPUS=$(echo "${CUDA_VISIBLE_DEVICES}" | tr ',' '\n' | wc -l)
echo "Training on ${NGPUS} GPU(s): ${CUDA_VISIBLE_DEVICES}"

# DeePMD-kit runtime knobs
export DP_INTERFACE_PREC=high
export NUM_WORKERS=4
export OMP_NUM_THREADS=4
export DP_INTRA_OP_PARALLELISM_THREADS=4
export DP_INTER_OP_PARALLELISM_THREADS=2
# make CUDA errors point at the failing kernel while debugging
export CUDA_LAUNCH_BLOCKING=${DEBUG:-0}
export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

INPUT=input_torch.json
CKPT=model.ckpt

if [[ "${NGPUS}" -gt 1 ]]; then
    torchrun --standalone --nnodes=1 --nproc_per_node="${NGPUS}" --no-python \
        dp --pt train "${INPUT}" --skip-neighbor-stat
else
    dp --pt train "${INPUT}" --skip-neighbor-stat
fi

# Freeze the latest checkpoint into a TorchScript model
dp --pt freeze -c . -o frozen_model.pth

# Evaluate on the held-out systems
dp --pt test -m frozen_model.pth -s ../data/data_3 -n 100 -d results

# Compress (tabulated embedding net, uses the custom tabulate op)
dp --pt compress -i frozen_model.pth -o compressed_model.pth -t "${INPUT}" --step 0.01

# Quick LAMMPS check with the compressed model on GPU 0
cat > in.npt.lammps <<'LMP'
units           metal
boundary        p p p
atom_style      atomic
neighbor        2.0 bin
neigh_modify    every 10 delay 0 check no
read_data       water.lmp
mass            1 16
mass            2 2
pair_style      deepmd compressed_model.pth
pair_coeff      * *
velocity        all create 330.0 23456789
fix             1 all npt temp 330.0 330.0 0.5 iso 1.0 1.0 2.0
timestep        0.0005
thermo_style    custom step pe ke etotal temp press vol
thermo          100
run             2000
LMP

CUDA_VISIBLE_DEVICES=0 lmp -in in.npt.lammps -log log.npt.lammps
echo "Done. See lcurve.out, results.e.out and log.npt.lammps"
