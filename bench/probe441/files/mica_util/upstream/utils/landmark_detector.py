# -*- coding: utf-8 -*-

# Max-Planck-Gesellschaft zur Förderung der Wissenschaften e.V. (MPG) is
# holder of all proprietary rights on this computer program.
# You can only use this computer program if you have closed
# a license agreement with MPG or you get the right to use the computer
# program from someone who is authorized to grant you that right.
# Any use of the computer program without a valid license is prohibited and
# liable to prosecution.
#
# Copyright©2023 Max-Planck-Gesellschaft zur Förderung
# der Wissenschaften e.V. (MPG). acting on behalf of its Max Planck Institute
# for Intelligent Systems. All rights reserved.
#
# Contact: mica@tue.mpg.de

from enum import Enum

import numpy as np
import torch
from insightface.app import FaceAnalysis
from loguru import logger

from datasets.creation.util import get_bbox


class detectors(Enum):
    RETINAFACE = 1
    MEDIAPIPE = 2


class LandmarksDetector:
    def __init__(self, model=detectors.RETINAFACE, device='cuda:0'):
        model = model.name
        self.predictor = model

        if model == detectors.MEDIAPIPE.name:
            import mediapipe as mp
            self._face_mesh = mp.solutions.face_mesh.FaceMesh(static_image_mode=True,
                                                              max_num_faces=1,
                                                              refine_landmarks=True,
                                                              min_detection_confidence=0.5)
        elif model == detectors.RETINAFACE.name:
            self._face_detector = FaceAnalysis(name='antelopev2', providers=['CUDAExecutionProvider'])
            self._face_detector.prepare(ctx_id=0, det_size=(224, 224))
        else:
            logger.error(f'[ERROR] Landmark predictor not supported {model}')
            exit(-1)

        logger.info(f'[DETECTOR] Selected {model} as landmark detector.')

    def detect(self, img):
        if self.predictor == detectors.RETINAFACE.name:
            bboxes, kpss = self._face_detector.det_model.detect(img, max_num=0, metric='default')
            return bboxes, kpss

        if self.predictor == detectors.MEDIAPIPE.name:
            results = self._face_mesh.process(img[..., ::-1])
            if not results.multi_face_landmarks:
                return None, 'kpt68'
            h, w = img.shape[:2]
            lmks = results.multi_face_landmarks[0].landmark
            lmks = np.array([[l.x * w, l.y * h] for l in lmks], dtype=np.float32)
            bbox = get_bbox(lmks)
            return [bbox], 'mediapipe'

    def get_landmarks(self, img):
        bboxes, kpss = self.detect(img)
        if bboxes is None or len(bboxes) == 0:
            return None
        return kpss

