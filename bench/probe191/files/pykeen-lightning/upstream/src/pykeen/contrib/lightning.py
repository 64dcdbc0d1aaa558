# -*- coding: utf-8 -*-

"""PyTorch Lightning integration.

PyTorch Lightning poses an alternative way to implement a training
loop and evaluation loop for knowledge graph embedding models that
has some nice features:

- mixed precision training
- multi-gpu training

.. code-block:: python

    model = LCWALitModule(
        dataset="fb15k237",
        dataset_kwargs=dict(create_inverse_triples=True),
        model="mure",
        model_kwargs=dict(embedding_dim=128, loss="bcewithlogits"),
        batch_size=128,
    )
    trainer = pytorch_lightning.Trainer(
        accelerator="gpu",  # automatically choose accelerator
        devices=4,
        logger=False,  # defaults to TensorBoard; explicitly disabled here
        precision=32,
        max_epochs=100,
    )
    trainer.fit(model=model)
"""

from abc import abstractmethod
from typing import Any, Mapping, Optional, Sequence

import click
import pytorch_lightning
import torch
import torch.utils.data
from class_resolver import ClassResolver, HintOrType, OptionalKwargs
from pytorch_lightning.strategies import DDPStrategy

from pykeen.datasets import get_dataset
from pykeen.datasets.base import Dataset
from pykeen.losses import Loss
from pykeen.models import ERModel, Model, model_resolver
from pykeen.optimizers import optimizer_resolver
from pykeen.sampling import NegativeSampler
from pykeen.training import SLCWATrainingLoop
from pykeen.triples.triples_factory import CoreTriplesFactory
from pykeen.typing import InductiveMode, OneOrSequence

__all__ = [
    "LitModule",
    "lit_module_resolver",
    "lit_pipeline",
]


class LitModule(pytorch_lightning.LightningModule):
    """A base module for training models with PyTorch Lightning.

    .. seealso:: https://github.com/Lightning-AI/lightning
    """

    def __init__(
        self,
        # dataset
        dataset: HintOrType[Dataset] = "nations",
        dataset_kwargs: OptionalKwargs = None,
        mode: Optional[InductiveMode] = None,
        # model
        model: HintOrType[Model] = "distmult",
        model_kwargs: OptionalKwargs = None,
        # stored outside of the training loop / optimizer to give access to auto-tuning from Lightning
        batch_size: int = 32,
        learning_rate: float = 1.0e-03,
        label_smoothing: float = 0.0,
        # optimizer
        optimizer: HintOrType[torch.optim.Optimizer] = None,
        optimizer_kwargs: OptionalKwargs = None,
        log_accelerator_memory: bool = True,
    ):
        """Create the lightning module."""
        super().__init__()
        self.dataset = get_dataset(dataset=dataset, dataset_kwargs=dataset_kwargs)
        self.model = model_resolver.make(model, model_kwargs, triples_factory=self.dataset.training)
        self.loss = self.model.loss
        self.optimizer_cls = optimizer_resolver.lookup(optimizer)
        self.optimizer_kwargs = optimizer_kwargs or {}
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.label_smoothing = label_smoothing
        self.mode = mode
        self.log_accelerator_memory = log_accelerator_memory

    def forward(self, hr_batch: torch.LongTensor) -> torch.FloatTensor:
        """Perform the prediction or inference step by wrapping :meth:`pykeen.models.ERModel.predict`."""
        return self.model.predict(hr_batch, target="tail", mode=self.mode)

    @abstractmethod
    def _step(self, batch, prefix: str):
        """Perform a step and log with the given prefix."""
        raise NotImplementedError

    def training_step(self, batch, batch_idx):
        """Perform a training step."""
        return self._step(batch, prefix="train")

    def validation_step(self, batch, batch_idx, *args, **kwargs):
        """Perform a validation step."""
        return self._step(batch, prefix="val")

    def on_train_epoch_end(self) -> None:
        """Log the peak accelerator memory after every epoch."""
        if not self.log_accelerator_memory:
            return
        if self.device.type == "cuda":
            peak = torch.cuda.max_memory_allocated(self.device) / 2**20
            self.log("train_peak_mem_mib", peak, prog_bar=False, sync_dist=True)

    @abstractmethod
    def _dataloader(self, triples_factory: CoreTriplesFactory, shuffle: bool = False) -> torch.utils.data.DataLoader:
        """Create a data loader."""
        raise NotImplementedError

    def train_dataloader(self):
        """Create the training data loader."""
        return self._dataloader(triples_factory=self.dataset.training, shuffle=True)

    def val_dataloader(self):
        """Create the validation data loader."""
        # TODO: In sLCWA, we still want to calculate validation *metrics* in LCWA
        if self.dataset.validation is None:
            raise ValueError
        return self._dataloader(triples_factory=self.dataset.validation, shuffle=False)

    def configure_optimizers(self):
        """Configure the optimizers."""
        return self.optimizer_cls(
            params=self.parameters(), lr=self.learning_rate, **self.optimizer_kwargs
        )

    # docstr-coverage: inherited
    def on_before_zero_grad(self, optimizer: torch.optim.Optimizer) -> None:  # noqa: D102
        # call post_parameter_update
        self.model.post_parameter_update()


class SLCWALitModule(LitModule):
    """A PyTorch Lightning module for training a model with sLCWA training loop."""

    def __init__(
        self,
        *,
        negative_sampler: HintOrType[NegativeSampler] = None,
        negative_sampler_kwargs: OptionalKwargs = None,
        **kwargs,
    ):
        """Initialize the lightning module."""
        super().__init__(**kwargs)
        self.negative_sampler = negative_sampler
        self.negative_sampler_kwargs = negative_sampler_kwargs

    def _step(self, batch, prefix: str):  # noqa: D102
        loss = SLCWATrainingLoop._process_batch_static(
            model=self.model,
            loss=self.loss,
            mode=self.mode,
            batch=batch,
            label_smoothing=self.label_smoothing,
            start=None,
            stop=None,
            slice_size=None,
        )
        self.log(f"{prefix}_loss", loss)
        return loss

    def _dataloader(self, triples_factory: CoreTriplesFactory, shuffle: bool = False) -> torch.utils.data.DataLoader:
        return torch.utils.data.DataLoader(
            dataset=triples_factory.create_slcwa_instances(
                batch_size=self.batch_size,
                shuffle=shuffle,
                drop_last=False,
                negative_sampler=self.negative_sampler,
                negative_sampler_kwargs=self.negative_sampler_kwargs,
            ),
            # disable automatic batching in data loader
            sampler=None,
            batch_size=None,
            num_workers=4,
            persistent_workers=True,
        )


#: A resolver for PyTorch Lightning training modules
lit_module_resolver: ClassResolver[LitModule] = ClassResolver.from_subclasses(
    base=LitModule,
    default=SLCWALitModule,
    # note: "LitModule" is the default suffix, since the base class is called "LitModule"
)


def lit_pipeline(
    training_loop: HintOrType[LitModule] = None,
    training_loop_kwargs: Optional[Mapping[str, Any]] = None,
    trainer_kwargs: Optional[Mapping[str, Any]] = None,
) -> None:
    """Create a :class:`LitModule` and run :class:`pytorch_lightning.Trainer` with it.

    .. note ::
        this method modifies the model's parameters in-place.

    :param training_loop:
        the training loop or a hint thereof
    :param training_loop_kwargs:
        keyword-based parameters passed to the respective :class:`LitModule` subclass upon instantiation.
    :param trainer_kwargs:
        keyword-based parameters passed to :class:`pytorch_lightning.Trainer`
    """
    pytorch_lightning.Trainer(**(trainer_kwargs or {})).fit(
        model=lit_module_resolver.make(training_loop, pos_kwargs=training_loop_kwargs)
    )


@click.command()
@lit_module_resolver.get_option("-tl", "--training-loop")
@click.option("--dataset", type=str, default="nations")
@click.option("-m", "--model", type=str, default="mure")
@click.option("--batch-size", type=int, default=128, show_default=True)
@click.option("--epochs", type=int, default=10, show_default=True)
@click.option("--accelerator", type=str, default="gpu", show_default=True, help="The Lightning accelerator.")
@click.option("--devices", type=int, default=1, show_default=True, help="Number of GPUs to use.")
@click.option("--precision", type=str, default="32-true", show_default=True)
def _main(
    training_loop: str,
    dataset: str,
    model: str,
    batch_size: int,
    epochs: int,
    accelerator: str,
    devices: int,
    precision: str,
):
    """Run PyTorch lightning model."""
    if devices > 1:
        # every process owns one GPU; gradients are all-reduced with NCCL
        strategy = DDPStrategy(process_group_backend="nccl", find_unused_parameters=False)
    else:
        strategy = "auto"
    lit_pipeline(
        training_loop=training_loop,
        training_loop_kwargs=dict(
            model=model,
            dataset=dataset,
            batch_size=batch_size,
        ),
        trainer_kwargs=dict(
            accelerator=accelerator,
            devices=devices,
            strategy=strategy,
            precision=precision,
            max_epochs=epochs,
            logger=False,
        ),
    )


if __name__ == "__main__":
    _main()
