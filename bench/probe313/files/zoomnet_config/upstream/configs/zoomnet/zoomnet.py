_base_ = [
    "../_base_/common.py",
    "../_base_/train.py",
    "../_base_/test.py",
]

has_test = True
skip_train = False
skip_test = False
save_results = True
log_interval = dict(
    txt=20,
    tensorboard=0,
)
load_from = None
deterministic = True
use_custom_worker_init = False
model_name = "ZoomNet"
base_seed = 112358

# Trained on a single RTX 3090 (24GB). With 2+ GPUs launch through tools/dist_train.sh,
# the batch size below is per GPU.
device = "cuda"
num_gpus = 1

train = dict(
    batch_size=8,
    num_workers=4,
    use_amp=True,
    num_epochs=40,
    epoch_based=True,
    sync_bn=True,
    lr=0.05,
    optimizer=dict(
        mode="sgd",
        set_to_none=True,
        group_mode="finetune",
        cfg=dict(
            momentum=0.9,
            weight_decay=5e-4,
            nesterov=False,
        ),
    ),
    grad_acc_step=1,
    sche_usebatch=True,
    scheduler=dict(
        warmup=dict(
            num_iters=0,
            initial_coef=0.01,
            mode="linear",
        ),
        mode="f3",
        cfg=dict(
            lr_decay=0.9,
            min_coef=0.001,
        ),
    ),
    ms=dict(
        enable=True,
        extra_scales=[i / 384 for i in range(384 - 32, 384 + 33, 32)],
    ),
    ema=dict(
        enable=False,
        cmp_with_origin=True,
        force_cpu=False,
        decay=0.9998,
        keep_original_test=True,
    ),
)

test = dict(
    batch_size=8,
    num_workers=2,
    show_bar=False,
    clip_range=None,
    tta=dict(
        enable=False,
        reduction="mean",  # 'mean' or 'max'
        strategy=dict(
            HorizontalFlip=[False, True],
        ),
    ),
)

datasets = dict(
    train=dict(
        dataset_type="msi_cod_tr",
        shape=dict(h=384, w=384),
        path=["cod10k_tr", "camo_tr"],
        interp_cfg=dict(),
    ),
    test=dict(
        dataset_type="msi_cod_te",
        shape=dict(h=384, w=384),
        path=["chameleon", "camo_te", "cod10k_te", "nc4k"],
        interp_cfg=dict(),
    ),
)

# distributed settings: main.py passes `backend` to init_process_group, tools/dist_train.sh uses `port`
dist_params = dict(backend="nccl", port=29500)
