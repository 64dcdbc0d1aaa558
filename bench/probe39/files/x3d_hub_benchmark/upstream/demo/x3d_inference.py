"""Run a PyTorchVideo X3D model from torch.hub on one video and report top-5 classes and latency.

    python demo/x3d_inference.py --model x3d_m --video archery.mp4 --fp16 --compile
"""
import argparse
import json
import time
import urllib.request

import torch
from pytorchvideo.data.encoded_video import EncodedVideo
from pytorchvideo.transforms import ApplyTransformToKey, ShortSideScale, UniformTemporalSubsample
from torchvision.transforms import Compose, Lambda
from torchvision.transforms._transforms_video import CenterCropVideo, NormalizeVideo

MEAN = [0.45, 0.45, 0.45]
STD = [0.225, 0.225, 0.225]
FPS = 30
MODEL_PARAMS = {
    "x3d_xs": {"side_size": 182, "crop_size": 182, "num_frames": 4, "sampling_rate": 12},
    "x3d_s": {"side_size": 182, "crop_size": 182, "num_frames": 13, "sampling_rate": 6},
    "x3d_m": {"side_size": 256, "crop_size": 256, "num_frames": 16, "sampling_rate": 5},
}
LABELS_URL = "https://dl.fbaipublicfiles.com/pyslowfast/dataset/class_names/kinetics_classnames.json"


def parse_args():
    parser = argparse.ArgumentParser("X3D torch.hub inference")
    parser.add_argument("--model", default="x3d_s", choices=sorted(MODEL_PARAMS))
    parser.add_argument("--video", required=True, help="path to an input video")
    parser.add_argument("--device", default="cuda", help="torch device, e.g. cuda or cuda:1")
    parser.add_argument("--fp16", action="store_true", help="run under fp16 autocast")
    parser.add_argument("--compile", action="store_true", help="wrap the model with torch.compile")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20)
    return parser.parse_args()


def build_transform(params):
    return ApplyTransformToKey(
        key="video",
        transform=Compose(
            [
                UniformTemporalSubsample(params["num_frames"]),
                Lambda(lambda x: x / 255.0),
                NormalizeVideo(MEAN, STD),
                ShortSideScale(size=params["side_size"]),
                CenterCropVideo(crop_size=(params["crop_size"], params["crop_size"])),
            ]
        ),
    )


def load_class_names():
    with urllib.request.urlopen(LABELS_URL) as f:
        kinetics_classnames = json.load(f)
    return {v: str(k).replace('"', "") for k, v in kinetics_classnames.items()}


def main():
    args = parse_args()
    device = args.device
    params = MODEL_PARAMS[args.model]

    torch.backends.cudnn.benchmark = True

    model = torch.hub.load("facebookresearch/pytorchvideo", args.model, pretrained=True)
    model = model.eval().to(device)
    if args.compile:
        model = torch.compile(model, mode="max-autotune")

    clip_duration = (params["num_frames"] * params["sampling_rate"]) / FPS
    video = EncodedVideo.from_path(args.video)
    video_data = video.get_clip(start_sec=0, end_sec=clip_duration)
    video_data = build_transform(params)(video_data)
    inputs = video_data["video"].to(device)[None, ...]

    with torch.no_grad(), torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):
        for _ in range(args.warmup):
            model(inputs)
        torch.cuda.synchronize()  # finish warm-up

        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        t0 = time.perf_counter()
        for _ in range(args.iters):
            preds = model(inputs)
        end.record()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t0) / args.iters

    print(f"{args.model}: {start.elapsed_time(end) / args.iters:.2f} ms/clip (device), {wall * 1e3:.2f} ms/clip (wall)")

    post_act = torch.nn.Softmax(dim=1)
    preds = post_act(preds.float())
    pred_classes = preds.topk(k=5).indices[0]

    names = load_class_names()
    print("Top 5 predicted labels: %s" % ", ".join(names[int(i)] for i in pred_classes))


if __name__ == "__main__":
    main()
