"""
Author: Radek Danecek
Copyright (c) 2022, Radek Danecek
All rights reserved.

# Max-Planck-Gesellschaft zur Förderung der Wissenschaften e.V. (MPG) is
# holder of all proprietary rights on this computer program.
# Using this computer program means that you agree to the terms
# in the LICENSE file included with this software distribution.
# Any use not explicitly granted by the LICENSE is prohibited.
#
# For comments or questions, please email us at emoca@tue.mpg.de
# For commercial licensing contact, please contact ps-license@tuebingen.mpg.de
"""

from abc import abstractmethod, ABC
import numpy as np
import torch
import pickle as pkl
import os, sys
from gdl.utils.other import get_path_to_externals
from pathlib import Path
from torchvision import transforms as tf
from face_alignment.detection.sfd.sfd_detector import SFDDetector
from face_alignment.utils import get_preds_fromhm, crop

path_to_mica = get_path_to_externals() / "MICA"
# path_to_mica = get_path_to_externals() / "MICA"
# sys.path.insert(0, str(path_to_mica))


class FaceDetector(ABC):

    @abstractmethod
    def run(self, image, with_landmarks=False, detected_faces=None):
        raise NotImplementedError()

    def __call__(self, *args, **kwargs):
        return self.run(*args, **kwargs)

    def landmark_type(self):
        raise NotImplementedError()

    def optimal_landmark_detector_size(self):
        raise NotImplementedError()


class FAN(FaceDetector):

    def __init__(self, device = 'cuda', threshold=0.5, mode='2D'):
        import face_alignment
        self.face_detector = 'sfd'
        self.face_detector_kwargs = {
            "filter_threshold": threshold
        }
        self.flip_input = False
        if mode == '2D':
            mode = face_alignment.LandmarksType._2D
        elif mode == '2.5D':
            mode = face_alignment.LandmarksType._2halfD
        elif mode == '3D':
            mode = face_alignment.LandmarksType._3D
        else:
            raise ValueError(f"Invalid mode: {mode}")
        self.model = face_alignment.FaceAlignment(mode,
                                                  device=str(device),
                                                  flip_input=self.flip_input,
                                                  face_detector=self.face_detector,
                                                  face_detector_kwargs=self.face_detector_kwargs)

    def landmark_type(self):
        return "kpt68"

    def optimal_landmark_detector_size(self):
        return 256

    @torch.no_grad()
    def run(self, image, with_landmarks=False, detected_faces=None):
        '''
        image: 0-255, uint8, rgb, [h, w, 3]
        return: detected box list
        '''
        out = self.model.get_landmarks(image, detected_faces=detected_faces)
        torch.cuda.empty_cache()
        if out is None:
            del out
            if with_landmarks:
                return [], 'kpt68', []
            else:
                return [], 'kpt68'
        else:
            boxes = []
            kpts = []
            for i in range(len(out)):
                kpt = out[i].squeeze()
                left = np.min(kpt[:, 0])
                right = np.max(kpt[:, 0])
                top = np.min(kpt[:, 1])
                bottom = np.max(kpt[:, 1])
                bbox = [left, top, right, bottom]
                boxes += [bbox]
                kpts += [kpt]
            del out # attempt to prevent memory leaks
            if with_landmarks:
                return boxes, 'kpt68', kpts
            else:
                return boxes, 'kpt68'


class MTCNN(FaceDetector):
    def __init__(self, device = 'cuda'):
        '''
        https://github.com/timesler/facenet-pytorch/blob/master/examples/infer.ipynb
        '''
        from facenet_pytorch import MTCNN as mtcnn
        self.device = device
        self.model = mtcnn(keep_all=True, device=device)

    def run(self, input, **kwargs):
        '''
        image: 0-255, uint8, rgb, [h, w, 3]
        return: detected box
        '''
        out = self.model.detect(input[None, ...])
        if out[0][0] is None:
            return [], 'bbox'
        else:
            bboxes = []
            for i in range(out[0][0].shape[0]):
                bbox = out[0][0].squeeze()
                bboxes.append(bbox)
            return bboxes, 'bbox'


class L2CSGaze(FaceDetector):
    """Gaze estimator used only for the optional gaze-annotation pipeline."""

    def __init__(self, device='cpu', arch='ResNet50', weights=None):
        self.device = device
        self.arch = arch
        self.weights = weights
        self.model = None

    def _lazy_init(self):
        if self.model is not None:
            return
        from l2cs import Pipeline
        self.model = Pipeline(weights=self.weights, arch=self.arch, device=torch.device(self.device))

    def run(self, image, with_landmarks=False, detected_faces=None):
        self._lazy_init()
        results = self.model.step(image)
        boxes = [list(b) for b in results.bboxes]
        if with_landmarks:
            return boxes, 'bbox', [None] * len(boxes)
        return boxes, 'bbox'
