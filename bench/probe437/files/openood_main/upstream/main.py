import os
import sys

from openood.pipelines import get_pipeline
from openood.utils import launch, setup_config


def main(config):
    """Main entrance. Config is all you need to provide to run the code. Config
    consists of several parts (e.g., dataset, network, pipeline) and can be
    composed from the yml files under configs/.

    Args:
        config (Config): config object built by openood.utils.setup_config
    """
    # generate output directory and save the full config file
    pipeline = get_pipeline(config)
    pipeline.run()


if __name__ == '__main__':

    config = setup_config()

    # generate output directory and save the full config file
    # NOTE: config.save_output must be set in the pipeline yml
    if config.save_output and config.merge_option != 'merge':
        os.makedirs(config.output_dir, exist_ok=True)

    # set random seed
    if config.seed is not None:
        import random

        import numpy as np
        import torch
        random.seed(config.seed)
        np.random.seed(config.seed)
        torch.manual_seed(config.seed)
        torch.cuda.manual_seed_all(config.seed)

    # launch multi-gpu / multi-node job through the detectron2-style launcher
    launch(
        main,
        config.num_gpus,
        num_machines=config.num_machines,
        machine_rank=config.machine_rank,
        dist_url='auto',
        args=(config, ),
    )
