#!/bin/bash
# Fine-tune the three SSL base models used in the paper on the BVCC main track,
# one model per GPU, in parallel.  Logs go to logs/<name>.log
#
#   bash scripts/finetune_all.sh /path/to/phase1-main/DATA
set -e

DATADIR=${1:-data/phase1-main/DATA}
FAIRSEQ_DIR=fairseq
mkdir -p logs

MODELS=(wav2vec_small.pt w2v_large_lv_fsh_swbd_cv.pt xlsr_53_56k.pt)
NAMES=(w2v_small w2v_large xlsr)

conda activate mos-ssl 2>/dev/null || true

for i in 0 1 2; do
    echo "finetuning ${NAMES[$i]} on GPU $i"
    CUDA_VISIBLE_DEVICES=$i python mos_fairseq.py \
        --datadir ${DATADIR} \
        --fairseq_base_model ${FAIRSEQ_DIR}/${MODELS[$i]} \
        --outdir checkpoints_${NAMES[$i]} > logs/${NAMES[$i]}.log 2>&1 &
done
wait

for i in 0 1 2; do
    best=$(ls -v checkpoints_${NAMES[$i]}/ckpt_* | tail -n 1)
    echo "${NAMES[$i]}: best checkpoint ${best}"
    python predict.py --fairseq_base_model ${FAIRSEQ_DIR}/${MODELS[$i]} \
        --finetuned_checkpoint ${best} --datadir ${DATADIR} --outfile answer_${NAMES[$i]}.txt
done
