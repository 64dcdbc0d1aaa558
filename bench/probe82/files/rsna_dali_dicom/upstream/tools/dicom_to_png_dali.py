"""RSNA Screening Mammography: DICOM -> 16-bit PNG preprocessing with GPU JPEG2000 decoding.

Most of the competition DICOMs store JPEG2000 (transfer syntax 1.2.840.10008.1.2.4.90), which is
slow to decode with pydicom/openjpeg on the CPU. We pull the encapsulated j2k stream out of the
file with dicomsdl and hand it to DALI's nvJPEG2000 decoder ("mixed" = CPU parse + GPU decode),
then do windowing / cropping / resizing on the GPU with torch before writing the PNG.
Files in other transfer syntaxes fall back to dicomsdl's CPU decoder.

    python tools/dicom_to_png_dali.py --src ../input/rsna-breast-cancer-detection/train_images \
        --dst ../input/rsna-png-1024 --size 1024 --batch 8
"""
import argparse
import glob
import os
import shutil
from pathlib import Path

import cv2
import dicomsdl
import numpy as np
import torch
import torch.nn.functional as F
from joblib import Parallel, delayed
from tqdm import tqdm

import nvidia.dali.fn as fn
import nvidia.dali.types as types
from nvidia.dali import pipeline_def
from nvidia.dali.plugin.pytorch import feed_ndarray

J2K_SYNTAX = "1.2.840.10008.1.2.4.90"
J2K_MAGIC = b"\x00\x00\x00\x0C"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--src", required=True)
    p.add_argument("--dst", required=True)
    p.add_argument("--tmp", default="/tmp/j2k")
    p.add_argument("--size", type=int, default=1024)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--jobs", type=int, default=8)
    return p.parse_args()


def dicom_to_j2k(path, tmp_dir):
    """Write the raw JPEG2000 codestream of a DICOM to tmp_dir, return (j2k path, meta) or (None, meta)."""
    dcm = dicomsdl.open(path)
    meta = {
        "invert": dcm.PhotometricInterpretation == "MONOCHROME1",
        "center": dcm.WindowCenter,
        "width": dcm.WindowWidth,
    }
    if dcm.TransferSyntaxUID != J2K_SYNTAX:
        return None, meta
    with open(path, "rb") as fp:
        raw = fp.read()
    offset = raw.find(J2K_MAGIC)
    out = os.path.join(tmp_dir, Path(path).parent.name + "_" + Path(path).stem + ".jp2")
    with open(out, "wb") as fp:
        fp.write(raw[offset:])
    return out, meta


@pipeline_def
def j2k_decode_pipeline(files):
    jpegs, _ = fn.readers.file(files=files)
    images = fn.experimental.decoders.image(jpegs, device="mixed", output_type=types.ANY_DATA,
                                            dtype=types.UINT16)
    return images


def crop_breast(img, thr=0.05):
    """Crop to the bounding box of the breast tissue (img: HxW float tensor in [0,1] on device)."""
    mask = img > thr
    rows = torch.where(mask.any(1))[0]
    cols = torch.where(mask.any(0))[0]
    if len(rows) == 0 or len(cols) == 0:
        return img
    return img[rows[0]: rows[-1] + 1, cols[0]: cols[-1] + 1]


def process_tensor(img, meta, size):
    img = img.float()
    if meta["invert"]:
        img = img.max() - img
    lo, hi = img.min(), img.max()
    img = (img - lo) / (hi - lo + 1e-6)
    img = crop_breast(img)
    img = F.interpolate(img[None, None], size=(size, size // 2), mode="bilinear", align_corners=False)[0, 0]
    return (img * 65535).clamp(0, 65535).to(torch.int32).cpu().numpy().astype(np.uint16)


def save_png(img, src_path, dst_dir):
    patient = Path(src_path).parent.name
    os.makedirs(os.path.join(dst_dir, patient), exist_ok=True)
    cv2.imwrite(os.path.join(dst_dir, patient, Path(src_path).stem + ".png"), img)


def decode_j2k_batch(j2k_files, metas, srcs, args):
    pipe = j2k_decode_pipeline(j2k_files, batch_size=len(j2k_files), num_threads=2, device_id=0,
                               prefetch_queue_depth=1)
    pipe.build()
    outs = pipe.run()
    for i, (meta, src) in enumerate(zip(metas, srcs)):
        out = outs[0][i]
        buf = torch.empty(out.shape(), dtype=torch.int16, device="cuda")
        feed_ndarray(out, buf, cuda_stream=torch.cuda.current_stream(device=0))
        img = process_tensor(buf, meta, args.size)
        save_png(img, src, args.dst)
    del pipe


def decode_cpu(src, meta, args):
    dcm = dicomsdl.open(src)
    arr = dcm.pixelData(storedvalue=False)
    img = process_tensor(torch.from_numpy(arr.astype(np.float32)), meta, args.size)
    save_png(img, src, args.dst)


def main():
    args = parse_args()
    os.makedirs(args.tmp, exist_ok=True)
    os.makedirs(args.dst, exist_ok=True)
    files = sorted(glob.glob(os.path.join(args.src, "*", "*.dcm")))
    for start in tqdm(range(0, len(files), args.batch)):
        chunk = files[start: start + args.batch]
        res = Parallel(n_jobs=args.jobs)(delayed(dicom_to_j2k)(f, args.tmp) for f in chunk)
        j2k, metas, srcs = [], [], []
        for f, (jp, meta) in zip(chunk, res):
            if jp is None:
                decode_cpu(f, meta, args)
            else:
                j2k.append(jp)
                metas.append(meta)
                srcs.append(f)
        if j2k:
            decode_j2k_batch(j2k, metas, srcs, args)
            for jp in j2k:
                os.remove(jp)
    shutil.rmtree(args.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
