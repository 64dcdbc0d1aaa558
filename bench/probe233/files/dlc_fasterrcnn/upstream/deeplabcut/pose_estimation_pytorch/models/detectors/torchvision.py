#
# DeepLabCut Toolbox (deeplabcut.org)
# © A. & M.W. Mathis Labs
# https://github.com/DeepLabCut/DeepLabCut
#
# Please see AUTHORS for contributors.
# https://github.com/DeepLabCut/DeepLabCut/blob/main/AUTHORS
#
# Licensed under GNU Lesser General Public License v3.0
#
"""Adaptors wrapping torchvision object detectors (FasterRCNN, SSDLite) so they can
be used as the first stage of DeepLabCut top-down pose estimation models."""
from __future__ import annotations

import logging

import torch
import torch.nn as nn
import torchvision.models.detection as detection
from torchvision.ops import batched_nms

from deeplabcut.pose_estimation_pytorch.models.detectors.base import (
    BaseDetector,
    DETECTORS,
)


class TorchvisionDetectorAdaptor(BaseDetector):
    """An adaptor for torchvision detectors

    This class is an adaptor for torchvision detectors to DeepLabCut detectors. Some of
    the models (from fastest to most powerful) available are:
      - ssdlite320_mobilenet_v3_large
      - fasterrcnn_mobilenet_v3_large_fpn
      - fasterrcnn_resnet50_fpn_v2

    This class should not be used out-of-the-box. Subclasses (such as FasterRCNN or
    SSDLite) should be used instead.

    The torchvision implementation does not allow to get both predictions and losses
    with a single forward pass. Therefore, during evaluation only bounding box metrics
    (mAP, mAR) are available for the test set. See validation loss issue:
      - https://discuss.pytorch.org/t/compute-validation-loss-for-faster-rcnn/62333/12
      - https://stackoverflow.com/a/65347721

    Args:
        model: The torchvision model to use (see all options at
            https://pytorch.org/vision/stable/models.html#object-detection).
        weights: The weights to load for the model. If None, no pre-trained weights are
            loaded.
        num_classes: Number of classes that the model should output. If None, the
            number of classes the model is pre-trained on is used.
        freeze_bn_stats: Whether to freeze stats for BatchNorm layers.
        freeze_bn_weights: Whether to freeze weights for BatchNorm layers.
        box_score_thresh: during inference, only return proposals with a classification
            score greater than box_score_thresh
        nms_iou_thresh: IoU threshold used when merging overlapping boxes of the same
            class after the torchvision post-processing.
    """

    def __init__(
        self,
        model: str,
        weights: str | None = None,
        num_classes: int | None = 2,
        freeze_bn_stats: bool = False,
        freeze_bn_weights: bool = False,
        box_score_thresh: float = 0.01,
        nms_iou_thresh: float | None = None,
        model_kwargs: dict | None = None,
    ) -> None:
        super().__init__(
            freeze_bn_stats=freeze_bn_stats,
            freeze_bn_weights=freeze_bn_weights,
            pretrained=weights is not None,
        )

        # Load the model
        model_fn = getattr(detection, model)
        if model_kwargs is None:
            model_kwargs = {}

        self.model = model_fn(
            weights=weights,
            box_score_thresh=box_score_thresh,
            num_classes=num_classes if weights is None else None,
            **model_kwargs,
        )
        self.nms_iou_thresh = nms_iou_thresh

        # See source: https://stackoverflow.com/a/65347721
        self.model.eager_outputs = lambda losses, detections: (losses, detections)

    def forward(
        self, x: torch.Tensor, targets: list[dict[str, torch.Tensor]] | None = None
    ) -> tuple[dict[str, torch.Tensor], list[dict[str, torch.Tensor]]]:
        """
        Forward pass of the torchvision detector

        Args:
            x: images to be processed, of shape (b, c, h, w)
            targets: ground-truth boxes present in each images

        Returns:
            losses: {'loss_name': loss_tensor}
            detections: for each of the b images, {"boxes": bounding_boxes}
        """
        losses, detections = self.model(x, targets)
        if not self.training and self.nms_iou_thresh is not None:
            detections = [self._merge_boxes(d) for d in detections]
        return losses, detections

    def _merge_boxes(self, det: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """Runs a second NMS across classes on the torchvision detections"""
        if len(det["boxes"]) == 0:
            return det

        keep = batched_nms(
            det["boxes"],
            det["scores"],
            torch.zeros_like(det["labels"]),
            self.nms_iou_thresh,
        )
        return {k: v[keep] for k, v in det.items()}

    def get_target(self, labels: dict) -> list[dict]:
        res = []
        for i, box_ann in enumerate(labels["boxes"]):
            # Boxes may be padded with zeros by the collate function
            mask = (box_ann[:, 2] > 0.0) & (box_ann[:, 3] > 0.0)
            box_ann = box_ann[mask]
            # bbox format conversion (x, y, w, h) -> (x1, y1, x2, y2)
            box_ann[:, 2] += box_ann[:, 0]
            box_ann[:, 3] += box_ann[:, 1]
            res.append(
                {
                    "boxes": box_ann,
                    "labels": torch.ones(
                        box_ann.shape[0], dtype=torch.int64, device=box_ann.device
                    ),
                }
            )
        return res


@DETECTORS.register_module
class FasterRCNN(TorchvisionDetectorAdaptor):
    """A FasterRCNN detector

    Ren, Shaoqing, Kaiming He, Ross Girshick, and Jian Sun. "Faster r-cnn: Towards
    real-time object detection with region proposal networks." Advances in neural
    information processing systems 28 (2015).

    This class is a wrapper of the torchvision implementation of a FasterRCNN (source:
    https://github.com/pytorch/vision/blob/main/torchvision/models/detection/faster_rcnn.py).

    Some of the available FasterRCNN variants (from fastest to most powerful):
      - fasterrcnn_mobilenet_v3_large_fpn
      - fasterrcnn_resnet50_fpn
      - fasterrcnn_resnet50_fpn_v2

    Args:
        variant: The FasterRCNN variant to use (see all options at
            https://pytorch.org/vision/stable/models.html#object-detection).
        pretrained: Whether to load model weights pretrained on COCO
        box_score_thresh: during inference, only return proposals with a classification
            score greater than box_score_thresh
    """

    def __init__(
        self,
        freeze_bn_stats: bool = False,
        freeze_bn_weights: bool = False,
        variant: str = "fasterrcnn_mobilenet_v3_large_fpn",
        pretrained: bool = False,
        box_score_thresh: float = 0.01,
        nms_iou_thresh: float | None = None,
    ) -> None:
        if not variant.lower().startswith("fasterrcnn"):
            raise ValueError(
                "The version must start with `fasterrcnn`. See available models at "
                "https://pytorch.org/vision/stable/models.html#object-detection"
            )

        super().__init__(
            model=variant,
            weights=("COCO_V1" if pretrained else None),
            num_classes=None,
            freeze_bn_stats=freeze_bn_stats,
            freeze_bn_weights=freeze_bn_weights,
            box_score_thresh=box_score_thresh,
            nms_iou_thresh=nms_iou_thresh,
        )

        # Modify the base predictor to output the correct number of classes
        num_classes = 2
        in_features = self.model.roi_heads.box_predictor.cls_score.in_features
        self.model.roi_heads.box_predictor = detection.faster_rcnn.FastRCNNPredictor(
            in_features, num_classes
        )


@DETECTORS.register_module
class SSDLite(TorchvisionDetectorAdaptor):
    """An SSD object detection model (SSDLite with a MobileNetV3 backbone)"""

    def __init__(
        self,
        freeze_bn_stats: bool = False,
        freeze_bn_weights: bool = False,
        pretrained: bool = False,
        pretrained_from_imagenet: bool = False,
        box_score_thresh: float = 0.01,
    ) -> None:
        model_kwargs = dict(weights_backbone=None)
        if pretrained_from_imagenet:
            model_kwargs["weights_backbone"] = "IMAGENET1K_V1"

        super().__init__(
            model="ssdlite320_mobilenet_v3_large",
            weights=("COCO_V1" if pretrained else None),
            num_classes=None,
            freeze_bn_stats=freeze_bn_stats,
            freeze_bn_weights=freeze_bn_weights,
            box_score_thresh=box_score_thresh,
            model_kwargs=model_kwargs,
        )

        if pretrained:
            # replace the classification head to predict a single "animal" class
            self._replace_classification_head(num_classes=2)
        logging.info("Built SSDLite detector")

    def _replace_classification_head(self, num_classes: int) -> None:
        head = self.model.head.classification_head
        num_anchors = self.model.anchor_generator.num_anchors_per_location()
        in_channels = [m[0][0].in_channels for m in head.module_list]
        norm_layer = nn.BatchNorm2d
        self.model.head.classification_head = detection.ssdlite.SSDLiteClassificationHead(
            in_channels, num_anchors, num_classes, norm_layer
        )
