#!/bin/bash
# Evaluate the released RVQ tokenizer and masked/residual transformers on HumanML3D or KIT-ML.
#   bash scripts/eval_all.sh <gpu> <t2m|kit>
# Numbers are averaged over 20 replications (~2.5 h on one A100).
set -euo pipefail

GPU=${1:-0}
DATASET=${2:-t2m}

export CUDA_VISIBLE_DEVICES=$GPU
export CUBLAS_WORKSPACE_CONFIG=:4096:8   # deterministic cuBLAS -> reproducible R-precision
export PYTHONPATH=${PYTHONPATH:-}:$(pwd)

echo "Evaluating on GPU ${GPU}: $(nvidia-smi --query-gpu=name --format=csv,noheader -i ${GPU})"

if [ "${DATASET}" = "t2m" ]; then
    VQ=rvq_nq6_dc512_nc512_noshare_qdp0.2
    MASK=t2m_nlayer8_nhead6_ld384_ff1024_cdp0.1_rvq6ns
    RES=tres_nlayer8_ld384_ff1024_rvq6ns_cdp0.2_sw
else
    VQ=rvq_nq6_dc512_nc512_noshare_qdp0.2_k
    MASK=t2m_nlayer8_nhead6_ld384_ff1024_cdp0.1_rvq6ns_k
    RES=tres_nlayer8_ld384_ff1024_rvq6ns_cdp0.2_sw_k
fi

python eval_t2m_vq.py --gpu_id 0 --name ${VQ} --dataset_name ${DATASET} --ext rvq_nq6
python eval_t2m_trans_res.py --res_name ${RES} --dataset_name ${DATASET} --name ${MASK} \
    --gpu_id 0 --cond_scale 4 --time_steps 10 --ext evaluation

echo "done: see checkpoints/${DATASET}/${MASK}/eval/evaluation.log"
