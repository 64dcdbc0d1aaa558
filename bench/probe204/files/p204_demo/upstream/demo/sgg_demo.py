"""Run a trained SGDet model on a folder of images and dump the top-k triplets.

Example:
    python demo/sgg_demo.py --config-file checkpoints/causal-motifs-sgdet/config.yml \
        --weights checkpoints/causal-motifs-sgdet/model_final.pth \
        --image-dir demo/images --out demo/custom_prediction.json --gpu 0
"""
import argparse
import glob
import json
import os
import time

import cv2
import numpy as np
import torch
from torchvision import transforms as T

from maskrcnn_benchmark.config import cfg
from maskrcnn_benchmark.modeling.detector import build_detection_model
from maskrcnn_benchmark.structures.image_list import to_image_list
from maskrcnn_benchmark.utils.checkpoint import DetectronCheckpointer


class Resize(object):
    def __init__(self, min_size, max_size):
        self.min_size = min_size
        self.max_size = max_size

    # modified from torchvision to add support for max size
    def get_size(self, image_size):
        w, h = image_size
        size = self.min_size
        max_size = self.max_size
        if max_size is not None:
            min_original_size = float(min((w, h)))
            max_original_size = float(max((w, h)))
            if max_original_size / min_original_size * size > max_size:
                size = int(round(max_size * min_original_size / max_original_size))

        if (w <= h and w == size) or (h <= w and h == size):
            return (h, w)

        if w < h:
            ow = size
            oh = int(size * h / w)
        else:
            oh = size
            ow = int(size * w / h)

        return (oh, ow)

    def __call__(self, image):
        size = self.get_size(image.size)
        image = T.functional.resize(image, size)
        return image


class SGGDemo(object):
    def __init__(self, cfg, weights, min_image_size=600, topk_rel=20, device="cuda"):
        self.cfg = cfg.clone()
        self.model = build_detection_model(cfg)
        self.model.eval()
        self.device = torch.device(device)
        self.model.cuda()
        self.min_image_size = min_image_size
        self.topk_rel = topk_rel

        checkpoint = torch.load(weights, map_location=torch.device("cuda"))
        self.model.load_state_dict(checkpoint["model"], strict=False)

        self.transforms = self.build_transform()
        self.cpu_device = torch.device("cpu")

    def build_transform(self):
        cfg = self.cfg
        # we are loading images with OpenCV, so we don't need to convert them
        # to BGR, they are already! So all we need to do is to normalize
        # by 255 if we want to convert to BGR255 format, or flip the channels
        # if we want it to be in RGB in [0-1] range.
        if cfg.INPUT.TO_BGR255:
            to_bgr_transform = T.Lambda(lambda x: x * 255)
        else:
            to_bgr_transform = T.Lambda(lambda x: x[[2, 1, 0]])

        normalize_transform = T.Normalize(
            mean=cfg.INPUT.PIXEL_MEAN, std=cfg.INPUT.PIXEL_STD
        )
        transform = T.Compose(
            [
                T.ToPILImage(),
                Resize(self.min_image_size, cfg.INPUT.MAX_SIZE_TEST),
                T.ToTensor(),
                to_bgr_transform,
                normalize_transform,
            ]
        )
        return transform

    def compute_prediction(self, original_image):
        image = self.transforms(original_image)
        image_list = to_image_list(image, self.cfg.DATALOADER.SIZE_DIVISIBILITY)
        image_list = image_list.to(self.device)
        with torch.no_grad():
            predictions = self.model(image_list)
        predictions = [o.to(self.cpu_device) for o in predictions]

        prediction = predictions[0]
        height, width = original_image.shape[:-1]
        prediction = prediction.resize((width, height))
        return prediction

    def triplets(self, prediction, idx_to_label, idx_to_predicate):
        boxes = prediction.bbox.numpy()
        labels = prediction.get_field("pred_labels").numpy()
        scores = prediction.get_field("pred_scores").numpy()
        rel_pairs = prediction.get_field("rel_pair_idxs").numpy()
        rel_scores = prediction.get_field("pred_rel_scores")
        rel_scores[:, 0] = 0
        rel_score, rel_label = rel_scores.max(-1)
        order = torch.argsort(rel_score, descending=True)[: self.topk_rel].numpy()
        out = []
        for i in order:
            s, o = rel_pairs[i]
            out.append({
                "subject": idx_to_label[str(labels[s])],
                "subject_box": boxes[s].round(1).tolist(),
                "predicate": idx_to_predicate[str(int(rel_label[i]))],
                "object": idx_to_label[str(labels[o])],
                "object_box": boxes[o].round(1).tolist(),
                "score": float(rel_score[i] * scores[s] * scores[o]),
            })
        return out


def main():
    parser = argparse.ArgumentParser(description="Scene Graph Generation demo")
    parser.add_argument("--config-file", required=True, metavar="FILE")
    parser.add_argument("--weights", required=True)
    parser.add_argument("--image-dir", default="demo/images")
    parser.add_argument("--dict-file", default="datasets/vg/VG-SGG-dicts-with-attri.json")
    parser.add_argument("--out", default="demo/custom_prediction.json")
    parser.add_argument("--gpu", type=int, default=0, help="which GPU to run on")
    parser.add_argument("--min-image-size", type=int, default=600)
    parser.add_argument("--topk", type=int, default=20)
    parser.add_argument("opts", default=None, nargs=argparse.REMAINDER)
    args = parser.parse_args()

    cfg.merge_from_file(args.config_file)
    cfg.merge_from_list(args.opts)
    cfg.freeze()

    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.gpu)
    if not torch.cuda.is_available():
        raise SystemExit("this demo needs a CUDA GPU (see INSTALL.md)")

    with open(args.dict_file) as f:
        vg_dicts = json.load(f)
    idx_to_label = vg_dicts["idx_to_label"]
    idx_to_predicate = vg_dicts["idx_to_predicate"]

    demo = SGGDemo(cfg, args.weights, min_image_size=args.min_image_size, topk_rel=args.topk)

    results = {}
    image_paths = sorted(glob.glob(os.path.join(args.image_dir, "*.jpg")))
    for path in image_paths:
        img = cv2.imread(path)
        start = time.time()
        prediction = demo.compute_prediction(img)
        torch.cuda.synchronize()
        elapsed = time.time() - start
        results[os.path.basename(path)] = demo.triplets(prediction, idx_to_label, idx_to_predicate)
        print("{}\t{} triplets\t{:.2f}s".format(os.path.basename(path), len(results[os.path.basename(path)]), elapsed))

    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print("saved {} images to {}".format(len(results), args.out))


if __name__ == "__main__":
    main()
