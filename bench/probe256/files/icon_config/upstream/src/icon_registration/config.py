"""
Package-wide settings for icon_registration.

`device` is used by the network wrappers, the training loop and the itk helpers; override it
with the ICON_DEVICE environment variable (e.g. ICON_DEVICE=cuda:1) or by assigning
icon_registration.config.device before building a network.
"""
import os

import torch

_requested = os.environ.get("ICON_DEVICE")

if _requested:
    device = torch.device(_requested)
else:
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

# mixed precision is only used on GPUs; bfloat16 needs Ampere or newer
amp_dtype = torch.float16

# icon_registration's losses assume images in [0, 1]; see `intensity_conservative_clip`
default_similarity = "lncc"
