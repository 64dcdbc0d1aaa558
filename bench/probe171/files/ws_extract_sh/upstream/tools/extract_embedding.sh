#!/bin/bash

# Copyright (c) 2022 Chengdong Liang (liangchengdong@mail.nwpu.edu.cn)
#               2022 Hongji Wang (jijijiang77@gmail.com)
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

exp_dir=''
model_path=''
data_type='shard'  # shard/raw/feat
data_list=''  # shard.list/raw.list/feat.list
wavs_num=
store_dir=''
batch_size=1
num_workers=1
nj=4
reverb_data=data/rirs/lmdb
noise_data=data/musan/lmdb
aug_prob=0.0
gpus="[0,1]"

. tools/parse_options.sh
set -e

embed_dir=${exp_dir}/embeddings/${store_dir}
log_dir=${embed_dir}/log
[ ! -d ${log_dir} ] && mkdir -p ${log_dir}

# split the data_list file into sub_file, then we can use multi-gpus to
# extract embeddings
data_num=$(wc -l ${data_list} | awk '{print $1}')
subfile_num=$(($data_num / $nj + 1))
split -l ${subfile_num} -d -a 3 ${data_list} ${log_dir}/split_
num_gpus=$(echo $gpus | awk -F ',' '{print NF}')
echo "$0: extracting with $nj jobs on $num_gpus device(s)"

# fall back to cpu extraction on nodes without a driver (e.g. the login node)
use_gpu=True
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "$0: nvidia-smi not found, extracting on cpu"
  use_gpu=False
fi

# gpus is given as a python-style list, e.g. "[0,1]"
gpu_list=($(echo $gpus | tr -d '[]' | tr ',' ' '))

for suffix in $(seq 0 $(($nj - 1))); do
  idx=$(($suffix % $num_gpus))
  suffix=$(printf '%03d' $suffix)
  data_list_subfile=${log_dir}/split_${suffix}
  embed_ark=${embed_dir}/xvector_${suffix}.ark
  CUDA_VISIBLE_DEVICES=${gpu_list[$idx]} python wespeaker/bin/extract.py \
    --config ${exp_dir}/config.yaml \
    --model_path ${model_path} \
    --data_type ${data_type} \
    --data_list ${data_list_subfile} \
    --embed_ark ${embed_ark} \
    --batch-size ${batch_size} \
    --num-workers ${num_workers} \
    --use_gpu ${use_gpu} \
    --reverb_data ${reverb_data} \
    --noise_data ${noise_data} \
    --aug_prob ${aug_prob} \
    >${log_dir}/split_${suffix}.log 2>&1 &
done

wait

cat ${embed_dir}/xvector_*.scp >${embed_dir}/xvector.scp
embed_num=$(wc -l ${embed_dir}/xvector.scp | awk '{print $1}')
if [ $embed_num -ne $wavs_num ]; then
  echo "The number of embeddings ($embed_num) is not equal to the number of wavs ($wavs_num)" \
    | tee ${embed_dir}/ERROR
  echo "Check ${log_dir}/split_*.log for out-of-memory errors on the GPU workers"
  exit 1
fi

echo "Successfully extract embedding for ${store_dir}" | tee ${embed_dir}/SUCCESS
