import os
import os.path as osp
import pickle
import sys

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm
from loguru import logger

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.append(root)
from opengait.utils import config_loader
from opengait.modeling import models
import model.baselineDemo as baselineDemo
import gait_compare as gc

recognise_cfgs = {
    "gaitmodel": {
        "model_type": "BaselineDemo",
        "cfg_path": "./configs/baseline/baseline_GREW.yaml",
    },
}

# BaseModel.__init__ asks torch.distributed for the rank, so the demo runs a
# one-process group even on a single GPU.
os.environ.setdefault("MASTER_ADDR", "localhost")
os.environ.setdefault("MASTER_PORT", "12355")
if not torch.distributed.is_initialized():
    torch.distributed.init_process_group("nccl", rank=0, world_size=1)


def loadModel(model_type, cfg_path):
    Model = getattr(baselineDemo, model_type)
    cfgs = config_loader(cfg_path)
    model = Model(cfgs, training=False)
    return model


def gait_sil(sils, embs_save_path):
    """Extract an embedding for every (track id, video) silhouette sequence.

    Args:
        sils: list of OpenGait-style inputs produced by segment.py
        embs_save_path: folder where <id>/<video>.pkl embeddings are written
    Returns:
        dict: {video: {id: embedding}}
    """
    gaitmodel = loadModel(**recognise_cfgs["gaitmodel"])
    gaitmodel.requires_grad_(False)
    gaitmodel.eval()
    feats = {}
    for inputs in sils:
        ipts = gaitmodel.inputs_pretreament(inputs)
        id = inputs[1][0]
        if id not in feats:
            feats[id] = []
        type = inputs[2][0]
        view = inputs[3][0]
        embs_pkl_path = "{}/{}/{}/{}".format(embs_save_path, id, type, view)
        if not os.path.exists(embs_pkl_path):
            os.makedirs(embs_pkl_path)
        embs_pkl_name = "{}/{}.pkl".format(embs_pkl_path, inputs[3][0])
        retval, embs = gaitmodel.forward(ipts)
        pkl = open(embs_pkl_name, 'wb')
        pickle.dump(embs, pkl)
        feat = {}
        feat[type] = {}
        feat[type][view] = embs
        feats[id].append(feat)
    return feats


def gaitfeat_compare(probe_feat: dict, gallery_feat: dict):
    """Compute the distance between a probe and every gallery embedding.

    Returns:
        dict: {gallery_id: distance}
    """
    item = list(probe_feat.keys())
    probe = item[0]
    pg_dict = {}
    pg_dicts = {}
    for inputs in probe_feat[probe]:
        number = list(inputs.keys())[0]
        probeid = probe + "-" + number
        galleryid, idsdict = gc.comparefeat(inputs[number]['undefined'], gallery_feat, probeid, 100)
        pg_dict[probeid] = galleryid
        pg_dicts[probeid] = idsdict
    return pg_dict, pg_dicts


def extract_sil(sil, save_path):
    logger.info("begin extracting")
    video_feat = gait_sil(sil, save_path)
    logger.info("extract Done")
    return video_feat


def compare(probe_feat, gallery_feat):
    logger.info("begin recognising")
    pgdict, pg_dicts = gaitfeat_compare(probe_feat, gallery_feat)
    logger.info("recognise Done")
    print("================= probe - gallery ===================")
    print(pgdict)
    return pgdict


def rank_by_distance(probe_embs, gallery_embs, topk=5):
    """Rank gallery ids for one probe embedding with the euclidean metric used in training."""
    gallery_ids = list(gallery_embs.keys())
    g = np.concatenate([gallery_embs[k] for k in gallery_ids], 0)
    p = torch.from_numpy(probe_embs).cuda()
    g = torch.from_numpy(g).cuda()
    dist = torch.cdist(p.flatten(1), g.flatten(1))
    order = dist.argsort(dim=1)[:, :topk].cpu().numpy()[0]
    return [gallery_ids[i] for i in order]
