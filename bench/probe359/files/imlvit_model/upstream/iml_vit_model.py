# --------------------------------------------------------
# IML-ViT model: windowed ViT-B encoder (MAE init) + simple feature pyramid + light MLP head,
# trained with BCE on the mask and an extra BCE on the broadened edge region.
# --------------------------------------------------------
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

from modules.window_attention_ViT import ViT as window_attention_vit
from modules.sfpn import SimpleFeaturePyramid
from modules.predict_head import PredictHead


class iml_vit_model(nn.Module):

    def __init__(
        self,
        # ViT backbone:
        input_size=1024,
        patch_size=16,
        embed_dim=768,
        vit_pretrain_path=None,  # wether to load pretrained weights
        # Simple_feature_pyramid_network:
        fpn_channels=256,
        fpn_scale_factors=(4.0, 2.0, 1.0, 0.5),
        # MLP embedding:
        mlp_embeding_dim=256,
        predict_head_norm="BN",
        # Edge loss:
        edge_lambda=20,
    ):
        """
        Args:
            input_size (int): size of the (zero-padded) input image.
            patch_size (int): ViT patch size.
            embed_dim (int): ViT embedding dim.
            vit_pretrain_path (str): MAE checkpoint for the ViT encoder.
            fpn_channels (int): number of channels of the simple feature pyramid.
            fpn_scale_factors (tuple): scales of the pyramid levels.
            mlp_embeding_dim (int): embedding dim of the prediction head.
            predict_head_norm (str): 'BN', 'LN' or 'IN'.
            edge_lambda (float): weight of the edge loss.
        """
        super(iml_vit_model, self).__init__()
        self.input_size = input_size
        self.patch_size = patch_size
        # window attention vit
        self.encoder_net = window_attention_vit(
            img_size=input_size,
            patch_size=16,
            embed_dim=embed_dim,
            depth=12,
            num_heads=12,
            drop_path_rate=0.1,
            window_size=14,
            mlp_ratio=4,
            qkv_bias=True,
            norm_layer=partial(nn.LayerNorm, eps=1e-6),
            window_block_indexes=[
                # 2, 5, 8 11 for global attention
                0,
                1,
                3,
                4,
                6,
                7,
                9,
                10,
            ],
            residual_block_indexes=[],
            use_rel_pos=True,
            out_feature="last_feat",
        )
        self.vit_pretrain_path = vit_pretrain_path

        # simple feature pyramid network
        self.featurePyramid_net = SimpleFeaturePyramid(
            in_feature_shape=(1, embed_dim, 256, 256),
            out_channels=fpn_channels,
            scale_factors=fpn_scale_factors,
            top_block=None,
            norm="LN",
        )
        # MLP predict head
        self.predict_head = PredictHead(
            feature_channels=[fpn_channels for i in range(5)],
            embed_dim=mlp_embeding_dim,
            norm=predict_head_norm  # important! may influence the results
        )
        # Edge loss hyper-parameters
        self.BCE_loss = nn.BCEWithLogitsLoss()
        self.edge_lambda = edge_lambda

        self.apply(self._init_weights)
        self._mae_init_weights()

    def _init_weights(self, m):
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            if isinstance(m, nn.Linear) and m.bias is not None:
                nn.init.constant_(m.bias, 0)
        elif isinstance(m, nn.LayerNorm):
            nn.init.constant_(m.bias, 0)
            nn.init.constant_(m.weight, 1.0)

    def _mae_init_weights(self):
        # Load MAE pretrained weights for Window Attention ViT encoder
        if self.vit_pretrain_path is not None:
            self.encoder_net.load_state_dict(
                torch.load(self.vit_pretrain_path, map_location='cpu')['model'],  # BEIT MAE
                strict=False
            )
            print('load pretrained weights from \'{}\'.'.format(self.vit_pretrain_path))

    def forward(self, x: torch.Tensor, masks, edge_masks, shape=None):
        x = self.encoder_net(x)
        x = self.featurePyramid_net(x)
        feature_list = []
        for k, v in x.items():
            feature_list.append(v)
        x = self.predict_head(feature_list)

        # up-sample to 1024x1024
        mask_pred = F.interpolate(x, size=(self.input_size, self.input_size), mode='bilinear', align_corners=False)

        # compute the loss
        # region of interest: only the real image area contributes (images are zero-padded to 1024)
        predict_loss = self.BCE_loss(mask_pred, masks)
        edge_loss = F.binary_cross_entropy_with_logits(
            input=mask_pred,
            target=masks,
            weight=edge_masks
        ) * self.edge_lambda
        predict_loss += edge_loss
        mask_pred = torch.sigmoid(mask_pred)

        return predict_loss, mask_pred, edge_loss


class WindowAttention(nn.Module):
    """Plain multi-head attention inside a (non-overlapping) window, with decomposed relative position."""

    def __init__(self, dim, num_heads=8, qkv_bias=True, use_rel_pos=False, input_size=None):
        super().__init__()
        self.num_heads = num_heads
        head_dim = dim // num_heads
        self.scale = head_dim ** -0.5

        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

        self.use_rel_pos = use_rel_pos
        if self.use_rel_pos:
            # initialize relative positional embeddings
            self.rel_pos_h = nn.Parameter(torch.zeros(2 * input_size[0] - 1, head_dim))
            self.rel_pos_w = nn.Parameter(torch.zeros(2 * input_size[1] - 1, head_dim))
            nn.init.trunc_normal_(self.rel_pos_h, std=0.02)
            nn.init.trunc_normal_(self.rel_pos_w, std=0.02)

    def forward(self, x):
        B, H, W, _ = x.shape
        # qkv with shape (3, B, nHead, H * W, C)
        qkv = self.qkv(x).reshape(B, H * W, 3, self.num_heads, -1).permute(2, 0, 3, 1, 4)
        # q, k, v with shape (B * nHead, H * W, C)
        q, k, v = qkv.reshape(3, B * self.num_heads, H * W, -1).unbind(0)

        attn = (q * self.scale) @ k.transpose(-2, -1)

        attn = attn.softmax(dim=-1)
        x = (attn @ v).view(B, self.num_heads, H, W, -1).permute(0, 2, 3, 1, 4).reshape(B, H, W, -1)
        x = self.proj(x)

        return x
