"""Pre-compute SAM ViT-H image embeddings for every EndoVis frame (and its augmented versions).

SurgicalSAM trains only the prompt encoder / mask decoder, so the heavy image encoder is run once
here and the 64x64x256 embeddings are stored as .npy next to the class embeddings.

    CUDA_VISIBLE_DEVICES=0 python tools/extract_sam_features.py --dataset endovis_2018 --versions 0 40
"""
import argparse
import glob
import os
import os.path as osp
import sys

import cv2
import numpy as np
import torch
from tqdm import tqdm

sys.path.append(osp.join(osp.dirname(__file__), ".."))
from segment_anything import SamPredictor, sam_model_registry  # noqa: E402
from segment_anything.utils.transforms import ResizeLongestSide  # noqa: E402


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", default="endovis_2018", choices=["endovis_2018", "endovis_2017"])
    parser.add_argument("--data_root", default="../data")
    parser.add_argument("--sam_checkpoint", default="../ckp/sam/sam_vit_h_4b8939.pth")
    parser.add_argument("--model_type", default="vit_h")
    parser.add_argument("--versions", type=int, nargs=2, default=[0, 40],
                        help="range of augmentation versions to process")
    parser.add_argument("--batch_size", type=int, default=4)
    parser.add_argument("--fp16", action="store_true", help="run the image encoder in half precision")
    return parser.parse_args()


class FrameBatcher:
    """Reads frames, applies SAM's ResizeLongestSide + normalisation and yields padded batches."""

    def __init__(self, paths, img_size, batch_size):
        self.paths = paths
        self.transform = ResizeLongestSide(img_size)
        self.img_size = img_size
        self.batch_size = batch_size
        self.pixel_mean = torch.tensor([123.675, 116.28, 103.53]).view(-1, 1, 1)
        self.pixel_std = torch.tensor([58.395, 57.12, 57.375]).view(-1, 1, 1)

    def preprocess(self, image):
        image = self.transform.apply_image(image)
        x = torch.as_tensor(image).permute(2, 0, 1).contiguous().float()
        x = (x - self.pixel_mean) / self.pixel_std
        h, w = x.shape[-2:]
        padh = self.img_size - h
        padw = self.img_size - w
        return torch.nn.functional.pad(x, (0, padw, 0, padh))

    def __iter__(self):
        for i in range(0, len(self.paths), self.batch_size):
            chunk = self.paths[i:i + self.batch_size]
            imgs = []
            for p in chunk:
                image = cv2.imread(p)
                image = cv2.cvtColor(image, cv2.COLOR_BGR2RGB)
                imgs.append(self.preprocess(image))
            yield chunk, torch.stack(imgs, dim=0)


@torch.no_grad()
def main():
    args = get_args()
    if not torch.cuda.is_available():
        sys.exit("no GPU found: ViT-H feature extraction on CPU would take days")

    sam = sam_model_registry[args.model_type](checkpoint=args.sam_checkpoint).to("cuda")
    sam.eval()
    image_encoder = sam.image_encoder
    if args.fp16:
        image_encoder = image_encoder.half()
    predictor = SamPredictor(sam)  # kept for the single-image debug path below
    img_size = image_encoder.img_size

    data_dir = osp.join(args.data_root, args.dataset)
    for version in range(args.versions[0], args.versions[1]):
        img_dir = osp.join(data_dir, "train", str(version), "images")
        if not osp.isdir(img_dir):
            continue
        out_dir = osp.join(data_dir, "train", str(version), f"sam_features_{args.model_type.split('_')[-1]}")
        os.makedirs(out_dir, exist_ok=True)
        paths = sorted(glob.glob(osp.join(img_dir, "*", "*.png")))
        batcher = FrameBatcher(paths, img_size, args.batch_size)
        for names, batch in tqdm(batcher, total=(len(paths) + args.batch_size - 1) // args.batch_size,
                                 desc=f"version {version}"):
            batch = batch.to("cuda", non_blocking=True)
            if args.fp16:
                batch = batch.half()
            feats = image_encoder(batch)  # (B, 256, 64, 64)
            feats = feats.permute(0, 2, 3, 1).float().cpu().numpy()
            for name, f in zip(names, feats):
                seq = osp.basename(osp.dirname(name))
                os.makedirs(osp.join(out_dir, seq), exist_ok=True)
                np.save(osp.join(out_dir, seq, osp.basename(name).replace(".png", ".npy")), f)
        torch.cuda.empty_cache()
        print(f"version {version}: {len(paths)} frames, "
              f"peak {torch.cuda.max_memory_allocated() / 2 ** 30:.1f} GiB")

    # single-image sanity check against SamPredictor, which applies the same preprocessing
    if paths:
        image = cv2.cvtColor(cv2.imread(paths[0]), cv2.COLOR_BGR2RGB)
        predictor.set_image(image)
        ref = predictor.get_image_embedding().permute(0, 2, 3, 1)[0].float().cpu().numpy()
        print("sanity |ref|:", float(np.abs(ref).mean()))


if __name__ == "__main__":
    main()
