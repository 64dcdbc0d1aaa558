# Copyright (c) Meta Platforms, Inc. and affiliates.
#
# This source code is licensed under the MIT license found in the
# LICENSE file in the root directory of this source tree.

from r3m.models.models_r3m import R3M

import os
from os.path import expanduser
import omegaconf
import hydra
import gdown
import torch
import copy

VALID_ARGS = ["_target_", "device", "lr", "hidden_dim", "size", "l2weight", "l1weight", "langweight", "tcnweight", "l2dist", "bs"]
if torch.cuda.is_available():
    device = "cuda"
else:
    device = "cpu"

def cleanup_config(cfg):
    config = copy.deepcopy(cfg)
    keys = config.agent.keys()
    for key in list(keys):
        if key not in VALID_ARGS:
            del config.agent[key]
    config.agent["_target_"] = "r3m.R3M"
    config["device"] = device

    ## Hardcodes to remove the language head
    ## Assumes downstream use is as visual representation
    config.agent["langweight"] = 0
    return config.agent

def remove_language_head(state_dict):
    keys = state_dict.keys()
    ## Hardcodes to remove the language head
    ## Assumes downstream use is as visual representation
    for key in list(keys):
        if ("lang_enc" in key) or ("lang_rew" in key):
            del state_dict[key]
    return state_dict

def load_r3m(modelid):
    home = os.path.join(expanduser("~"), ".r3m")
    if modelid == "resnet50":
        foldername = "r3m_50"
        modelurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/r3m_50.pt'
        configurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/config.yaml'
    elif modelid == "resnet34":
        foldername = "r3m_34"
        modelurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/r3m_34.pt'
        configurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/config_34.yaml'
    elif modelid == "resnet18":
        foldername = "r3m_18"
        modelurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/r3m_18.pt'
        configurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/config_18.yaml'
    else:
        raise NameError('Invalid Model ID')

    if not os.path.exists(os.path.join(home, foldername)):
        os.makedirs(os.path.join(home, foldername))
    modelpath = os.path.join(home, foldername, "model.pt")
    configpath = os.path.join(home, foldername, "config.yaml")
    if not os.path.exists(modelpath):
        gdown.download(modelurl, modelpath, quiet=False)
        gdown.download(configurl, configpath, quiet=False)

    modelcfg = omegaconf.OmegaConf.load(configpath)
    cleancfg = cleanup_config(modelcfg)
    rep = hydra.utils.instantiate(cleancfg)
    rep = torch.nn.DataParallel(rep)
    r3m_state_dict = remove_language_head(torch.load(modelpath, map_location=torch.device(device))['r3m'])
    rep.load_state_dict(r3m_state_dict)
    return rep

def load_r3m_reproduce(modelid):
    home = os.path.join(expanduser("~"), ".r3m")
    if modelid == "r3m":
        foldername = "original_r3m"
        modelurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/original_r3m.pt'
        configurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/original_config.yaml'
    elif modelid == "r3m_noaug":
        foldername = "original_r3m_noaug"
        modelurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/original_r3m_noaug.pt'
        configurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/original_config_noaug.yaml'
    elif modelid == "r3m_nol1":
        foldername = "original_r3m_nol1"
        modelurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/original_r3m_nol1.pt'
        configurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/original_config_nol1.yaml'
    elif modelid == "r3m_nolang":
        foldername = "original_r3m_nolang"
        modelurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/original_r3m_nolang.pt'
        configurl = 'https://pytorch.s3.amazonaws.com/models/rl/r3m/original_config_nolang.yaml'
    else:
        raise NameError('Invalid Model ID')

    if not os.path.exists(os.path.join(home, foldername)):
        os.makedirs(os.path.join(home, foldername))
    modelpath = os.path.join(home, foldername, "model.pt")
    configpath = os.path.join(home, foldername, "config.yaml")
    if not os.path.exists(modelpath):
        gdown.download(modelurl, modelpath, quiet=False)
        gdown.download(configurl, configpath, quiet=False)

    modelcfg = omegaconf.OmegaConf.load(configpath)
    cleancfg = cleanup_config(modelcfg)
    rep = hydra.utils.instantiate(cleancfg)
    rep = torch.nn.DataParallel(rep)  # checkpoint keys carry the "module." prefix
    r3m_state_dict = torch.load(modelpath, map_location=torch.device(device))['r3m']

    rep.load_state_dict(r3m_state_dict)
    return rep
