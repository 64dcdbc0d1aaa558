import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange


class Prototype_Prompt_Encoder(nn.Module):
    """Turns class prototypes + SAM image embeddings into dense and sparse prompt embeddings.

    All tensors created here follow the device of the incoming features, so the module runs
    wherever the caller put it (GPU during training, CPU for quick debugging).
    """

    def __init__(self, feat_dim=256,
                 hidden_dim_dense=128,
                 hidden_dim_sparse=128,
                 size=64,
                 num_tokens=8):

        super(Prototype_Prompt_Encoder, self).__init__()
        self.dense_fc_1 = nn.Conv2d(feat_dim, hidden_dim_dense, 1)
        self.dense_fc_2 = nn.Conv2d(hidden_dim_dense, feat_dim, 1)

        self.relu = nn.ReLU()

        self.sparse_fc_1 = nn.Conv1d(size * size, hidden_dim_sparse, 1)
        self.sparse_fc_2 = nn.Conv1d(hidden_dim_sparse, num_tokens, 1)

        pn_cls_embeddings = [nn.Embedding(num_tokens, feat_dim) for _ in range(2)]  # one for positive and one for negative
        self.pn_cls_embeddings = nn.ModuleList(pn_cls_embeddings)
        self.size = size

    def forward(self, feat, prototypes, cls_ids):

        cls_prompts = prototypes.unsqueeze(-1)
        cls_prompts = torch.stack([cls_prompts for _ in range(feat.size(0))], dim=0)

        feat = torch.stack([feat for _ in range(cls_prompts.size(1))], dim=1)

        # compute similarity matrix
        sim = torch.matmul(feat, cls_prompts)

        # compute class-activated feature
        feat = feat + feat * sim

        feat_sparse = feat.clone()

        # compute dense embeddings
        one_hot = torch.nn.functional.one_hot(cls_ids - 1, 7)
        feat = feat[one_hot == 1]
        feat = rearrange(feat, 'b (h w) c -> b c h w', h=self.size, w=self.size)
        dense_embeddings = self.dense_fc_2(self.relu(self.dense_fc_1(feat)))

        # compute sparse embeddings
        feat_sparse = rearrange(feat_sparse, 'b num_cls hw c -> (b num_cls) hw c')
        sparse_embeddings = self.sparse_fc_2(self.relu(self.sparse_fc_1(feat_sparse)))
        sparse_embeddings = rearrange(sparse_embeddings, '(b num_cls) n c -> b num_cls n c', num_cls=7)

        pos_embed = self.pn_cls_embeddings[1].weight.unsqueeze(0).unsqueeze(0) * one_hot.unsqueeze(-1).unsqueeze(-1)
        neg_embed = self.pn_cls_embeddings[0].weight.unsqueeze(0).unsqueeze(0) * (1 - one_hot).unsqueeze(-1).unsqueeze(-1)

        sparse_embeddings = sparse_embeddings + pos_embed.detach() + neg_embed.detach()

        sparse_embeddings = rearrange(sparse_embeddings, 'b num_cls n c -> b (num_cls n) c')

        return dense_embeddings, sparse_embeddings


class Learnable_Prototypes(nn.Module):
    def __init__(self, num_classes=7, feat_dim=256):
        super(Learnable_Prototypes, self).__init__()
        self.class_embeddings = nn.Embedding(num_classes, feat_dim)

    def forward(self):
        return self.class_embeddings.weight


def postprocess_masks(masks, input_size, original_size):
    """Upscale SAM's 256x256 low-res masks back to the original frame size (same as
    segment_anything.modeling.Sam.postprocess_masks, without needing the Sam wrapper)."""
    masks = F.interpolate(
        masks,
        (1024, 1024),
        mode="bilinear",
        align_corners=False,
    )
    masks = masks[..., : input_size[0], : input_size[1]]
    masks = F.interpolate(masks, original_size, mode="bilinear", align_corners=False)
    return masks


def model_forward_function(prototype_prompt_encoder,
                           sam_prompt_encoder,
                           sam_decoder,
                           sam_feats,
                           prototypes,
                           cls_ids):

    sam_feats = rearrange(sam_feats, 'b h w c -> b (h w) c')

    dense_embeddings, sparse_embeddings = prototype_prompt_encoder(sam_feats, prototypes, cls_ids)

    pred = []
    pred_quality = []
    sam_feats = rearrange(sam_feats, 'b (h w) c -> b c h w', h=64, w=64)

    for dense_embedding, sparse_embedding, features_per_image in zip(dense_embeddings.unsqueeze(1), sparse_embeddings.unsqueeze(1), sam_feats):

        low_res_masks_per_image, mask_quality_per_image = sam_decoder(
            image_embeddings=features_per_image.unsqueeze(0),
            image_pe=sam_prompt_encoder.get_dense_pe(),
            sparse_prompt_embeddings=sparse_embedding,
            dense_prompt_embeddings=dense_embedding,
            multimask_output=False,
        )
        pred_per_image = postprocess_masks(
            low_res_masks_per_image,
            input_size=(819, 1024),
            original_size=(1024, 1280),
        )

        pred.append(pred_per_image)
        pred_quality.append(mask_quality_per_image)

    pred = torch.cat(pred, dim=0).squeeze(1)
    pred_quality = torch.cat(pred_quality, dim=0).squeeze(1)

    return pred, pred_quality


def class_prompt_mask(cls_ids, num_classes=7, device=None):
    """Binary mask of shape (B, num_classes) marking the prompted class of every sample."""
    device = device if device is not None else cls_ids.device
    mask = torch.zeros(cls_ids.shape[0], num_classes, dtype=torch.bool, device=device)
    mask[torch.arange(cls_ids.shape[0], device=device), cls_ids - 1] = True
    return mask


if __name__ == "__main__":
    # shape smoke test; runs on CPU
    enc = Prototype_Prompt_Encoder(num_tokens=2)
    protos = Learnable_Prototypes()
    feats = torch.randn(2, 64 * 64, 256)
    cls = torch.tensor([1, 3])
    d, s = enc(feats, protos(), cls)
    print(d.shape, s.shape, class_prompt_mask(cls).sum().item())
