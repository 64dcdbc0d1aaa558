import os
import random
import socket
import time

import numpy as np
import torch

from openood.pipelines import get_pipeline
from openood.utils import launch, setup_config
from openood.utils.logger import setup_logger


def set_seed(seed):
    """Seed every RNG we know about.

    NOTE: cudnn.deterministic makes the GPU results reproducible at the cost
    of speed; OpenOOD benchmark numbers were produced with it switched on.
    """
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def describe_environment(config):
    """Print a short summary of the machine we are running on.

    This is mostly useful when collecting numbers from several clusters:
    people kept sending us results without telling us which GPU they used.
    """
    print('host: {}'.format(socket.gethostname()), flush=True)
    print('torch: {}  cuda: {}  cudnn: {}'.format(
        torch.__version__, torch.version.cuda,
        torch.backends.cudnn.version()),
          flush=True)
    if config.num_gpus > 0:
        print('GPU 0: {}'.format(torch.cuda.get_device_name(0)), flush=True)
    print('num_gpus: {}  num_machines: {}  machine_rank: {}'.format(
        config.num_gpus, config.num_machines, config.machine_rank),
          flush=True)


def main(config):
    """Main entrance. Config is all you need to provide to run the code. Config
    will be loaded from the configs folder based on the config dir.

    Args:
        config (Config): e.g. configs/pipelines/train/baseline.yml merged
            with dataset, network, preprocessor and postprocessor configs.
    """
    # generate output directory and save the full config file
    setup_logger(config)

    pipeline = get_pipeline(config)
    tic = time.time()
    pipeline.run()
    print('Pipeline finished in {:.1f} min'.format((time.time() - tic) / 60),
          flush=True)


if __name__ == '__main__':

    config = setup_config()

    # the evaluation pipelines only ever need a single GPU; training may
    # use several (the launcher spawns one process per GPU)
    if config.pipeline.name.startswith('test') and config.num_gpus > 1:
        print('[warning] test pipelines run on 1 GPU, '
              'ignoring num_gpus={}'.format(config.num_gpus))
        config.num_gpus = 1

    # set random seed
    set_seed(config.seed)

    if os.environ.get('OPENOOD_VERBOSE', '0') == '1':
        describe_environment(config)

    launch(
        main,
        config.num_gpus,
        num_machines=config.num_machines,
        machine_rank=config.machine_rank,
        dist_url='auto',
        args=(config, ),
    )
