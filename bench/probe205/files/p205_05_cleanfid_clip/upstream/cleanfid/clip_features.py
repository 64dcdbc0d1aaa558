# pip install git+https://github.com/openai/CLIP.git
import pdb
from PIL import Image
import numpy as np
import torch
import torch.nn as nn
import torchvision.transforms as transforms
import clip
from cleanfid.fid import compute_fid


def img_preprocess_clip(img_np):
    x = Image.fromarray(img_np.astype(np.uint8)).convert("RGB")
    T = transforms.Compose([
        transforms.Resize(224, interpolation=transforms.InterpolationMode.BICUBIC),
        transforms.CenterCrop(224),
    ])
    return np.asarray(T(x)).clip(0, 255).astype(np.uint8)


class CLIP_fx():
    def __init__(self, name="ViT-B/32", device="cuda"):
        self.model, _ = clip.load(name, device=device)
        self.model.eval()
        self.name = "clip_"+name.lower().replace("-","_").replace("/","_")

    def __call__(self, img_t):
        img_x = img_t/255.0
        T_norm = transforms.Normalize((0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711))
        img_x = T_norm(img_x)
        assert torch.is_tensor(img_x)
        if len(img_x.shape)==3:
            img_x = img_x.unsqueeze(0)
        B,C,H,W = img_x.shape
        with torch.no_grad():
            z = self.model.encode_image(img_x)
        return z


class CLIPTextScorer():
    """
    Small helper that is used by the text-to-image benchmark scripts to
    compute a CLIP-score between generated images and their prompts, reusing
    the same backbone as the CLIP-FID feature extractor.
    """
    def __init__(self, name="ViT-B/32", device="cuda:0", batch_size=64):
        self.device = device
        self.batch_size = batch_size
        self.model, self.preprocess = clip.load(name, device=self.device)
        self.model.eval()

    @torch.no_grad()
    def encode_text(self, prompts):
        feats = []
        for i in range(0, len(prompts), self.batch_size):
            tokens = clip.tokenize(prompts[i:i+self.batch_size], truncate=True).to(self.device)
            f = self.model.encode_text(tokens).float()
            feats.append(f / f.norm(dim=-1, keepdim=True))
        return torch.cat(feats, 0)

    @torch.no_grad()
    def encode_images(self, pil_images):
        feats = []
        for i in range(0, len(pil_images), self.batch_size):
            batch = torch.stack([self.preprocess(im) for im in pil_images[i:i+self.batch_size]])
            batch = batch.to(self.device, non_blocking=True)
            f = self.model.encode_image(batch).float()
            feats.append(f / f.norm(dim=-1, keepdim=True))
        return torch.cat(feats, 0)

    def score(self, pil_images, prompts, w=2.5):
        assert len(pil_images) == len(prompts)
        img_f = self.encode_images(pil_images)
        txt_f = self.encode_text(prompts)
        sim = (img_f * txt_f).sum(dim=-1).clamp(min=0)
        return (w * sim).mean().item()


def compute_clip_fid(fdir1, fdir2, num_workers=8, batch_size=64):
    """convenience wrapper, mostly used from the command line"""
    clip_fx = CLIP_fx("ViT-B/32", device=torch.device("cuda:0"))
    return compute_fid(fdir1, fdir2, mode="clean", custom_feat_extractor=clip_fx,
                       num_workers=num_workers, batch_size=batch_size,
                       device=torch.device("cuda:0"), use_dataparallel=False)


if __name__ == "__main__":
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("fdir1")
    parser.add_argument("fdir2")
    parser.add_argument("--batch_size", type=int, default=64)
    parser.add_argument("--num_workers", type=int, default=8)
    args = parser.parse_args()
    score = compute_clip_fid(args.fdir1, args.fdir2, num_workers=args.num_workers, batch_size=args.batch_size)
    print(f"CLIP-FID (ViT-B/32): {score:.4f}")
