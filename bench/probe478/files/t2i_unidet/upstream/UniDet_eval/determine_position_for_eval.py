# Spatial-relationship evaluation (2D) with the UniDet detector.
# Adapted from the UniDet demo (detectron2 based).
import argparse
import json
import multiprocessing as mp
import os
import sys

import numpy as np
import torch
from PIL import Image
from tqdm import tqdm

from detectron2.config import get_cfg
from detectron2.data.detection_utils import read_image
from detectron2.utils.logger import setup_logger

sys.path.insert(0, 'UniDet_eval/experts/obj_detection/')
from unidet.config import add_unidet_config
from experts.obj_detection.unidet.predictor import UnifiedVisualizationDemo

# constants
WINDOW_NAME = "Unified detections"
OBJ_THRESH = 0.5
IOU_THRESH = 0.9


def setup_cfg(args):
    # load config from file and command-line arguments
    cfg = get_cfg()
    add_unidet_config(cfg)
    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    # Set score_threshold for builtin models
    cfg.MODEL.RETINANET.SCORE_THRESH_TEST = args.confidence_threshold
    cfg.MODEL.ROI_HEADS.SCORE_THRESH_TEST = args.confidence_threshold
    cfg.MODEL.PANOPTIC_FPN.COMBINE.INSTANCES_CONFIDENCE_THRESH = args.confidence_threshold
    cfg.MODEL.DEVICE = args.device
    cfg.freeze()
    return cfg


def get_parser():
    parser = argparse.ArgumentParser(description="UniDet spatial evaluation")
    parser.add_argument(
        "--config-file",
        default="UniDet_eval/experts/obj_detection/configs/Unified_learned_OCIM_RS200_6x+2x.yaml",
        metavar="FILE",
        help="path to config file",
    )
    parser.add_argument("--outpath", type=str, required=True, help="folder with samples/ and where results go")
    parser.add_argument("--complex", type=bool, default=False)
    parser.add_argument("--device", type=str, default="cuda", help="cuda or cpu")
    parser.add_argument(
        "--confidence-threshold",
        type=float,
        default=0.5,
        help="Minimum score for instance predictions to be shown",
    )
    parser.add_argument(
        "--opts",
        help="Modify config options using the command-line 'KEY VALUE' pairs",
        default=["MODEL.WEIGHTS", "UniDet_eval/experts/expert_weights/Unified_learned_OCIM_RS200_6x+2x.pth"],
        nargs=argparse.REMAINDER,
    )
    return parser


def get_mask_labels(depth, instance_boxes, instance_id):
    obj_masks = []
    obj_ids = []
    obj_boundingbox = []
    for i in range(len(instance_boxes)):
        is_duplicate = False
        mask = torch.zeros_like(depth)
        x1, y1, x2, y2 = instance_boxes[i][0].item(), instance_boxes[i][1].item(), \
            instance_boxes[i][2].item(), instance_boxes[i][3].item()
        mask[int(y1):int(y2), int(x1):int(x2)] = 1
        if not is_duplicate:
            obj_masks.append(mask)
            obj_ids.append(instance_id[i])
            obj_boundingbox.append([x1, y1, x2, y2])

    instance_labels = {}
    for i in range(len(obj_ids)):
        instance_labels[i] = obj_ids[i].item()
    return obj_boundingbox, instance_labels


def determine_position(locality, box1, box2, iou_threshold=0.1, distance_threshold=150):
    # Calculate centers of bounding boxes
    box1_center = ((box1['x_min'] + box1['x_max']) / 2, (box1['y_min'] + box1['y_max']) / 2)
    box2_center = ((box2['x_min'] + box2['x_max']) / 2, (box2['y_min'] + box2['y_max']) / 2)

    # Calculate horizontal and vertical distances
    x_distance = box2_center[0] - box1_center[0]
    y_distance = box2_center[1] - box1_center[1]

    # Calculate IoU
    x_overlap = max(0, min(box1['x_max'], box2['x_max']) - max(box1['x_min'], box2['x_min']))
    y_overlap = max(0, min(box1['y_max'], box2['y_max']) - max(box1['y_min'], box2['y_min']))
    intersection = x_overlap * y_overlap
    box1_area = (box1['x_max'] - box1['x_min']) * (box1['y_max'] - box1['y_min'])
    box2_area = (box2['x_max'] - box2['x_min']) * (box2['y_max'] - box2['y_min'])
    union = box1_area + box2_area - intersection
    iou = intersection / union

    # Determine position based on distances and IoU and give a soft score
    score = 0
    if locality in ['next to', 'on side of', 'near']:
        if (min(abs(x_distance), abs(y_distance)) < distance_threshold):
            score = 1
        else:
            score = distance_threshold / min(abs(x_distance), abs(y_distance))
    elif locality == 'on the right of':
        if x_distance < 0:
            if abs(x_distance) > abs(y_distance) and iou < iou_threshold:
                score = 1
            elif abs(x_distance) > abs(y_distance) and iou >= iou_threshold:
                score = iou_threshold / iou
    elif locality == 'on the left of':
        if x_distance > 0:
            if abs(x_distance) > abs(y_distance) and iou < iou_threshold:
                score = 1
            elif abs(x_distance) > abs(y_distance) and iou >= iou_threshold:
                score = iou_threshold / iou
    elif locality == 'on the bottom of':
        if y_distance < 0:
            if abs(y_distance) > abs(x_distance) and iou < iou_threshold:
                score = 1
            elif abs(y_distance) > abs(x_distance) and iou >= iou_threshold:
                score = iou_threshold / iou
    elif locality == 'on the top of':
        if y_distance > 0:
            if abs(y_distance) > abs(x_distance) and iou < iou_threshold:
                score = 1
            elif abs(y_distance) > abs(x_distance) and iou >= iou_threshold:
                score = iou_threshold / iou
    else:
        score = 0
    return score


def main():
    mp.set_start_method("spawn", force=True)
    args = get_parser().parse_args()
    setup_logger(name="fvcore")
    logger = setup_logger()
    logger.info("Arguments: " + str(args))

    cfg = setup_cfg(args)
    demo = UnifiedVisualizationDemo(cfg)

    outpath = args.outpath
    image_folder = os.path.join(outpath, 'samples')
    file_names = os.listdir(image_folder)
    file_names.sort(key=lambda x: int(x.split("_")[-1].split('.')[0]))

    with open("UniDet_eval/experts/obj_detection/datasets/label_spaces/learned_mAP.json", 'r') as f:
        unified_label_space = json.load(f)['label_space']
    obj_label_map = {i: name for i, name in enumerate(unified_label_space)}

    vocab_spatial = ['on side of', 'next to', 'near', 'on the left of', 'on the right of', 'on the bottom of', 'on the top of']

    result = []
    for file_name in tqdm(file_names):
        img_path = os.path.join(image_folder, file_name)
        img = read_image(img_path, format="BGR")
        predictions, visualized_output = demo.run_on_image(img)
        instances = predictions["instances"].to(torch.device("cpu"))

        depth = torch.zeros(img.shape[:2])
        obj_bounding_box, obj_labels_dict = get_mask_labels(depth, instances.pred_boxes, instances.pred_classes)

        obj = []
        for i in range(len(obj_bounding_box)):
            obj_name = obj_label_map[obj_labels_dict[i]]
            obj.append((obj_name, obj_bounding_box[i]))

        prompt = file_name.split("_")[0].lower()
        locality = None
        for word in vocab_spatial:
            if word in prompt:
                locality = word
                break

        score = 0
        if locality is not None and len(obj) >= 2:
            obj1_name, obj2_name = prompt.split(locality)[0].strip().split(' ')[-1], prompt.split(locality)[1].strip().split(' ')[-1]
            boxes1 = [o[1] for o in obj if obj1_name in o[0].lower()]
            boxes2 = [o[1] for o in obj if obj2_name in o[0].lower()]
            for b1 in boxes1:
                for b2 in boxes2:
                    box1 = {'x_min': b1[0], 'y_min': b1[1], 'x_max': b1[2], 'y_max': b1[3]}
                    box2 = {'x_min': b2[0], 'y_min': b2[1], 'x_max': b2[2], 'y_max': b2[3]}
                    score = max(score, determine_position(locality, box1, box2))

        image_dict = {
            'question_id': int(file_name.split('_')[-1].split('.')[0]),
            'answer': score,
        }
        result.append(image_dict)

    im_save_path = os.path.join(outpath, 'labels', 'annotation_obj_detection_2d')
    os.makedirs(im_save_path, exist_ok=True)
    with open(os.path.join(im_save_path, 'vqa_result.json'), 'w') as f:
        json.dump(result, f)
    print("avg score:", np.mean([r['answer'] for r in result]))


if __name__ == "__main__":
    main()
