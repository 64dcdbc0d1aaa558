import os
import os.path as osp
import pickle
import sys
import shutil

root = os.path.dirname(os.path.abspath(__file__)) + "/../../"
sys.path.append(root)
from opengait.utils import config_loader
from opengait.modeling import models
import numpy as np
import torch
import cv2
import imageio
from loguru import logger
from tqdm import tqdm
import demo.libs.config as config

sys.path.append(root + "opengait/")
from opengait.modeling import models
from opengait.utils import get_msg_mgr


def loadModel(model_type, cfg_path):
    Model = getattr(models, model_type)
    cfgs = config_loader(cfg_path)
    model = Model(cfgs, training=False)
    return model


def gait_sil(sils, embs_save_path):
    """Gets the features.

    Args:
        sils (list): List of Tuple (seq, label, seq_type, view, seqL)
        embs_save_path (Path): Output path.
    Returns:
        feats (dict): Dictionary of features
    """
    gaitmodel = loadModel(**config.model_cfgs["gaitmodel"])
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
    """Compares the feature between probe and gallery

    Args:
        probe_feat (dict): Dictionary of probe's features
        gallery_feat (dict): Dictionary of gallery's features
    Returns:
        pg_dicts (dict): The id of probe corresponds to the id of gallery
    """
    item = list(probe_feat.keys())
    probe = item[0]
    pg_dict = {}
    pg_dicts = {}
    for inputs in probe_feat[probe]:
        number = list(inputs.keys())[0]
        probeid = probe + "-" + number
        galleryid, idsdict = compareid(inputs, gallery_feat, probeid, 100)
        pg_dict[probeid] = galleryid
        pg_dicts[probeid] = idsdict
    return pg_dicts


def compareid(data, dict, pid, threshold_value):
    """Compares the feature between probe and gallery

    Args:
        data (dict): Dictionary of the probe feature
        dict (dict): Dictionary of all the gallery features
        pid (str): The id of the probe
        threshold_value (int): The threshold
    Returns:
        id (str): The id of the gallery which matches the probe best
        dic_sort (dict): Distance to every gallery id, sorted
    """
    probe_name = pid.split("-")[0]
    dic = {}
    for key in data:
        for subkey in data[key]:
            probe_feat = data[key][subkey]
            for id_ in dict:
                for item in dict[id_]:
                    for gkey in item:
                        for gsub in item[gkey]:
                            gallery_feat = item[gkey][gsub]
                            dist = cuda_dist(probe_feat, gallery_feat)
                            dic[id_] = dist.item() if id_ not in dic else min(dic[id_], dist.item())
    dic_sort = sorted(dic.items(), key=lambda d: d[1], reverse=False)
    if dic_sort[0][1] < threshold_value:
        id = dic_sort[0][0]
    else:
        id = "None"
    return id, dic_sort


def cuda_dist(x, y, metric='euc'):
    """Compute the distance between two features on the current GPU."""
    if not torch.is_tensor(x):
        x = torch.from_numpy(x)
    if not torch.is_tensor(y):
        y = torch.from_numpy(y)
    x = x.to(torch.device("cuda", 0)).float()
    y = y.to(torch.device("cuda", 0)).float()
    if metric == 'cos':
        x = torch.nn.functional.normalize(x, p=2, dim=1)
        y = torch.nn.functional.normalize(y, p=2, dim=1)
    num_bin = x.size(2)
    dist = 0.
    for i in range(num_bin):
        _x = x[:, :, i]
        _y = y[:, :, i]
        if metric == 'cos':
            dist += torch.matmul(_x, _y.transpose(0, 1))
        else:
            _dist = torch.sum(_x ** 2, 1).unsqueeze(1) + torch.sum(_y ** 2, 1).unsqueeze(
                0) - 2 * torch.matmul(_x, _y.transpose(0, 1))
            dist += torch.sqrt(torch.nn.functional.relu(_dist))
    return (1 - dist / num_bin) if metric == 'cos' else dist / num_bin


def extract_sil(sil, save_path):
    """Gets the features.

    Args:
        sil (list): List of Tuple (seq, label, seq_type, view, seqL)
        save_path (Path): Output path.
    Returns:
        video_feats (dict): Dictionary of features from the video
    """
    logger.info("begin extracting")
    video_feat = gait_sil(sil, save_path)
    logger.info("extract Done")
    torch.cuda.empty_cache()
    return video_feat


def compare(probe_feat, gallery_feat):
    """Recognizes the features between probe and gallery

    Args:
        probe_feat (dict): Dictionary of probe's features
        gallery_feat (dict): Dictionary of gallery's features
    Returns:
        pgdict (dict): The id of probe corresponds to the id of gallery
    """
    logger.info("begin recognising")
    pgdict = gaitfeat_compare(probe_feat, gallery_feat)
    logger.info("recognise Done")
    print("================= probe - gallery ===================")
    print(pgdict)
    return pgdict


def writeresult(pgdict, video_path, video_save_folder):
    """Writes the recognition result back into the video

    Args:
        pgdict (dict): The id of probe corresponds to the id of gallery
        video_path (str): Path of input video
        video_save_folder (str): Tracking video storage root path after processing
    """
    font = cv2.FONT_HERSHEY_SIMPLEX
    video_name = video_path.split("/")[-1]
    track_video_path = osp.join(video_save_folder, video_name)
    cap = cv2.VideoCapture(track_video_path)
    fps = cap.get(cv2.CAP_PROP_FPS)
    width = cap.get(cv2.CAP_PROP_FRAME_WIDTH)
    height = cap.get(cv2.CAP_PROP_FRAME_HEIGHT)
    save_video_name = "G-" + video_name
    save_video_path = osp.join(video_save_folder, save_video_name)
    vid_writer = cv2.VideoWriter(
        save_video_path, cv2.VideoWriter_fourcc(*"mp4v"), fps, (int(width), int(height))
    )
    probe_name = video_name.split(".")[0]
    while True:
        ret_val, frame = cap.read()
        if not ret_val:
            break
        cv2.putText(frame, "probe: {}".format(probe_name), (30, 60), font, 1.2, (0, 0, 255), 2)
        for i, (pid, gid) in enumerate(pgdict.items()):
            cv2.putText(frame, "{} -> {}".format(pid, gid[0][0] if len(gid) else "None"),
                        (30, 100 + 40 * i), font, 1.0, (0, 255, 0), 2)
        vid_writer.write(frame)
    cap.release()
    vid_writer.release()
    logger.info(f"save result video to {save_video_path}")
