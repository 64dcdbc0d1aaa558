#!/bin/bash
# Copyright 3D-Speaker (https://github.com/alibaba-damo-academy/3D-Speaker). All Rights Reserved.
# Licensed under the Apache License, Version 2.0 (http://www.apache.org/licenses/LICENSE-2.0)

set -e
. ./path.sh || exit 1

stage=1
stop_stage=5

data=data
exp=exp
exp_name=cam++
gpus="0 1 2 3"

# multi-node training (optional). Leave nnodes=1 for a single machine.
nnodes=1
node_rank=0
master_addr=127.0.0.1
master_port=29500

. utils/parse_options.sh || exit 1

exp_dir=$exp/$exp_name

# pick the least loaded gpus automatically when gpus="auto"
if [ "$gpus" == "auto" ]; then
  gpus=$(nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits \
           | sort -t',' -k2 -n | head -n 4 | awk -F',' '{print $1}' | tr '\n' ' ')
  echo "Using gpus: $gpus"
fi

if [ ${stage} -le 1 ] && [ ${stop_stage} -ge 1 ]; then
  # In this stage we prepare the raw datasets, including 3D-Speaker and MUSAN datasets.
  echo "Stage1: Preparing 3D-Speaker dataset..."
  ./local/prepare_data.sh --stage 1 --stop_stage 4 --data ${data}
fi

if [ ${stage} -le 2 ] && [ ${stop_stage} -ge 2 ]; then
  # In this stage we prepare the data index files for training.
  echo "Stage2: Preparing training data index files..."
  python local/prepare_data_csv.py --data_dir $data/train
  python local/prepare_data_csv.py --data_dir $data/test
fi

if [ ${stage} -le 3 ] && [ ${stop_stage} -ge 3 ]; then
  # Train the speaker embedding model.
  echo "Stage3: Training the speaker model..."
  num_gpu=$(echo $gpus | awk -F ' ' '{print NF}')
  if [ $nnodes -gt 1 ]; then
    export NCCL_SOCKET_IFNAME=eth0
    export NCCL_IB_DISABLE=0
    export NCCL_IB_HCA=mlx5
  fi
  torchrun --nnodes=$nnodes --node_rank=$node_rank --master_addr=$master_addr \
           --master_port=$master_port --nproc_per_node=$num_gpu \
           speakerlab/bin/train.py --config conf/cam++.yaml --gpu $gpus \
           --data $data/train/train.csv --noise $data/musan/wav.scp \
           --reverb $data/rirs/wav.scp --exp_dir $exp_dir
fi

if [ ${stage} -le 4 ] && [ ${stop_stage} -ge 4 ]; then
  # Extract embeddings of test datasets.
  echo "Stage4: Extracting speaker embeddings..."
  nj=8
  torchrun --nproc_per_node=$nj speakerlab/bin/extract.py --exp_dir $exp_dir \
           --data $data/test/wav.scp --use_gpu --gpu $gpus
fi

if [ ${stage} -le 5 ] && [ ${stop_stage} -ge 5 ]; then
  # Output score metrics.
  echo "Stage5: Computing score metrics..."
  trials="$data/trials/trials_cross_device $data/trials/trials_cross_distance $data/trials/trials_cross_dialect"
  python speakerlab/bin/compute_score_metrics.py --enrol_data $exp_dir/embeddings --test_data $exp_dir/embeddings \
                                                 --scores_dir $exp_dir/scores --trials $trials
fi

if [ ${stage} -le 6 ] && [ ${stop_stage} -ge 6 ]; then
  # Export the averaged model and run a quick single-gpu sanity check.
  echo "Stage6: Exporting the model..."
  first_gpu=$(echo $gpus | awk '{print $1}')
  CUDA_VISIBLE_DEVICES=$first_gpu python speakerlab/bin/export_model.py \
           --exp_dir $exp_dir --config conf/cam++.yaml \
           --out $exp_dir/models/campplus_final.pt
fi
