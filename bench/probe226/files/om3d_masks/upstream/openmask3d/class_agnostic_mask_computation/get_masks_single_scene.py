'''
Class-agnostic 3D instance masks for a single scene with a Mask3D model trained on
ScanNet200 (OpenMask3D stage 1). Writes a (num_points, num_masks) boolean array.

    python openmask3d/class_agnostic_mask_computation/get_masks_single_scene.py \
        general.checkpoint=resources/scannet200_model.ckpt \
        general.scene_path=resources/scene_example/scene_example.ply
'''
import logging
import os

import hydra
import numpy as np
import open3d as o3d
import torch
from omegaconf import DictConfig, OmegaConf
from pytorch_lightning import Trainer, seed_everything

import MinkowskiEngine as ME
from openmask3d.class_agnostic_mask_computation.trainer.trainer import InstanceSegmentation
from openmask3d.class_agnostic_mask_computation.utils.utils import (
    load_checkpoint_with_missing_or_exsessive_keys,
    load_backbone_checkpoint_with_missing_or_exsessive_keys,
)

logger = logging.getLogger(__name__)

VOXEL_SIZE = 0.02
COLOR_MEAN = (0.47793125906962, 0.4303257521323044, 0.3749598901421883)
COLOR_STD = (0.2834475483823543, 0.27566157565723015, 0.27018971370874995)


def get_parameters(cfg: DictConfig):
    # parsing input parameters
    seed_everything(cfg.general.seed)

    # getting basic configuration
    if cfg.general.get("gpus", None) is None:
        cfg.general.gpus = os.environ.get("CUDA_VISIBLE_DEVICES", None)

    model = InstanceSegmentation(cfg)
    if cfg.general.backbone_checkpoint is not None:
        cfg, model = load_backbone_checkpoint_with_missing_or_exsessive_keys(cfg, model)
    if cfg.general.checkpoint is not None:
        cfg, model = load_checkpoint_with_missing_or_exsessive_keys(cfg, model)

    logger.info(OmegaConf.to_yaml(cfg))
    return cfg, model


def load_ply(path):
    pcd = o3d.io.read_point_cloud(path)
    points = np.asarray(pcd.points)
    colors = np.asarray(pcd.colors)
    return points, colors


def prepare_data(points, colors, device):
    '''Voxelise a raw point cloud and build the Minkowski input tensor.'''
    colors = (colors - np.array(COLOR_MEAN)) / np.array(COLOR_STD)
    coords = np.floor(points / VOXEL_SIZE)
    _, _, unique_map, inverse_map = ME.utils.sparse_quantize(
        coordinates=coords,
        features=colors,
        return_index=True,
        return_inverse=True,
    )

    sample_coordinates = coords[unique_map]
    coordinates = [torch.from_numpy(sample_coordinates).int()]
    sample_features = colors[unique_map]
    features = [torch.from_numpy(sample_features).float()]

    coordinates, _ = ME.utils.sparse_collate(coords=coordinates, feats=features)
    features = torch.cat(features, dim=0)
    data = ME.SparseTensor(
        coordinates=coordinates,
        features=features,
        device=device,
    )
    raw_coordinates = torch.from_numpy(points[unique_map]).float().to(device)
    return data, features, unique_map, inverse_map, raw_coordinates


def map_output_to_pointcloud(outputs, inverse_map, confidence_threshold=0.0):
    '''Upsample voxel predictions back to the full point cloud.'''
    # parse predictions
    logits = outputs["pred_logits"]
    masks = outputs["pred_masks"]

    # reformat predictions
    logits = logits[0].detach().cpu()
    masks = masks[0].detach().cpu()

    labels = []
    confidences = []
    masks_binary = []

    for i in range(len(logits)):
        p_labels = torch.softmax(logits[i], dim=-1)
        p_masks = torch.sigmoid(masks[:, i])
        l = torch.argmax(p_labels, dim=-1)
        c_label = torch.max(p_labels)
        m = p_masks > 0.5
        c_m = p_masks[m].sum() / (m.sum() + 1e-8)
        c = c_label * c_m
        if l < 200 and c > confidence_threshold:
            labels.append(l.item())
            confidences.append(c.item())
            masks_binary.append(m[inverse_map])  # mapping the mask back to the original point cloud
    if len(masks_binary) == 0:
        return np.zeros((len(inverse_map), 0), dtype=bool), np.zeros((0,))
    return torch.stack(masks_binary, dim=1).numpy(), np.array(confidences)


@torch.no_grad()
def run_single_scene(cfg: DictConfig, model):
    device = torch.device("cuda:0")
    model = model.to(device)
    model.eval()

    points, colors = load_ply(cfg.general.scene_path)
    data, features, unique_map, inverse_map, raw_coordinates = prepare_data(points, colors, device)

    outputs = model.model(data, raw_coordinates=raw_coordinates, is_eval=True)
    masks, scores = map_output_to_pointcloud(outputs, inverse_map, cfg.general.get("confidence_threshold", 0.0))

    out_dir = cfg.general.mask_save_dir
    os.makedirs(out_dir, exist_ok=True)
    scene_name = os.path.basename(cfg.general.scene_path).replace(".ply", "")
    np.save(os.path.join(out_dir, f"{scene_name}_masks.npy"), masks)
    np.save(os.path.join(out_dir, f"{scene_name}_scores.npy"), scores)
    logger.info(f"saved {masks.shape[1]} masks for {scene_name} to {out_dir}")
    return masks


def run_dataset(cfg: DictConfig, model):
    '''Batch mode over a full split, driven by pytorch-lightning like the original Mask3D test.'''
    runner = Trainer(
        gpus=cfg.general.gpus,
        logger=False,
        default_root_dir=str(cfg.general.save_dir),
        **cfg.trainer,
    )
    runner.test(model)


@hydra.main(config_path="conf", config_name="config_base_class_agn_masks_single_scene.yaml")
def get_class_agnostic_masks(cfg: DictConfig):
    os.chdir(hydra.utils.get_original_cwd())
    # Minkowski is much faster with cudnn autotuning on the voxel conv shapes
    torch.backends.cudnn.benchmark = True
    cfg, model = get_parameters(cfg)
    if cfg.general.get("scene_path", None):
        run_single_scene(cfg, model)
    else:
        run_dataset(cfg, model)


if __name__ == "__main__":
    get_class_agnostic_masks()
