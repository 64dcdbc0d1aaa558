# Person-in-WiFi 3D: end-to-end multi-person 3D pose estimation from WiFi CSI.
# A PETR-style transformer decoder regresses per-person 14x3 keypoints directly
# from a CSI feature sequence (3 receivers x 3 antennas x 30 subcarriers).
_base_ = []

num_keypoints = 14
num_queries = 20
embed_dims = 256

model = dict(
    type='WiFiPETR',
    backbone=dict(
        type='CSIEncoder',
        in_channels=3 * 3 * 30 * 2,   # amplitude + sanitised phase
        embed_dims=embed_dims,
        num_layers=4,
        dropout=0.1),
    bbox_head=dict(
        type='WiFiPoseHead',
        num_query=num_queries,
        num_keypoints=num_keypoints,
        in_channels=embed_dims,
        as_two_stage=False,
        transformer=dict(
            type='PetrTransformer',
            encoder=dict(
                type='DetrTransformerEncoder',
                num_layers=3,
                transformerlayers=dict(
                    type='BaseTransformerLayer',
                    attn_cfgs=dict(
                        type='MultiheadAttention',
                        embed_dims=embed_dims,
                        num_heads=8,
                        dropout=0.1),
                    feedforward_channels=1024,
                    ffn_dropout=0.1,
                    operation_order=('self_attn', 'norm', 'ffn', 'norm'))),
            decoder=dict(
                type='PetrTransformerDecoder',
                num_layers=3,
                num_keypoints=num_keypoints,
                return_intermediate=True,
                transformerlayers=dict(
                    type='DetrTransformerDecoderLayer',
                    attn_cfgs=[
                        dict(
                            type='MultiheadAttention',
                            embed_dims=embed_dims,
                            num_heads=8,
                            dropout=0.1),
                        dict(
                            type='MultiheadAttention',
                            embed_dims=embed_dims,
                            num_heads=8,
                            dropout=0.1)
                    ],
                    feedforward_channels=1024,
                    ffn_dropout=0.1,
                    operation_order=('self_attn', 'norm', 'cross_attn', 'norm',
                                     'ffn', 'norm')))),
        positional_encoding=dict(
            type='SinePositionalEncoding1D',
            num_feats=embed_dims // 2,
            normalize=True),
        loss_cls=dict(
            type='FocalLoss',
            use_sigmoid=True,
            gamma=2.0,
            alpha=0.25,
            loss_weight=2.0),
        loss_kpt=dict(type='L1Loss', loss_weight=70.0),
        loss_kpt_3d=dict(type='MPJPELoss', loss_weight=10.0),
        loss_oks=dict(type='OKSLoss', num_keypoints=num_keypoints, loss_weight=2.0)),
    train_cfg=dict(
        assigner=dict(
            type='PoseHungarianAssigner',
            cls_cost=dict(type='FocalLossCost', weight=2.0),
            kpt_cost=dict(type='KptL1Cost', weight=70.0),
            oks_cost=dict(type='OksCost', num_keypoints=num_keypoints, weight=7.0))),
    test_cfg=dict(max_per_img=num_queries))

# dataset settings
dataset_type = 'WiFiPoseDataset'
data_root = 'data/wifipose/'
train_pipeline = [
    dict(type='LoadCSIFromFile', keys=['amp', 'phase']),
    dict(type='CSIPhaseSanitize'),
    dict(type='CSINormalize', mean=0.0, std=1.0),
    dict(type='RandomCSIDrop', p=0.1),
    dict(type='DefaultFormatBundleCSI'),
    dict(type='Collect', keys=['csi', 'gt_keypoints', 'gt_labels'],
         meta_keys=('filename', 'num_person', 'room'))
]
test_pipeline = [
    dict(type='LoadCSIFromFile', keys=['amp', 'phase']),
    dict(type='CSIPhaseSanitize'),
    dict(type='CSINormalize', mean=0.0, std=1.0),
    dict(type='DefaultFormatBundleCSI'),
    dict(type='Collect', keys=['csi'], meta_keys=('filename', 'num_person', 'room'))
]
data = dict(
    samples_per_gpu=32,
    workers_per_gpu=8,
    train=dict(
        type=dataset_type,
        ann_file=data_root + 'train_data/train_list.txt',
        data_root=data_root + 'train_data/',
        pipeline=train_pipeline),
    val=dict(
        type=dataset_type,
        ann_file=data_root + 'test_data/test_list.txt',
        data_root=data_root + 'test_data/',
        pipeline=test_pipeline),
    test=dict(
        type=dataset_type,
        ann_file=data_root + 'test_data/test_list.txt',
        data_root=data_root + 'test_data/',
        pipeline=test_pipeline))
evaluation = dict(interval=5, metric=['mpjpe', 'pck'])

# optimizer
optimizer = dict(
    type='AdamW',
    lr=2e-4,
    weight_decay=0.0001,
    paramwise_cfg=dict(custom_keys={'backbone': dict(lr_mult=0.1)}))
optimizer_config = dict(grad_clip=dict(max_norm=0.1, norm_type=2))
lr_config = dict(policy='step', step=[40])
runner = dict(type='EpochBasedRunner', max_epochs=50)
checkpoint_config = dict(interval=5, max_keep_ckpts=3)

log_config = dict(
    interval=50,
    hooks=[
        dict(type='TextLoggerHook'),
        dict(type='TensorboardLoggerHook')
    ])
custom_hooks = [dict(type='NumClassCheckHook')]

dist_params = dict(backend='nccl')
log_level = 'INFO'
load_from = None
resume_from = None
workflow = [('train', 1)]
find_unused_parameters = True
cudnn_benchmark = True

# disable opencv multithreading to avoid system being overloaded
opencv_num_threads = 0
# set multi-process start method as `fork` to speed up the training
mp_start_method = 'fork'
