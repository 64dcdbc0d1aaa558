import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from models.two_stream.MSOEnet import load_msoe


def get_motion_vector_field_by_name(name, img_size=128, device="cuda:0"):
    """Synthetic target motion fields used in the paper (circular, diverge, ...)."""
    h = w = img_size
    ys, xs = torch.meshgrid(
        torch.linspace(-1.0, 1.0, h, device=device),
        torch.linspace(-1.0, 1.0, w, device=device),
        indexing="ij",
    )
    if name == "circular":
        u, v = -ys, xs
    elif name == "diverge":
        u, v = xs, ys
    elif name == "converge":
        u, v = -xs, -ys
    elif name == "hyperbolic":
        u, v = xs, -ys
    elif name.startswith("uniform"):
        angle = float(name.split("_")[-1]) if "_" in name else 0.0
        rad = math.radians(angle)
        u = torch.full_like(xs, math.cos(rad))
        v = torch.full_like(ys, math.sin(rad))
    elif name == "2block_x":
        u = torch.where(xs < 0, torch.ones_like(xs), -torch.ones_like(xs))
        v = torch.zeros_like(ys)
    else:
        raise ValueError("unknown vector field %s" % name)
    vf = torch.stack([u, v], dim=0)[None]
    vf = vf / (vf.norm(dim=1, keepdim=True).amax() + 1e-8)
    return vf


class VectorFieldMotionLoss(nn.Module):
    """Motion loss between the optical flow estimated by MSOEnet on consecutive
    NCA frames and a hand-designed target vector field."""

    def __init__(self, args):
        super(VectorFieldMotionLoss, self).__init__()
        self.args = args
        self.motion_model = load_msoe(device=args.DEVICE)
        self.target_motion_vec = get_motion_vector_field_by_name(
            args.motion_vector_field_name, img_size=args.motion_img_size, device=args.DEVICE
        )
        self.motion_strength = args.motion_strength
        self.direction_weight = args.motion_direction_weight
        self.norm_weight = args.motion_norm_weight

    def get_flow(self, img_a, img_b):
        img_a = F.interpolate(img_a, size=self.args.motion_img_size, mode="bilinear", align_corners=False)
        img_b = F.interpolate(img_b, size=self.args.motion_img_size, mode="bilinear", align_corners=False)
        return self.motion_model(img_a, img_b)

    def forward(self, input_dict, return_summary=True):
        generated_image_list = input_dict["generated_image_list"]
        step_n = len(generated_image_list) - 1
        loss = 0.0
        for i in range(step_n):
            flow = self.get_flow(generated_image_list[i], generated_image_list[i + 1])
            target = self.target_motion_vec.expand_as(flow) * self.motion_strength

            cos = F.cosine_similarity(flow, target, dim=1, eps=1e-6)
            direction_loss = (1.0 - cos).mean()
            norm_loss = (flow.norm(dim=1) - target.norm(dim=1)).abs().mean()
            loss = loss + self.direction_weight * direction_loss + self.norm_weight * norm_loss
        loss = loss / max(step_n, 1)

        summary = {}
        if return_summary:
            summary["vector-field-motion-loss"] = loss.item()
            summary["target_motion_vec"] = self.target_motion_vec.detach().cpu().numpy()
        return loss, summary, None


def flow_to_rgb(flow):
    """Visualise a [2, H, W] flow as HSV-coded rgb (numpy)."""
    u, v = flow[0], flow[1]
    mag = np.sqrt(u ** 2 + v ** 2)
    ang = np.arctan2(v, u)
    hsv = np.zeros(u.shape + (3,), dtype=np.float32)
    hsv[..., 0] = (ang + np.pi) / (2 * np.pi)
    hsv[..., 1] = 1.0
    hsv[..., 2] = np.clip(mag / (mag.max() + 1e-8), 0, 1)
    import matplotlib.colors

    return matplotlib.colors.hsv_to_rgb(hsv)
