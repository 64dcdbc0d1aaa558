#!/usr/bin/env bash
set -e;

# Directory where the run.sh script is placed.
SDIR="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")";
[ "$(pwd)/src" != "$SDIR" ] &&
echo "Please, run this script from the experiment top directory!" >&2 &&
exit 1;
[ ! -f "$(pwd)/src/parse_options.inc.sh" ] &&
echo "Missing $(pwd)/src/parse_options.inc.sh file!" >&2 && exit 1;

batch_size=10;
checkpoint="ckpt.lowest-valid-cer*";
early_stop_epochs=20;
gpu=1;
learning_rate=0.0003;
num_rolling_checkpoints=3;
partition=aachen;
use_distortions=true;
cnn_batchnorm="true true true true true";
cnn_dropout="0 0 0.2 0.2 0.2";
cnn_num_features="16 32 48 64 80";
rnn_dropout=0.5;
rnn_units=256;
rnn_layers=5;
lin_dropout=0.5;
help_message="
Usage: ${0##*/} [options]

Options:
  --batch_size          : (type = integer, default = $batch_size)
                          Batch size for training.
  --checkpoint          : (type = string, default = $checkpoint)
                          Suffix of the checkpoint to use, can be a glob pattern.
  --early_stop_epochs   : (type = integer, default = $early_stop_epochs)
                          If n>0, stop training after this number of epochs
                          without a significant improvement in the validation CER.
  --gpu                 : (type = integer, default = $gpu)
                          Select which GPU to use, index starts from 1.
                          Set to 0 for CPU.
  --learning_rate       : (type = float, default = $learning_rate)
                          Learning rate from RMSProp.
  --partition           : (type = string, default = $partition)
                          Select the \"--partition\" to use (\"aachen\" or \"kws\").
  --use_distortions     : (type = boolean, default = $use_distortions)
                          If true, augment the training set using random distortions.
";
source "$(pwd)/src/parse_options.inc.sh" || exit 1;
[ $# -ne 0 ] && echo "$help_message" >&2 && exit 1;

# Pin the job to one physical card; PyLaia then sees it as --gpu 1.
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-$((gpu - 1))}";
[ "$gpu" -gt 0 ] && gpu=1;

# Make sure the card is free before we start a multi-day job.
if [ "$gpu" -gt 0 ]; then
  nvidia-smi -i "$CUDA_VISIBLE_DEVICES" --query-gpu=index,name,memory.used,memory.total --format=csv,noheader >&2 ||
  { echo "ERROR: nvidia-smi failed, is the NVIDIA driver loaded?" >&2; exit 1; }
fi;

for f in data/lang/puigcerver/lines/char/"$partition"/{tr,va}.txt \
         train/"$partition"/syms.txt; do
  [ ! -s "$f" ] && echo "ERROR: File \"$f\" does not exist!" >&2 && exit 1;
done;

# Create model
[ -f "train/$partition/model" ] || \
pylaia-htr-create-model \
  1 "train/$partition/syms.txt" \
  --cnn_num_features $cnn_num_features \
  --cnn_kernel_size 3 3 3 3 3 \
  --cnn_stride 1 1 1 1 1 \
  --cnn_dilation 1 1 1 1 1 \
  --cnn_activations LeakyReLU LeakyReLU LeakyReLU LeakyReLU LeakyReLU \
  --cnn_poolsize 2 2 2 0 0 \
  --cnn_dropout $cnn_dropout \
  --cnn_batchnorm $cnn_batchnorm \
  --rnn_units "$rnn_units" \
  --rnn_layers "$rnn_layers" \
  --rnn_dropout "$rnn_dropout" \
  --lin_dropout "$lin_dropout" \
  --use_masks true \
  --fixed_input_height 128 \
  --logging_file "train/$partition/log" \
  --logging_also_to_stderr INFO \
  --train_path "train/$partition";

# Train
pylaia-htr-train-ctc \
  "train/$partition/syms.txt" \
  data/imgs/lines_h128 \
  data/lang/puigcerver/lines/char/"$partition"/{tr,va}.txt \
  --gpu "$gpu" \
  --batch_size "$batch_size" \
  --max_nondecreasing_epochs "$early_stop_epochs" \
  --learning_rate "$learning_rate" \
  --checkpoint "$checkpoint" \
  --num_rolling_checkpoints "$num_rolling_checkpoints" \
  --use_distortions "$use_distortions" \
  --show_progress_bar true \
  --logging_file "train/$partition/log" \
  --logging_also_to_stderr INFO \
  --train_path "train/$partition";
