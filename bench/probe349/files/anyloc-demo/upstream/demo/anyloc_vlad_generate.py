# Generate AnyLoc-VLAD-DINOv2 global descriptors for a folder of images
"""
    Uses a pre-computed VLAD vocabulary (cluster centers) for one of the
    domains from the paper (urban, indoor, aerial, structured,
    unstructured) and writes one ``<image name>.npy`` file per image,
    containing a [1, num_clusters * 1536] float32 descriptor.

    Download the vocabularies first::

        python ./demo/download_vocab.py --domain urban --out-dir ./cache

    Then::

        python ./demo/anyloc_vlad_generate.py --in-dir ./data/images \\
            --imgs-ext .jpg --out-dir ./data/descriptors --domain urban
"""

# %%
import os
import sys
import glob
import argparse
from pathlib import Path

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--in-dir", type=str, required=True, help="Input directory with images")
parser.add_argument("--imgs-ext", type=str, default=".png", help="Image extension (with the dot)")
parser.add_argument("--out-dir", type=str, required=True, help="Output directory for the .npy descriptors")
parser.add_argument("--vocab-dir", type=str, default="./cache/vocabulary", help="Where the vocabularies are")
parser.add_argument("--domain", type=str, default="urban",
                    choices=["aerial", "indoor", "urban", "structured", "unstructured"])
parser.add_argument("--max-img-size", type=int, default=1024,
                    help="Resize so that the longest side is at most this (ViT-G memory grows ~quadratically)")
parser.add_argument("--first-n", type=int, default=None, help="Only process the first N images (debugging)")
parser.add_argument("--gpu", type=str, default="0", help="Which GPU to run on")
args = parser.parse_args()

# must happen before torch initialises the device
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

# %%
import numpy as np
import torch
from torchvision import transforms as tvf
from torchvision.transforms import functional as T
from PIL import Image
from tqdm.auto import tqdm

dir_name = os.path.dirname(os.path.realpath(__file__))
sys.path.append(os.path.realpath(f"{Path(dir_name).parent}"))
from utilities import DinoV2ExtractFeatures, VLAD


# %%
# Program parameters (must match the vocabulary)
desc_layer: int = 31
desc_facet = "value"
num_c: int = 32
device = torch.device("cuda:0")


def load_vlad(domain: str) -> VLAD:
    cache_dir = os.path.join(args.vocab_dir, "dinov2_vitg14",
                             f"l{desc_layer}_{desc_facet}_c{num_c}", domain)
    c_centers_file = os.path.join(cache_dir, "c_centers.pt")
    if not os.path.isfile(c_centers_file):
        raise FileNotFoundError(f"Vocabulary not found: {c_centers_file}, run download_vocab.py first")
    vlad = VLAD(num_c, desc_dim=None, cache_dir=cache_dir)
    # Fit (uses the cached cluster centers)
    vlad.fit(None)
    return vlad


def prepare_image(img_fname: str, base_tf) -> torch.Tensor:
    pil_img = Image.open(img_fname).convert("RGB")
    img_pt = base_tf(pil_img).to(device)
    if max(img_pt.shape[-2:]) > args.max_img_size:
        c, h, w = img_pt.shape
        # Maintain aspect ratio
        if h == max(img_pt.shape[-2:]):
            w = int(w * args.max_img_size / h)
            h = args.max_img_size
        else:
            h = int(h * args.max_img_size / w)
            w = args.max_img_size
        img_pt = T.resize(img_pt, (h, w), interpolation=T.InterpolationMode.BICUBIC, antialias=True)
    # Make image patchable (14, 14 patches)
    c, h, w = img_pt.shape
    h_new, w_new = (h // 14) * 14, (w // 14) * 14
    img_pt = tvf.CenterCrop((h_new, w_new))(img_pt)[None, ...]
    return img_pt


# %%
def main():
    extractor = DinoV2ExtractFeatures("dinov2_vitg14", desc_layer, desc_facet, device=device)
    base_tf = tvf.Compose([
        tvf.ToTensor(),
        tvf.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    ])
    vlad = load_vlad(args.domain)

    img_fnames = sorted(glob.glob(f"{args.in_dir}/*{args.imgs_ext}"))
    if args.first_n is not None:
        img_fnames = img_fnames[:args.first_n]
    os.makedirs(args.out_dir, exist_ok=True)
    print(f"Found {len(img_fnames)} images in {args.in_dir}")

    torch.cuda.reset_peak_memory_stats()
    for i, img_fname in enumerate(tqdm(img_fnames)):
        with torch.no_grad():
            img_pt = prepare_image(img_fname, base_tf)
            # Extract descriptors
            ret = extractor(img_pt)  # [1, num_patches, desc_dim]
            # Generate VLAD on the CPU (the residuals are large)
            gd = vlad.generate(ret.cpu().squeeze())  # VLAD: [agg_dim]
            gd_np = gd.numpy()[np.newaxis, ...]  # shape: [1, agg_dim]
            np.save(f"{args.out_dir}/{os.path.basename(img_fname)}.npy", gd_np)
        if (i + 1) % 100 == 0:
            torch.cuda.empty_cache()

    print(f"Peak GPU memory: {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB")
    print(f"Saved {len(img_fnames)} descriptors to {args.out_dir}")


if __name__ == "__main__":
    main()
