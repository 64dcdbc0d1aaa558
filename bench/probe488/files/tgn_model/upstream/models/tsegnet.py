import os

import numpy as np
import torch
import torch.nn.functional as F

from models.base_model import BaseModel
from models.modules.tsegnet import TSegNetModule
from loss_meter import LossMap
import ops_utils as ou
import gen_utils as gu


class TSegNetModel(BaseModel):
    def __init__(self, config, module):
        super().__init__(config, module)
        self.run_type = config["model_parameter"]["run_type"]
        if self.run_type == "train":
            # the second stage starts from the pretrained centroid network
            cent_path = config.get("pretrained_centroid_model_path", "")
            if cent_path:
                self.load_cent(cent_path)

    def load_cent(self, path):
        state = torch.load(path + ".h5")
        cent_state = {k: v for k, v in state.items() if k.startswith("cent_module")}
        missing, unexpected = self.module.load_state_dict(cent_state, strict=False)
        print("centroid module loaded, missing keys:", len(missing))

    def get_loss(self, outputs, gt):
        losses = {}
        sem_1 = outputs["sem_1"]
        offset_1 = outputs["offset_1"]
        dist_1 = outputs["dist_1"]
        l0_xyz = outputs["l0_xyz"]
        l3_xyz = outputs["l3_xyz"]

        gt_seg_label = gt["gt_seg_label"]
        gt_centroids, gt_centroid_exists = ou.get_centroids(l0_xyz, gt_seg_label)

        # centroid prediction losses (chamfer-like distance + separation)
        cent_loss, sep_loss = ou.centroid_loss(offset_1 + l3_xyz, gt_centroids, gt_centroid_exists)
        dist_loss = ou.distance_loss(dist_1, l3_xyz, gt_centroids, gt_centroid_exists)
        losses["cent_loss"] = (cent_loss, 1)
        losses["sep_loss"] = (sep_loss, 0.1)
        losses["dist_loss"] = (dist_loss, 1)

        if self.run_type == "train" and "cluster_gt_seg_label" in outputs:
            cropped_label = outputs["cluster_gt_seg_label"]
            pd_mask = outputs["pd_1"]
            pd_id = outputs["id_pred"]
            weight = outputs["weight_1"]
            seg_loss = F.binary_cross_entropy_with_logits(pd_mask, cropped_label, weight=weight)
            id_loss = F.cross_entropy(pd_id, outputs["cluster_gt_id"].long())
            losses["seg_loss"] = (seg_loss, 1)
            losses["id_loss"] = (id_loss, 0.5)
        return losses

    def step(self, i_iter, batch_item, phase="train"):
        self._set_model(phase)

        B, C, N = batch_item["feat"].shape
        points = batch_item["feat"].cuda()
        l0_xyz = batch_item["feat"][:, :3, :].cuda()
        seg_label = batch_item["gt_seg_label"].cuda()

        inputs = [points, seg_label]
        if phase == "train":
            output = self.module(inputs)
        else:
            with torch.no_grad():
                output = self.module(inputs)
        output["l0_xyz"] = l0_xyz
        loss_meter = LossMap()

        losses = self.get_loss(output, {"gt_seg_label": seg_label})
        loss_meter.add_loss_by_dict(losses)

        if phase == "train":
            loss_sum = loss_meter.get_sum()
            self.optimizer.zero_grad()
            loss_sum.backward()
            torch.nn.utils.clip_grad_norm_(self.module.parameters(), 5.0)
            self.optimizer.step()

        return loss_meter

    def infer(self, batch_idx, batch_item, **options):
        pass


class BaseModelHelpers:
    """Utility mixin kept for the old notebook API."""

    @staticmethod
    def to_numpy(t):
        return t.detach().cpu().numpy()

    @staticmethod
    def count_parameters(module):
        return sum(p.numel() for p in module.parameters() if p.requires_grad)
