import torch
import torch.nn as nn

from config import config as cfg
from model.backbone.resnet3d import resnet50_3d
from model.time_transformer import TransformerHead, I3DHead
from utils.plugin_loader import register_classifier


@register_classifier("i3d_temporal_var_fix_dropout_tt_cfg")
class Classifier(nn.Module):
    """FTCN-TT: temporal-only 3D ResNet-50 + temporal transformer head.

    Input  : [B, 3, T, H, W] normalised clip (T = cfg.clip_size)
    Output : dict(final_output=[B, 1] logits)
    """

    def __init__(self):
        super().__init__()
        model_cfg = cfg.model_cfg
        self.backbone = resnet50_3d(
            temporal_only=model_cfg.temporal_only,
            spatial_size=model_cfg.spatial_size,
        )
        if model_cfg.head == "transformer":
            self.head = TransformerHead(
                spatial_size=model_cfg.spatial_size,
                time_size=model_cfg.time_size,
                in_channels=2048,
            )
        else:
            self.head = I3DHead(in_channels=2048, num_classes=1, dropout_ratio=model_cfg.dropout)

    def forward(self, x):
        feat = self.backbone(x)
        out = self.head(feat)
        return {"final_output": out, "feature": feat}

    def load(self, path):
        # checkpoints were written from a multi-GPU run; strip the DataParallel prefix
        state = torch.load(path, map_location="cpu")
        if "model" in state:
            state = state["model"]
        state = {k[len("module."):] if k.startswith("module.") else k: v for k, v in state.items()}
        missing, unexpected = self.load_state_dict(state, strict=False)
        if missing:
            print("missing keys:", missing)
        if unexpected:
            print("unexpected keys:", unexpected)
        return self
