# yapf:disable
log_config = dict(
    interval=5,
    hooks=[
        dict(type='TextLoggerHook')
        # dict(type='TensorboardLoggerHook')
    ])
# yapf:enable
dist_params = dict(backend='nccl')
log_level = 'INFO'
load_from = None
resume_from = None
workflow = [('train', 1)]

# disable opencv multithreading to avoid system being overloaded
opencv_num_threads = 0
# set multi-process start method as `fork` to speed up the training
mp_start_method = 'fork'

# cudnn autotuning is safe here since DBNet inputs are fixed-size crops
cudnn_benchmark = True

# mixed precision: halves GPU memory for DBNet-R50 at 1024x1024
fp16 = dict(loss_scale='dynamic')
