# Based on Inigo's BYOL FT step
# https://github.com/inigoval/finetune/blob/main/finetune.py
import logging
import os
import warnings
from functools import partial
from typing import Any, Optional, Union

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
import torchmetrics as tm
import timm

import lightning as L
from lightning.pytorch.callbacks import LearningRateMonitor, ModelCheckpoint
from lightning.pytorch.callbacks.early_stopping import EarlyStopping
from lightning.pytorch.loggers import CSVLogger

from zoobot.pytorch.training import losses, schedulers
from zoobot.pytorch.estimators import define_model
from zoobot.shared import schemas


def freeze_batchnorm_layers(model):
    for name, child in model.named_children():
        if isinstance(child, torch.nn.BatchNorm2d):
            logging.debug('freezing {} {}'.format(child, name))
            child.eval()  # no grads, no param updates, no statistic updates
        else:
            freeze_batchnorm_layers(child)  # recurse


class FinetuneableZoobotAbstract(L.LightningModule):
    """
    Parent class of all Finetuneable Zoobot classes.

    Loads a pretrained Zoobot encoder (from a HuggingFace name or a local checkpoint),
    adds a head (defined by the child class), and trains with layer-wise learning rate decay.

    Args:
        name (str, optional): Name of a model on HuggingFace Hub e.g. 'hf_hub:mwalmsley/zoobot-encoder-convnext_nano'.
        zoobot_checkpoint_loc (str, optional): Path to a ZoobotTree lightning checkpoint to load.
        encoder (torch.nn.Module, optional): Alternatively, pass your own encoder.
        n_blocks (int, optional): number of blocks (counting from the head) to finetune. Defaults to 0.
        lr_decay (float, optional): For each layer i below the head, reduce the learning rate by lr_decay ^ i. Defaults to 0.75.
        weight_decay (float, optional): AdamW weight decay arg. Defaults to 0.05.
        learning_rate (float, optional): AdamW learning rate arg. Defaults to 1e-4.
        dropout_prob (float, optional): P of dropout before final output layer. Defaults to 0.5.
        always_train_batchnorm (bool, optional): Temporarily deprecated.
        cosine_schedule (bool, optional): Use cosine lr schedule with warmup. Defaults to False.
        prog_bar (bool, optional): Print progress bar during finetuning. Defaults to True.
        visualize_images (bool, optional): Upload example images to WandB. Good for debugging but slow. Defaults to False.
        seed (int, optional): random seed to use. Defaults to 42.
    """

    def __init__(
        self,
        # load a pretrained timm encoder saved on huggingface hub
        name=None,
        # or load a zoobot checkpoint
        zoobot_checkpoint_loc=None,
        # or directly pass a model
        encoder=None,
        # finetuning settings
        n_blocks=0,
        lr_decay=0.75,
        weight_decay=0.05,
        learning_rate=1e-4,
        dropout_prob=0.5,
        always_train_batchnorm=False,
        cosine_schedule=False,
        warmup_epochs=0,
        max_cosine_epochs=100,
        max_learning_rate_reduction_factor=0.01,
        from_scratch=False,
        # these args are for the optional learning rate scheduler, best not to use unless you've tuned everything else already
        prog_bar=True,
        visualize_images=False,
        seed=42,
        n_layers=0,  # deprecated (no effect) but can't remove yet as is an arg in some saved checkpoints
    ):
        super().__init__()

        # adds every __init__ arg to model.hparams
        # will also add to wandb if using logging=wandb, I think
        # necessary if you want to reload!
        # with warnings.catch_warnings():
        # warnings.simplefilter("ignore")
        # this raises a warning that encoder is already a Module hence saved in checkpoint hence no need to save as hparam
        # true - except we need it to instantiate this class, so it's really handy to have saved as well
        # therefore ignore the warning
        self.save_hyperparameters(ignore=['encoder'])  # never serialise the encoder, way too heavy
        # if you need the encoder to recreate, pass when loading checkpoint e.g.
        # FinetuneableZoobotTree.load_from_checkpoint(loc, encoder=encoder)

        if name is not None:
            assert encoder is None, 'Cannot pass both name and encoder to use'
            self.encoder = timm.create_model(name, num_classes=0, pretrained=not from_scratch)
            self.encoder_dim = self.encoder.num_features

        elif zoobot_checkpoint_loc is not None:
            assert encoder is None, 'Cannot pass both checkpoint to load and encoder to use'
            self.encoder = load_pretrained_zoobot(zoobot_checkpoint_loc)
            self.encoder_dim = define_model.get_encoder_dim(self.encoder)

        else:
            assert zoobot_checkpoint_loc is None, 'Cannot pass both checkpoint to load and encoder to use'
            assert encoder is not None, 'Must pass either checkpoint to load or encoder to use'
            self.encoder = encoder
            # work out encoder dim 'manually'
            self.encoder_dim = define_model.get_encoder_dim(self.encoder)

        self.n_blocks = n_blocks

        self.learning_rate = learning_rate
        self.lr_decay = lr_decay
        self.weight_decay = weight_decay
        self.dropout_prob = dropout_prob

        self.cosine_schedule = cosine_schedule
        self.warmup_epochs = warmup_epochs
        self.max_cosine_epochs = max_cosine_epochs
        self.max_learning_rate_reduction_factor = max_learning_rate_reduction_factor

        self.always_train_batchnorm = always_train_batchnorm
        if self.always_train_batchnorm:
            raise NotImplementedError('Temporarily deprecated, always_train_batchnorm=True is now the default behaviour')

        self.train_loss_metric = tm.MeanMetric()
        self.val_loss_metric = tm.MeanMetric()
        self.test_loss_metric = tm.MeanMetric()

        self.seed = seed
        self.prog_bar = prog_bar
        self.visualize_images = visualize_images

    def configure_optimizers(self):
        """
        This controls which parameters get optimized

        self.head is always optimized, with no learning rate decay
        when self.n_blocks == 0, only self.head is optimized (i.e. frozen* encoder)

        for self.encoder, we enumerate the blocks (groups of layers) to potentially finetune
        and then pick the top self.n_blocks to finetune

        weight_decay is applied to both the head and (if relevant) the encoder
        learning rate decay is applied to the encoder only: lr x (lr_decay^block_n), ignoring the head (block 0)

        What counts as a "block" is a bit fuzzy, but I generally use the self.encoder.stages from timm.
        """

        lr = self.learning_rate
        params = [{"params": self.head.parameters(), "lr": lr}]

        logging.info(f'Encoder architecture to finetune: {type(self.encoder)}')

        # for now, checking if the encoder is a timm model based on the module name
        if isinstance(self.encoder, timm.models.EfficientNet):  # includes v2
            # TODO for now, these count as separate layers, not ideal
            early_tuneable_layers = [self.encoder.conv_stem, self.encoder.bn1]
            encoder_blocks = list(self.encoder.blocks)
            tuneable_blocks = early_tuneable_layers + encoder_blocks
        elif isinstance(self.encoder, timm.models.ResNet):
            # all timm resnets seem to have this structure
            tuneable_blocks = [
                # similarly
                self.encoder.conv1,
                self.encoder.bn1,
                self.encoder.layer1,
                self.encoder.layer2,
                self.encoder.layer3,
                self.encoder.layer4,
            ]
        elif isinstance(self.encoder, timm.models.MaxxVit):
            tuneable_blocks = [self.encoder.stem] + [stage for stage in self.encoder.stages]
        elif isinstance(self.encoder, timm.models.ConvNeXt):  # stem + 4 blocks, for all sizes
            # https://github.com/huggingface/pytorch-image-models/blob/main/timm/models/convnext.py#L264
            tuneable_blocks = [self.encoder.stem] + [stage for stage in self.encoder.stages]
        else:
            raise ValueError(f'Encoder architecture not automatically recognised: {type(self.encoder)}')

        assert self.n_blocks <= len(
            tuneable_blocks
        ), f"Network only has {len(tuneable_blocks)} tuneable blocks, {self.n_blocks} specified for finetuning"

        # take n blocks, ordered highest layer to lowest layer
        tuneable_blocks.reverse()
        logging.info('possible blocks to tune: {}'.format(len(tuneable_blocks)))
        # will finetune all params in first N
        logging.info('blocks that will be tuned: {}'.format(self.n_blocks))
        blocks_to_tune = tuneable_blocks[: self.n_blocks]
        # optionally, can finetune batchnorm params in remaining layers
        remaining_blocks = tuneable_blocks[self.n_blocks:]
        logging.info('Remaining blocks: {}'.format(len(remaining_blocks)))
        assert not any([block in remaining_blocks for block in blocks_to_tune]), 'Some blocks are in both tuneable and remaining'

        # Append parameters of layers for finetuning along with decayed learning rate
        for i, block in enumerate(blocks_to_tune):  # _ is the block name e.g. '3'
            logging.info(f'Adding block {block} with lr {lr * (self.lr_decay**i)}')
            params.append({"params": block.parameters(), "lr": lr * (self.lr_decay**i)})

        # optionally, for the remaining layers (not otherwise finetuned) you can choose to still FT the batchnorm layers
        for i, block in enumerate(remaining_blocks):
            if self.always_train_batchnorm:
                raise NotImplementedError
                # _, block_batch_norm_params = get_batch_norm_params_lighting(block)
                # params.append({"params": block_batch_norm_params, "lr": lr * (self.lr_decay**i)})

        logging.info('param groups: {}'.format(len(params)))

        # because it iterates through the generators, THIS BREAKS TRAINING so only uncomment to debug params
        # for param_group_n, param_group in enumerate(params):
        #     shapes_within_param_group = [p.shape for p in list(param_group['params'])]
        #     logging.debug('param group {}: {}'.format(param_group_n, shapes_within_param_group))
        # print('head params to optimize', [p.shape for p in params[0]['params']])  # head only
        # print(list(param_group['params']) for param_group in params)
        # exit()
        # Initialize AdamW optimizer
        opt = torch.optim.AdamW(params, weight_decay=self.weight_decay)  # lr included in params dict
        logging.info('Optimizer ready, configuring scheduler')

        if self.cosine_schedule:
            logging.info('Using lightly cosine schedule, warmup for {} epochs, max for {} epochs'.format(
                self.warmup_epochs, self.max_cosine_epochs))
            # from lightly.utils.scheduler import CosineWarmupScheduler  # copied from lightly instead
            # warmup_epochs = int(self.warmup_epochs * self.trainer.max_epochs)
            lr_scheduler = schedulers.CosineWarmupScheduler(
                optimizer=opt,
                warmup_epochs=self.warmup_epochs,
                max_epochs=self.max_cosine_epochs,
                start_value=self.learning_rate,
                end_value=self.learning_rate * self.max_learning_rate_reduction_factor,
            )

            # lr_scheduler_config default is frequency=1, interval=epoch
            return {
                "optimizer": opt,
                "lr_scheduler": {
                    'scheduler': lr_scheduler,
                    'interval': 'epoch',
                    'frequency': 1,
                },
            }
        else:
            logging.info('Learning rate scheduler not used')
        return opt

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.encoder(x)
        x = self.head(x)
        # TODO encoder output shape changes with input shape (of course) so need to specify explicitly or skip
        return x

    def make_step(self, batch):
        y, y_pred, loss = self.run_step_through_model(batch)
        return self.step_to_dict(y, y_pred, loss)

    def run_step_through_model(self, batch):
        # part of training/val/test for all subclasses
        x, y = self.batch_to_supervised_tuple(batch)
        y_pred = self.forward(x)
        loss = self.loss(y_pred, y)  # must be subclasses and specified
        loss.float()
        return y, y_pred, loss

    def batch_to_supervised_tuple(self, batch):
        # defaults to x, y tuple, but can be overridden by subclasses e.g. for dict input
        return batch['image'], batch[self.label_col]

    def step_to_dict(self, y, y_pred, loss):
        return {'loss': loss.mean(), 'predictions': y_pred, 'labels': y}

    def training_step(self, batch, batch_idx):
        return self.make_step(batch)

    def validation_step(self, batch, batch_idx):
        return self.make_step(batch)

    def test_step(self, batch, batch_idx):
        return self.make_step(batch)

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        # I can't work out how to get webdataset to return a single item im, not a tuple (im,).
        # this is fine for training but annoying for predict
        # help welcome. meanwhile, this works around it
        if isinstance(batch, list) and len(batch) == 1:
            return self(batch[0])
        return self(batch)

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.train_loss_metric(outputs['loss'])
        self.log(
            "finetuning/train_loss",
            self.train_loss_metric,
            prog_bar=self.prog_bar,
            on_step=False,
            on_epoch=True,
        )

    def on_validation_batch_end(self, outputs, batch, batch_idx):
        self.val_loss_metric(outputs['loss'])
        self.log(
            "finetuning/val_loss",
            self.val_loss_metric,
            prog_bar=self.prog_bar,
            on_step=False,
            on_epoch=True,
        )
        # unique to val batch end
        if self.visualize_images:
            self.upload_images_to_wandb(outputs, batch, batch_idx)

    def on_test_batch_end(self, outputs, batch, batch_idx):
        self.test_loss_metric(outputs['loss'])
        self.log(
            "finetuning/test_loss",
            self.test_loss_metric,
            on_step=False,
            on_epoch=True,
        )

    def on_train_epoch_start(self) -> None:
        # called every time model is put in train mode (by lightning)
        freeze_batchnorm_layers(self.encoder)

    def upload_images_to_wandb(self, outputs, batch, batch_idx):
        raise NotImplementedError('Must be subclassed')


class FinetuneableZoobotClassifier(FinetuneableZoobotAbstract):
    """
    Pretrained Zoobot model intended for finetuning on a classification problem.

    Any args not listed below are passed to :class:``FinetuneableZoobotAbstract`` (for example, `learning_rate`).
    These are shared between classifier, regressor, and tree models.
    See the docstring of :class:``FinetuneableZoobotAbstract`` for more.

    Models can be loaded with `FinetuneableZoobotClassifier(name=...)` e.g.
    `FinetuneableZoobotClassifier(name='hf_hub:mwalmsley/zoobot-encoder-convnext_nano', num_classes=2)`.

    Args:
        num_classes (int): num. of target classes (e.g. 2 for binary classification).
        label_col (str): Name of the column in the dataframe/batch dict with the integer labels.
        label_smoothing (float, optional): See torch cross_entropy_loss docs. Defaults to 0.
        class_weights (arraylike, optional): See torch cross_entropy_loss docs. Defaults to None.
        run_linear_sanity_check (bool, optional): Before fitting, use sklearn to fit a linear model. Defaults to False.
    """

    def __init__(
        self,
        num_classes: int,
        label_col: str = 'label',
        label_smoothing=0.,
        class_weights=None,
        run_linear_sanity_check=False,
        **super_kwargs
    ) -> None:

        super().__init__(**super_kwargs)

        logging.info('Using classification head and cross-entropy loss')
        self.head = LinearHead(
            input_dim=self.encoder_dim,
            output_dim=num_classes,
            dropout_prob=self.dropout_prob,
        )
        self.label_smoothing = label_smoothing
        self.label_col = label_col

        # if isinstance(class_weights, list) or isinstance(class_weights, np.ndarray):
        if class_weights is not None:
            # https://lightning.ai/docs/pytorch/stable/accelerators/accelerator_prepare.html#init-tensors-using-tensor-to-and-register-buffer
            self.register_buffer('class_weights', torch.Tensor(class_weights))
            print(self.class_weights, self.class_weights.device)
            # can now use self.class_weights in forward pass and will be on correct device (because treated as model parameters)
        else:
            self.class_weights = None

        self.loss = partial(
            cross_entropy_loss,
            weight=self.class_weights,
            label_smoothing=self.label_smoothing,
        )
        logging.info(f'num_classes: {num_classes}')

        if num_classes == 2:
            logging.info('Using binary classification')
            task = 'binary'
        else:
            logging.info('Using multi-class classification')
            task = 'multiclass'
        self.train_acc = tm.Accuracy(task=task, average="micro", num_classes=num_classes)
        self.val_acc = tm.Accuracy(task=task, average="micro", num_classes=num_classes)
        self.test_acc = tm.Accuracy(task=task, average="micro", num_classes=num_classes)

        self.run_linear_sanity_check = run_linear_sanity_check

    def step_to_dict(self, y, y_pred, loss):
        y_class_preds = torch.argmax(y_pred, axis=1)  # type: ignore
        return {'loss': loss.mean(), 'predictions': y_pred, 'labels': y, 'class_predictions': y_class_preds}

    def on_train_batch_end(self, step_output, *args):
        super().on_train_batch_end(step_output, *args)

        self.train_acc(step_output['class_predictions'], step_output['labels'])
        self.log(
            'finetuning/train_acc',
            self.train_acc,
            on_step=False,
            on_epoch=True,
            prog_bar=self.prog_bar,
        )

    def on_validation_batch_end(self, step_output, *args):
        super().on_validation_batch_end(step_output, *args)

        self.val_acc(step_output['class_predictions'], step_output['labels'])
        self.log(
            'finetuning/val_acc',
            self.val_acc,
            on_step=False,
            on_epoch=True,
            prog_bar=self.prog_bar,
        )

    def on_test_batch_end(self, step_output, *args) -> None:
        super().on_test_batch_end(step_output, *args)

        self.test_acc(step_output['class_predictions'], step_output['labels'])
        self.log(
            "finetuning/test_acc",
            self.test_acc,
            on_step=False,
            on_epoch=True,
        )

    def predict_step(self, x: Union[list[torch.Tensor], torch.Tensor], batch_idx):
        # see Abstract version
        if isinstance(x, list) and len(x) == 1:
            return self(x[0])
        x = self.forward(x)  # logits from LinearHead
        # then applies softmax
        return F.softmax(x, dim=1)

    def upload_images_to_wandb(self, outputs, batch, batch_idx):
        # self.logger is set by L.Trainer(logger=) argument
        if (self.logger is not None) and (batch_idx == 0):
            x, y = self.batch_to_supervised_tuple(batch)
            y_pred_softmax = F.softmax(outputs['predictions'], dim=1)
            n_images = 5
            images = [img for img in x[:n_images]]
            captions = [f'Ground Truth: {y_i} \nPrediction: {y_p_i}' for y_i, y_p_i in zip(
                y[:n_images], y_pred_softmax[:n_images])]
            self.logger.log_image(  # type: ignore
                key='val_images',
                images=images,
                caption=captions)

    def on_train_start(self) -> None:
        if self.run_linear_sanity_check:
            self.sanity_check_with_linear_model()

    def sanity_check_with_linear_model(self):
        """Fit a quick sklearn logistic regression on frozen embeddings as a sanity check."""
        from sklearn.linear_model import LogisticRegression
        from sklearn.metrics import accuracy_score

        logging.info('Running linear sanity check')
        datamodule = self.trainer.datamodule
        embeddings, labels = [], []
        self.encoder.eval()
        with torch.no_grad():
            for batch in datamodule.train_dataloader():
                x, y = self.batch_to_supervised_tuple(batch)
                # keep the sanity check on the same device as the model
                embeddings.append(self.encoder(x.to(self.device)).cpu())
                labels.append(y.cpu())
                if len(labels) > 20:
                    break
        embeddings = torch.cat(embeddings).numpy()
        labels = torch.cat(labels).numpy()
        clf = LogisticRegression(max_iter=1000).fit(embeddings, labels)
        logging.info('Linear sanity check accuracy (train): {:.3f}'.format(accuracy_score(labels, clf.predict(embeddings))))
        self.encoder.train()


class LinearHead(torch.nn.Module):
    def __init__(self, input_dim: int, output_dim: int, dropout_prob=0.5, activation=None):
        """
        Small utility class for a linear head with dropout and optional choice of activation.

        - Apply dropout to features before the final linear layer.
        - Apply a final linear layer
        - Optionally, apply `activation` callable

        Args:
            input_dim (int): input dim of the linear layer (i.e. the encoder output dimension)
            output_dim (int): output dim of the linear layer (often e.g. N for N classes, or 1 for regression)
            dropout_prob (float, optional): Dropout probability. Defaults to 0.5.
            activation (callable, optional): callable expecting tensor e.g. torch softmax. Defaults to None.
        """
        # input dim is representation dim, output_dim is num classes
        super(LinearHead, self).__init__()
        self.output_dim = output_dim
        self.dropout = torch.nn.Dropout(p=dropout_prob)
        self.linear = torch.nn.Linear(input_dim, output_dim)
        self.activation = activation

    def forward(self, x):
        """
        returns logits, as recommended for CrossEntropy loss

        Args:
            x (torch.Tensor): encoded representation

        Returns:
            torch.Tensor: result (see docstring of LinearHead)
        """
        # returns logits, as recommended for CrossEntropy loss
        x = self.dropout(x)
        x = self.linear(x)
        if self.activation is not None:
            x = self.activation(x)
        if self.output_dim == 1:
            return x.squeeze()
        else:
            return x


def cross_entropy_loss(y_pred: torch.Tensor, y: torch.Tensor, label_smoothing: float = 0., weight=None):
    """
    Calculate cross-entropy loss with optional label smoothing and class weights. No aggregation applied.
    Trivial wrapper of torch.nn.functional.cross_entropy with reduction='none'.

    Args:
        y_pred (torch.Tensor): ints of shape (batch)
        y (torch.Tensor): predictions of shape (batch, classes)
        label_smoothing (float, optional): See docstring of torch.nn.functional.cross_entropy. Defaults to 0..
        weight (arraylike, optional): See docstring of torch.nn.functional.cross_entropy. Defaults to None.

    Returns:
        torch.Tensor: unreduced cross-entropy loss
    """
    return F.cross_entropy(y_pred, y.long(), label_smoothing=label_smoothing, weight=weight, reduction='none')


def load_pretrained_zoobot(checkpoint_loc: str) -> torch.nn.Module:
    """
    Args:
        checkpoint_loc (str): path to saved LightningModule checkpoint, likely of :class:`ZoobotTree`, :class:`FinetuneableZoobotClassifier`, or :class:`FinetunabelZoobotTree`. Must have .zoobot attribute.

    Returns:
        torch.nn.Module: pretrained PyTorch encoder within that LightningModule.
    """
    if torch.cuda.is_available():
        map_location = None
    else:
        # necessary to load gpu-trained model on cpu
        map_location = torch.device('cpu')
    return define_model.ZoobotTree.load_from_checkpoint(checkpoint_loc, map_location=map_location).encoder  # type: ignore


def get_trainer(
    save_dir: str,
    file_template="{epoch}",
    save_top_k=1,
    max_epochs=100,
    patience=10,
    devices='auto',
    accelerator='auto',
    logger=None,
    **trainer_kwargs
) -> L.Trainer:
    """
    Convenience wrapper to create a PyTorch Lightning Trainer that carries out the finetuning process.
    Use like so: trainer.fit(model, datamodule)

    `get_trainer` args are for common Trainer settings e.g. early stopping checkpointing, etc.
    By default:
    - Saves the top-k models based on validation loss
    - Uses early stopping with `patience` i.e. end training if validation loss does not improve after `patience` epochs.
    - Monitors the learning rate (useful when using a learning rate scheduler)

    Any extra args not listed below are passed directly to the PyTorch Lightning Trainer.
    Use this to add any custom configuration not covered by the `get_trainer` args.
    See https://lightning.ai/docs/pytorch/stable/common/trainer.html

    Args:
        save_dir (str): folder in which to save checkpoints and logs.
        file_template (str, optional): custom naming for checkpoint files. See Lightning docs. Defaults to "{epoch}".
        save_top_k (int, optional): save the top k checkpoints only. Defaults to 1.
        max_epochs (int, optional): train for up to this many epochs. Defaults to 100.
        patience (int, optional): wait up to this many epochs for decreasing loss before ending training. Defaults to 10.
        devices (str, optional): number of devices for training (typically, num. GPUs). Defaults to 'auto'.
        accelerator (str, optional): which device to use (typically 'gpu' or 'cpu'). Defaults to 'auto'.
        logger (L.pytorch.loggers.wandb_logger, optional): If L.pytorch.loggers.wandb_logger, track experiment on Weights and Biases. Defaults to None.

    Returns:
        L.Trainer: PyTorch Lightning trainer object for finetuning a model on a L.LightningDataModule.
    """

    checkpoint_callback = ModelCheckpoint(
        dirpath=os.path.join(save_dir, 'checkpoints'),
        monitor="finetuning/val_loss",
        every_n_epochs=1,
        save_on_train_epoch_end=True,
        auto_insert_metric_name=False,
        verbose=True,
        save_top_k=save_top_k,
        filename=file_template,
    )

    early_stopping_callback = EarlyStopping(
        monitor='finetuning/val_loss',
        mode='min',
        patience=patience,
    )

    learning_rate_monitor_callback = LearningRateMonitor(logging_interval='epoch')

    if logger is None:
        logger = CSVLogger(save_dir=save_dir)

    # Initialise pytorch lightning trainer
    trainer = L.Trainer(
        logger=logger,
        callbacks=[
            checkpoint_callback,
            early_stopping_callback,
            learning_rate_monitor_callback,
        ],
        max_epochs=max_epochs,
        accelerator=accelerator,
        devices=devices,
        **trainer_kwargs,
    )

    return trainer


# https://github.com/inigoval/byol/blob/1da1bba7dc5cabe2b47956f9d7c6277decd16cc7/byol_main/networks/models.py#L29
def get_batch_norm_params_lighting(parent_module, current_params=[]):
    for child_module in parent_module.children():
        if isinstance(child_module, torch.nn.BatchNorm2d):
            current_params += child_module.parameters()
        else:
            current_params = get_batch_norm_params_lighting(child_module, current_params)
    return current_params
