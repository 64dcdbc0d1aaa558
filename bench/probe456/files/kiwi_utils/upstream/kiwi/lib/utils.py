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
import os
import random
from pathlib import Path
from typing import Any, Dict, Union

import hydra
import numpy as np
import torch
import yaml
from omegaconf import OmegaConf

logger = logging.getLogger(__name__)


def configure_seed(seed: int):
    """Configure the random seed for all relevant packages.

    These include: random, numpy, torch, torch.cuda and PYTHONHASHSEED.

    Arguments:
        seed: the random seed to be set.
    """
    os.environ['PYTHONHASHSEED'] = str(seed)
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    # torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def configure_logging(
    output_dir: Path = None, verbose: bool = False, quiet: bool = False
):
    """Configure the output logger.

    Set up the log format, logging level, and output directory of logging.

    Arguments:
        output_dir: the directory where log output will be stored; defaults to None.
        verbose: change logging level to debug.
        quiet: change logging level to warning to suppress info logs.
    """
    logging.basicConfig(
        level=logging.INFO,
        format='%(asctime)s %(levelname)s %(name)s: %(message)s',
        datefmt='%Y-%m-%d %H:%M:%S',
    )
    if verbose:
        logging.getLogger().setLevel(logging.DEBUG)
    if quiet:
        logging.getLogger().setLevel(logging.WARNING)

    # Silence some loggers
    logging.getLogger('transformers').setLevel(logging.WARNING)
    logging.getLogger('urllib3').setLevel(logging.WARNING)
    logging.getLogger('lightning').setLevel(logging.WARNING)

    if output_dir is not None:
        output_dir.mkdir(parents=True, exist_ok=True)
        fh = logging.FileHandler(str(output_dir / 'output.log'))
        fh.setLevel(logging.DEBUG)
        logging.getLogger().addHandler(fh)


def save_config_to_file(config, file_name: Union[str, Path]):
    """Save a configuration object to file.

    Arguments:
        file_name: where to saved the configuration.
        config: a pydantic configuration object.
    """
    path = Path(file_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open('w') as config_file:
        yaml.dump(config.dict(), config_file, default_flow_style=False, sort_keys=False)
    logger.debug(f'Saved current options to config file: {path}')


def setup_output_directory(
    output_dir, run_uuid=None, experiment_id=None, create=True
) -> str:
    """Set up the output directory.

    This means either creating one, or verifying that the provided directory exists.
    Output directories are created using the run and experiment ids.

    Arguments:
        output_dir: the target output directory.
        run_uuid : the hash of the current run.
        experiment_id: the id of the current experiment.
        create: whether to create the directory.

    Return:
        the path to the resolved output directory.
    """
    if not output_dir:
        if experiment_id is None or run_uuid is None:
            raise ValueError(
                'Please specify an output directory (--output-dir).'
            )
        output_path = Path('runs', str(experiment_id), str(run_uuid))
        output_dir = str(output_path)

    if create:
        Path(output_dir).mkdir(parents=True, exist_ok=True)
    elif not Path(output_dir).exists():
        raise FileNotFoundError(f'Output directory does not exist: {output_dir}')

    return output_dir


def file_to_configuration(config_file: Union[str, Path]) -> Dict:
    """Utility function to handle converting a configuration file to
    a dictionary with the correct hydra composition.

    Creates an argument dictionary understandable by hydra.

    Args:
        config_file: path to a configuration file.

    Return:
        Configuration dictionary.
    """
    config_file = Path(config_file)

    with hydra.initialize_config_dir(config_dir=str(config_file.parent.absolute())):
        config_dict = hydra.compose(config_name=str(config_file.name))

    return OmegaConf.to_container(config_dict)


def load_torch_file(file_path: Union[str, Path], map_location=None) -> Any:
    file_path = Path(file_path)
    if not file_path.exists():
        raise ValueError(f'Torch file not found: {file_path}')

    try:
        if map_location is None:
            map_location = 'cpu'
        file_dict = torch.load(file_path, map_location=map_location)
    except ModuleNotFoundError as e:
        # Caused, e.g., by moving the Vocabulary or DefaultFrozenDict classes
        logger.info(
            'Trying to load a slightly outdated file and encountered an issue when '
            'unpickling; trying to work around it.'
        )
        if e.name == 'kiwi.data.utils':
            import sys
            from kiwi.utils import data_structures

            sys.modules['kiwi.data.utils'] = data_structures
            file_dict = torch.load(file_path, map_location=map_location)
            del sys.modules['kiwi.data.utils']
        elif e.name == 'torchtext':
            import sys
            from kiwi.data import vocabulary
            from kiwi.data.vocabulary import Vocabulary

            vocabulary.Vocab = Vocabulary
            sys.modules['torchtext'] = ''
            sys.modules['torchtext.vocab'] = vocabulary
            file_dict = torch.load(file_path, map_location=map_location)
            del sys.modules['torchtext']
            del sys.modules['torchtext.vocab']
        else:
            raise e

    return file_dict


def arguments_to_configuration(arguments: Dict) -> Dict:
    config_file = arguments.pop('CONFIG_FILE')
    config_dict = file_to_configuration(config_file)
    for key, value in arguments.items():
        if value is not None:
            config_dict[key] = value
    return config_dict
