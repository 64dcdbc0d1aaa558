#!/bin/bash

# SLURM submission helper
# Usage:
#   ./scripts/sbatch_run.sh $PARTITION $JOB_NAME $PY_FILE \
#       --params $PARAMS --fp16 --ddp --cudnn [--gpus 4 --cpus_per_gpu 8 --mem 32]

PARTITION=$1
JOB_NAME=$2
PY_FILE=$3
shift 3

GPUS=1
CPUS_PER_GPU=8
MEM_PER_CPU=5
QOS=normal
TIME=0
PY_ARGS=""
DDP=0

while [[ $# -gt 0 ]]; do
    case $1 in
        --gpus) GPUS=$2; shift 2 ;;
        --cpus_per_gpu) CPUS_PER_GPU=$2; shift 2 ;;
        --mem) MEM_PER_CPU=$2; shift 2 ;;
        --qos) QOS=$2; shift 2 ;;
        --time) TIME=$2; shift 2 ;;
        --ddp) DDP=1; PY_ARGS="$PY_ARGS --ddp"; shift ;;
        *) PY_ARGS="$PY_ARGS $1"; shift ;;
    esac
done

CPUS=$((GPUS * CPUS_PER_GPU))
LOG_DIR=./slurm_logs
mkdir -p $LOG_DIR

if [ $DDP -eq 1 ]; then
    PORT=$((29501 + RANDOM % 1000))
    CMD="python -m torch.distributed.launch --nproc_per_node=$GPUS --master_port=$PORT $PY_FILE $PY_ARGS"
else
    CMD="python $PY_FILE $PY_ARGS"
fi

cat > ./${JOB_NAME}.slrm <<EOT
#!/bin/bash
#SBATCH --job-name=${JOB_NAME}
#SBATCH --partition=${PARTITION}
#SBATCH --gres=gpu:${GPUS}
#SBATCH --cpus-per-task=${CPUS}
#SBATCH --mem-per-cpu=${MEM_PER_CPU}G
#SBATCH --qos=${QOS}
#SBATCH --time=${TIME}
#SBATCH --output=${LOG_DIR}/${JOB_NAME}-%j.log
#SBATCH --open-mode=append
#SBATCH --signal=B:USR1@120
#SBATCH --requeue

# requeue the job on preemption so that training resumes from the last ckp
trap 'scontrol requeue \$SLURM_JOB_ID' USR1

module load cuda/11.3
echo "Running on \$(hostname), GPUs: \$CUDA_VISIBLE_DEVICES"
nvidia-smi

${CMD} &
wait
EOT

sbatch ./${JOB_NAME}.slrm
rm ./${JOB_NAME}.slrm
