#!/usr/bin/python3
# -*- coding:utf-8 -*-

import os
import pprint

from .config_helper import ConfigDict, _assert_with_logging, diff_dict

_config_dict = dict(
    MODEL=dict(
        DEVICE="cuda",
        # Path (possibly with schema like catalog://, detectron2://, s3://) to a checkpoint file
        # to be loaded to the model. You can find available models in the model zoo.
        WEIGHTS="",
        # Indicate whether convert final checkpoint to use as pretrain weights of preceeding model
        AS_PRETRAIN=False,
        # Values to be used for image normalization (BGR order, since INPUT.FORMAT defaults to BGR).
        # To train on images of different number of channels, just set different mean & std.
        # Default values are the mean pixel value from ImageNet: [103.53, 116.28, 123.675]
        PIXEL_MEAN=[103.5300, 116.2800, 123.6750],
        # When using pre-trained models in Detectron1 or any MSRA models,
        # std has been absorbed into its conv1 weights, so the std needs to be set 1.
        # Otherwise, you can use [57.375, 57.120, 58.395] (ImageNet std)
        PIXEL_STD=[1.0, 1.0, 1.0],
    ),
    INPUT=dict(
        # Whether the model needs RGB, YUV, HSV etc.
        FORMAT="BGR",
        # Mask R-CNN supports either "polygon" or "bitmask" as ground-truth.
        MASK_FORMAT="polygon",
    ),
    DATASETS=dict(
        CUSTOM_TYPE=("ConcatDataset", dict()),
        TRAIN=(),
        TEST=(),
    ),
    DATALOADER=dict(
        # Number of data loading threads
        NUM_WORKERS=2,
        # Default sampler for dataloader
        SAMPLER_TRAIN="DistributedGroupSampler",
        # Whether pin memory of the dataloader, one of the reasons of the random-shuffle bug
        PIN_MEMORY=True,
        ENABLE_ASPECT_RATIO_GROUPING=True,
    ),
    SOLVER=dict(
        # Configs of lr scheduler
        LR_SCHEDULER=dict(
            NAME="WarmupMultiStepLR",
            MAX_ITER=40000,
            MAX_EPOCH=None,
            STEPS=(30000,),
            WARMUP_FACTOR=1.0 / 1000,
            WARMUP_ITERS=1000,
            WARMUP_METHOD="linear",
            GAMMA=0.1,
        ),
        OPTIMIZER=dict(
            NAME="D2SGD",
            BASE_LR=0.001,
            WEIGHT_DECAY=0.0001,
            WEIGHT_DECAY_NORM=0.0,
            MOMENTUM=0.9,
        ),
        CHECKPOINT_PERIOD=5000,
        # Number of images per batch across all machines.
        IMS_PER_BATCH=16,
        IMS_PER_DEVICE=2,
        BATCH_SUBDIVISIONS=1,
        CLIP_GRADIENTS=dict(
            ENABLED=False,
            CLIP_TYPE="value",
            CLIP_VALUE=1.0,
            NORM_TYPE=2.0,
        ),
    ),
    TRAINER=dict(
        NAME="DefaultRunner",
        WINDOW_SIZE=20,
        FP16=dict(
            ENABLED=False,
            # options: [APEX, PyTorch]
            TYPE="APEX",
            # OPTS: kwargs for each option
            OPTS=dict(
                OPT_LEVEL="O1",
            ),
        ),
    ),
    TEST=dict(
        EXPECTED_RESULTS=[],
        EVAL_PERIOD=0,
        # The sigma value for the expected results
        PRECISE_BN=dict(ENABLED=False, NUM_ITER=200),
    ),
    OUTPUT_DIR="./output",
    # Set seed to negative to fully randomize everything.
    # Set seed to positive to use a fixed seed. Note that a fixed seed does not
    # guarantee fully deterministic behavior.
    SEED=-1,
    # Benchmark different cudnn algorithms.
    # If input images have very different sizes, this option will have large overhead
    # for about 10k iterations. It usually hurts total time, but can benefit for certain models.
    # If input images have the same or similar sizes, benchmark is often helpful.
    CUDNN_BENCHMARK=False,
    # The period (in terms of steps) for minibatch visualization at train time.
    # Set to 0 to disable.
    VIS_PERIOD=0,
    # global config is for quick hack purposes.
    # You can set them in command line or config files,
    # Do not commit any configs into it.
    GLOBAL=dict(
        HACK=1.0,
        DUMP_TRAIN=True,
        DUMP_TEST=False,
    ),
)


class BaseConfig(ConfigDict):

    def __init__(self, d=None, **kwargs):
        super().__init__(d, **kwargs)
        self._register_configuration(_config_dict)

    def _register_configuration(self, config):
        self.update(config)

    def link_log(self, link_name="log"):
        """
        create a softlink to output dir.

        Args:
            link_name(str): name of softlink
        """
        if os.path.islink(link_name) and os.readlink(link_name) != self.OUTPUT_DIR:
            os.system("rm " + link_name)
        if not os.path.exists(link_name):
            cmd = "ln -s {} {}".format(self.OUTPUT_DIR, link_name)
            os.system(cmd)

    def __repr__(self):
        param_list = [(k, pprint.pformat(v)) for k, v in self.items()]
        table_header = ["config params", "value"]
        return "{}: {}".format(table_header, param_list)


config = BaseConfig()
