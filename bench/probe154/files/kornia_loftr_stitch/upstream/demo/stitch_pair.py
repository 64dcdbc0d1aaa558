"""Stitch two overlapping photos: LoFTR matches -> RANSAC homography -> warp.

    python demo/stitch_pair.py left.jpg right.jpg --out pano.jpg
    python demo/stitch_pair.py left.jpg right.jpg --device cpu   # no GPU

Everything after image decoding is a torch op, so the same code runs on CPU
or GPU; LoFTR is ~10x faster on a GPU with fp16 enabled.
"""
import argparse
import logging
import time

import cv2
import kornia as K
import kornia.feature as KF
import kornia.geometry as KG
import numpy as np
import torch

log = logging.getLogger("stitch")


def default_device():
    if torch.cuda.is_available():
        return "cuda"
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("img0")
    p.add_argument("img1")
    p.add_argument("--out", default="stitched.jpg")
    p.add_argument("--device", default=default_device())
    p.add_argument("--pretrained", default="outdoor", choices=["outdoor", "indoor", "indoor_new"])
    p.add_argument("--max-side", type=int, default=840)
    p.add_argument("--ransac-thresh", type=float, default=1.0)
    p.add_argument("--fp16", action="store_true", help="run LoFTR under autocast (GPU only)")
    p.add_argument("--min-matches", type=int, default=30)
    return p.parse_args()


def load_image(path, max_side, device):
    bgr = cv2.imread(path, cv2.IMREAD_COLOR)
    if bgr is None:
        raise FileNotFoundError(path)
    h, w = bgr.shape[:2]
    scale = max_side / max(h, w)
    if scale < 1.0:
        bgr = cv2.resize(bgr, (int(w * scale) // 8 * 8, int(h * scale) // 8 * 8), interpolation=cv2.INTER_AREA)
    img = K.image_to_tensor(bgr, keepdim=False).float() / 255.0  # 1x3xHxW
    img = K.color.bgr_to_rgb(img)
    return img.to(device)


@torch.inference_mode()
def match(matcher, img0, img1, use_amp):
    batch = {
        "image0": K.color.rgb_to_grayscale(img0),
        "image1": K.color.rgb_to_grayscale(img1),
    }
    with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
        corr = matcher(batch)
    return corr["keypoints0"].float(), corr["keypoints1"].float(), corr["confidence"].float()


def estimate_homography(kp0, kp1, conf, thresh, device):
    """Kornia RANSAC (batched DLT + LO) - stays on the device."""
    ransac = KG.ransac.RANSAC(model_type="homography", inl_th=thresh, batch_size=2048,
                              max_iter=10, confidence=0.9999, max_lo_iters=5).to(device)
    H, inliers = ransac(kp1, kp0, weights=conf)
    return H, inliers


def stitch(img0, img1, H):
    """Warp img1 into img0's frame on a canvas big enough for both."""
    _, _, h0, w0 = img0.shape
    _, _, h1, w1 = img1.shape
    corners = torch.tensor([[[0.0, 0.0], [w1, 0.0], [w1, h1], [0.0, h1]]], device=img1.device)
    warped = KG.transform_points(H[None], corners)[0]
    x_min = min(0.0, float(warped[:, 0].min()))
    y_min = min(0.0, float(warped[:, 1].min()))
    x_max = max(float(w0), float(warped[:, 0].max()))
    y_max = max(float(h0), float(warped[:, 1].max()))
    out_w, out_h = int(np.ceil(x_max - x_min)), int(np.ceil(y_max - y_min))

    shift = torch.eye(3, device=H.device)
    shift[0, 2], shift[1, 2] = -x_min, -y_min

    canvas1 = KG.warp_perspective(img1, (shift @ H)[None], (out_h, out_w), align_corners=True)
    canvas0 = KG.warp_perspective(img0, shift[None], (out_h, out_w), align_corners=True)
    m0 = KG.warp_perspective(torch.ones_like(img0[:, :1]), shift[None], (out_h, out_w))
    m1 = KG.warp_perspective(torch.ones_like(img1[:, :1]), (shift @ H)[None], (out_h, out_w))
    w = m0 + m1
    return (canvas0 * m0 + canvas1 * m1) / w.clamp(min=1e-6)


def main():
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    args = parse_args()
    device = torch.device(args.device)
    use_amp = args.fp16 and device.type == "cuda"
    log.info("device=%s amp=%s", device, use_amp)

    img0 = load_image(args.img0, args.max_side, device)
    img1 = load_image(args.img1, args.max_side, device)

    matcher = KF.LoFTR(pretrained=args.pretrained).eval().to(device)

    t0 = time.time()
    kp0, kp1, conf = match(matcher, img0, img1, use_amp)
    if device.type == "cuda":
        torch.cuda.synchronize()
    log.info("%d matches in %.3fs", kp0.shape[0], time.time() - t0)
    if kp0.shape[0] < args.min_matches:
        raise SystemExit("not enough matches (%d)" % kp0.shape[0])

    H, inliers = estimate_homography(kp0, kp1, conf, args.ransac_thresh, device)
    log.info("inliers: %d / %d", int(inliers.sum()), inliers.numel())

    pano = stitch(img0, img1, H)
    out = K.tensor_to_image(K.color.rgb_to_bgr(pano.clamp(0, 1)))
    cv2.imwrite(args.out, (out * 255).astype(np.uint8))
    log.info("wrote %s (%dx%d)", args.out, out.shape[1], out.shape[0])


if __name__ == "__main__":
    main()
