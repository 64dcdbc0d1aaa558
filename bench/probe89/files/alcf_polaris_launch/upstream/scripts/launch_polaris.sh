#!/bin/bash -l
#PBS -l select=8:system=polaris
#PBS -l place=scatter
#PBS -l walltime=02:00:00
#PBS -l filesystems=home:eagle
#PBS -q prod
#PBS -A datascience
#PBS -N l2hmc-su3
#
# l2hmc-qcd on ALCF Polaris: one MPI rank per A100, 4 per node, launched with mpiexec (Cray MPICH).
# Usage: qsub -v CONFIG=su3_16x16x16x16 scripts/launch_polaris.sh

cd "${PBS_O_WORKDIR}" || exit 1

module load conda/2023-10-04
conda activate base
source ./venvs/polaris/2023-10-04/bin/activate

CONFIG=${CONFIG:-su3}
BACKEND=${BACKEND:-DDP}

NHOSTS=$(wc -l < "${PBS_NODEFILE}")
NGPU_PER_HOST=$(nvidia-smi -L | wc -l)
NGPUS=$(( NHOSTS * NGPU_PER_HOST ))
echo "hosts=${NHOSTS} gpus/host=${NGPU_PER_HOST} ranks=${NGPUS}"

# ---- affinity wrapper: each local rank sees exactly one GPU (reverse order matches the NUMA layout)
AFFINITY=$(mktemp -p "${PBS_O_WORKDIR}" set_affinity_gpu.XXXX.sh)
cat > "${AFFINITY}" <<'EOS'
#!/bin/bash
num_gpus=4
gpu=$((num_gpus - 1 - PMI_LOCAL_RANK % num_gpus))
export CUDA_VISIBLE_DEVICES=$gpu
echo "RANK=${PMI_RANK} LOCAL_RANK=${PMI_LOCAL_RANK} gpu=${gpu}"
exec "$@"
EOS
chmod +x "${AFFINITY}"

# ---- communication settings
export MPICH_GPU_SUPPORT_ENABLED=1
export NCCL_NET_GDR_LEVEL=PHB
export NCCL_COLLNET_ENABLE=1
export NCCL_DEBUG=WARN
export FI_CXI_DISABLE_HOST_REGISTER=1
export FI_MR_CACHE_MONITOR=userfaultfd
export OMP_NUM_THREADS=8
export PYTHONUNBUFFERED=1

# the TCP store lives on the head node
export MASTER_ADDR=$(head -n 1 "${PBS_NODEFILE}")
export MASTER_PORT=2345

LOGFILE="logs/${CONFIG}-$(date +%Y-%m-%d-%H%M%S).log"
mkdir -p logs

mpiexec --verbose --envall \
    -n "${NGPUS}" --ppn "${NGPU_PER_HOST}" --hostfile "${PBS_NODEFILE}" \
    --cpu-bind depth -d 16 \
    "${AFFINITY}" \
    python3 -m l2hmc.main \
        mode=train \
        framework=pytorch \
        backend="${BACKEND}" \
        precision=float64 \
        dynamics.nchains=1024 \
        "+experiment=${CONFIG}" \
    2>&1 | tee "${LOGFILE}"

rm -f "${AFFINITY}"
