# Copyright 2021 UC Davis Plant AI and Biophysics Lab
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

import os
from typing import List, Union

import numpy as np

import torch
import torch.nn as nn

import albumentations as A
from albumentations.pytorch import ToTensorV2

try:
    from effdet import get_efficientdet_config, EfficientDet, DetBenchTrain
    from effdet.efficientdet import HeadNet
    from ensemble_boxes import ensemble_boxes_wbf
except ImportError:
    raise ImportError(
        "To use object detection models in `agml.models`, you need to "
        "install the `effdet` and `ensemble-boxes` packages. You can do "
        "this by running `pip install effdet ensemble-boxes`.")

from agml.models.base import AgMLModelBase
from agml.models.tools import auto_move_data
from agml.models.metrics.map import MeanAveragePrecision
from agml.utils.logging import log


class DetectionModel(AgMLModelBase):
    """Wraps an `EfficientDetD4` model for agricultural object detection.

    The model is trained to detect fruits, flowers, and other objects in
    orchard and greenhouse imagery (e.g. the `apple_detection_usa` or
    `fruit_detection_worldwide` datasets). Inference is exposed through
    `predict()`, which returns bounding boxes, class labels and confidences
    for each input image after weighted-boxes-fusion post-processing.
    """
    serializable = frozenset(("model", "confidence_threshold"))
    state_override = frozenset(("model", ))

    _default_config = {
        "architecture": "tf_efficientdet_d4",
        "image_size": 512,
        "wbf_iou_threshold": 0.44,
        "skip_box_threshold": 0.43,
    }

    def __init__(self, num_classes = 1, pretrained_backbone = True,
                 confidence_threshold = 0.3, learning_rate = 0.0002,
                 wbf_iou_threshold = 0.44, **kwargs):
        super(DetectionModel, self).__init__()
        self._num_classes = num_classes
        self._pretrained_backbone = pretrained_backbone
        self.model = self._construct_sub_net(
            num_classes, pretrained_backbone,
            kwargs.get('architecture', self._default_config['architecture']))
        self._confidence_threshold = confidence_threshold
        self._lr = learning_rate
        self._wbf_iou_threshold = wbf_iou_threshold
        self._inference_tfms = A.Compose([
            A.Resize(height = 512, width = 512, p = 1),
            A.Normalize(mean = (0.485, 0.456, 0.406),
                        std = (0.229, 0.224, 0.225), p = 1),
            ToTensorV2(p = 1)])
        self._map = MeanAveragePrecision(num_classes = num_classes)

    @staticmethod
    def _construct_sub_net(num_classes, pretrained_backbone, architecture):
        config = get_efficientdet_config(architecture)
        config.update({'image_size': (512, 512)})
        net = EfficientDet(config, pretrained_backbone = pretrained_backbone)
        net.class_net = HeadNet(config, num_outputs = num_classes)
        return DetBenchTrain(net, config)

    @staticmethod
    def _select_device():
        # Inference defaults to the first GPU when one is present; the
        # Lightning trainer takes over device placement during training.
        return torch.device('cuda') if torch.cuda.is_available() else torch.device('cpu')

    @auto_move_data
    def forward(self, images, targets):
        return self.model(images, targets)

    def preprocess_input(self, images, return_shapes = False):
        """Resizes and normalizes input images for EfficientDet."""
        images = self._expand_input_images(images)
        shapes = [img.shape[:2] for img in images]
        processed = [self._inference_tfms(image = img)['image'] for img in images]
        processed = torch.stack(processed, dim = 0)
        if return_shapes:
            return processed, shapes
        return processed

    @torch.no_grad()
    def predict(self, images, return_format = 'xyxy'):
        """Runs `EfficientDetD4` inference on the input image(s).

        Parameters
        ----------
        images : Any
            Either a single image, a list of images, image paths, or a
            batched tensor of images.
        return_format : str
            Either `xyxy` (default) or `xywh` for the output boxes.

        Returns
        -------
        A tuple of `(boxes, classes, confidences)` for each image.
        """
        device = self._select_device()
        self.model.to(device)
        self.model.eval()

        images, shapes = self.preprocess_input(images, return_shapes = True)
        images = images.to(device).float()
        img_size = torch.tensor(
            [images[0].shape[-2:]] * images.shape[0], dtype = torch.float32, device = device)
        img_scale = torch.ones(images.shape[0], device = device)
        predictions = self.model.model(images)
        detections = self._decode(predictions, img_size, img_scale)

        boxes, classes, confidences = [], [], []
        for det, shape in zip(detections, shapes):
            b, c, s = self._postprocess(det, shape, return_format)
            boxes.append(b)
            classes.append(c)
            confidences.append(s)
        if len(boxes) == 1:
            return boxes[0], classes[0], confidences[0]
        return boxes, classes, confidences

    def _decode(self, predictions, img_size, img_scale):
        from effdet.bench import _post_process, _batch_detection
        class_out, box_out = predictions
        class_out, box_out, indices, classes = _post_process(
            class_out, box_out, num_levels = self.model.num_levels,
            num_classes = self.model.num_classes,
            max_detection_points = self.model.max_detection_points)
        return _batch_detection(
            class_out.shape[0], class_out, box_out, self.model.anchors.boxes,
            indices, classes, img_scale, img_size,
            max_det_per_image = self.model.max_det_per_image,
            soft_nms = self.model.soft_nms)

    def _postprocess(self, det, shape, return_format):
        det = det.detach().cpu().numpy()
        boxes = det[:, :4]
        scores = det[:, 4]
        labels = det[:, 5]
        keep = scores > self._confidence_threshold
        boxes, scores, labels = boxes[keep], scores[keep], labels[keep]

        # Weighted boxes fusion expects normalized [0, 1] coordinates.
        boxes = np.clip(boxes / 512., 0, 1)
        boxes, scores, labels = ensemble_boxes_wbf.weighted_boxes_fusion(
            [boxes.tolist()], [scores.tolist()], [labels.tolist()],
            iou_thr = self._wbf_iou_threshold, skip_box_thr = 0.43)
        h, w = shape
        boxes = np.array(boxes) * np.array([w, h, w, h])
        if return_format == 'xywh':
            boxes[:, 2:] = boxes[:, 2:] - boxes[:, :2]
        return boxes.astype(np.int32), labels.astype(np.int32), scores

    def configure_optimizers(self):
        return torch.optim.AdamW(self.model.parameters(), lr = self._lr)

    def training_step(self, batch, batch_idx):
        images, annotations, _ = batch
        losses = self.model(images, annotations)
        self.log('train_loss', losses['loss'], prog_bar = True)
        self.log('train_class_loss', losses['class_loss'])
        self.log('train_box_loss', losses['box_loss'])
        return losses['loss']

    def validation_step(self, batch, batch_idx):
        images, annotations, targets = batch
        outputs = self.model(images, annotations)
        detections = outputs['detections']
        self._map.update(detections, targets)
        self.log('val_loss', outputs['loss'], prog_bar = True, sync_dist = True)
        return {'loss': outputs['loss']}

    def validation_epoch_end(self, outputs):
        score = self._map.compute()
        self.log('map', score, prog_bar = True)
        log(f"Validation mAP@0.5: {score:.4f}")
        self._map.reset()

    def save_pretrained(self, path):
        os.makedirs(os.path.dirname(path), exist_ok = True)
        torch.save(self.model.state_dict(), path)

    def load_pretrained(self, path):
        state = torch.load(path, map_location = 'cpu')
        self.model.load_state_dict(state)
