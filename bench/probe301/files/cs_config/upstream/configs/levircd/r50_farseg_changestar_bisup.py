from albumentations import Compose, OneOf, Normalize
from albumentations import HorizontalFlip, VerticalFlip, RandomRotate90, RandomCrop
from albumentations.pytorch import ToTensorV2

data = dict(
    train=dict(
        type='LEVIRCDLoader',
        params=dict(
            root_dir=(
                './LEVIR-CD/train',
            ),
            transforms=Compose([
                RandomCrop(512, 512),
                OneOf([
                    HorizontalFlip(True),
                    VerticalFlip(True),
                    RandomRotate90(True)
                ], p=0.75),
                Normalize(mean=(0.485, 0.456, 0.406, 0.485, 0.456, 0.406),
                          std=(0.229, 0.224, 0.225, 0.229, 0.224, 0.225),
                          max_pixel_value=255),
                ToTensorV2(True),
            ]),
            subsample_ratio=1.0,
            batch_size=16,
            num_workers=8,
            pin_memory=True,
            training=True,
        ),
    ),
    test=dict(
        type='LEVIRCDLoader',
        params=dict(
            root_dir=(
                './LEVIR-CD/test',
            ),
            transforms=Compose([
                Normalize(mean=(0.485, 0.456, 0.406, 0.485, 0.456, 0.406),
                          std=(0.229, 0.224, 0.225, 0.229, 0.224, 0.225),
                          max_pixel_value=255),
                ToTensorV2(True),
            ]),
            batch_size=4,
            num_workers=2,
            pin_memory=True,
            training=False,
        ),
    ),
)
optimizer = dict(
    type='sgd',
    params=dict(
        momentum=0.9,
        weight_decay=0.0001
    ),
    grad_clip=dict(
        max_norm=35,
        norm_type=2,
    )
)
learning_rate = dict(
    type='poly',
    params=dict(
        base_lr=0.03,
        power=0.9,
        max_iters=40000,
    ))
train = dict(
    forward_times=1,
    num_iters=40000,
    eval_per_epoch=False,
    summary_grads=False,
    summary_weights=False,
    distributed=True,
    # apex's SyncBN (CUDA kernels, ~10% faster than nn.SyncBatchNorm on V100)
    apex_sync_bn=True,
    sync_bn=False,
    eval_after_train=True,
    log_interval_step=50,
    save_ckpt_interval_epoch=40,
    eval_interval_epoch=40,
    find_unused_parameters=False,
)

test = dict(
)

model = dict(
    type='ChangeStarBiSup',
    params=dict(
        segmenation=dict(
            model_type='farseg',
            backbone=dict(
                resnet_type='resnet50',
                pretrained=True,
                freeze_at=0,
                output_stride=32,
            ),
            head=dict(
                fpn=dict(
                    in_channels_list=(256, 512, 1024, 2048),
                    out_channels=256,
                ),
                fs_relation=dict(
                    scene_embedding_channels=2048,
                    in_channels_list=(256, 256, 256, 256),
                    out_channels=256,
                    scale_aware_proj=True
                ),
                fpn_decoder=dict(
                    in_channels=256,
                    out_channels=256,
                    in_feat_output_strides=(4, 8, 16, 32),
                    out_feat_output_stride=4,
                    classifier_config=None
                )
            ),
        ),
        classifier=dict(
            in_channels=256,
            out_channels=1,
            scale=4.0
        ),
        detector=dict(
            name='convs',
            in_channels=256 * 2,
            inner_channels=16,
            out_channels=1,
            num_convs=4,
        ),
        loss_config=dict(
            semantic=dict(ignore_index=-1),
            change=dict(ignore_index=-1)
        ),
    )
)
