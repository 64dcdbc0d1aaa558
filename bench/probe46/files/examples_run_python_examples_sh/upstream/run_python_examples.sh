#!/bin/bash
#
# This script runs through the code in each of the python examples.
# The purpose is just as an integration test, not to actually train models in any meaningful way.
# For that reason, most of these set epochs = 1 and --dry-run.
#
# Optionally specify a comma separated list of examples to run. Can be run as:
# * To run all examples:
#   ./run_python_examples.sh
# * To run few specific examples:
#   ./run_python_examples.sh "dcgan,fast_neural_style"
#
# To test examples on CUDA accelerator, run as:
#   USE_CUDA=True ./run_python_examples.sh
#
# Script requires uv to be installed. When executed, script will install prerequisites from
# `requirements.txt` for each example. If ran within activated virtual environment (uv venv,
# python -m venv, conda) this might reinstall some of the packages. To change pip installation
# index or to pass additional pip install options, run as:
#   PIP_INSTALL_ARGS="--pre -f https://download.pytorch.org/whl/nightly/cu118/torch_nightly.html" \
#     ./run_python_examples.sh
#
# To force script to create virtual environment for each example, run as:
#   VIRTUAL_ENV=".venv" ./run_python_examples.sh
# Script will remove environments it creates in a teardown step after execution of each example.

BASE_DIR="$(pwd)/$(dirname $0)"
source $BASE_DIR/utils.sh

USE_CUDA=${USE_CUDA:-False}
case $USE_CUDA in
  "True")
    echo "using cuda"
    CUDA=1
    CUDA_FLAG="--cuda"
    ;;
  "False")
    echo "not using cuda"
    CUDA=0
    CUDA_FLAG=""
    ;;
  "")
    exit 1;
    ;;
esac

# Cross-check the flag against what torch actually sees, so a misconfigured runner fails early.
TORCH_SEES_CUDA=$(python -c "import torch; print(torch.cuda.is_available())")
if [ "$CUDA" -eq 1 ] && [ "$TORCH_SEES_CUDA" != "True" ]; then
  echo "USE_CUDA=True but torch.cuda.is_available() is $TORCH_SEES_CUDA"
  exit 1
fi
if [ "$CUDA" -eq 1 ]; then
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0,1}
  export NCCL_DEBUG=WARN
fi

function dcgan() {
  uv run main.py --dataset fake $CUDA_FLAG --mps --dry-run || error "dcgan failed"
}

function fast_neural_style() {
  if [ ! -d "saved_models" ]; then
    echo "downloading saved models for fast neural style"
    uv run download_saved_models.py
  fi
  test -d "saved_models" || { error "saved models not found"; return; }

  echo "running fast neural style model"
  uv run neural_style/neural_style.py eval --content-image images/content-images/amber.jpg --model saved_models/candy.pth --output-image images/output-images/amber-candy.jpg --cuda $CUDA --mps || error "neural_style.py failed"
}

function imagenet() {
  if [[ ! -d "sample/val" || ! -d "sample/train" ]]; then
    mkdir -p sample/val/n
    mkdir -p sample/train/n
    curl -O "https://upload.wikimedia.org/wikipedia/commons/5/5a/Socks-clinton.jpg" || { error "couldn't download sample image for imagenet"; return; }
    mv Socks-clinton.jpg sample/train/n
    cp sample/train/n/* sample/val/n/
  fi
  uv run main.py --epochs 1 sample/ || error "imagenet example failed"
  if [ "$CUDA" -eq 1 ]; then
    uv run main.py --epochs 1 -a resnet18 --dist-url 'tcp://127.0.0.1:23456' --dist-backend 'nccl' \
      --multiprocessing-distributed --world-size 1 --rank 0 sample/ || error "imagenet multi-gpu example failed"
  fi
}

function mnist_hogwild() {
  uv run main.py --epochs 1 --dry-run $CUDA_FLAG --mps || error "mnist hogwild failed"
}

function distributed() {
  if [ "$CUDA" -eq 1 ]; then
    NGPU=$(nvidia-smi --list-gpus | wc -l)
    pushd ddp-tutorial-series
    uv run torchrun --standalone --nproc_per_node=$NGPU multigpu_torchrun.py 5 2 || error "ddp tutorial series failed"
    popd
  fi
}

function word_language_model() {
  uv run main.py --epochs 1 --dry-run $CUDA_FLAG --mps || error "word_language_model failed"
  for model in "RNN_TANH" "RNN_RELU" "GRU" "Transformer"; do
    uv run main.py --model $model --epochs 1 --dry-run $CUDA_FLAG --mps || error "word_language_model failed"
  done
}

function clean() {
  cd $BASE_DIR
  echo "running clean to remove cruft"
  rm -rf dcgan/fake_samples_epoch_000.png \
    dcgan/netD_epoch_0.pth \
    dcgan/netG_epoch_0.pth \
    dcgan/real_samples.png \
    fast_neural_style/saved_models.zip \
    fast_neural_style/saved_models/ \
    imagenet/checkpoint.pth.tar \
    imagenet/lsun/ \
    imagenet/model_best.pth.tar \
    imagenet/sample/ \
    word_language_model/model.pt || error "couldn't clean up some files"

  git checkout fast_neural_style/images/output-images/amber-candy.jpg || error "couldn't clean up fast neural style image"
}

function run_all() {
  run dcgan
  run distributed
  run fast_neural_style
  run imagenet
  run mnist_hogwild
  run word_language_model
}

# by default, run all examples
if [ "" == "$EXAMPLES" ]; then
  run_all
else
  for i in $(echo $EXAMPLES | sed "s/,/ /g")
  do
    echo "Starting $i"
    run $i
    echo "Finished $i, status $?"
  done
fi

if [ "" == "$ERRORS" ]; then
  echo "Completed successfully with status $?"
else
  echo "Some python examples failed:"
  printf "$ERRORS\n"
  #Exit with error (0-255) in case of failure in one of the tests.
  exit 1
fi
