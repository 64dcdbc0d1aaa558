# Open-vocabulary detection on COCO (48 base / 17 novel classes):
# RegionCLIP-pretrained RN50 backbone, Faster R-CNN C4 head, 8 GPUs.
# The offline RPN (trained on base classes) and the concept embeddings are read from ./pretrained_ckpt.

export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7

python3 ./tools/train_net.py \
--num-gpus 8 \
--config-file ./configs/COCO-InstanceSegmentation/CLIP_fast_rcnn_R_50_C4_ovd.yaml \
MODEL.WEIGHTS ./pretrained_ckpt/regionclip/regionclip_pretrained-cc_rn50.pth \
MODEL.CLIP.OFFLINE_RPN_CONFIG ./configs/COCO-InstanceSegmentation/mask_rcnn_R_50_C4_1x_ovd_FSD.yaml \
MODEL.CLIP.BB_RPN_WEIGHTS ./pretrained_ckpt/rpn/rpn_coco_48.pth \
MODEL.CLIP.TEXT_EMB_PATH ./pretrained_ckpt/concept_emb/coco_48_base_cls_emb.pth \
MODEL.CLIP.OPENSET_TEST_TEXT_EMB_PATH ./pretrained_ckpt/concept_emb/coco_65_cls_emb.pth \
MODEL.ROI_HEADS.SOFT_NMS_ENABLED True \
SOLVER.IMS_PER_BATCH 16 \
SOLVER.BASE_LR 0.002 \
SOLVER.AMP.ENABLED True \
OUTPUT_DIR ./output/ovd_coco_rn50
