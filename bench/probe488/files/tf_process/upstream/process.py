"""ToothFairy2 grand-challenge entry point: reads one CBCT (.mha) from /input, writes the
multi-class segmentation to /output. Runs the 3D UNet with a sliding window on the GPU."""
from pathlib import Path
import json
import time

import numpy as np
import SimpleITK as sitk
import torch
import torch.nn.functional as F

from models.PosPadUNet3D import PosPadUNet3D

INPUT_PATH = Path("/input/images/cbct")
OUTPUT_PATH = Path("/output/images/oral-pharyngeal-segmentation")
CKPT_PATH = Path("/opt/app/checkpoints/best.pth")

PATCH = (128, 128, 128)
OVERLAP = 0.25
NUM_CLASSES = 43  # background + jaws, canals, sinuses, pharynx and 32 FDI teeth
HU_MIN, HU_MAX = -1000, 3000


def get_default_device():
    if torch.cuda.is_available():
        print(f"Using GPU: {torch.cuda.get_device_name(0)}")
        return torch.device("cuda")
    print("WARNING: no GPU found, falling back to CPU - this will be slow")
    return torch.device("cpu")


def load_image():
    files = sorted(INPUT_PATH.glob("*.mha")) + sorted(INPUT_PATH.glob("*.nii.gz"))
    if not files:
        raise FileNotFoundError(f"no CBCT found in {INPUT_PATH}")
    img = sitk.ReadImage(str(files[0]))
    return img, files[0].name


def preprocess(arr):
    arr = np.clip(arr.astype(np.float32), HU_MIN, HU_MAX)
    arr = (arr - HU_MIN) / (HU_MAX - HU_MIN)
    return arr


def gaussian_importance(patch, sigma_scale=1.0 / 8):
    tmp = np.zeros(patch)
    center = [i // 2 for i in patch]
    sigmas = [i * sigma_scale for i in patch]
    grid = np.meshgrid(*[np.arange(p) for p in patch], indexing="ij")
    for g, c, s in zip(grid, center, sigmas):
        tmp += ((g - c) ** 2) / (2 * s ** 2)
    w = np.exp(-tmp)
    w = w / w.max()
    w[w == 0] = w[w != 0].min()
    return w.astype(np.float32)


def sliding_window(model, volume, device):
    d, h, w = volume.shape[-3:]
    pd, ph, pw = PATCH
    steps = [max(1, int(np.ceil((s - p) / (p * (1 - OVERLAP)))) + 1) for s, p in zip((d, h, w), PATCH)]
    starts = [np.linspace(0, max(s - p, 0), n).round().astype(int) for s, p, n in zip((d, h, w), PATCH, steps)]

    logits = torch.zeros((NUM_CLASSES, d, h, w), dtype=torch.float16, device=device)
    norm = torch.zeros((1, d, h, w), dtype=torch.float16, device=device)
    imp = torch.from_numpy(gaussian_importance(PATCH)).to(device=device, dtype=torch.float16)[None]

    for z in starts[0]:
        for y in starts[1]:
            for x in starts[2]:
                patch = volume[:, :, z:z + pd, y:y + ph, x:x + pw]
                codes = torch.tensor([[z, y, x, z + pd, y + ph, x + pw]], dtype=torch.float32, device=device)
                with torch.autocast(device_type="cuda", dtype=torch.float16):
                    out = model(patch, codes)[0]
                logits[:, z:z + pd, y:y + ph, x:x + pw] += out.half() * imp
                norm[:, z:z + pd, y:y + ph, x:x + pw] += imp
    return logits / norm


def run():
    t0 = time.time()
    device = get_default_device()

    img, name = load_image()
    arr = preprocess(sitk.GetArrayFromImage(img))
    vol = torch.from_numpy(arr)[None, None]
    pad = [max(0, p - s) for s, p in zip(vol.shape[-3:], PATCH)]
    vol = F.pad(vol, (0, pad[2], 0, pad[1], 0, pad[0]))
    vol = vol.to(device)

    model = PosPadUNet3D(NUM_CLASSES, [p // 8 for p in PATCH], 1)
    state = torch.load(CKPT_PATH, map_location=torch.device("cuda"))
    state = {k.replace("module.", "", 1): v for k, v in state["state_dict"].items()}
    model.load_state_dict(state)
    model = model.to(device).eval()

    with torch.no_grad():
        probs = sliding_window(model, vol, device)
    seg = torch.argmax(probs, dim=0).to(torch.uint8)
    seg = seg[:arr.shape[0], :arr.shape[1], :arr.shape[2]].cpu().numpy()
    del probs
    torch.cuda.empty_cache()

    out = sitk.GetImageFromArray(seg)
    out.CopyInformation(img)
    OUTPUT_PATH.mkdir(parents=True, exist_ok=True)
    sitk.WriteImage(out, str(OUTPUT_PATH / name.replace(".nii.gz", ".mha")), useCompression=True)

    with open("/output/results.json", "w") as f:
        json.dump({"runtime_s": time.time() - t0,
                   "peak_gpu_mem_gb": torch.cuda.max_memory_allocated() / 1e9 if device.type == "cuda" else 0.0}, f)
    print(f"done in {time.time() - t0:.1f}s")


if __name__ == "__main__":
    run()
