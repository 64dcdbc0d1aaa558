"""
Copyright (C) 2021 Microsoft Corporation

Table detection + structure recognition pipeline (DETR-based Table Transformer).
"""
import argparse
import json
import os
import sys
from collections import OrderedDict

import torch
from PIL import Image
from torchvision import transforms

sys.path.append("../detr")
from models import build_model  # noqa: E402
from postprocess import objects_to_structures, refine_table_structure  # noqa: E402

detection_class_names = ['table', 'table rotated', 'no object']
structure_class_names = [
    'table', 'table column', 'table row', 'table column header',
    'table projected row header', 'table spanning cell', 'no object'
]
detection_class_thresholds = {"table": 0.5, "table rotated": 0.5, "no object": 10}


class MaxResize(object):
    def __init__(self, max_size=800):
        self.max_size = max_size

    def __call__(self, image):
        width, height = image.size
        current_max_size = max(width, height)
        scale = self.max_size / current_max_size
        return image.resize((int(round(scale * width)), int(round(scale * height))))


detection_transform = transforms.Compose([
    MaxResize(800),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
])

structure_transform = transforms.Compose([
    MaxResize(1000),
    transforms.ToTensor(),
    transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
])


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument('--image_dir', help="Directory for input images")
    parser.add_argument('--out_dir', help="Output directory")
    parser.add_argument('--mode', help="The processing to apply to the input image",
                        default='recognize', choices=['detect', 'recognize', 'extract'])
    parser.add_argument('--structure_config_path', help="Filepath to the structure model config file")
    parser.add_argument('--structure_model_path', help="The path to the structure model")
    parser.add_argument('--detection_config_path', help="Filepath to the detection model config file")
    parser.add_argument('--detection_model_path', help="The path to the detection model")
    parser.add_argument('--detection_device', default="cuda")
    parser.add_argument('--structure_device', default="cuda")
    parser.add_argument('--crop_padding', type=int, default=10,
                        help="The amount of padding to add around a detected table when cropping.")
    parser.add_argument('--half', action='store_true', help="fp16 weights on the GPU")
    return parser.parse_args()


def box_cxcywh_to_xyxy(x):
    x_c, y_c, w, h = x.unbind(-1)
    b = [(x_c - 0.5 * w), (y_c - 0.5 * h), (x_c + 0.5 * w), (y_c + 0.5 * h)]
    return torch.stack(b, dim=1)


def rescale_bboxes(out_bbox, size):
    img_w, img_h = size
    b = box_cxcywh_to_xyxy(out_bbox)
    b = b * torch.tensor([img_w, img_h, img_w, img_h], dtype=torch.float32)
    return b


def outputs_to_objects(outputs, img_size, class_idx2name):
    m = outputs['pred_logits'].softmax(-1).max(-1)
    pred_labels = list(m.indices.detach().cpu().numpy())[0]
    pred_scores = list(m.values.detach().cpu().numpy())[0]
    pred_bboxes = outputs['pred_boxes'].detach().cpu()[0]
    pred_bboxes = [elem.tolist() for elem in rescale_bboxes(pred_bboxes, img_size)]

    objects = []
    for label, score, bbox in zip(pred_labels, pred_scores, pred_bboxes):
        class_label = class_idx2name[int(label)]
        if not class_label == 'no object':
            objects.append({'label': class_label, 'score': float(score),
                            'bbox': [float(elem) for elem in bbox]})
    return objects


class TableExtractionPipeline(object):
    def __init__(self, det_device=None, str_device=None,
                 det_model=None, str_model=None,
                 det_model_path=None, str_model_path=None,
                 det_config_path=None, str_config_path=None, half=False):

        self.det_device = det_device
        self.str_device = str_device
        self.half = half

        self.det_class_name2idx = {name: i for i, name in enumerate(detection_class_names)}
        self.det_class_idx2name = {v: k for k, v in self.det_class_name2idx.items()}
        self.str_class_name2idx = {name: i for i, name in enumerate(structure_class_names)}
        self.str_class_idx2name = {v: k for k, v in self.str_class_name2idx.items()}

        if det_config_path is not None:
            with open(det_config_path, 'r') as f:
                det_config = json.load(f)
            det_args = type('Args', (object,), det_config)
            det_args.device = det_device
            self.det_model, _, _ = build_model(det_args)
            print("Detection model initialized.")

            if det_model_path is not None:
                self.det_model.load_state_dict(torch.load(det_model_path,
                                                          map_location=torch.device(det_device)))
                self.det_model.to(det_device)
                self.det_model.eval()
                print("Detection model weights loaded.")

        if str_config_path is not None:
            with open(str_config_path, 'r') as f:
                str_config = json.load(f)
            str_args = type('Args', (object,), str_config)
            str_args.device = str_device
            self.str_model, _, _ = build_model(str_args)
            print("Structure model initialized.")

            if str_model_path is not None:
                self.str_model.load_state_dict(torch.load(str_model_path,
                                                          map_location=torch.device(str_device)))
                self.str_model.to(str_device)
                self.str_model.eval()
                if self.half and str_device.startswith("cuda"):
                    self.str_model.half()
                print("Structure model weights loaded.")

    def detect(self, img, tokens=None, out_objects=True, out_crops=False, crop_padding=10):
        img_tensor = detection_transform(img)
        outputs = self.det_model([img_tensor.to(self.det_device)])
        objects = outputs_to_objects(outputs, img.size, self.det_class_idx2name)
        return {'objects': objects} if out_objects else {}

    def recognize(self, img, tokens=None, out_objects=False, out_cells=False):
        img_tensor = structure_transform(img)
        if self.half and self.str_device.startswith("cuda"):
            img_tensor = img_tensor.half()
        outputs = self.str_model([img_tensor.to(self.str_device)])
        objects = outputs_to_objects(outputs, img.size, self.str_class_idx2name)
        tables_structure = objects_to_structures(objects, tokens or [], self.str_class_thresholds)
        return {'objects': objects, 'cells': tables_structure} if out_cells else {'objects': objects}

    str_class_thresholds = {
        "table": 0.5, "table column": 0.5, "table row": 0.5, "table column header": 0.5,
        "table projected row header": 0.5, "table spanning cell": 0.5, "no object": 10,
    }


def main():
    args = get_args()
    print(args.__dict__)
    print('-' * 100)

    if not args.out_dir is None and not os.path.exists(args.out_dir):
        os.makedirs(args.out_dir)

    # Create inference pipeline
    print("Creating inference pipeline")
    pipe = TableExtractionPipeline(det_device=args.detection_device,
                                   str_device=args.structure_device,
                                   det_config_path=args.detection_config_path,
                                   det_model_path=args.detection_model_path,
                                   str_config_path=args.structure_config_path,
                                   str_model_path=args.structure_model_path,
                                   half=args.half)

    img_files = sorted(f for f in os.listdir(args.image_dir) if f.lower().endswith(('.jpg', '.png')))
    with torch.no_grad():
        for img_file in img_files:
            img = Image.open(os.path.join(args.image_dir, img_file)).convert("RGB")
            if args.mode == 'detect':
                result = pipe.detect(img)
            else:
                result = pipe.recognize(img, out_cells=True)
            out_path = os.path.join(args.out_dir, img_file.rsplit('.', 1)[0] + '_objects.json')
            with open(out_path, 'w') as f:
                json.dump(result['objects'], f)


if __name__ == '__main__':
    main()
