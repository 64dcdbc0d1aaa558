import os
import cv2
import json
import math
import argparse
import numpy as np
from tqdm import tqdm

import torch
from torch.utils.data import DataLoader

from dataset import Shuttlecock_Trajectory_Dataset, data_dir
from utils.general import *
from utils.metric import *

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

pred_types = ['TP', 'TN', 'FP1', 'FP2', 'FN']
pred_types_map = {pred_type: i for i, pred_type in enumerate(pred_types)}


def predict_location(heatmap):
    """ Get coordinates from the heatmap.

        Args:
            heatmap (numpy.ndarray): A single heatmap with shape (H, W)

        Returns:
            x, y, w, h (Tuple[int, int, int, int]): bounding box of the the bounding box with max area
    """
    if np.amax(heatmap) == 0:
        # No respond in heatmap
        return 0, 0, 0, 0
    else:
        # Find all respond area in the heapmap
        (cnts, _) = cv2.findContours(heatmap.copy(), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        rects = [cv2.boundingRect(ctr) for ctr in cnts]

        # Find largest area amoung all contours
        max_area_idx = 0
        max_area = rects[0][2] * rects[0][3]
        for i in range(1, len(rects)):
            area = rects[i][2] * rects[i][3]
            if area > max_area:
                max_area_idx = i
                max_area = area
        x, y, w, h = rects[max_area_idx]

        return x, y, w, h


def get_ensemble_weight(seq_len, eval_mode):
    """ Get weight for temporal ensemble.

        Args:
            seq_len (int): Length of input sequence
            eval_mode (str): Mode of temporal ensemble
                Choices:
                    - 'average': Return uniform weight
                    - 'weight': Return positional weight

        Returns:
            weight (torch.Tensor): Weight for temporal ensemble
    """

    if eval_mode == 'average':
        weight = torch.ones(seq_len) / seq_len
    elif eval_mode == 'weight':
        weight = torch.ones(seq_len)
        for i in range(math.ceil(seq_len / 2)):
            weight[i] = (i + 1)
            weight[seq_len - i - 1] = (i + 1)
        weight = weight / weight.sum()
    else:
        raise ValueError('Invalid mode')

    return weight


def generate_inpaint_mask(pred_dict, th_h=30):
    """ Generate inpaint mask form predicted trajectory.

        Args:
            pred_dict (Dict): Prediction result
                Format: {'Frame':[], 'X':[], 'Y':[], 'Visibility':[]}
            th_h (float): Height threshold (pixels) for y coordinate

        Returns:
            inpaint_mask (List): Inpaint mask
    """
    y = np.array(pred_dict['Y'])
    vis_pred = np.array(pred_dict['Visibility'])
    inpaint_mask = np.zeros_like(y)
    i = 0  # index that ball start to disappear
    j = 0  # index that ball start to appear
    threshold = th_h
    while j < len(vis_pred):
        while i < len(vis_pred) - 1 and vis_pred[i] == 1:
            i += 1
        j = i
        while j < len(vis_pred) - 1 and vis_pred[j] == 0:
            j += 1
        if j == i:
            break
        elif i == 0 and y[j] > threshold:
            # start from the first frame that ball disappear
            inpaint_mask[:j] = 1
        elif (i > 1 and y[i - 1] > threshold) and (j < len(vis_pred) and y[j] > threshold):
            inpaint_mask[i:j] = 1
        else:
            # ball is out of the field of camera view
            pass
        i = j

    return inpaint_mask.tolist()


def eval_tracknet(model, data_loader, param_dict):
    """ Evaluate TrackNet model.

        Args:
            model (nn.Module): TrackNet model
            data_loader (torch.utils.data.DataLoader): DataLoader for evaluation
            param_dict (Dict): Parameters
                param_dict['verbose'] (bool): Control whether to show progress bar
                param_dict['tolerance'] (int): Tolerance for FP1

        Returns:
            (float): Average loss
            res_dict (Dict): Evaluation results
    """

    model.eval()
    losses = []
    confusion_matrix = {pred_type: 0 for pred_type in pred_types}
    if param_dict['verbose']:
        data_prob = tqdm(data_loader)
    else:
        data_prob = data_loader

    for step, (i, x, y, c, _) in enumerate(data_prob):
        x, y = x.float().to(device), y.float().to(device)
        with torch.no_grad():
            y_pred = model(x)
            loss = WBCELoss(y_pred, y, reduce=False)
            losses.extend(loss.mean(dim=(1, 2, 3)).tolist())
            batch_confusion = get_metric(i, y_pred, c, tolerance=param_dict['tolerance'])
            for pred_type in pred_types:
                confusion_matrix[pred_type] += batch_confusion[pred_type]

        if param_dict['verbose']:
            TP, TN, FP1, FP2, FN = confusion_matrix.values()
            data_prob.set_description(f'Evaluation')
            data_prob.set_postfix(TP=TP, TN=TN, FP1=FP1, FP2=FP2, FN=FN)

    TP, TN, FP1, FP2, FN = confusion_matrix.values()
    accuracy = (TP + TN) / (TP + TN + FP1 + FP2 + FN) if (TP + TN + FP1 + FP2 + FN) > 0 else 0
    precision = TP / (TP + FP1 + FP2) if (TP + FP1 + FP2) > 0 else 0
    recall = TP / (TP + FN) if (TP + FN) > 0 else 0
    f1 = 2 * (precision * recall) / (precision + recall) if (precision + recall) > 0 else 0
    miss_rate = FN / (TP + FN) if (TP + FN) > 0 else 0
    res_dict = {'TP': TP, 'TN': TN, 'FP1': FP1, 'FP2': FP2, 'FN': FN,
                'accuracy': accuracy, 'precision': precision, 'recall': recall, 'f1': f1, 'miss_rate': miss_rate}

    return float(np.mean(losses)), res_dict


def eval_inpaintnet(model, data_loader, param_dict):
    """ Evaluate InpaintNet model.

        Args:
            model (nn.Module): InpaintNet model
            data_loader (torch.utils.data.DataLoader): DataLoader for evaluation
            param_dict (Dict): Parameters

        Returns:
            (float): Average loss
            res_dict (Dict): Evaluation results
    """

    model.eval()
    losses = []
    confusion_matrix = {pred_type: 0 for pred_type in pred_types}
    if param_dict['verbose']:
        data_prob = tqdm(data_loader)
    else:
        data_prob = data_loader

    for step, (i, coor_pred, coor, _, vis, inpaint_mask) in enumerate(data_prob):
        coor_pred, coor, inpaint_mask = coor_pred.float().to(device), coor.float().to(device), inpaint_mask.float().to(device)
        with torch.no_grad():
            coor_inpaint = model(coor_pred, inpaint_mask)
            coor_inpaint = coor_inpaint * inpaint_mask + coor_pred * (1 - inpaint_mask)
            loss = torch.nn.MSELoss()(coor_inpaint * inpaint_mask, coor * inpaint_mask)
            losses.append(loss.item())

            # Thresholding
            th_mask = ((coor_inpaint[:, :, 0] < COOR_TH) & (coor_inpaint[:, :, 1] < COOR_TH))
            coor_inpaint[th_mask] = 0.

            batch_confusion = get_metric(i, None, vis, c_pred=coor_inpaint.cpu(), c_true=coor.cpu(), tolerance=param_dict['tolerance'])
            for pred_type in pred_types:
                confusion_matrix[pred_type] += batch_confusion[pred_type]

        if param_dict['verbose']:
            TP, TN, FP1, FP2, FN = confusion_matrix.values()
            data_prob.set_description(f'Evaluation')
            data_prob.set_postfix(TP=TP, TN=TN, FP1=FP1, FP2=FP2, FN=FN)

    TP, TN, FP1, FP2, FN = confusion_matrix.values()
    accuracy = (TP + TN) / (TP + TN + FP1 + FP2 + FN) if (TP + TN + FP1 + FP2 + FN) > 0 else 0
    precision = TP / (TP + FP1 + FP2) if (TP + FP1 + FP2) > 0 else 0
    recall = TP / (TP + FN) if (TP + FN) > 0 else 0
    f1 = 2 * (precision * recall) / (precision + recall) if (precision + recall) > 0 else 0
    miss_rate = FN / (TP + FN) if (TP + FN) > 0 else 0
    res_dict = {'inpaint': {'TP': TP, 'TN': TN, 'FP1': FP1, 'FP2': FP2, 'FN': FN,
                            'accuracy': accuracy, 'precision': precision, 'recall': recall, 'f1': f1,
                            'miss_rate': miss_rate}}

    return float(np.mean(losses)), res_dict


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--tracknet_file', type=str, help='file path of the TrackNet model checkpoint')
    parser.add_argument('--inpaintnet_file', type=str, default='', help='file path of the InpaintNet model checkpoint')
    parser.add_argument('--split', type=str, default='test', choices=['train', 'val', 'test'], help='dataset split for testing')
    parser.add_argument('--batch_size', type=int, default=16, help='batch size for testing')
    parser.add_argument('--tolerance', type=float, default=4, help='difference tolerance of center distance between prediction and ground truth in input size')
    parser.add_argument('--save_dir', type=str, default='output', help='directory to save the evaluation result')
    parser.add_argument('--verbose', action='store_true', default=False, help='whether to show progress bar')
    args = parser.parse_args()
    param_dict = vars(args)

    if not os.path.exists(args.save_dir):
        os.makedirs(args.save_dir)

    # Load model
    tracknet_ckpt = torch.load(args.tracknet_file, map_location=device)
    tracknet_seq_len = tracknet_ckpt['param_dict']['seq_len']
    bg_mode = tracknet_ckpt['param_dict']['bg_mode']
    tracknet = get_model('TrackNet', tracknet_seq_len, bg_mode).to(device)
    tracknet.load_state_dict(tracknet_ckpt['model'])

    if args.inpaintnet_file:
        inpaintnet_ckpt = torch.load(args.inpaintnet_file, map_location=device)
        inpaintnet = get_model('InpaintNet').to(device)
        inpaintnet.load_state_dict(inpaintnet_ckpt['model'])
    else:
        inpaintnet = None

    num_workers = args.batch_size if args.batch_size <= 16 else 16
    dataset = Shuttlecock_Trajectory_Dataset(split=args.split, seq_len=tracknet_seq_len, sliding_step=tracknet_seq_len,
                                             data_mode='heatmap', bg_mode=bg_mode)
    data_loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False, num_workers=num_workers, drop_last=False)
    _, res = eval_tracknet(tracknet, data_loader, param_dict)
    print(json.dumps(res, indent=2))

    if inpaintnet is not None:
        print('Evaluate InpaintNet on the TrackNet predictions is done by predict.py; see README.')

    with open(os.path.join(args.save_dir, f'{args.split}_eval.json'), 'w') as f:
        json.dump(res, f, indent=2)
