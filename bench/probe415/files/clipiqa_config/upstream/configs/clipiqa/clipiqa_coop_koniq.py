exp_name = 'clipiqa_coop_koniq'

# model settings
model = dict(
    type='CLIPIQA',
    generator=dict(
        type='CLIPIQAPredictor',
        backbone_name='RN50',
        classnames=[
            ['Good photo.', 'Bad photo.'],
        ]),
    pixel_loss=dict(type='MSELoss', loss_weight=1.0, reduction='mean'))
# model training and testing settings
train_cfg = None
test_cfg = dict(metrics=['PSNR'], crop_border=0)

# dataset settings
train_dataset_type = 'IQAKonIQDataset'
val_dataset_type = 'IQAKonIQDataset'
img_norm_cfg_lq = dict(
    mean=[0.48145466, 0.4578275, 0.40821073],
    std=[0.26862954, 0.26130258, 0.27577711])

train_pipeline = [
    dict(
        type='LoadImageFromFile',
        io_backend='disk',
        key='lq',
        channel_order='rgb'),
    dict(type='RescaleToZeroOne', keys=['lq']),
    dict(
        type='Flip', keys=['lq'], flip_ratio=0.5,
        direction='horizontal'),
    dict(type='Normalize', keys=['lq'], to_rgb=True, **img_norm_cfg_lq),
    dict(type='ImageToTensor', keys=['lq']),
    dict(type='ToTensor', keys=['gt']),
    dict(type='Collect', keys=['lq', 'gt'], meta_keys=['lq_path'])
]

test_pipeline = [
    dict(
        type='LoadImageFromFile',
        io_backend='disk',
        key='lq',
        channel_order='rgb'),
    dict(type='RescaleToZeroOne', keys=['lq']),
    dict(type='Normalize', keys=['lq'], to_rgb=True, **img_norm_cfg_lq),
    dict(type='ImageToTensor', keys=['lq']),
    dict(type='ToTensor', keys=['gt']),
    dict(type='Collect', keys=['lq', 'gt'], meta_keys=['lq_path'])
]

data_dir = '../dataset/koniq10k'
data = dict(
    workers_per_gpu=6,
    train_dataloader=dict(samples_per_gpu=16, drop_last=True),  # 2 gpus
    val_dataloader=dict(samples_per_gpu=1, persistent_workers=False),
    test_dataloader=dict(samples_per_gpu=1, persistent_workers=False),

    # train
    train=dict(
        type='RepeatDataset',
        times=1,
        dataset=dict(
            type=train_dataset_type,
            img_folder=f'{data_dir}/1024x768',
            ann_file=f'{data_dir}/koniq10k_distributions_sets.csv',
            pipeline=train_pipeline,
            test_mode=False)),
    # val
    val=dict(
        type=val_dataset_type,
        img_folder=f'{data_dir}/1024x768',
        ann_file=f'{data_dir}/koniq10k_distributions_sets.csv',
        pipeline=test_pipeline,
        test_mode=True),
    # test
    test=dict(
        type=val_dataset_type,
        img_folder=f'{data_dir}/1024x768',
        ann_file=f'{data_dir}/koniq10k_distributions_sets.csv',
        pipeline=test_pipeline,
        test_mode=True),
)

# optimizer
optimizers = dict(
    generator=dict(
        type='SGD',
        lr=0.002,
        momentum=0.9,
        weight_decay=0.0005,
        paramwise_cfg=dict(custom_keys={'clipmodel': dict(lr_mult=0.0)})))

# learning policy
total_iters = 100000
lr_config = dict(
    policy='CosineRestart',
    by_epoch=False,
    periods=[total_iters],
    restart_weights=[1],
    min_lr=1e-7)

checkpoint_config = dict(interval=5000, save_optimizer=True, by_epoch=False)
evaluation = dict(interval=5000, save_image=False, gpu_collect=True)
log_config = dict(
    interval=100,
    hooks=[
        dict(type='TextLoggerHook', by_epoch=False),
        dict(type='TensorboardLoggerHook'),
    ])
visual_config = None

# runtime settings
dist_params = dict(backend='nccl')
log_level = 'INFO'
work_dir = f'./work_dirs/{exp_name}'
load_from = None
resume_from = None
workflow = [('train', 1)]
find_unused_parameters = True
cudnn_benchmark = True
