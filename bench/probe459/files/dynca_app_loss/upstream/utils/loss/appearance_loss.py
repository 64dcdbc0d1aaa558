import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision.models as models

from utils.misc.preprocess_texture import preprocess_style_image


class AppearanceLoss(nn.Module):
    """Texture appearance loss: sliced optimal transport (or Gram) between VGG16
    feature distributions of the generated frames and of the target exemplar."""

    def __init__(self, args):
        super(AppearanceLoss, self).__init__()
        self.args = args
        self.target_image = preprocess_style_image(args.target_appearance_path, img_size=args.img_size)
        self.target_image = self.target_image.to(args.DEVICE)

        self.appearance_loss_type = args.appearance_loss_type
        self.slw_weight = 1.0 if self.appearance_loss_type == "SlW" else 0.0
        self.ot_weight = 1.0 if self.appearance_loss_type == "OT" else 0.0
        self.gram_weight = 1.0 if self.appearance_loss_type == "Gram" else 0.0

        self.vgg16 = models.vgg16(weights="IMAGENET1K_V1").features.to(args.DEVICE).eval()
        for p in self.vgg16.parameters():
            p.requires_grad_(False)

        self.style_layers = [1, 6, 11, 18, 25]
        self.mean = torch.tensor([0.485, 0.456, 0.406], device=args.DEVICE)[:, None, None]
        self.std = torch.tensor([0.229, 0.224, 0.225], device=args.DEVICE)[:, None, None]

        with torch.no_grad():
            self.target_features = self.get_vgg_features(self.target_image)

    def get_vgg_features(self, imgs):
        x = (imgs - self.mean) / self.std
        b, c, h, w = x.shape
        features = [x.reshape(b, c, h * w)]
        for i, layer in enumerate(self.vgg16[: max(self.style_layers) + 1]):
            x = layer(x)
            if i in self.style_layers:
                b, c, h, w = x.shape
                features.append(x.reshape(b, c, h * w))
        return features

    @staticmethod
    def project_sort(x, proj):
        return torch.einsum("bcn,cp->bpn", x, proj).sort()[0]

    def ot_loss(self, source, target, proj_n=32):
        ch, n = source.shape[-2:]
        projs = F.normalize(torch.randn(ch, proj_n, device=source.device), dim=0)
        source_proj = self.project_sort(source, projs)
        target_proj = self.project_sort(target, projs)
        target_interp = F.interpolate(target_proj, n, mode="nearest")
        return (source_proj - target_interp).square().sum()

    def sliced_wasserstein_loss(self, generated_features):
        loss = 0.0
        for x, y in zip(generated_features, self.target_features):
            loss += self.ot_loss(x, y)
        return loss

    @staticmethod
    def gram(x):
        b, c, n = x.shape
        return torch.bmm(x, x.transpose(1, 2)) / n

    def gram_loss(self, generated_features):
        loss = 0.0
        for x, y in zip(generated_features, self.target_features):
            g_x = self.gram(x)
            g_y = self.gram(y).expand_as(g_x)
            loss += F.mse_loss(g_x, g_y)
        return loss

    def forward(self, input_dict, return_summary=True):
        generated_images = input_dict["generated_image_list"][-1]
        generated_features = self.get_vgg_features(generated_images)

        loss = 0.0
        if self.slw_weight != 0:
            loss += self.slw_weight * self.sliced_wasserstein_loss(generated_features)
        if self.ot_weight != 0:
            loss += self.ot_weight * self.sliced_wasserstein_loss(generated_features)
        if self.gram_weight != 0:
            loss += self.gram_weight * self.gram_loss(generated_features)

        summary = {}
        if return_summary:
            summary["appearance-loss-" + self.appearance_loss_type] = loss.item()
            summary["target_image"] = self.target_image.detach().cpu()
        return loss, summary, None
