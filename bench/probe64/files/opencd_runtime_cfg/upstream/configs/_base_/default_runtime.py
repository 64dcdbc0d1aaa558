# Open-CD (OpenMMLab change detection) default runtime, shared by all configs
default_scope = 'opencd'
env_cfg = dict(
    cudnn_benchmark=True,
    mp_cfg=dict(mp_start_method='fork', opencv_num_threads=0),
    dist_cfg=dict(backend='nccl'),
)
vis_backends = [dict(type='CDLocalVisBackend')]
visualizer = dict(
    type='CDLocalVisualizer',
    vis_backends=vis_backends,
    name='visualizer',
    alpha=1.0)
log_processor = dict(by_epoch=False)
log_level = 'INFO'
load_from = None
resume = False

tta_model = dict(type='mmseg.SegTTAModel')

# schedule: 40k iterations with AMP and a fused CUDA AdamW
optim_wrapper = dict(
    type='AmpOptimWrapper',
    dtype='float16',
    loss_scale='dynamic',
    optimizer=dict(type='AdamW', lr=0.0001, betas=(0.9, 0.999), weight_decay=0.01),
    paramwise_cfg=dict(custom_keys={
        'pos_block': dict(decay_mult=0.),
        'norm': dict(decay_mult=0.),
        'head': dict(lr_mult=10.)
    }))
# Alternative fused optimizer from apex, used for the BIT / ChangeFormer baselines
# optim_wrapper = dict(optimizer=dict(type='FusedAdam', lr=0.0001))
apex_optim_wrapper = dict(
    type='ApexOptimWrapper',
    opt_level='O1',
    optimizer=dict(type='FusedAdam', lr=0.0001, betas=(0.9, 0.999), weight_decay=0.01))

param_scheduler = [
    dict(type='LinearLR', start_factor=1e-6, by_epoch=False, begin=0, end=1500),
    dict(type='PolyLR', power=1.0, begin=1500, end=40000, eta_min=0.0, by_epoch=False)
]
train_cfg = dict(type='IterBasedTrainLoop', max_iters=40000, val_interval=4000)
val_cfg = dict(type='ValLoop')
test_cfg = dict(type='TestLoop')
default_hooks = dict(
    timer=dict(type='IterTimerHook'),
    logger=dict(type='LoggerHook', interval=50, log_metric_by_epoch=False),
    param_scheduler=dict(type='ParamSchedulerHook'),
    checkpoint=dict(type='CheckpointHook', by_epoch=False, interval=4000,
                    save_best='mIoU', max_keep_ckpts=1),
    sampler_seed=dict(type='DistSamplerSeedHook'),
    visualization=dict(type='CDVisualizationHook', interval=1, img_shape=(1024, 1024, 3)))

# model-level settings shared by the SyncBN backbones
norm_cfg = dict(type='SyncBN', requires_grad=True)
data_preprocessor = dict(
    type='DualInputSegDataPreProcessor',
    mean=[123.675, 116.28, 103.53] * 2,
    std=[58.395, 57.12, 57.375] * 2,
    bgr_to_rgb=True,
    size_divisor=32,
    pad_val=0,
    seg_pad_val=255,
    test_cfg=dict(size_divisor=32))

# deformable cross-temporal alignment uses mmcv's CUDA DCNv2 op
crossattn_cfg = dict(type='DCNv2', deform_groups=4)

randomness = dict(seed=42, deterministic=False)
