#!/bin/bash
# Run LongBench with InfLLM, one process per GPU, then merge and score.
#   bash scripts/longbench.sh
config=config/mistral-inf-llm.yaml

datasets="narrativeqa,qasper,multifieldqa_en,\
hotpotqa,2wikimqa,musique,\
gov_report,qmsum,multi_news,\
trec,triviaqa,samsum,\
passage_count,passage_retrieval_en,\
lcc,repobench-p"

world_size=8
mkdir -p benchmark/longbench-result

export TOKENIZERS_PARALLELISM=false
export OMP_NUM_THREADS=8

for ((rank=0; rank<$world_size; ++rank))
do
CUDA_VISIBLE_DEVICES=${rank} python benchmark/pred.py \
--config_path ${config} \
--output_dir_path benchmark/longbench-result \
--datasets ${datasets} \
--world_size ${world_size} \
--rank ${rank} &
echo "worker $rank started"
done

wait

python benchmark/merge.py \
--output_dir_path benchmark/longbench-result \
--datasets ${datasets} \
--world_size ${world_size}

python benchmark/eval.py --dir_path benchmark/longbench-result
