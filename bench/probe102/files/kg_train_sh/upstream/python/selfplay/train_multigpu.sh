#!/bin/bash -eu
set -o pipefail
{
# Runs training in $BASEDIR/train/$TRAININGNAME on every GPU of this machine using DDP,
# then exports a TorchScript model for the libtorch engine.
# Should be run once per persistent training session.
# Should be run from the python directory, e.g. (cd python; ./selfplay/train_multigpu.sh ...)

if [[ $# -lt 5 ]]
then
    echo "Usage: $0 BASEDIR TRAININGNAME MODELKIND BATCHSIZE EXPORTMODE OTHERARGS"
    echo "BASEDIR containing selfplay data and models and related directories"
    echo "TRAININGNAME name to prefix models with, specific to this training daemon"
    echo "MODELKIND what size model to train, like b10c128, see ../modelconfigs.py"
    echo "BATCHSIZE number of samples to concat together per batch for training, PER GPU"
    echo "EXPORTMODE 'main': train and export for selfplay. 'extra': train and export extra non-selfplay model. 'trainonly': train without export"
    exit 0
fi
BASEDIR="$1"
shift
TRAININGNAME="$1"
shift
MODELKIND="$1"
shift
BATCHSIZE="$1"
shift
EXPORTMODE="$1"
shift

GITROOTDIR="$(git rev-parse --show-toplevel)"

#------------------------------------------------------------------------------
# GPU setup. Leave GPU 7 free for the selfplay engine running next to us.
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0,1,2,3,4,5,6}"
export NCCL_DEBUG=WARN
# The RTX boxes hang in NCCL all-reduce without this (no NVLink, broken P2P over the PLX switch)
export NCCL_P2P_DISABLE=1
export OMP_NUM_THREADS=4

NUM_GPUS=$(nvidia-smi -L | wc -l)
if [[ -n "${CUDA_VISIBLE_DEVICES}" ]]
then
    NUM_GPUS=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
fi
# train.py indexes devices relative to the visible set
MULTI_GPUS=$(seq -s, 0 $((NUM_GPUS - 1)))
echo "Training on $NUM_GPUS GPUs: $MULTI_GPUS"
nvidia-smi --query-gpu=index,name,memory.used,memory.total --format=csv

if [ "$EXPORTMODE" == "main" ]
then
    EXPORT_SUBDIR=tfsavedmodels_toexport
    EXTRAFLAG=""
elif [ "$EXPORTMODE" == "extra" ]
then
    EXPORT_SUBDIR=tfsavedmodels_toexport_extra
    EXTRAFLAG=""
elif [ "$EXPORTMODE" == "trainonly" ]
then
    EXPORT_SUBDIR=tfsavedmodels_toexport_extra
    EXTRAFLAG="-no-export"
else
    echo "EXPORTMODE was not 'main' or 'extra' or 'trainonly', run with no arguments for usage"
    exit 1
fi

set -x

mkdir -p "$BASEDIR"/train/"$TRAININGNAME"
git show --no-patch --no-color > "$BASEDIR"/train/"$TRAININGNAME"/version.txt
git diff --no-color > "$BASEDIR"/train/"$TRAININGNAME"/diff.txt
git diff --staged --no-color > "$BASEDIR"/train/"$TRAININGNAME"/diffstaged.txt

# For archival and logging purposes - you can look back and see exactly the python code on a particular date
DATE_FOR_FILENAME=$(date "+%Y%m%d-%H%M%S")
DATED_ARCHIVE="$BASEDIR"/scripts/dated/"$DATE_FOR_FILENAME"
mkdir -p "$DATED_ARCHIVE"
cp "$GITROOTDIR"/python/*.py "$GITROOTDIR"/python/selfplay/train_multigpu.sh "$DATED_ARCHIVE"

time python3 ./train.py \
     -traindir "$BASEDIR"/train/"$TRAININGNAME" \
     -datadir "$BASEDIR"/shuffleddata/current/ \
     -exportdir "$BASEDIR"/"$EXPORT_SUBDIR" \
     -exportprefix "$TRAININGNAME" \
     -pos-len 19 \
     -batch-size "$BATCHSIZE" \
     -model-kind "$MODELKIND" \
     -multi-gpus "$MULTI_GPUS" \
     -use-fp16 \
     $EXTRAFLAG \
     "$@" \
     2>&1 | tee -a "$BASEDIR"/train/"$TRAININGNAME"/stdout.txt

if [ "$EXPORTMODE" != "trainonly" ]
then
    LATEST_CKPT="$BASEDIR"/train/"$TRAININGNAME"/checkpoint.ckpt
    python3 ./export_torchscript.py \
        -checkpoint "$LATEST_CKPT" \
        -export-dir "$BASEDIR"/torchscript/"$TRAININGNAME" \
        -model-name "$TRAININGNAME"-"$DATE_FOR_FILENAME" \
        -use-swa \
        -dtype auto \
        -gpu 0 \
        2>&1 | tee -a "$BASEDIR"/train/"$TRAININGNAME"/export.txt
fi

exit 0
}
