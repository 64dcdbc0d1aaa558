from __future__ import annotations

import os
from typing import Optional

import cv2
import numpy as np
import torch
import torch.nn as nn
from mmpose.apis import inference_top_down_pose_model, init_pose_model, process_mmdet_results, vis_pose_result

os.environ["PYOPENGL_PLATFORM"] = "egl"

# project root directory
ROOT_DIR = "./third-party/ViTPose"
VIT_DIR = os.path.join(ROOT_DIR, "configs/body/2d_kpt_sview_rgb_img/topdown_heatmap/coco")


class ViTPoseModel(object):
    MODEL_DICT = {
        'ViTPose+-G (multi-task train, COCO)': {
            'config': f'{ROOT_DIR}/configs/wholebody/2d_kpt_sview_rgb_img/topdown_heatmap/coco-wholebody/ViTPose_huge_wholebody_256x192.py',
            'model': f'{ROOT_DIR}/../../_DATA/vitpose_ckpts/vitpose+_huge/wholebody.pth',
        },
        'ViTPose-B (COCO)': {
            'config': f'{VIT_DIR}/ViTPose_base_coco_256x192.py',
            'model': f'{ROOT_DIR}/../../_DATA/vitpose_ckpts/vitpose_base_coco.pth',
        },
    }

    def __init__(self, device: str | torch.device = 'cuda:0'):
        self.device = torch.device(device)
        self.model_name = 'ViTPose+-G (multi-task train, COCO)'
        self.model = self._load_model(self.model_name)

    def _load_all_models_once(self) -> None:
        for name in self.MODEL_DICT:
            self._load_model(name)

    def _load_model(self, name: str) -> nn.Module:
        dic = self.MODEL_DICT[name]
        ckpt_path = dic['model']
        # init_pose_model() loads the checkpoint on CPU first and then moves it to `device`
        model = init_pose_model(dic['config'], ckpt_path, device=self.device)
        return model

    def set_model(self, name: str) -> None:
        if name == self.model_name:
            return
        self.model_name = name
        self.model = self._load_model(name)

    def predict_pose_and_visualize(
        self,
        image: np.ndarray,
        det_results: list[np.ndarray],
        box_score_threshold: float,
        kpt_score_threshold: float,
        vis_dot_radius: int,
        vis_line_thickness: int,
    ) -> tuple[list[dict[str, np.ndarray]], np.ndarray]:
        out = self.predict_pose(image, det_results, box_score_threshold)
        vis = self.visualize_pose_results(image, out, kpt_score_threshold,
                                          vis_dot_radius, vis_line_thickness)
        return out, vis

    def predict_pose(
        self,
        image: np.ndarray,
        det_results: list[np.ndarray],
        box_score_threshold: float = 0.5) -> list[dict[str, np.ndarray]]:
        image = image[:, :, ::-1]  # RGB -> BGR
        person_results = process_mmdet_results(det_results, 1)
        person_results = [res for res in person_results if res['bbox'][4] > box_score_threshold]
        out, _ = inference_top_down_pose_model(self.model,
                                               image,
                                               person_results=person_results,
                                               bbox_thr=box_score_threshold,
                                               format='xyxy')
        return out

    def visualize_pose_results(self,
                               image: np.ndarray,
                               pose_results: list[np.ndarray],
                               kpt_score_threshold: float = 0.3,
                               vis_dot_radius: int = 4,
                               vis_line_thickness: int = 1) -> np.ndarray:
        image = image[:, :, ::-1]  # RGB -> BGR
        vis = vis_pose_result(self.model,
                              image,
                              pose_results,
                              kpt_score_thr=kpt_score_threshold,
                              radius=vis_dot_radius,
                              thickness=vis_line_thickness)
        return vis[:, :, ::-1]  # BGR -> RGB


def crop_hands_from_wholebody(pose_out: list[dict[str, np.ndarray]],
                              conf_thr: float = 0.5,
                              min_valid: int = 3) -> list[tuple[np.ndarray, int]]:
    """Turn ViTPose whole-body keypoints into hand boxes (x0, y0, x1, y1) with a handedness flag."""
    boxes = []
    for person in pose_out:
        kp = person['keypoints']
        for is_right, hand in ((0, kp[-42:-21]), (1, kp[-21:])):
            valid = hand[:, 2] > conf_thr
            if valid.sum() <= min_valid:
                continue
            box = np.array([hand[valid, 0].min(), hand[valid, 1].min(),
                            hand[valid, 0].max(), hand[valid, 1].max()], dtype=np.float32)
            boxes.append((box, is_right))
    return boxes


def draw_hand_boxes(image: np.ndarray, boxes: list[tuple[np.ndarray, int]],
                    color_left=(255, 0, 0), color_right=(0, 0, 255)) -> np.ndarray:
    out = image.copy()
    for box, is_right in boxes:
        x0, y0, x1, y1 = box.astype(int).tolist()
        cv2.rectangle(out, (x0, y0), (x1, y1), color_right if is_right else color_left, 2)
    return out


if __name__ == '__main__':
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument('image')
    parser.add_argument('--device', default=None, help='defaults to the first GPU when present')
    args = parser.parse_args()
    dev = args.device or ('cuda' if torch.cuda.is_available() else 'cpu')
    m = ViTPoseModel(dev)
    img = cv2.imread(args.image)[:, :, ::-1]
    h, w = img.shape[:2]
    res = m.predict_pose(img, [np.array([[0, 0, w, h, 1.0]], dtype=np.float32)])
    vis = draw_hand_boxes(img, crop_hands_from_wholebody(res))
    cv2.imwrite('vitpose_hands.jpg', vis[:, :, ::-1])
