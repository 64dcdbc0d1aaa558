"""
helpers for extracting features from image
"""
import os
import platform
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.hub import get_dir
from cleanfid.downloads_helper import check_download_url
from cleanfid.inception_pytorch import InceptionV3
from cleanfid.clip_features import CLIP_fx, img_preprocess_clip


INCEPTION_URL = "https://nvlabs-fi-cdn.nvidia.com/stylegan2-ada-pytorch/pretrained/metrics/inception-2015-12-05.pt"


class InceptionV3W(nn.Module):
    """
    Wrapper around Inception V3 torchscript model provided here
    https://nvlabs-fi-cdn.nvidia.com/stylegan2-ada-pytorch/pretrained/metrics/inception-2015-12-05.pt

    path: locally saved inception weights
    """
    def __init__(self, path, download=True, resize_inside=False):
        super(InceptionV3W, self).__init__()
        # download the network if it is not present at the given directory
        # use the current directory by default
        if download:
            check_download_url(local_folder=path, url=INCEPTION_URL)
        path = os.path.join(path, "inception-2015-12-05.pt")
        self.base = torch.jit.load(path).eval()
        self.layers = self.base.layers
        self.resize_inside = resize_inside

    def forward(self, x):
        """
        Get the inception features without resizing
        x: Image with values in range [0,255]
        """
        bs = x.shape[0]
        if self.resize_inside:
            features = self.base(x, return_features=True).view((bs, 2048))
        else:
            # make sure it is resized already
            assert (x.shape[2] == 299) and (x.shape[3] == 299)
            # apply normalization
            x1 = x - 128
            x2 = x1 / 128
            features = self.layers.forward(x2, ).view((bs, 2048))
        return features


def feature_extractor(name="torchscript_inception", device=torch.device("cuda"), resize_inside=False, use_dataparallel=True):
    """
    returns a functions that takes an image in range [0,255]
    and outputs a feature embedding vector
    """
    if name == "torchscript_inception":
        path = "./" if platform.system() == "Windows" else "/tmp"
        model = InceptionV3W(path, download=True, resize_inside=resize_inside).to(device)
        model.eval()
    elif name == "pytorch_inception":
        model = InceptionV3(output_blocks=[3], resize_input=False).to(device)
        model.eval()
    else:
        raise ValueError(f"{name} feature extractor not implemented")
    if use_dataparallel:
        model = torch.nn.DataParallel(model)

    def model_fn(x):
        if name == "pytorch_inception":
            x = x / 255
        return model(x) if name != "pytorch_inception" else model(x)[0].squeeze(-1).squeeze(-1)

    return model_fn


def build_feature_extractor(mode, device=torch.device("cuda"), use_dataparallel=True):
    """
    returns the feature extractor for the given mode
    """
    if mode == "legacy_pytorch":
        feat_model = feature_extractor(name="pytorch_inception", resize_inside=False, device=device, use_dataparallel=use_dataparallel)
    elif mode == "legacy_tensorflow":
        feat_model = feature_extractor(name="torchscript_inception", resize_inside=True, device=device, use_dataparallel=use_dataparallel)
    elif mode == "clean":
        feat_model = feature_extractor(name="torchscript_inception", resize_inside=False, device=device, use_dataparallel=use_dataparallel)
    elif mode == "clip_vit_b_32":
        clip_fx = CLIP_fx("ViT-B/32", device=device)
        feat_model = clip_fx
    else:
        raise ValueError(f"unknown feature mode {mode}")
    return feat_model


def get_reference_statistics(name, res, mode="clean", model_name="inception_v3", seed=0, split="test", metric="FID"):
    """
    Load precomputed reference statistics for commonly used datasets
    """
    base_url = "https://www.cs.cmu.edu/~clean-fid/stats/"
    if split == "custom":
        res = "na"
    if model_name == "inception_v3":
        model_modifier = ""
    else:
        model_modifier = "_" + model_name
    if metric == "FID":
        rel_path = (f"{name}_{mode}{model_modifier}_{split}_{res}.npz").lower()
        url = f"{base_url}/{rel_path}"
        stats_folder = os.path.join(os.path.dirname(__file__), "stats")
        fpath = check_download_url(local_folder=stats_folder, url=url)
        stats = np.load(fpath)
        mu, sigma = stats["mu"], stats["sigma"]
        return mu, sigma
    elif metric == "KID":
        rel_path = (f"{name}_{mode}{model_modifier}_{split}_{res}_kid.npz").lower()
        url = f"{base_url}/{rel_path}"
        stats_folder = os.path.join(os.path.dirname(__file__), "stats")
        fpath = check_download_url(local_folder=stats_folder, url=url)
        stats = np.load(fpath)
        return stats["feats"]


def get_batch_features(batch, model, device):
    """
    Compute the inception features for a batch of images
    """
    with torch.no_grad():
        feat = model(batch.to(device))
    return feat.detach().cpu().numpy()


def make_custom_stats_folder():
    stats_folder = os.path.join(get_dir(), "clean_fid_custom_stats")
    os.makedirs(stats_folder, exist_ok=True)
    return stats_folder


def resize_batch_to_299(batch, mode="clean"):
    """
    torch-side resize used by the `legacy_pytorch` mode; `clean` resizes with PIL on the CPU
    """
    if mode == "legacy_pytorch":
        return F.interpolate(batch, size=(299, 299), mode="bilinear", align_corners=False)
    return batch
