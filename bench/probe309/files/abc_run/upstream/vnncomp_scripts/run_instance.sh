#!/bin/bash
# VNN-COMP run script for alpha-beta-CROWN.
# Usage: run_instance.sh v1 <category> <onnx_file> <vnnlib_file> <result_file> <timeout>

TOOL_NAME=alpha-beta-CROWN
VERSION_STRING=v1

# check arguments
if [ "$1" != ${VERSION_STRING} ]; then
    echo "Expected first argument (version string) '$VERSION_STRING', got '$1'"
    exit 1
fi

CATEGORY=$2
ONNX_FILE=$3
VNNLIB_FILE=$4
RESULTS_FILE=$5
TIMEOUT=$6

echo "Running $TOOL_NAME on benchmark instance in category '$CATEGORY' with onnx file '$ONNX_FILE', vnnlib file '$VNNLIB_FILE', results file $RESULTS_FILE, and timeout $TIMEOUT"

TOOL_DIR=$(dirname $(dirname $(realpath $0)))

# Only the first GPU is used; the competition machines have exactly one.
export CUDA_VISIBLE_DEVICES=0
DEVICE=cuda
export OMP_NUM_THREADS=1
export PYTHONPATH=${TOOL_DIR}:${TOOL_DIR}/complete_verifier:${PYTHONPATH}
export PYTHONWARNINGS="ignore"

source ${HOME}/miniconda3/etc/profile.d/conda.sh
conda activate alpha-beta-crown

# Kill any process left over from a previous instance that still holds GPU memory.
nvidia-smi --query-compute-apps=pid --format=csv,noheader | xargs -r kill -9 2> /dev/null
sleep 1

CONFIG_DIR=${TOOL_DIR}/complete_verifier/exp_configs/vnncomp23
case "$CATEGORY" in
    acasxu) CONFIG=${CONFIG_DIR}/acasxu.yaml ;;
    cifar100) CONFIG=${CONFIG_DIR}/cifar100.yaml ;;
    tinyimagenet) CONFIG=${CONFIG_DIR}/tinyimagenet.yaml ;;
    vit) CONFIG=${CONFIG_DIR}/vit.yaml ;;
    *) CONFIG=${CONFIG_DIR}/${CATEGORY}.yaml ;;
esac

if [ ! -f "$CONFIG" ]; then
    echo "No config for category $CATEGORY, using the default."
    CONFIG=${CONFIG_DIR}/default.yaml
fi

# run the tool to produce the results file
python ${TOOL_DIR}/complete_verifier/abcrown.py --config "$CONFIG" \
    --device $DEVICE \
    --onnx_path "$ONNX_FILE" --vnnlib_path "$VNNLIB_FILE" \
    --results_file "$RESULTS_FILE" --timeout "$TIMEOUT"

EXIT_CODE=$?
if [ $EXIT_CODE -ne 0 ]; then
    echo "abcrown.py exited with code $EXIT_CODE"
fi
exit $EXIT_CODE
