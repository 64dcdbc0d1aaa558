"""Run Gaze-LLE on an image or a video and draw the predicted gaze targets.

    python scripts/inference.py --input examples/the_office.png --out out.png
    python scripts/inference.py --input clip.mp4 --out clip_gaze.mp4 --model gazelle_dinov2_vitl14_inout

Faces are found with the `retinaface` package (TensorFlow, runs on CPU unless
TF sees a GPU); the gaze model itself runs on CUDA when available.
"""
import argparse
import os
import time

import cv2
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image, ImageDraw
from retinaface import RetinaFace

device = "cuda" if torch.cuda.is_available() else "cpu"


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--input", required=True)
    p.add_argument("--out", default="output.png")
    p.add_argument("--model", default="gazelle_dinov2_vitb14_inout",
                   help="any entrypoint from fkryan/gazelle hubconf")
    p.add_argument("--ckpt", default=None, help="local checkpoint instead of the hub weights")
    p.add_argument("--fp16", action="store_true", help="half precision on GPU")
    p.add_argument("--inout_thresh", type=float, default=0.5)
    p.add_argument("--max_frames", type=int, default=0)
    return p.parse_args()


def load_model(name, ckpt=None, fp16=False):
    model, transform = torch.hub.load("fkryan/gazelle", name)
    if ckpt is not None:
        state = torch.load(ckpt, map_location="cpu")
        model.load_gazelle_state_dict(state)
    model.eval()
    model.to(device)
    if fp16 and device == "cuda":
        model.half()
    return model, transform


def detect_faces(pil_image):
    width, height = pil_image.size
    resp = RetinaFace.detect_faces(np.array(pil_image))
    if not isinstance(resp, dict):
        return []
    bboxes = [resp[key]["facial_area"] for key in resp.keys()]
    # gazelle expects boxes normalised to [0, 1]
    return [np.array(b) / np.array([width, height, width, height]) for b in bboxes]


@torch.no_grad()
def predict(model, transform, pil_image, norm_bboxes):
    img_tensor = transform(pil_image).unsqueeze(0).to(device)
    # match whatever precision load_model() left the weights in
    img_tensor = img_tensor.to(dtype=next(model.parameters()).dtype)
    inp = {"images": img_tensor, "bboxes": [norm_bboxes]}
    with torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True):
        output = model(inp)
    heatmaps = output["heatmap"][0].float()
    inout = output["inout"][0].float() if output["inout"] is not None else None
    return heatmaps, inout


def visualize_all(pil_image, heatmaps, bboxes, inout_scores, inout_thresh=0.5):
    colors = ['lime', 'tomato', 'cyan', 'fuchsia', 'yellow']
    overlay_image = pil_image.convert("RGBA")
    draw = ImageDraw.Draw(overlay_image)
    width, height = pil_image.size

    for i in range(len(bboxes)):
        bbox = bboxes[i]
        xmin, ymin, xmax, ymax = bbox
        color = colors[i % len(colors)]
        draw.rectangle([xmin * width, ymin * height, xmax * width, ymax * height],
                       outline=color, width=int(min(width, height) * 0.01))

        if inout_scores is not None:
            inout_score = inout_scores[i]
            text = f"in-frame: {inout_score:.2f}"
            text_y = ymax * height + int(height * 0.01)
            draw.text((xmin * width, text_y), text, fill=color)

        if inout_scores is not None and inout_score > inout_thresh:
            heatmap = heatmaps[i]
            heatmap_np = heatmap.detach().cpu().numpy()
            max_index = np.unravel_index(np.argmax(heatmap_np), heatmap_np.shape)
            gaze_target_x = max_index[1] / heatmap_np.shape[1] * width
            gaze_target_y = max_index[0] / heatmap_np.shape[0] * height
            bbox_center_x = ((xmin + xmax) / 2) * width
            bbox_center_y = ((ymin + ymax) / 2) * height

            draw.ellipse([(gaze_target_x - 5, gaze_target_y - 5), (gaze_target_x + 5, gaze_target_y + 5)],
                         fill=color, width=int(0.005 * min(width, height)))
            draw.line([(bbox_center_x, bbox_center_y), (gaze_target_x, gaze_target_y)], fill=color,
                      width=int(0.005 * min(width, height)))

    return overlay_image


def run_image(args, model, transform):
    image = Image.open(args.input).convert("RGB")
    bboxes = detect_faces(image)
    if not bboxes:
        print("no faces found")
        image.save(args.out)
        return
    heatmaps, inout = predict(model, transform, image, bboxes)
    vis = visualize_all(image, heatmaps, bboxes, inout, args.inout_thresh)
    vis.convert("RGB").save(args.out)
    print(f"saved {args.out} ({len(bboxes)} faces)")


def run_video(args, model, transform):
    cap = cv2.VideoCapture(args.input)
    fps = cap.get(cv2.CAP_PROP_FPS) or 25.0
    w = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH))
    h = int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
    writer = cv2.VideoWriter(args.out, cv2.VideoWriter_fourcc(*"mp4v"), fps, (w, h))
    n, t_model = 0, 0.0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        image = Image.fromarray(cv2.cvtColor(frame, cv2.COLOR_BGR2RGB))
        bboxes = detect_faces(image)
        if bboxes:
            t0 = time.perf_counter()
            heatmaps, inout = predict(model, transform, image, bboxes)
            if device == "cuda":
                torch.cuda.synchronize()
            t_model += time.perf_counter() - t0
            image = visualize_all(image, heatmaps, bboxes, inout, args.inout_thresh).convert("RGB")
        writer.write(cv2.cvtColor(np.array(image), cv2.COLOR_RGB2BGR))
        n += 1
        if args.max_frames and n >= args.max_frames:
            break
    cap.release()
    writer.release()
    print(f"{n} frames, gaze model {1000.0 * t_model / max(n, 1):.1f} ms/frame on {device}")


def main():
    args = parse_args()
    model, transform = load_model(args.model, args.ckpt, args.fp16)
    ext = os.path.splitext(args.input)[1].lower()
    if ext in (".mp4", ".avi", ".mov", ".mkv"):
        run_video(args, model, transform)
    else:
        run_image(args, model, transform)


if __name__ == "__main__":
    main()
