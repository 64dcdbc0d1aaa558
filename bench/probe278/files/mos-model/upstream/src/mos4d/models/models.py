#!/usr/bin/env python3
# @file      models.py
# @author    Benedikt Mersch     [mersch@igg.uni-bonn.de]
# Copyright (c) 2022 Benedikt Mersch, all rights reserved

import torch
import torch.nn as nn
import torch.nn.functional as F
import MinkowskiEngine as ME
from pytorch_lightning import LightningModule

from mos4d.models.MinkowskiEngine.customminkunet import CustomMinkUNet
from mos4d.models.loss import MOSLoss
from mos4d.models.metrics import ClassificationMetrics


class MOSNet(LightningModule):
    def __init__(self, hparams: dict):
        super().__init__()
        self.save_hyperparameters(hparams)
        self.poses = (
            self.hparams["DATA"]["POSES"].split(".")[0]
            if self.hparams["DATA"]["TRANSFORM"]
            else "no_poses"
        )
        self.cfg = hparams
        self.id = self.cfg["EXPERIMENT"]["ID"]

        self.dt_prediction = self.hparams["MODEL"]["DELTA_T_PREDICTION"]
        self.lr = self.hparams["TRAIN"]["LR"]
        self.lr_epoch = hparams["TRAIN"]["LR_EPOCH"]
        self.lr_decay = hparams["TRAIN"]["LR_DECAY"]
        self.weight_decay = hparams["TRAIN"]["WEIGHT_DECAY"]
        self.n_past_steps = hparams["MODEL"]["N_PAST_STEPS"]

        self.semantic_config = yaml_load(hparams["DATA"]["SEMANTIC_CONFIG_FILE"])
        self.n_classes = len(self.semantic_config["learning_map_inv"])
        self.ignore_index = [
            key for key, ignore in self.semantic_config["learning_ignore"].items() if ignore
        ]
        self.model = MOSModel(hparams, self.n_classes)

        self.MOSLoss = MOSLoss(self.n_classes, self.ignore_index)

        self.ClassificationMetrics = ClassificationMetrics(self.n_classes, self.ignore_index)

    def forward(self, past_point_clouds: dict):
        out = self.model(past_point_clouds)
        return out

    def training_step(self, batch: tuple, batch_idx, dataloader_index=0):
        _, past_point_clouds, past_labels = batch
        out = self.forward(past_point_clouds)

        loss = self.MOSLoss.compute_loss(out, past_labels)

        self.log("train_loss", loss.item(), on_step=True)

        # Logging metrics
        dict_confusion_matrix = {}
        for s in range(self.n_past_steps):
            dict_confusion_matrix[s] = (
                self.ClassificationMetrics.compute_confusion_matrix(out, past_labels, s)
                .detach()
                .cpu()
            )
        torch.cuda.empty_cache()  # 10 stacked scans through MinkUNet are memory hungry
        return {"loss": loss, "dict_confusion_matrix": dict_confusion_matrix}

    def training_epoch_end(self, training_step_outputs):
        list_dict_confusion_matrix = [
            output["dict_confusion_matrix"] for output in training_step_outputs
        ]
        for s in range(self.n_past_steps):
            agg_confusion_matrix = torch.zeros(self.n_classes, self.n_classes)
            for dict_confusion_matrix in list_dict_confusion_matrix:
                agg_confusion_matrix = agg_confusion_matrix.add(dict_confusion_matrix[s])
            iou = self.ClassificationMetrics.getIoU(agg_confusion_matrix)
            self.log("train_moving_iou_step{}".format(s), iou[2].item())

    def validation_step(self, batch: tuple, batch_idx):
        batch_size = len(batch[0])
        meta, past_point_clouds, past_labels = batch
        out = self.forward(past_point_clouds)

        loss = self.MOSLoss.compute_loss(out, past_labels)
        self.log("val_loss", loss.item(), batch_size=batch_size, prog_bar=True, on_epoch=True)

        dict_confusion_matrix = {}
        for s in range(self.n_past_steps):
            dict_confusion_matrix[s] = (
                self.ClassificationMetrics.compute_confusion_matrix(out, past_labels, s)
                .detach()
                .cpu()
            )
        torch.cuda.empty_cache()  # ME keeps coordinate maps around between batches
        return dict_confusion_matrix

    def validation_epoch_end(self, validation_step_outputs):
        for s in range(self.n_past_steps):
            agg_confusion_matrix = torch.zeros(self.n_classes, self.n_classes)
            for dict_confusion_matrix in validation_step_outputs:
                agg_confusion_matrix = agg_confusion_matrix.add(dict_confusion_matrix[s])
            iou = self.ClassificationMetrics.getIoU(agg_confusion_matrix)
            self.log("val_moving_iou_step{}".format(s), iou[2].item())

        if torch.cuda.is_available():
            torch.cuda.empty_cache()

    def predict_step(self, batch: tuple, batch_idx: int, dataloader_idx: int = None):
        meta, past_point_clouds, past_labels = batch
        out = self.forward(past_point_clouds)
        return meta, out

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        scheduler = torch.optim.lr_scheduler.StepLR(
            optimizer, step_size=self.lr_epoch, gamma=self.lr_decay
        )
        return [optimizer], [scheduler]


#######################################
# Modules
#######################################


class MOSModel(nn.Module):
    def __init__(self, cfg: dict, n_classes: int):
        super().__init__()
        self.dt_prediction = cfg["MODEL"]["DELTA_T_PREDICTION"]
        ds = cfg["DATA"]["VOXEL_SIZE"]
        self.quantization = torch.Tensor([1.0, ds, ds, ds, self.dt_prediction])
        self.MinkUNet = CustomMinkUNet(in_channels=1, out_channels=n_classes, D=4)

    def forward(self, past_point_clouds):
        quantization = self.quantization.type_as(past_point_clouds[0])

        past_point_clouds = [
            torch.div(point_cloud, quantization) for point_cloud in past_point_clouds
        ]
        features = [
            0.5 * torch.ones(len(point_cloud), 1).type_as(point_cloud)
            for point_cloud in past_point_clouds
        ]
        coords, features = ME.utils.sparse_collate(past_point_clouds, features)
        tensor_field = ME.TensorField(features=features, coordinates=coords.type_as(features))

        sparse_tensor = tensor_field.sparse()

        predicted_sparse_tensor = self.MinkUNet(sparse_tensor)

        out = predicted_sparse_tensor.slice(tensor_field)
        out.coordinates[:, 1:] = torch.mul(out.coordinates[:, 1:], quantization)
        return out


def voxelize_scan_sequence(points_4d, voxel_size, dt, device="cuda"):
    """Quantise a single (N, 4) [x, y, z, t] sequence into a batched sparse tensor.

    Used by the online ROS node where scans arrive one by one and the
    LightningDataModule collate is not available.
    """
    quant = torch.tensor([voxel_size, voxel_size, voxel_size, dt], dtype=torch.float32)
    coords = torch.div(points_4d, quant).floor().int()
    coords, unique_map = ME.utils.sparse_quantize(coords, return_index=True)
    batched_coords = ME.utils.batched_coordinates([coords])
    feats = 0.5 * torch.ones(len(batched_coords), 1, dtype=torch.float32)
    return ME.SparseTensor(
        features=feats,
        coordinates=batched_coords,
        quantization_mode=ME.SparseTensorQuantizationMode.UNWEIGHTED_AVERAGE,
        device=device,
    ), unique_map


@torch.no_grad()
def predict_single_sequence(model, points_4d, voxel_size, dt):
    """Run the bare MinkUNet on one sequence, returns per-voxel logits on the CPU."""
    model.eval()
    sparse_tensor, unique_map = voxelize_scan_sequence(points_4d, voxel_size, dt, device='cuda')
    logits = model.MinkUNet(sparse_tensor)
    return logits.F.cpu(), unique_map


def yaml_load(path):
    import yaml

    with open(path, "r") as f:
        return yaml.safe_load(f)
