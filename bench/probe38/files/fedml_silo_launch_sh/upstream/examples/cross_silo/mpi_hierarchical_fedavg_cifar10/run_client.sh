#!/usr/bin/env bash
#
# Launch one hierarchical cross-silo client (= one silo) of the FedAvg / CIFAR-10 example.
# Inside the silo, local training is data-parallel over all GPUs of this node
# (torch.distributed, NCCL); between silos, FedML talks MQTT+S3 to the server.
#
#   bash run_client.sh <silo_rank> [run_id]
#
set -euo pipefail

RANK=${1:?"usage: run_client.sh <silo_rank> [run_id]"}
RUN_ID=${2:-"fedml_hier_cifar10_$(date +%s)"}
CONFIG=config/fedml_config.yaml

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${SCRIPT_DIR}"

# ---------------------------------------------------------------- environment
if [[ -f "${HOME}/miniconda3/etc/profile.d/conda.sh" ]]; then
  # shellcheck disable=SC1091
  source "${HOME}/miniconda3/etc/profile.d/conda.sh"
  conda activate fedml
fi

python3 -c "import fedml, torch; print('fedml', fedml.__version__, 'torch', torch.__version__)"

# ---------------------------------------------------------------- devices
NUM_GPUS=$(nvidia-smi --list-gpus | wc -l)
if [[ "${NUM_GPUS}" -lt 1 ]]; then
  echo "no GPU found on $(hostname); refusing to start a GPU silo" >&2
  exit 1
fi
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NUM_GPUS - 1)))}
echo "silo ${RANK}: using GPUs ${CUDA_VISIBLE_DEVICES}"

# ---------------------------------------------------------------- intra-silo comms
export NCCL_DEBUG=${NCCL_DEBUG:-WARN}
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-eth0}
export NCCL_IB_DISABLE=${NCCL_IB_DISABLE:-1}
export NCCL_ASYNC_ERROR_HANDLING=1
export OMP_NUM_THREADS=4

MASTER_ADDR=${MASTER_ADDR:-127.0.0.1}
MASTER_PORT=${MASTER_PORT:-$(python3 - <<'PY'
import socket
s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1]); s.close()
PY
)}

# ---------------------------------------------------------------- logging
LOG_DIR=./log/${RUN_ID}
mkdir -p "${LOG_DIR}"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv > "${LOG_DIR}/gpus_silo${RANK}.csv"

# ---------------------------------------------------------------- launch
python3 -m torch.distributed.run \
  --nproc_per_node="${NUM_GPUS}" \
  --nnodes=1 \
  --node_rank=0 \
  --master_addr="${MASTER_ADDR}" \
  --master_port="${MASTER_PORT}" \
  torch_client.py \
    --cf "${CONFIG}" \
    --rank "${RANK}" \
    --role client \
    --run_id "${RUN_ID}" \
  2>&1 | tee "${LOG_DIR}/client_${RANK}.log"

echo "silo ${RANK} finished; logs in ${LOG_DIR}"
