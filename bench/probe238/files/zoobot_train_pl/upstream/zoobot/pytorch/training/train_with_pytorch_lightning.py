import logging
import os

import torch
import lightning as L
from lightning.pytorch.callbacks import EarlyStopping, LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger

from galaxy_datasets.pytorch.galaxy_datamodule import GalaxyDataModule
from galaxy_datasets.transforms import default_transforms

from zoobot.pytorch.estimators import define_model
from zoobot.pytorch.training import webdatamodule


def train_default_zoobot_from_scratch(
    # absolutely crucial arguments
    save_dir: str,  # save model here
    schema,  # answer these questions
    # input data - specify *either* catalog (to be split) or the splits themselves
    catalog=None,
    train_catalog=None,
    val_catalog=None,
    test_catalog=None,
    train_urls=None,
    val_urls=None,
    test_urls=None,
    cache_dir=None,  # only works with webdataset urls
    # training time parameters
    epochs=1000,
    patience=8,
    # model hparams
    # debug
    architecture_name='efficientnet_b0',
    timm_kwargs={},  # e.g. {'drop_path_rate': 0.2, 'num_features': 1280}. Passed to timm model init method, depends on arch.
    batch_size=128,
    dropout_rate=0.2,
    learning_rate=1e-3,
    betas=(0.9, 0.999),
    weight_decay=0.01,
    scheduler_params={},
    # data and augmentation parameters
    color=False,
    resize_after_crop=224,
    crop_scale_bounds=(0.7, 0.8),
    crop_ratio_bounds=(0.9, 1.1),
    # hardware parameters
    nodes=1,
    gpus=2,
    sync_batchnorm=False,
    num_workers=4,
    prefetch_factor=4,
    mixed_precision=False,
    compile_encoder=False,
    # checkpointing / logging
    wandb_logger=None,
    checkpoint_file_template=None,
    auto_insert_metric_name=True,
    save_top_k=3,
    # replication parameters
    random_state=42,
):
    """
    Train Zoobot from scratch on a big galaxy catalog.

    Zoobot is trained using a custom loss (Dirichlet-Multinomial, see define_model.py)
    which allows for heteroskedastic volunteer vote counts. This function wraps everything
    needed: a GalaxyDataModule (or webdataset datamodule), a ZoobotTree LightningModule,
    and a Lightning Trainer configured for (multi-)GPU training.

    Multi-GPU: set gpus > 1 to use DDP. Each GPU gets batch_size images (so effective batch
    size is gpus * nodes * batch_size). Tested with 2x A100 on a single node, and 2 nodes x 2 GPUs.

    Args:
        save_dir (str): folder to save training logs and trained model checkpoints
        schema (shared.schemas.Schema): Schema object with information about each question and answer
        catalog (pd.DataFrame, optional): Galaxy catalog with columns `id_str` and `file_loc`. Will be automatically split to train and val (no test). Defaults to None.
        epochs (int, optional): Max. number of epochs to train for. Defaults to 1000.
        patience (int, optional): Max. number of epochs to wait for any loss improvement before ending training. Defaults to 8.
        architecture_name (str, optional): Architecture to use. Passed to timm. Must be in timm.list_models(). Defaults to 'efficientnet_b0'.
        batch_size (int, optional): Batch size per GPU. Defaults to 128.
        nodes (int, optional): Multi-node training Untested (and likely not working). Defaults to 1.
        gpus (int, optional): Multi-GPU training. Uses distributed data parallel - essentially, full dataset is split by GPU. See torch docs. Defaults to 2.
        sync_batchnorm (bool, optional): Use synchronized batchnorm. Defaults to False.
        num_workers (int, optional): Processes for loading data. See torch dataloader docs. Should be < num cpus. Defaults to 4.
        prefetch_factor (int, optional): Num. batches to queue in memory per dataloader. See torch dataloader docs. Defaults to 4.
        mixed_precision (bool, optional): Use (mostly) half-precision to save memory and time. Defaults to False.
        compile_encoder (bool, optional): torch.compile the encoder (PyTorch 2.0+). Defaults to False.
        wandb_logger (pl.loggers.wandb.WandbLogger, optional): Logger to track experiments on Weights and Biases. Defaults to None.
        random_state (int, optional): Seed. Defaults to 42.

    Returns:
        Tuple[L.LightningModule, L.Trainer]: the trained model and the trainer used
    """

    slurm_debugging_logs()

    L.seed_everything(random_state)

    if save_dir is None:
        raise ValueError('save_dir must be specified')
    if not os.path.isdir(save_dir):
        os.mkdir(save_dir)

    if color:
        logging.warning(
            'Training on color images, not converting to greyscale')
        channels = 3
    else:
        logging.info('Training on greyscale images, will convert to greyscale')
        channels = 1

    strategy = 'auto'
    plugins = None
    if (gpus is not None) and (gpus > 1):
        strategy = 'ddp'
        logging.info('Using multi-gpu training')
        # if nodes > 1:  # I assume nobody is using DP on a single GPU...
        #     from lightning.pytorch.plugins.environments import SLURMEnvironment
        #     plugins = [SLURMEnvironment(auto_requeue=False)]

    if batch_size < 32:
        logging.warning('Batch size < 32 is unlikely to train well - check your config')

    if mixed_precision:
        logging.info(
            'Training with automatic mixed precision. Will reduce memory footprint but may cause training instability for e.g. resnet')
        precision = '16-mixed'
        torch.set_float32_matmul_precision('medium')
        torch.backends.cuda.matmul.allow_tf32 = True
    else:
        logging.info('Training with full precision')
        precision = '32'
        torch.set_float32_matmul_precision('high')

    if gpus > 0:
        accelerator = 'gpu'
        devices = gpus
    else:
        accelerator = 'cpu'
        devices = 'auto'  # all

    if sync_batchnorm:
        logging.info('Using sync batchnorm')

    # work out what dataset the user has passed
    single_catalog = catalog is not None
    split_catalogs = train_catalog is not None
    webdatasets = train_urls is not None

    if single_catalog or split_catalogs:
        # this branch will use GalaxyDataModule to load catalogs
        assert not webdatasets
        if single_catalog:
            assert not split_catalogs
            data_to_use = {
                'catalog': catalog
            }
        else:
            data_to_use = {
                'train_catalog': train_catalog,
                'val_catalog': val_catalog,
                'test_catalog': test_catalog  # may be None
            }

        datamodule = GalaxyDataModule(
            label_cols=schema.label_cols,
            # can take either a catalog (and split it), or a pre-split catalog
            **data_to_use,
            #   augmentations parameters
            greyscale=not color,
            crop_scale_bounds=crop_scale_bounds,
            crop_ratio_bounds=crop_ratio_bounds,
            resize_after_crop=resize_after_crop,
            # hardware parameters
            batch_size=batch_size,  # on each node - but note this is now per-GPU
            num_workers=num_workers,
            prefetch_factor=prefetch_factor
        )

    else:
        # this branch will use WebDataModule to load premade webdatasets
        datamodule = webdatamodule.WebDataModule(
            train_urls=train_urls,
            val_urls=val_urls,
            test_urls=test_urls,
            label_cols=schema.label_cols,
            # hardware
            batch_size=batch_size,
            num_workers=num_workers,
            prefetch_factor=prefetch_factor,
            cache_dir=cache_dir,
            # augmentation args
            color=color,
            crop_scale_bounds=crop_scale_bounds,
            crop_ratio_bounds=crop_ratio_bounds,
            resize_after_crop=resize_after_crop,
        )

    datamodule.setup(stage='fit')

    # these args are automatically logged
    lightning_model = define_model.ZoobotTree(
        output_dim=len(schema.label_cols),
        question_answer_pairs=schema.question_answer_pairs,
        dependencies=schema.dependencies,
        architecture_name=architecture_name,
        channels=channels,
        # use_imagenet_weights=False,
        test_time_dropout=True,
        dropout_rate=dropout_rate,
        learning_rate=learning_rate,
        timm_kwargs=timm_kwargs,
        betas=betas,
        weight_decay=weight_decay,
        scheduler_params=scheduler_params,
    )

    if compile_encoder:
        logging.info('Using torch.compile on encoder')
        lightning_model.encoder = torch.compile(lightning_model.encoder)

    extra_callbacks = []

    # used later for checkpoint_callback.best_model_path
    checkpoint_callback = ModelCheckpoint(
        dirpath=os.path.join(save_dir, 'checkpoints'),
        monitor="validation/epoch_loss",
        save_weights_only=True,
        mode='min',
        # custom filename for checkpointing due to / in metric
        filename=checkpoint_file_template,
        # https://lightning.ai/docs/pytorch/stable/api/lightning.pytorch.callbacks.ModelCheckpoint.html#lightning.pytorch.callbacks.ModelCheckpoint.params.auto_insert_metric_name
        # avoid making folders from the loss names
        auto_insert_metric_name=auto_insert_metric_name,
        save_top_k=save_top_k
    )

    early_stopping_callback = EarlyStopping(monitor='validation/epoch_loss', patience=patience, check_finite=True)
    callbacks = [checkpoint_callback, early_stopping_callback] + extra_callbacks

    if wandb_logger is not None:
        callbacks.append(LearningRateMonitor(logging_interval='step'))
        logger = wandb_logger
    else:
        logger = CSVLogger(save_dir=save_dir)

    trainer = L.Trainer(
        num_sanity_val_steps=0,
        log_every_n_steps=150,
        accelerator=accelerator,
        devices=devices,  # per node
        num_nodes=nodes,
        strategy=strategy,
        precision=precision,
        logger=logger,
        callbacks=callbacks,
        max_epochs=epochs,
        default_root_dir=save_dir,
        plugins=plugins,
        sync_batchnorm=sync_batchnorm,
        gradient_clip_val=0.3  # reduce the chance of a NaN loss spike blowing everything up
    )

    # logging.info((trainer.strategy, trainer.world_size,
    #              trainer.local_rank, trainer.global_rank, trainer.node_rank))

    trainer.fit(lightning_model, datamodule)  # uses batch size of datamodule

    best_model_path = trainer.checkpoint_callback.best_model_path  # type: ignore

    # can test as per the below, but note that datamodule must have a test dataset attribute as per pytorch lightning docs.
    # also be careful not to test regularly, as this breaks train/val/test conceptual separation and may cause hparam overfitting
    if datamodule.test_dataloader is not None:
        logging.info(f'Testing on {checkpoint_callback.best_model_path} with single device')
        # test with a single device, as recommended by lightning (avoids DistributedSampler padding)
        test_trainer = L.Trainer(
            accelerator=accelerator,
            devices=1,
            precision=precision,
            logger=logger,
            default_root_dir=save_dir
        )
        if test_trainer.is_global_zero:
            test_datamodule = datamodule
            test_datamodule.setup(stage='test')
            test_trainer.test(
                model=lightning_model,
                datamodule=test_datamodule,
                ckpt_path=checkpoint_callback.best_model_path  # can optionally point to a specific checkpoint here e.g. "/share/nas2/walml/repos/gz-decals-classifiers/results/early_stopping_1xgpu_greyscale/checkpoints/epoch=26-step=16847.ckpt"
            )
        else:
            logging.info('Not global zero, skipping test metrics')
    else:
        logging.info('No test dataloader, skipping test metrics')

    # explicitly update the model weights to the best model
    # loads the best model from the checkpoint to the lightning model
    lightning_model = define_model.ZoobotTree.load_from_checkpoint(best_model_path)  # reset to best weights
    return lightning_model, trainer


def slurm_debugging_logs():
    # https://lightning.ai/docs/pytorch/stable/clouds/cluster_advanced.html#troubleshooting
    # useful for debugging multi-node or multi-gpu training on slurm
    logging.info(os.environ.get('SLURM_JOB_ID', 'not on slurm'))
    logging.info('SLURM_NTASKS: {}'.format(os.environ.get('SLURM_NTASKS')))
    logging.info('SLURM_NTASKS_PER_NODE: {}'.format(os.environ.get('SLURM_NTASKS_PER_NODE')))
    logging.info('SLURM_NODELIST: {}'.format(os.environ.get('SLURM_NODELIST')))
    logging.info('CUDA_VISIBLE_DEVICES: {}'.format(os.environ.get('CUDA_VISIBLE_DEVICES')))
    logging.info('Cuda available: {}'.format(torch.cuda.is_available()))
    logging.info('Visible devices: {}'.format(torch.cuda.device_count()))
    logging.info('Threads: {}'.format(torch.get_num_threads()))
