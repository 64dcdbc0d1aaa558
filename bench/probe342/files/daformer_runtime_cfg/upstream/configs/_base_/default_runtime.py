# Obtained from: https://github.com/open-mmlab/mmsegmentation/tree/v0.16.0
# yapf:disable
log_config = dict(
    interval=50,
    hooks=[
        dict(type='TextLoggerHook', by_epoch=False),
        # dict(type='TensorboardLoggerHook')
    ])
# yapf:enable
dist_params = dict(backend='nccl')
log_level = 'INFO'
load_from = None
resume_from = None
workflow = [('train', 1)]
cudnn_benchmark = True
# Number of GPUs the experiment was tuned for (batch size is per GPU).
# Used by experiments.py / run_experiments.py to name jobs, not by mmcv.
n_gpus = 1
gpu_model = 'NVIDIAGeForceRTX2080Ti'
