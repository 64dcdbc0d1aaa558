#!/bin/bash
# SHOT on Office / Office-Home / VisDA-C.
#   stage 1: train the source model (image_source.py)
#   stage 2: source-free adaptation to every target domain (image_target.py)
# GPU is chosen with --gpu_id (the scripts set CUDA_VISIBLE_DEVICES themselves).

gpu=${GPU:-0}

# ---- Office-31 ----
for s in 0 1 2; do
    python image_source.py --trte val --da uda --output ckps/source/ --gpu_id ${gpu} --dset office --max_epoch 100 --s ${s}
done
for s in 0 1 2; do
    python image_target.py --cls_par 0.3 --da uda --output_src ckps/source/ --output ckps/target/ --gpu_id ${gpu} --dset office --s ${s}
done

# ---- Office-Home ----
for s in 0 1 2 3; do
    python image_source.py --trte val --da uda --output ckps/source/ --gpu_id ${gpu} --dset office-home --max_epoch 50 --s ${s}
    python image_target.py --cls_par 0.3 --da uda --output_src ckps/source/ --output ckps/target/ --gpu_id ${gpu} --dset office-home --s ${s}
done

# ---- VisDA-C (ResNet-101, source val split) ----
python image_source.py --trte val --output ckps/source/ --da uda --gpu_id ${gpu} --dset VISDA-C --net resnet101 --lr 1e-3 --max_epoch 10 --s 0
python image_target.py --cls_par 0.3 --da uda --dset VISDA-C --gpu_id ${gpu} --s 0 --output_src ckps/source/ --output ckps/target/ --net resnet101 --lr 1e-3

# ---- partial-set DA on Office-Home ----
for s in 0 1 2 3; do
    python image_source.py --trte val --da pda --output ckps/source/ --gpu_id ${gpu} --dset office-home --max_epoch 50 --s ${s}
    python image_target.py --cls_par 0.3 --threshold 10 --da pda --output_src ckps/source/ --output ckps/target/ --gpu_id ${gpu} --dset office-home --s ${s}
done
