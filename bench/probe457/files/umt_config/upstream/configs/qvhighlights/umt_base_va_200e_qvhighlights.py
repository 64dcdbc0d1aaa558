_base_ = [
    '../_base_/models/umt_base.py', '../_base_/plugins/mr.py',
    '../_base_/datasets/qvhighlights.py', '../_base_/schedules/100e.py',
    '../_base_/runtime.py'
]
# model settings
model = dict(
    video_enc=dict(
        type='UniModalEncoder',
        dims=[2816, 256],
        p=0.5,
        pos_cfg=dict(type='PositionalEncoding', normalize=True, max_len=75),
        enc_cfg=dict(type='TransformerEncoderLayer', heads=8, ratio=4, p=0.1),
        norm_cfg=dict(type='LN')),
    audio_enc=dict(
        type='UniModalEncoder',
        dims=[2048, 256],
        p=0.5,
        pos_cfg=dict(type='PositionalEncoding', normalize=True, max_len=75),
        enc_cfg=dict(type='TransformerEncoderLayer', heads=8, ratio=4, p=0.1),
        norm_cfg=dict(type='LN')),
    cross_enc=dict(
        type='CrossModalEncoder',
        dims=256,
        fusion_type='sum',
        pos_cfg=dict(type='PositionalEncoding', normalize=True, max_len=75),
        enc_cfg=dict(type='BottleneckTransformer', heads=8, ratio=4, p=0.1),
        norm_cfg=dict(type='LN')),
    query_gen=dict(
        type='QueryGenerator',
        dims=[512, 256],
        p=0.5,
        enc_cfg=dict(type='TransformerDecoderLayer', heads=8, ratio=4, p=0.1)),
    query_dec=dict(
        type='QueryDecoder',
        dims=256,
        pos_cfg=dict(type='PositionalEncoding', normalize=True),
        dec_cfg=dict(type='QueryDecoderLayer', heads=8, ratio=4, p=0.1),
        norm_cfg=dict(type='LN')),
    pred_head=[
        dict(type='SaliencyHead', dims=256, pred_indices=2),
        dict(
            type='BoundaryHead',
            dims=256,
            radius_factor=0.2,
            sigma_factor=0.2,
            kernel=1,
            unit=2,
            max_num_moments=100,
            loss_cfg=dict(
                type='DynamicBCELoss',
                loss_weight=0.1))
    ])
# dataset settings
data = dict(
    train=dict(
        type='QVHighlights',
        label_path='data/qvhighlights/highlight_train_release.jsonl',
        video_path=[
            'data/qvhighlights/clip_features',
            'data/qvhighlights/slowfast_features'
        ],
        audio_path='data/qvhighlights/pann_features',
        query_path='data/qvhighlights/clip_text_features',
        loader=dict(batch_size=32, num_workers=4, pin_memory=True, shuffle=True)),
    val=dict(
        type='QVHighlights',
        label_path='data/qvhighlights/highlight_val_release.jsonl',
        video_path=[
            'data/qvhighlights/clip_features',
            'data/qvhighlights/slowfast_features'
        ],
        audio_path='data/qvhighlights/pann_features',
        query_path='data/qvhighlights/clip_text_features',
        loader=dict(batch_size=1, num_workers=4, pin_memory=True, shuffle=False)))
# runtime settings
stages = dict(
    epochs=200,
    optimizer=dict(type='Adam', lr=1e-3, weight_decay=1e-4),
    lr_schedule=dict(type='epoch', policy='step', step=[100]),
    warmup=dict(type='iter', policy='linear', steps=500, ratio=0.001),
    validation=dict(interval=1, nms_cfg=dict(type='normal', thr=0.7)))
hooks = dict(checkpoint=dict(interval=10), eval=dict(high_keys=['MR-full-mAP', 'HL-min-VeryGood-mAP']))
