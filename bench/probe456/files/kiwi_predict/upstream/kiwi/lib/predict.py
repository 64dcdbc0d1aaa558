#  OpenKiwi: Open-Source Machine Translation Quality Estimation
#  Copyright (C) 2020 Unbabel <openkiwi@unbabel.com>
#
#  This program is free software: you can redistribute it and/or modify
#  it under the terms of the GNU Affero General Public License as published
#  by the Free Software Foundation, either version 3 of the License, or
#  (at your option) any later version.
#
#  This program is distributed in the hope that it will be useful,
#  but WITHOUT ANY WARRANTY; without even the implied warranty of
#  MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
#  GNU Affero General Public License for more details.
#
#  You should have received a copy of the GNU Affero General Public License
#  along with this program.  If not, see <https://www.gnu.org/licenses/>.
#
import logging
from pathlib import Path
from typing import Dict, List, Optional

import torch
from pydantic import DirectoryPath, FilePath, validator
from pydantic.types import confloat, conint

from kiwi import constants as const
from kiwi.data.datasets.wmt_qe_dataset import WMTQEDataset
from kiwi.lib import evaluate
from kiwi.lib.evaluate import MetricsReport
from kiwi.lib.utils import (
    configure_logging,
    configure_seed,
    file_to_configuration,
    load_torch_file,
    save_config_to_file,
)
from kiwi.systems.outputs.quality_estimation import QEOutputs
from kiwi.systems.qe_system import BatchSizeConfig, QESystem
from kiwi.utils.io import BaseConfig, save_predicted_probabilities

logger = logging.getLogger(__name__)


class RunConfig(BaseConfig):
    seed: int = 42
    """Random seed"""

    run_id: str = None
    """If specified, MLflow/Default Logger will log metrics and params
    under this ID. If it exists, the run status will change to running.
    This ID is also used for creating this run's output directory.
    (Run ID must be a 32-character hex string)."""

    output_dir: Path = None
    """Output several files for this run under this directory.
    If not specified, a directory under "runs" is created or reused based on the
    Run UUID."""

    predict_on_data_partition: str = 'test'
    """Name of the data partition to predict upon. File names are read from the
    corresponding ``data`` configuration field."""


class Configuration(BaseConfig):
    run: RunConfig
    data: WMTQEDataset.Config
    system: QESystem.Config

    use_gpu: bool = False
    """If true and only if available, use the CUDA device specified in ``gpu_id`` or the
    first CUDA device. Otherwise, use the CPU."""

    gpu_id: Optional[int]
    """Use CUDA on the listed device, only if ``use_gpu`` is true."""

    verbose: bool = False
    quiet: bool = False

    @validator('system', pre=False, always=True)
    def enforce_loading(cls, v):
        if not v.load:
            raise ValueError('`system.load` is required for predicting')
        return v

    @validator('gpu_id', pre=True, always=True)
    def setup_gpu(cls, v, values):
        if values.get('use_gpu'):
            if v is None:
                return 0
            return v
        return None


def load_system(system_path: Path, gpu_id: Optional[int] = None):
    """Load a pretrained system (model) into a `Runner` object.

    Args:
      system_path: A path to the saved checkpoint file produced by a training run.
      gpu_id: id of the gpu to load the model into (-1 or None to use CPU)

    Throws:
      Exception: If the path does not exist, or is not a valid system file.

    """
    system_path = Path(system_path)
    if not system_path.exists():
        raise ValueError(f'Model path does not exist: {system_path}')

    if gpu_id is not None and gpu_id >= 0:
        device = f'cuda:{gpu_id}'
    else:
        device = 'cpu'

    system = QESystem.load(system_path, map_location=device)
    system.to(device)
    system.eval()

    return system


def predict_from_configuration(configuration_dict: Dict):
    """Run the entire prediction pipeline using the configuration options received."""
    config = Configuration(**configuration_dict)

    logging_level = logging.INFO if config.verbose else logging.WARNING
    configure_logging(output_dir=None, verbose=config.verbose, quiet=config.quiet)
    logging.getLogger().setLevel(logging_level)

    output_dir = setup_run(config.run, quiet=config.quiet)
    save_config_to_file(config, output_dir / 'output_config.yaml')

    predictions, metrics = run(config, output_dir)
    save_predicted_probabilities(output_dir, predictions)

    return predictions, metrics


def run(config: Configuration, output_dir: Path) -> (Dict[str, List], MetricsReport):
    """Run the prediction pipeline.

    Load the model and necessary files and create the model's predictions for the
    configured data partition.

    Arguments:
        config: validated configuration values for the (predict) pipeline.
        output_dir: directory where to save predictions.

    Return:
        Predictions: Dictionary with format {'target': predictions}
    """
    outputs_config = None
    if config.system.model and 'outputs' in config.system.model:
        outputs_config = QEOutputs.Config(**config.system.model['outputs'])

    if config.use_gpu and config.gpu_id is not None:
        torch.cuda.set_device(config.gpu_id)

    system = QESystem.load(config.system.load, map_location='cpu')
    if config.use_gpu:
        system.cuda(config.gpu_id)
    if outputs_config:
        system.model.outputs.config = outputs_config

    system.set_config_options(data_config=config.data)

    dataset = getattr(WMTQEDataset, config.run.predict_on_data_partition)
    data = dataset(config.data)
    dataloader = system.prepare_dataloader(
        data, batch_size=config.system.batch_size.test, num_workers=config.system.num_data_workers
    )

    predictions = system.predict(dataloader)

    metrics = None
    if config.data and getattr(config.data, config.run.predict_on_data_partition).output:
        gold_targets = evaluate.retrieve_gold_standard(
            getattr(config.data, config.run.predict_on_data_partition).output
        )
        metrics = evaluate.evaluate_from_predictions(predictions, gold_targets)
        metrics.print_summary()

    return predictions, metrics


def setup_run(config: RunConfig, quiet=False, debug=False, anchor_dir: Path = None):
    """Prepare the output directory and seeds for the prediction pipeline."""
    # Setup output directory
    output_dir = config.output_dir
    if not output_dir:
        experiment_id = 0
        run_id = config.run_id or generate_run_id()
        output_dir = Path('runs') / str(experiment_id) / run_id
    output_dir.mkdir(parents=True, exist_ok=True)

    configure_seed(config.seed)

    logger.info(f'Local output directory is: {output_dir}')
    return output_dir


def generate_run_id():
    import uuid

    return uuid.uuid4().hex
