default_scope = 'mmdet3d'

default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=50),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', interval=-1),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    visualization=dict(type='Det3DVisualizationHook'))

custom_hooks = [
    # GPU memory is reported by the logger hook; empty the cache on the
    # long nuScenes epochs to keep fragmentation down.
    dict(type='EmptyCacheHook', after_epoch=True),
]

env_cfg = dict(
    cudnn_benchmark=False,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'),
)

log_processor = dict(type='LogProcessor', window_size=50, by_epoch=True)

log_level = 'INFO'
load_from = None
resume = False

# Mixed precision: uncomment to train with fp16 (AmpOptimWrapper).
# optim_wrapper = dict(type='AmpOptimWrapper', loss_scale=512.)

# Default to the full 8-GPU recipe; linear-scale the lr when changing this.
auto_scale_lr = dict(enable=False, base_batch_size=32)

# TODO: support auto scaling lr
