# Generate AnyLoc-VLAD-DINOv2 global descriptors for a folder of images
"""
    Given a folder of images, generate the AnyLoc-VLAD-DINOv2 global
    descriptor for every image and save them (one .npy per image).

    The cluster centers (vocabulary) must already be downloaded to
    the cache directory (see `demo/README.md`, "Download vocabulary").

    Needs a CUDA capable GPU; ViT-G/14 needs about 9 GB of GPU memory
    for a 1024 px image.
"""

# %%
import os
import sys
from pathlib import Path
# Set the './../' from the script folder
dir_name = None
try:
    dir_name = os.path.dirname(os.path.realpath(__file__))
except NameError:
    print('WARN: __file__ not found, trying local')
    dir_name = os.path.abspath('')
lib_path = os.path.realpath(f'{Path(dir_name).parent}')
# Add to path
if lib_path not in sys.path:
    print(f'Adding library path: {lib_path} to PYTHONPATH')
    sys.path.append(lib_path)
else:
    print(f'Library path {lib_path} already in PYTHONPATH')


# %%
import glob
import time
import numpy as np
import torch
from torch.nn import functional as F
from torchvision import transforms as tvf
from torchvision.transforms import functional as T
from PIL import Image
from tqdm.auto import tqdm
from dataclasses import dataclass, field
from typing import Literal, Union
import tyro

from utilities import DinoV2ExtractFeatures, VLAD, seed_everything


# %%
@dataclass
class LocalArgs:
    # Input directory containing images
    in_dir: str = "./data/images"
    # Image file extension
    imgs_ext: str = "jpg"
    # Output directory where global descriptors will be stored
    out_dir: str = "./data/outputs"
    # Maximum edge length (expected) across all images (GPU OOM)
    max_img_size: int = 1024
    # Domain for the VLAD vocabulary
    domain: Literal["aerial", "indoor", "urban"] = "urban"
    # Number of clusters (cluster centers for VLAD) - read from cache
    num_c: int = 32
    # Cache directory holding the downloaded vocabularies
    cache_dir: str = "./cache"
    # Only process the first N images (None = all)
    first_n: Union[int, None] = None
    # Which GPU to use
    gpu_id: int = 0


# %%
def prepare_image(img_fname: str, base_tf, max_img_size: int,
                  device: torch.device) -> torch.Tensor:
    """
        Load an image, move it to the device, downscale it so that the
        longest edge is at most `max_img_size` and crop it so that both
        sides are multiples of the ViT patch size (14).
    """
    pil_img = Image.open(img_fname).convert('RGB')
    img_pt = base_tf(pil_img).to(device)
    if max(img_pt.shape[-2:]) > max_img_size:
        c, h, w = img_pt.shape
        # Maintain aspect ratio
        if h == max(img_pt.shape[-2:]):
            w = int(w * max_img_size / h)
            h = max_img_size
        else:
            h = int(h * max_img_size / w)
            w = max_img_size
        img_pt = T.resize(img_pt, (h, w),
                          interpolation=T.InterpolationMode.BICUBIC)
    # Make image patchable (14, 14 patches)
    c, h, w = img_pt.shape
    h_new, w_new = (h // 14) * 14, (w // 14) * 14
    img_pt = tvf.CenterCrop((h_new, w_new))(img_pt)[None, ...]
    return img_pt


def main(largs: LocalArgs):
    _ex = lambda x: os.path.realpath(os.path.expanduser(x))
    seed_everything(42)

    # Program parameters
    torch.cuda.set_device(largs.gpu_id)
    device = torch.device("cuda")
    desc_layer: int = 31
    desc_facet: Literal["query", "key", "value", "token"] = "value"
    num_c: int = largs.num_c
    domain: str = largs.domain
    max_img_size: int = largs.max_img_size
    ext_specifier = f"dinov2_vitg14/l{desc_layer}_{desc_facet}_c{num_c}"
    c_centers_file = os.path.join(_ex(largs.cache_dir), "vocabulary",
                                  ext_specifier, domain, "c_centers.pt")
    assert os.path.isfile(c_centers_file), "Cluster centers not cached!"
    c_centers = torch.load(c_centers_file)
    assert c_centers.shape[0] == num_c, "Wrong number of clusters!"

    # DINO extractor
    extractor = DinoV2ExtractFeatures("dinov2_vitg14", desc_layer,
                                      desc_facet, device=device)
    # VLAD object
    vlad = VLAD(num_c, desc_dim=None,
                cache_dir=os.path.dirname(c_centers_file))
    # Fit (load) the cluster centers (this'll also load the desc_dim)
    vlad.fit(None)

    # Base image transformations
    base_tf = tvf.Compose([
        tvf.ToTensor(),
        tvf.Normalize(mean=[0.485, 0.456, 0.406],
                      std=[0.229, 0.224, 0.225])
    ])

    # Global descriptor generation
    imgs_dir = _ex(largs.in_dir)
    assert os.path.isdir(imgs_dir), "Input directory doesn't exist!"
    img_fnames = glob.glob(f"{imgs_dir}/*.{largs.imgs_ext}")
    img_fnames = sorted(img_fnames)
    if largs.first_n is not None:
        img_fnames = img_fnames[:largs.first_n]
    print(f"Found {len(img_fnames)} images in {imgs_dir}")

    save_dir = _ex(largs.out_dir)
    if not os.path.isdir(save_dir):
        os.makedirs(save_dir)
        print(f"Created output directory: {save_dir}")
    else:
        print(f"Output directory already exists: {save_dir}")

    start = time.time()
    for img_fname in tqdm(img_fnames):
        with torch.no_grad():
            img_pt = prepare_image(img_fname, base_tf, max_img_size, device)
            # Extract descriptor
            ret = extractor(img_pt)  # [1, num_patches, desc_dim]
        # VLAD global descriptor
        gd = vlad.generate(ret.cpu().squeeze())  # VLAD:  [agg_dim]
        gd_np = gd.numpy()[np.newaxis, ...]  # shape: [1, agg_dim]
        np.save(f"{save_dir}/{os.path.basename(img_fname)}.npy", gd_np)
    torch.cuda.synchronize()
    elapsed = time.time() - start
    print(f"Processed {len(img_fnames)} images in {elapsed:.1f} s "
          f"({elapsed / max(len(img_fnames), 1):.3f} s / image)")
    print(f"Peak GPU memory: "
          f"{torch.cuda.max_memory_allocated(device) / 1024**3:.2f} GB")

    # Free the (large) ViT-G before exiting
    del extractor
    torch.cuda.empty_cache()
    print(f"Saved global descriptors in: {save_dir}")


# %%
if __name__ == "__main__" and ("ipykernel" not in sys.argv[0]):
    largs = tyro.cli(LocalArgs, description=__doc__)
    main(largs)
    print("Exiting program")
