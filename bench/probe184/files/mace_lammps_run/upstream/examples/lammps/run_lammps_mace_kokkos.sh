#!/bin/bash
# Run LAMMPS with the MACE pair style on 4 GPUs of one node using KOKKOS/CUDA.
#
# LAMMPS must be built against libtorch with -DPKG_ML-MACE=ON -DPKG_KOKKOS=ON
# -DKokkos_ENABLE_CUDA=ON -DKokkos_ARCH_AMPERE80=ON (see docs/lammps_build.md).
#
# usage: bash run_lammps_mace_kokkos.sh in.water_mace 4
set -e

INPUT=${1:-in.water_mace}
NGPU=${2:-4}

module load cuda/12.1
module load openmpi/4.1.5-cuda

export LAMMPS_ROOT=${LAMMPS_ROOT:-$HOME/software/lammps-mace/build-kokkos-cuda}
export LIBTORCH_ROOT=${LIBTORCH_ROOT:-$HOME/software/libtorch-2.2.0-cu121}
export LD_LIBRARY_PATH=${LIBTORCH_ROOT}/lib:${LD_LIBRARY_PATH}
export CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((NGPU - 1)))
export OMP_NUM_THREADS=1
# the MACE pair style creates its own CUDA context per rank; avoid the MPS daemon here
export CUDA_MPS_PIPE_DIRECTORY=/dev/null

# export the trained model to TorchScript first (float64 for stable NVE)
if [ ! -f MACE_water.model-lammps.pt ]; then
    python -m mace.cli.create_lammps_model MACE_water.model --dtype=float64
fi

echo "Running ${INPUT} on ${NGPU} GPU(s): ${CUDA_VISIBLE_DEVICES}"
nvidia-smi -L

mpirun -np ${NGPU} --bind-to core \
    ${LAMMPS_ROOT}/lmp \
    -k on g ${NGPU} -sf kk -pk kokkos newton on neigh half \
    -in ${INPUT} \
    -var model MACE_water.model-lammps.pt \
    -log log.${INPUT}.gpu${NGPU}

echo "done: log.${INPUT}.gpu${NGPU}"
