import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np

import clip
from utils.utils import l2_norm


spoof_templates = [
    'This is an example of a spoof face',
    'This is an example of an attack face',
    'This is not a real face',
    'This is how a spoof face looks like',
    'a photo of a spoof face',
    'a printout shown to be a spoof face',
]

real_templates = [
    'This is an example of a real face',
    'This is a bonafide face',
    'This is a real face',
    'This is how a real face looks like',
    'a photo of a real face',
    'This is not a spoof face',
]


class flip_v(nn.Module):
    """FLIP-V: fine-tune only the CLIP image encoder with a linear head."""

    def __init__(self):
        super(flip_v, self).__init__()
        self.model, _ = clip.load("ViT-B/16", 'cuda:0')
        self.model.transformer = None          # text branch not needed
        self.head = nn.Linear(512, 2)
        nn.init.normal_(self.head.weight, std=0.01)
        nn.init.zeros_(self.head.bias)

    def forward(self, input, norm_flag=True):
        feature = self.model.encode_image(input).float()
        if norm_flag:
            feature = feature / feature.norm(dim=-1, keepdim=True)
        return self.head(feature), feature

    def forward_eval(self, input, norm_flag=True):
        return self.forward(input, norm_flag)


class flip_mcl(nn.Module):
    """FLIP-MCL: image-text similarity + multimodal contrastive learning."""

    def __init__(self, args, device, in_dim, ssl_mlp_dim, ssl_emb_dim):
        super(flip_mcl, self).__init__()
        self.device = device
        self.model, _ = clip.load("ViT-B/16", device='cuda:0')

        # image self-supervised head (SimCLR style)
        self.image_mlp = self._build_mlp(in_dim=in_dim, mlp_dim=ssl_mlp_dim, out_dim=ssl_emb_dim)
        self.n_views = 2
        self.temperature = 0.1
        self.criterion = nn.CrossEntropyLoss().to(device)

    def _build_mlp(self, in_dim, mlp_dim, out_dim):
        return nn.Sequential(
            nn.Linear(in_dim, mlp_dim),
            nn.SyncBatchNorm(mlp_dim),
            nn.ReLU(inplace=True),
            nn.Linear(mlp_dim, mlp_dim),
            nn.SyncBatchNorm(mlp_dim),
            nn.ReLU(inplace=True),
            nn.Linear(mlp_dim, out_dim),
        )

    def encode_prompts(self):
        # tokenize the spoof and real templates and move them to the device
        spoof_texts = clip.tokenize(spoof_templates).cuda(non_blocking=True)
        real_texts = clip.tokenize(real_templates).cuda(non_blocking=True)

        all_spoof_class_embeddings = self.model.encode_text(spoof_texts)
        all_spoof_class_embeddings = all_spoof_class_embeddings / all_spoof_class_embeddings.norm(dim=-1, keepdim=True)
        spoof_class_embeddings = all_spoof_class_embeddings.mean(dim=0)
        spoof_class_embeddings = spoof_class_embeddings / spoof_class_embeddings.norm()

        all_real_class_embeddings = self.model.encode_text(real_texts)
        all_real_class_embeddings = all_real_class_embeddings / all_real_class_embeddings.norm(dim=-1, keepdim=True)
        real_class_embeddings = all_real_class_embeddings.mean(dim=0)
        real_class_embeddings = real_class_embeddings / real_class_embeddings.norm()

        # stack: index 0 -> spoof, index 1 -> real
        ensemble_weights = [spoof_class_embeddings, real_class_embeddings]
        text_features = torch.stack(ensemble_weights, dim=0)
        return all_spoof_class_embeddings, all_real_class_embeddings, text_features

    def info_nce_loss(self, feature_view_1, feature_view_2):
        assert feature_view_1.shape == feature_view_2.shape
        features = torch.cat([feature_view_1, feature_view_2], dim=0)

        labels = torch.cat([torch.arange(feature_view_1.shape[0]) for i in range(self.n_views)], dim=0)
        labels = (labels.unsqueeze(0) == labels.unsqueeze(1)).float()
        labels = labels.to(self.device)

        features = F.normalize(features, dim=1)

        similarity_matrix = torch.matmul(features, features.T)

        # discard the main diagonal from both: labels and similarities matrix
        mask = torch.eye(labels.shape[0], dtype=torch.bool).to(self.device)
        labels = labels[~mask].view(labels.shape[0], -1)
        similarity_matrix = similarity_matrix[~mask].view(similarity_matrix.shape[0], -1)

        # select and combine multiple positives
        positives = similarity_matrix[labels.bool()].view(labels.shape[0], -1)

        # select only the negatives the negatives
        negatives = similarity_matrix[~labels.bool()].view(similarity_matrix.shape[0], -1)

        logits = torch.cat([positives, negatives], dim=1)
        labels = torch.zeros(logits.shape[0], dtype=torch.long).to(self.device)

        logits = logits / self.temperature
        return logits, labels

    def forward(self, input, input_view_1, input_view_2, source_label, norm_flag=True):
        # single text prompt per class
        all_spoof_class_embeddings, all_real_class_embeddings, text_features = self.encode_prompts()

        # image features of the anchor
        image_features = self.model.encode_image(input)
        image_features = image_features / image_features.norm(dim=-1, keepdim=True)

        # cosine similarity as logits
        logit_scale = self.model.logit_scale.exp()
        logits_per_image = logit_scale * image_features @ text_features.t()
        similarity = logits_per_image

        ########## image SSL (SimCLR) ##########
        aug1 = self.model.encode_image(input_view_1)
        aug2 = self.model.encode_image(input_view_2)
        aug1_embed = self.image_mlp(aug1.float())
        aug2_embed = self.image_mlp(aug2.float())
        logits_ssl, labels_ssl = self.info_nce_loss(aug1_embed, aug2_embed)

        ########## image-text consistency (MSE between the two views' similarity to text) ##########
        aug1_norm = aug1 / aug1.norm(dim=-1, keepdim=True)
        aug2_norm = aug2 / aug2.norm(dim=-1, keepdim=True)

        # pick a random prompt of the matching class for each sample
        idx_spoof = torch.randint(0, all_spoof_class_embeddings.shape[0], (1,)).item()
        idx_real = torch.randint(0, all_real_class_embeddings.shape[0], (1,)).item()
        text_pair = torch.stack([all_spoof_class_embeddings[idx_spoof], all_real_class_embeddings[idx_real]], dim=0)
        text_pair = text_pair[source_label]

        sim1 = (aug1_norm * text_pair).sum(dim=-1)
        sim2 = (aug2_norm * text_pair).sum(dim=-1)
        dot_product_views = (sim1 - sim2) ** 2

        return similarity, logits_ssl, labels_ssl, dot_product_views

    def forward_eval(self, input, norm_flag=True):
        _, _, text_features = self.encode_prompts()

        image_features = self.model.encode_image(input)
        image_features = image_features / image_features.norm(dim=-1, keepdim=True)

        logit_scale = self.model.logit_scale.exp()
        logits_per_image = logit_scale * image_features @ text_features.t()
        return logits_per_image, image_features
