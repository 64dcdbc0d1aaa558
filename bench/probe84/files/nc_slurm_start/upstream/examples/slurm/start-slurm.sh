#!/bin/bash
# Copyright (c) 2024, NVIDIA CORPORATION.  All rights reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

#SBATCH --job-name=curator-fuzzy-dedup
#SBATCH --nodes=4
#SBATCH --exclusive
#SBATCH --time=04:00:00
#SBATCH --gpus-per-node=8
#SBATCH --ntasks-per-node=1
#SBATCH --cpus-per-task=96
#SBATCH --output=logs/%x_%j.out

# This script can be used for running both CPU and GPU modules of NeMo Curator.
# It starts one Dask scheduler on the first node and one worker process per node,
# then runs the user script on the scheduler node through the container entrypoint.

# =================================================================
# Begin easy customization
# =================================================================

# Base directory for all SLURM job logs and files
# Does not affect directories referenced in your script
export BASE_JOB_DIR=`pwd`/nemo-curator-jobs
export JOB_DIR=$BASE_JOB_DIR/$SLURM_JOB_ID

# Directory for Dask cluster logs
export LOGDIR=$JOB_DIR/logs
# Directory for Dask cluster profiles
export PROFILESDIR=$JOB_DIR/profiles
# Scheduler file used by every worker and the client to find the scheduler
export SCHEDULER_FILE=$LOGDIR/scheduler.json
# Main script to run
export SCRIPT_PATH=/nemo-curator/examples/fuzzy_deduplication.py
export SCRIPT_COMMAND="python $SCRIPT_PATH \
    --scheduler-file $SCHEDULER_FILE \
    --dataset-dir /data/common-crawl/jsonl \
    --cache-dir /data/cache/fuzzy \
    --device gpu"

# Container parameters
export CONTAINER_IMAGE=nvcr.io/nvidia/nemo:24.12
# Make sure to mount the directories your script references
export BASE_DIR=`pwd`
export MOUNTS="${BASE_DIR}:${BASE_DIR},/data:/data"
# Below must be path to entrypoint script on your system
export CONTAINER_ENTRYPOINT=$BASE_DIR/examples/slurm/container-entrypoint.sh

# Network interface specific to the cluster being used
export INTERFACE=ibp12s0
export PROTOCOL=ucx

# CPU related variables
# 0 means no memory limit
export CPU_WORKER_MEMORY_LIMIT=0

# GPU related variables
export RAPIDS_NO_INITIALIZE="1"
export CUDF_SPILL="1"
export RMM_SCHEDULER_POOL_SIZE="1GB"
export RMM_WORKER_POOL_SIZE="72GiB"
export LIBCUDF_CUFILE_POLICY=OFF
export DEVICE=gpu

# =================================================================
# End easy customization
# =================================================================

mkdir -p $LOGDIR
mkdir -p $PROFILESDIR

# Start the container
srun \
    --container-mounts=${MOUNTS} \
    --container-image=${CONTAINER_IMAGE} \
    ${CONTAINER_ENTRYPOINT}
