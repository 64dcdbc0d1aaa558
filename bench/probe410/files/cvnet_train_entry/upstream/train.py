#!/usr/bin/env python3

# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

"""Train a DELG / CVNet global model (ResNet backbone, GeM + CurricularFace head)."""

import config.config as config
import core.distributed as dist
import core.trainer as trainer
from config import cfg


def main():
    config.load_cfg_fom_args("Train a retrieval model.")
    config.assert_and_infer_cfg()
    cfg.freeze()
    # One process per GPU; each process binds to its own device in init_process_group
    dist.multi_proc_run(num_proc=cfg.NUM_GPUS, fun=trainer.train_model)


if __name__ == "__main__":
    main()
