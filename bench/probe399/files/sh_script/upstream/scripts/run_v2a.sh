#!/bin/bash
# V2A on the VGGSound test subset, sharded over 4 GPUs (one process per GPU).
VIDEO_ROOT=data/vggsound_test_split
OUT_ROOT=outputs/v2a_vggsound

for SHARD in 0 1 2 3; do
    CUDA_VISIBLE_DEVICES=${SHARD} python v2a/v2a_imagebind_audioldm.py \
        --video_dir ${VIDEO_ROOT}/shard_${SHARD} \
        --out_dir ${OUT_ROOT} \
        --gpu_id 0 \
        --num_inference_steps 30 \
        --optimize_steps 1 \
        --lr 0.1 \
        --seed 1234 &
done
wait

echo "all shards done"
python eval/compute_metrics.py --gen_dir ${OUT_ROOT} --gt_dir data/vggsound_test_audio
