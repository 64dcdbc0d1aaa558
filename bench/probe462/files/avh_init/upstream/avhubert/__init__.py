# Copyright (c) Facebook, Inc. and its affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

from .hubert import *  # noqa
from .hubert_asr import *  # noqa
from .hubert_dataset import *
from .hubert_pretraining import *
from .hubert_criterion import *
from .sequence_generator import SequenceGenerator

# audio-visual speech enhancement / separation heads
from .avse import avhubert_se  # noqa
from .avse import se_task  # noqa
from .avse import se_criterion  # noqa
