#!/usr/bin/env python3
# written by Seongwon Lee (won4113@yonsei.ac.kr)
# Revisited Oxford / Paris evaluation: multi-scale global descriptors + correlation re-ranking

import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

import core.checkpoint as checkpoint
from config import cfg
from model.CVNet_Rerank_model import CVNet_Rerank
from test.config_gnd import config_gnd
from test.dataset import DataSet
from test.evaluate import compute_map_and_print
from test.test_utils import extract_feature, rerank_ranks_revisitop


def setup_model():
    """Builds the model and moves it to the GPU."""
    model = CVNet_Rerank(cfg.MODEL.DEPTH, cfg.MODEL.HEADS.REDUCTION_DIM)
    print(model)
    cur_device = torch.cuda.current_device()
    model = model.cuda(device=cur_device)
    return model


@torch.no_grad()
def extract_feature_ms(model, test_loader, scale_list):
    """Extracts multi-scale (averaged) L2-normalised global descriptors."""
    img_feats = [[] for _ in range(len(scale_list))]
    for im_list in tqdm(test_loader):
        for idx in range(len(im_list)):
            im_list[idx] = im_list[idx].cuda()
            desc = model.extract_global_descriptor(im_list[idx])
            if len(desc.shape) == 1:
                desc.unsqueeze_(0)
            desc = F.normalize(desc, p=2, dim=1)
            img_feats[idx].append(desc.detach().cpu())
    for idx in range(len(img_feats)):
        img_feats[idx] = torch.cat(img_feats[idx], dim=0)
        if len(img_feats[idx].shape) == 1:
            img_feats[idx].unsqueeze_(0)
    img_feats_agg = F.normalize(torch.mean(torch.cat([img_feat.unsqueeze(0) for img_feat in img_feats], dim=0), dim=0), p=2, dim=1)
    img_feats_agg = img_feats_agg.cpu().numpy()
    return img_feats_agg


def test_revisitop(model, data_dir, dataset, scale_list, topk_rerank):
    """Evaluates on roxford5k / rparis6k (Easy / Medium / Hard protocols)."""
    print("extract query features")
    query_loader = torch.utils.data.DataLoader(
        DataSet(data_dir, dataset, scale_list, True),
        batch_size=1, shuffle=False, num_workers=4,
        pin_memory=True, drop_last=False,
    )
    Q = extract_feature_ms(model, query_loader, scale_list)

    print("extract database features")
    db_loader = torch.utils.data.DataLoader(
        DataSet(data_dir, dataset, scale_list, False),
        batch_size=1, shuffle=False, num_workers=4,
        pin_memory=True, drop_last=False,
    )
    X = extract_feature_ms(model, db_loader, scale_list)

    cfg_gnd = config_gnd(dataset, data_dir)
    # global retrieval by cosine similarity (descriptors are L2-normalised)
    sim = np.dot(X, Q.T)
    ranks = np.argsort(-sim, axis=0)

    print("global retrieval")
    ks = [1, 5, 10]
    (mapE, apsE, mprE, prsE), (mapM, apsM, mprM, prsM), (mapH, apsH, mprH, prsH) = \
        compute_map_and_print(dataset, "global", ranks, cfg_gnd["gnd"], ks)

    print("re-ranking the top-{} with the correlation verification head".format(topk_rerank))
    torch.cuda.synchronize()  # make sure the feature extraction is done before timing
    t0 = time.time()
    rerank_ranks = rerank_ranks_revisitop(cfg_gnd, model, ranks, query_loader, db_loader, topk_rerank)
    torch.cuda.synchronize()
    print("re-ranking took {:.1f} s, peak memory {:.0f} MB".format(
        time.time() - t0, torch.cuda.max_memory_allocated() / 2 ** 20))
    compute_map_and_print(dataset, "rerank", rerank_ranks, cfg_gnd["gnd"], ks)

    return mapE, mapM, mapH


def test_model():
    """Loads the weights and runs the revisited benchmark for every requested dataset."""
    torch.backends.cudnn.benchmark = False
    model = setup_model()
    if os.path.isfile(cfg.TEST.WEIGHTS):
        checkpoint.load_checkpoint(cfg.TEST.WEIGHTS, model)
        print("Loaded model weights from: {}".format(cfg.TEST.WEIGHTS))
    else:
        raise FileNotFoundError("No checkpoint found at {}".format(cfg.TEST.WEIGHTS))
    model.eval()

    for dataset in cfg.TEST.DATASET.split(","):
        print("========== {} ==========".format(dataset))
        test_revisitop(model, cfg.TEST.DATA_DIR, dataset, cfg.TEST.SCALE_LIST, cfg.TEST.TOPK_RERANK)
