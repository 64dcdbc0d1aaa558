import logging
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
import torchvision.transforms as T
from torchvision.models.segmentation import deeplabv3_resnet101

from tracklab.pipeline.imagelevel_module import ImageLevelModule
from tracklab.utils.collate import default_collate
from tracklab.utils.download import download_file

from tvcalib.cam_distr.tv_main_center import get_cam_distr, get_dist_distr
from tvcalib.cam_modules import SNProjectiveCamera
from tvcalib.module import TVCalibModule
from tvcalib.utils.objects_3d import SoccerPitchLineCircleSegments, SoccerPitchSNCircleCentralSplit
from tvcalib.inference import get_camera_from_per_sample_output
from tvcalib.sncalib_dataset import custom_list_collate, split_circle_central
from sn_segmentation.src.custom_extremities import generate_class_synthesis, get_line_extremities

log = logging.getLogger(__name__)


class TVCalib_Segmentation(ImageLevelModule):
    """Pitch-marking segmentation (DeepLabV3-R101) whose line extremities feed TVCalib."""

    input_columns = []
    output_columns = ["lines"]
    collate_fn = default_collate

    def __init__(self, checkpoint, image_width, image_height, batch_size, device, **kwargs):
        super().__init__(batch_size)
        self.device = device
        self.image_width = image_width
        self.image_height = image_height
        if not Path(checkpoint).exists():
            download_file("https://tib.eu/cloud/s/x68XnTcZmsY4Jpg/download/train_59.pt", checkpoint)
        self.model = deeplabv3_resnet101(num_classes=len(SoccerPitchSNCircleCentralSplit.lines_classes) + 1,
                                         aux_loss=True)
        self.model.load_state_dict(torch.load(checkpoint)["model"], strict=False)
        self.model.to(device)
        self.model.eval()
        self.tfms = T.Compose([
            T.Resize(256),
            T.ToTensor(),
            T.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]),
        ])

    def preprocess(self, image, detections, metadata: pd.Series):
        from PIL import Image
        image = Image.fromarray(image).convert("RGB")
        image = self.tfms(image)
        return image

    @torch.no_grad()
    def process(self, batch, detections: pd.DataFrame, metadatas: pd.DataFrame):
        with torch.cuda.amp.autocast(dtype=torch.float16):
            out = self.model(batch.to(self.device))["out"]
        out = out.float().argmax(1).cpu().numpy().astype(np.uint8)
        skeletons_batch = [generate_class_synthesis(sem_lines, 6) for sem_lines in out]
        keypoints_raw_batch = [
            get_line_extremities(skeletons, 40, self.image_width, self.image_height, return_empty=True)
            for skeletons in skeletons_batch
        ]
        return pd.DataFrame({"lines": keypoints_raw_batch}, index=metadatas.index)


class TVCalib(ImageLevelModule):
    """Per-image camera calibration by optimising a pinhole camera so that the projected
    3D pitch model fits the detected line/circle segments (Theiner & Ewerth, WACV'23)."""

    input_columns = ["lines"]
    output_columns = ["parameters"]
    collate_fn = default_collate

    def __init__(self, image_width, image_height, optim_steps, device, batch_size, **kwargs):
        super().__init__(batch_size)
        self.device = device
        self.image_width = image_width
        self.image_height = image_height
        self.object3d = SoccerPitchLineCircleSegments(
            device=device, base_field=SoccerPitchSNCircleCentralSplit()
        )
        # a CPU copy of the pitch model, used to post-process on the host
        self.object3dcpu = SoccerPitchLineCircleSegments(
            device="cpu", base_field=SoccerPitchSNCircleCentralSplit()
        )
        self.cam_distr = get_cam_distr(1.96, batch_dim=batch_size, temporal_dim=1)
        self.dist_distr = get_dist_distr(batch_dim=batch_size, temporal_dim=1)
        self.model = TVCalibModule(
            self.object3d,
            self.cam_distr,
            self.dist_distr,
            (image_height, image_width),
            optim_steps,
            device,
            log_per_step=False,
            tqdm_kwqargs=None,
        )
        self.timings = []

    def preprocess(self, image, detections: pd.DataFrame, metadata: pd.Series):
        keypoints = metadata["lines"]
        keypoints = split_circle_central(keypoints)
        per_sample_output = custom_list_collate([{"keypoints": keypoints}])
        return per_sample_output

    def process(self, batch, detections: pd.DataFrame, metadatas: pd.DataFrame):
        per_sample_output = batch
        # the reprojection objective is ill-conditioned near the vanishing line: the DLT init
        # and the optimisation are done in float64 (float32 diverges on ~3% of the frames)
        per_sample_output["keypoints"] = per_sample_output["keypoints"].double()
        tic = time.perf_counter()
        _batch_size = per_sample_output["keypoints"].shape[0]
        if _batch_size != self.cam_distr["pan"]["mean"].shape[0]:
            self.model.cam_param_dict.initialize(None, batch_dim=_batch_size)
        per_sample_loss, cam, _ = self.model.self_optim_batch(per_sample_output)
        torch.cuda.synchronize()
        self.timings.append(time.perf_counter() - tic)
        output_dict = tensor2list(detach_dict({**cam.get_parameters(_batch_size), **per_sample_loss}))

        cameras = []
        for i in range(_batch_size):
            cam = get_camera_from_per_sample_output(output_dict, self.object3d, i)
            cameras.append(cam.to_json_parameters() if cam is not None else None)
        return pd.DataFrame({"parameters": cameras}, index=metadatas.index)

    def __del__(self):
        if self.timings:
            log.info(f"TVCalib: {1000 * np.mean(self.timings):.0f} ms/frame "
                     f"({self.model.optim_steps} steps, peak mem "
                     f"{torch.cuda.max_memory_allocated() / 2 ** 20:.0f} MiB)")


def dlt_homography(pts_img, pts_world):
    """Direct linear transform on >= 4 correspondences, batched. Used to initialise the camera pose.

    pts_img: (B, N, 2), pts_world: (B, N, 2) on the pitch plane (z=0)
    """
    B, N, _ = pts_img.shape
    ones = torch.ones(B, N, 1, dtype=pts_img.dtype, device=pts_img.device)
    zeros = torch.zeros(B, N, 3, dtype=pts_img.dtype, device=pts_img.device)
    Xw = torch.cat([pts_world, ones], dim=-1)
    u = pts_img[..., :1]
    v = pts_img[..., 1:]
    rows_u = torch.cat([Xw, zeros, -u * Xw], dim=-1)
    rows_v = torch.cat([zeros, Xw, -v * Xw], dim=-1)
    A = torch.stack([rows_u, rows_v], dim=2).reshape(B, 2 * N, 9)
    _, _, Vh = torch.linalg.svd(A)
    H = Vh[:, -1].reshape(B, 3, 3)
    return H / H[:, 2:3, 2:3]


def detach_dict(d):
    return {k: v.detach().cpu() if isinstance(v, torch.Tensor) else v for k, v in d.items()}


def tensor2list(d):
    return {k: v.tolist() if isinstance(v, torch.Tensor) else v for k, v in d.items()}
