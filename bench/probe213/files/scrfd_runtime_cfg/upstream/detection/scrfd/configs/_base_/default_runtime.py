checkpoint_config = dict(interval=1)
# yapf:disable
log_config = dict(
    interval=50,
    hooks=[
        dict(type='TextLoggerHook'),
        # dict(type='TensorboardLoggerHook')
    ])
# yapf:enable
# runtime settings shared by every scrfd_*.py config; the launcher
# (tools/dist_train.sh -> tools/train.py --launcher pytorch) hands
# dist_params to mmcv.runner.init_dist, which also pins one GPU per rank
dist_params = dict(backend='nccl')
log_level = 'INFO'
load_from = None
resume_from = None
workflow = [('train', 1)]
# total batch = samples_per_gpu x 8 GPUs; keep lr in the per-model configs in sync
gpu_ids = range(0, 8)
