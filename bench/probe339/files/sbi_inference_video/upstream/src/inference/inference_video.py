import os
import torch
import torch.nn as nn
from torch.nn import functional as F
import numpy as np
from torchvision import datasets, transforms, models, utils
from torch.utils.data import Dataset, IterableDataset
from PIL import Image
import sys
import random
import shutil
from model import Detector
import argparse
from datetime import datetime
from tqdm import tqdm
from retinaface.pre_trained_models import get_model
from preprocess import extract_frames
from datasets import *
from sklearn.metrics import confusion_matrix, roc_auc_score
import warnings
warnings.filterwarnings('ignore')


def load_detector(weight_name, device):
    model = Detector()
    model = model.to(device)
    cnn_sd = torch.load(weight_name)["model"]
    model.load_state_dict(cnn_sd)
    model.eval()
    return model


def predict_video(model, face_detector, video_path, n_frames, device):
    face_list, idx_list = extract_frames(video_path, n_frames, face_detector)

    with torch.no_grad():
        img = torch.tensor(face_list).to(device).float() / 255
        pred = model(img).softmax(1)[:, 1]

    pred_list = []
    idx_img = -1
    for i in range(len(pred)):
        if idx_list[i] != idx_img:
            pred_list.append([])
            idx_img = idx_list[i]
        pred_list[-1].append(pred[i].item())
    pred_res = np.zeros(len(pred_list))
    for i in range(len(pred_res)):
        pred_res[i] = max(pred_list[i])
    return pred_res.mean()


def main(args):

    model = load_detector(args.weight_name, device)

    face_detector = get_model("resnet50_2020-07-20", max_size=2048, device=device)
    face_detector.eval()

    if args.dataset is None:
        pred = predict_video(model, face_detector, args.input_video, args.n_frames, device)
        print(f'fakeness: {pred:.4f}')
        return

    # cross-dataset evaluation (video-level AUC)
    if args.dataset == 'FFIW':
        video_list, target_list = init_ffiw()
    elif args.dataset == 'FF':
        video_list, target_list = init_ff()
    elif args.dataset == 'DFD':
        video_list, target_list = init_dfd()
    elif args.dataset == 'DFDC':
        video_list, target_list = init_dfdc()
    elif args.dataset == 'DFDCP':
        video_list, target_list = init_dfdcp()
    elif args.dataset == 'CDF':
        video_list, target_list = init_cdf()
    else:
        raise NotImplementedError

    output_list = []
    for filename in tqdm(video_list):
        try:
            pred = predict_video(model, face_detector, filename, args.n_frames, device)
        except Exception as e:
            print(e)
            pred = 0.5
        output_list.append(pred)

    auc = roc_auc_score(target_list, output_list)
    print(f'{args.dataset}| AUC: {auc:.4f}')


if __name__ == '__main__':

    seed = 1
    random.seed(seed)
    torch.manual_seed(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

    device = torch.device('cuda')

    parser = argparse.ArgumentParser()
    parser.add_argument('-w', dest='weight_name', type=str)
    parser.add_argument('-i', dest='input_video', type=str)
    parser.add_argument('-d', dest='dataset', type=str, default=None)
    parser.add_argument('-n', dest='n_frames', default=32, type=int)
    args = parser.parse_args()

    main(args)
