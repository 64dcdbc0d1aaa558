import numpy as np
import torch
try:
    import torch.utils.tensorboard
    _has_tensorboard = True
except:
    _has_tensorboard = False
import time
import logging
import os
import datetime
from deepchem.data import Dataset, NumpyDataset
from deepchem.metrics import Metric
from deepchem.models.losses import Loss
from deepchem.models.models import Model
from deepchem.models.optimizers import Adam, Optimizer, LearningRateSchedule
from deepchem.trans import Transformer, undo_transforms
from deepchem.utils.evaluate import GeneratorEvaluator

from collections.abc import Sequence as SequenceCollection
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, Union
from deepchem.utils.typing import LossFn, OneOrMany
from deepchem.models.wandblogger import WandbLogger

try:
    import wandb
    wandb.ensure_configured()
    if wandb.api.api_key is None:
        _has_wandb = False
        wandb.termwarn(
            "W&B installed but not logged in.  Run `wandb login` or set the WANDB_API_KEY env variable."
        )
    else:
        _has_wandb = True
except (ImportError, AttributeError):
    _has_wandb = False

logger = logging.getLogger(__name__)


class TorchModel(Model):
    """This is a DeepChem model implemented by a PyTorch model.

    Here is a simple example of code that uses TorchModel to train
    a PyTorch model on a DeepChem dataset.

    >>> import torch
    >>> import deepchem as dc
    >>> import numpy as np
    >>> X, y = np.random.random((10, 100)), np.random.random((10, 1))
    >>> dataset = dc.data.NumpyDataset(X=X, y=y)
    >>> pytorch_model = torch.nn.Sequential(
    ...   torch.nn.Linear(100, 1000),
    ...   torch.nn.Tanh(),
    ...   torch.nn.Linear(1000, 1))
    >>> model = dc.models.TorchModel(pytorch_model, loss=dc.models.losses.L2Loss())
    >>> loss = model.fit(dataset, nb_epoch=5)

    The loss function for a model can be defined in two different
    ways.  For models that have only a single output and use a
    standard loss function, you can simply provide a
    dc.models.losses.Loss object.  This defines the loss for each
    sample or sample/task pair.  The result is automatically
    multiplied by the weights and averaged over the batch.

    By default the model is placed on the GPU if one is available
    (``torch.device('cuda')``), otherwise on Apple's MPS backend or the CPU.
    Pass ``device`` explicitly to override this.
    """

    def __init__(self,
                 model: torch.nn.Module,
                 loss: Union[Loss, LossFn],
                 output_types: Optional[List[str]] = None,
                 batch_size: int = 100,
                 model_dir: Optional[str] = None,
                 learning_rate: Union[float, LearningRateSchedule] = 0.001,
                 optimizer: Optional[Optimizer] = None,
                 tensorboard: bool = False,
                 wandb: bool = False,
                 log_frequency: int = 100,
                 device: Optional[torch.device] = None,
                 regularization_loss: Optional[Callable] = None,
                 wandb_logger: Optional[WandbLogger] = None,
                 **kwargs) -> None:
        """Create a new TorchModel.

        Parameters
        ----------
        model: torch.nn.Module
            the PyTorch model implementing the calculation
        loss: dc.models.losses.Loss or function
            a Loss or function defining how to compute the training loss for each
            batch, as described above
        output_types: list of strings, optional (default None)
            the type of each output from the model, as described above
        batch_size: int, optional (default 100)
            default batch size for training and evaluating
        model_dir: str, optional (default None)
            the directory on disk where the model will be stored.  If this is None,
            a temporary directory is created.
        learning_rate: float or LearningRateSchedule, optional (default 0.001)
            the learning rate to use for fitting.  If optimizer is specified, this is
            ignored.
        optimizer: Optimizer, optional (default None)
            the optimizer to use for fitting.  If this is specified, learning_rate is
            ignored.
        tensorboard: bool, optional (default False)
            whether to log progress to TensorBoard during training
        wandb: bool, optional (default False)
            whether to log progress to Weights & Biases during training
        log_frequency: int, optional (default 100)
            The frequency at which to log data. Data is logged using
            `logging` by default. If `tensorboard` is set, data is also
            logged to TensorBoard. If `wandb` is set, data is also logged
            to Weights & Biases. Logging happens at global steps. Roughly,
            a global step corresponds to one batch of training. If you'd
            like a printout every 10 batch steps, you'd set
            `log_frequency=10` for example.
        device: torch.device, optional (default None)
            the device on which to run computations.  If None, a device is
            chosen automatically.
        regularization_loss: Callable, optional
            a function that takes no arguments, and returns an extra contribution to add
            to the loss function
        wandb_logger: WandbLogger
            the Weights & Biases logger object used to log data and metrics
        """
        super(TorchModel, self).__init__(model=model,
                                         model_dir=model_dir,
                                         **kwargs)
        self.loss = loss  # not used
        self.learning_rate = learning_rate  # not used
        self.output_types = output_types  # not used
        if isinstance(loss, Loss):
            self._loss_fn: LossFn = _StandardLoss(self, loss)
        else:
            self._loss_fn = loss
        self.batch_size = batch_size
        if optimizer is None:
            self.optimizer: Optimizer = Adam(learning_rate=learning_rate)
        else:
            self.optimizer = optimizer
        self.tensorboard = tensorboard
        self.regularization_loss = regularization_loss

        # Select a device.

        if device is None:
            if torch.cuda.is_available():
                device = torch.device('cuda')
            elif torch.backends.mps.is_available():
                device = torch.device('mps')
            else:
                device = torch.device('cpu')
        self.device = device
        self.model = model.to(device)

        # W&B logging
        if wandb:
            logger.warning(
                "`wandb` argument is deprecated. Please use `wandb_logger` instead. "
                "This argument will be removed in a future release of DeepChem.")
        if wandb and not _has_wandb:
            logger.warning(
                "You set wandb to True but W&B is not installed. To use wandb logging, "
                "run `pip install wandb; wandb login`")
        self.wandb = wandb and _has_wandb

        self.wandb_logger = wandb_logger
        # If `wandb=True` and no logger is provided, initialize default logger
        if self.wandb and (self.wandb_logger is None):
            self.wandb_logger = WandbLogger()

        # Setup and initialize W&B logging
        if (self.wandb_logger
                is not None) and (not self.wandb_logger.initialized):
            self.wandb_logger.setup()

        # Update config with KerasModel params
        wandb_logger_config = dict(loss=loss,
                                   output_types=output_types,
                                   batch_size=batch_size,
                                   model_dir=model_dir,
                                   learning_rate=learning_rate,
                                   optimizer=optimizer,
                                   tensorboard=tensorboard,
                                   log_frequency=log_frequency,
                                   regularization_loss=regularization_loss)
        wandb_logger_config.update(**kwargs)

        if self.wandb_logger is not None:
            self.wandb_logger.update_config(wandb_logger_config)

        self.log_frequency = log_frequency
        if self.tensorboard and not _has_tensorboard:
            raise ImportError("This class requires tensorboard to be installed.")
        if self.tensorboard:
            self._summary_writer = torch.utils.tensorboard.SummaryWriter(
                self.model_dir)
        if output_types is None:
            self._prediction_outputs = None
            self._loss_outputs = None
            self._variance_outputs = None
            self._other_outputs = None
        else:
            self._prediction_outputs = []
            self._loss_outputs = []
            self._variance_outputs = []
            self._other_outputs = []
            for i, type in enumerate(output_types):
                if type == 'prediction':
                    self._prediction_outputs.append(i)
                elif type == 'loss':
                    self._loss_outputs.append(i)
                elif type == 'variance':
                    self._variance_outputs.append(i)
                else:
                    self._other_outputs.append(i)
            if len(self._loss_outputs) == 0:
                self._loss_outputs = self._prediction_outputs
        self._built = False
        self._output_functions: Dict[Any, Any] = {}
        self._optimizer_for_vars: Dict[Any, Any] = {}

    def _ensure_built(self) -> None:
        """The first time this is called, create internal data structures."""
        if self._built:
            return
        self._built = True
        self._global_step = 0
        self._pytorch_optimizer = self.optimizer._create_pytorch_optimizer(
            self.model.parameters())
        if isinstance(self.optimizer.learning_rate, LearningRateSchedule):
            self._lr_schedule = self.optimizer.learning_rate._create_pytorch_schedule(
                self._pytorch_optimizer)
        else:
            self._lr_schedule = None

    def fit_generator(self,
                      generator: Iterable[Tuple[Any, Any, Any]],
                      max_checkpoints_to_keep: int = 5,
                      checkpoint_interval: int = 1000,
                      restore: bool = False,
                      variables: Optional[List[torch.nn.Parameter]] = None,
                      loss: Optional[LossFn] = None,
                      callbacks: Union[Callable, List[Callable]] = [],
                      all_losses: Optional[List[float]] = None) -> float:
        """Train this model on data from a generator."""
        if not isinstance(callbacks, SequenceCollection):
            callbacks = [callbacks]
        self._ensure_built()
        self.model.train()
        avg_loss = 0.0
        last_avg_loss = 0.0
        averaged_batches = 0
        if loss is None:
            loss = self._loss_fn
        optimizer = self._pytorch_optimizer
        lr_schedule = self._lr_schedule
        time1 = time.time()

        # Main training loop.

        for batch in generator:
            if restore:
                self.restore()
                restore = False
            inputs: OneOrMany[torch.Tensor]
            inputs, labels, weights = self._prepare_batch(batch)

            # Execute the loss function, accumulating the gradients.

            if isinstance(inputs, list) and len(inputs) == 1:
                inputs = inputs[0]

            optimizer.zero_grad()
            outputs = self.model(inputs)
            if isinstance(outputs, torch.Tensor):
                outputs = [outputs]
            if self._loss_outputs is not None:
                outputs = [outputs[i] for i in self._loss_outputs]
            batch_loss = loss(outputs, labels, weights)
            batch_loss.backward()
            optimizer.step()
            if lr_schedule is not None:
                lr_schedule.step()
            self._global_step += 1
            current_step = self._global_step

            avg_loss += batch_loss.item()

            # Report progress and write checkpoints.
            averaged_batches += 1
            should_log = (current_step % self.log_frequency == 0)
            if should_log:
                avg_loss = float(avg_loss) / averaged_batches
                logger.info('Ending global_step %d: Average loss %g' %
                            (current_step, avg_loss))
                if all_losses is not None:
                    all_losses.append(avg_loss)
                # Capture the last avg_loss in case of return since we're resetting to 0 now
                last_avg_loss = avg_loss
                avg_loss = 0.0
                averaged_batches = 0

            if checkpoint_interval > 0 and current_step % checkpoint_interval == checkpoint_interval - 1:
                self.save_checkpoint(max_checkpoints_to_keep)
            for c in callbacks:
                c(self, current_step)
            if self.tensorboard and should_log:
                self._log_scalar_to_tensorboard('loss', batch_loss, current_step)
            if (self.wandb_logger is not None) and should_log:
                all_data = dict({'train/loss': batch_loss})
                self.wandb_logger.log_data(all_data, step=current_step)

        # Report final results.
        if averaged_batches > 0:
            avg_loss = float(avg_loss) / averaged_batches
            logger.info('Ending global_step %d: Average loss %g' %
                        (current_step, avg_loss))
            if all_losses is not None:
                all_losses.append(avg_loss)
            last_avg_loss = avg_loss

        if checkpoint_interval > 0:
            self.save_checkpoint(max_checkpoints_to_keep)

        time2 = time.time()
        logger.info("TIMING: model fitting took %0.3f s" % (time2 - time1))
        return last_avg_loss

    def _prepare_batch(
        self, batch: Tuple[Any, Any, Any]
    ) -> Tuple[List[torch.Tensor], List[torch.Tensor], List[torch.Tensor]]:
        inputs, labels, weights = batch
        inputs = [
            x.astype(np.float32) if x.dtype == np.float64 else x for x in inputs
        ]
        input_tensors = [torch.as_tensor(x, device=self.device) for x in inputs]
        if labels is not None:
            labels = [
                x.astype(np.float32) if x.dtype == np.float64 else x
                for x in labels
            ]
            label_tensors = [
                torch.as_tensor(x, device=self.device) for x in labels
            ]
        else:
            label_tensors = []
        if weights is not None:
            weights = [
                x.astype(np.float32) if x.dtype == np.float64 else x
                for x in weights
            ]
            weight_tensors = [
                torch.as_tensor(x, device=self.device) for x in weights
            ]
        else:
            weight_tensors = []

        return (input_tensors, label_tensors, weight_tensors)

    def save_checkpoint(self,
                        max_checkpoints_to_keep: int = 5,
                        model_dir: Optional[str] = None) -> None:
        """Save a checkpoint to disk."""
        self._ensure_built()
        if model_dir is None:
            model_dir = self.model_dir
        if not os.path.exists(model_dir):
            os.makedirs(model_dir)

        # Save the checkpoint to a file.

        data = {
            'model_state_dict': self.model.state_dict(),
            'optimizer_state_dict': self._pytorch_optimizer.state_dict(),
            'global_step': self._global_step
        }
        temp_file = os.path.join(model_dir, 'temp_checkpoint.pt')
        torch.save(data, temp_file)

        # Rename and delete older files.

        paths = [
            os.path.join(model_dir, 'checkpoint%d.pt' % (i + 1))
            for i in range(max_checkpoints_to_keep)
        ]
        if os.path.exists(paths[-1]):
            os.remove(paths[-1])
        for i in reversed(range(max_checkpoints_to_keep - 1)):
            if os.path.exists(paths[i]):
                os.rename(paths[i], paths[i + 1])
        os.rename(temp_file, paths[0])

    def get_checkpoints(self, model_dir: Optional[str] = None):
        """Get a list of all available checkpoint files."""
        if model_dir is None:
            model_dir = self.model_dir
        files = sorted(os.listdir(model_dir))
        files = [
            f for f in files if f.startswith('checkpoint') and f.endswith('.pt')
        ]
        return [os.path.join(model_dir, f) for f in files]

    def restore(self,
                checkpoint: Optional[str] = None,
                model_dir: Optional[str] = None,
                strict: Optional[bool] = True) -> None:
        """Reload the values of all variables from a checkpoint file."""
        self._ensure_built()
        if checkpoint is None:
            checkpoints = sorted(self.get_checkpoints(model_dir))
            if len(checkpoints) == 0:
                raise ValueError('No checkpoint found')
            checkpoint = checkpoints[0]
        data = torch.load(checkpoint, map_location=self.device)
        self.model.load_state_dict(data['model_state_dict'], strict=strict)
        self._pytorch_optimizer.load_state_dict(data['optimizer_state_dict'])
        self._global_step = data['global_step']

    def get_global_step(self) -> int:
        """Get the number of steps of fitting that have been performed."""
        if self._built:
            return int(self._global_step)
        return 0

    def _log_scalar_to_tensorboard(self, name: str, value: Any, step: int):
        """Log a scalar value to Tensorboard."""
        self._summary_writer.add_scalar(name, value, step)


class _StandardLoss(object):
    """The implements the loss function for models that use a dc.models.losses.Loss."""

    def __init__(self, model: TorchModel, loss: Loss) -> None:
        self.model = model
        self.loss = loss  # not used
        self.criterion = loss._create_pytorch_loss()  # not used

    def __call__(self, outputs: List, labels: List, weights: List) -> float:
        if len(outputs) != 1 or len(labels) != 1 or len(weights) != 1:
            raise ValueError(
                "Loss functions expects exactly one each of outputs, labels, and weights"
            )
        losses = self.criterion(outputs[0], labels[0])
        w = weights[0]
        if len(w.shape) < len(losses.shape):
            if isinstance(w, torch.Tensor):
                shape = tuple(w.shape)
            else:
                shape = w.shape
            shape = tuple(-1 if x is None else x for x in shape)
            w = w.reshape(shape + (1,) * (len(losses.shape) - len(w.shape)))

        loss = losses * w
        loss = loss.mean()
        if self.model.regularization_loss is not None:
            loss += self.model.regularization_loss()
        return loss
