#!/usr/bin/env bash
# Run one CIFAR-10 job with the NVFlare simulator.
#
#   ./run_simulator.sh cifar10_fedavg 0.1 8 8
#
# args: job name, Dirichlet alpha, number of clients, number of threads.
# All clients share the GPUs listed in GPU_IDS; with "-gpu 0,1" the simulator
# starts one client process group per GPU and pins it through CUDA_VISIBLE_DEVICES.

job=$1
alpha=$2
n_clients=$3
threads=${4:-$n_clients}
GPU_IDS=${GPU_IDS:-"0"}

# specify output workdir
RESULT_ROOT=/tmp/nvflare/sim_cifar10
out_workspace=${RESULT_ROOT}/${job}_alpha${alpha}

# run FL simulator
export PYTHONPATH=${PWD}/..
export CUDA_DEVICE_ORDER=PCI_BUS_ID
echo "Running ${job} using FL simulator with ${threads} threads and ${n_clients} clients on GPU(s) ${GPU_IDS}. Save results to ${out_workspace}"
python3 -u -m nvflare.private.fed.app.simulator.simulator "jobs/${job}" \
  --workspace "${out_workspace}" \
  --threads "${threads}" \
  --n_clients "${n_clients}" \
  --gpu "${GPU_IDS}"

# collect tensorboard events for the plotting script
mkdir -p ./results
cp -r "${out_workspace}/simulate_job/app_site-"*/events.* ./results/ 2>/dev/null || true
