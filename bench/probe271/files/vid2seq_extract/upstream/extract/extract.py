"""Extract CLIP ViT-L/14 features at 1 FPS for dense video captioning (Vid2Seq / VidChapters).

    python extract/extract.py --csv input.csv --feature_dim 768 --folder_path features/ --framerate 1 \
        --half_precision 1 --num_decoding_thread 4 --clip_len 1

input.csv has two columns, video_path and feature_path. Frames are decoded with decord
directly on the GPU (NVDEC) when --gpu_decode is set, resized/center-cropped to 224 and
normalised with the CLIP statistics; features are saved as float16 .npy of shape (T, 768).
"""
import argparse
import os
import math

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch.utils.data import Dataset, DataLoader
import clip
import decord
from decord import VideoReader

decord.bridge.set_bridge("torch")

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


class VideoLoader(Dataset):
    """Pytorch video loader: returns all frames of a video, sampled at `framerate`."""

    def __init__(self, csv, framerate=1, size=224, centercrop=True, gpu_decode=False, num_threads=4):
        self.csv = pd.read_csv(csv)
        self.centercrop = centercrop
        self.size = size
        self.framerate = framerate
        self.gpu_decode = gpu_decode
        self.num_threads = num_threads

    def __len__(self):
        return len(self.csv)

    def _get_video_reader(self, video_path):
        if self.gpu_decode:
            ctx = decord.gpu(0)
        else:
            ctx = decord.cpu(0)
        return VideoReader(video_path, ctx=ctx, num_threads=self.num_threads)

    def _resize_crop(self, frames):
        # frames: T H W C uint8 -> T C H W float in [0, 1]
        frames = frames.permute(0, 3, 1, 2).float() / 255.
        t, c, h, w = frames.shape
        scale = self.size / min(h, w)
        frames = F.interpolate(frames, size=(int(round(h * scale)), int(round(w * scale))),
                               mode="bicubic", align_corners=False)
        if self.centercrop:
            h, w = frames.shape[-2:]
            y0 = (h - self.size) // 2
            x0 = (w - self.size) // 2
            frames = frames[:, :, y0:y0 + self.size, x0:x0 + self.size]
        return frames.clamp(0, 1)

    def __getitem__(self, idx):
        video_path = self.csv["video_path"].values[idx]
        output_file = self.csv["feature_path"].values[idx]
        if os.path.isfile(output_file) or not os.path.isfile(video_path):
            return {"video": torch.zeros(1), "input": video_path, "output": output_file}
        try:
            vr = self._get_video_reader(video_path)
            fps = vr.get_avg_fps()
            duration = len(vr) / fps
            n_frames = max(int(math.floor(duration * self.framerate)), 1)
            indices = np.linspace(0, len(vr) - 1, n_frames).round().astype(int)
            frames = vr.get_batch(list(indices))
            video = self._resize_crop(frames)
        except Exception as e:
            print("ffmpeg/decord error at: {}, {}".format(video_path, e))
            video = torch.zeros(1)
        return {"video": video, "input": video_path, "output": output_file}


class Normalize(object):
    def __init__(self, mean, std):
        self.mean = torch.FloatTensor(mean).view(1, 3, 1, 1)
        self.std = torch.FloatTensor(std).view(1, 3, 1, 1)

    def __call__(self, tensor):
        tensor = (tensor - self.mean) / (self.std + 1e-8)
        return tensor


def main():
    parser = argparse.ArgumentParser(description="Easy video feature extractor")
    parser.add_argument("--csv", type=str, help="input csv with video input path")
    parser.add_argument("--batch_size", type=int, default=128, help="batch size for extraction")
    parser.add_argument("--half_precision", type=int, default=1, help="whether to output half precision float or not")
    parser.add_argument("--num_decoding_thread", type=int, default=3, help="number of parallel threads for video decoding")
    parser.add_argument("--l2_normalize", type=int, default=0, help="whether to l2 normalize the output feature")
    parser.add_argument("--feature_dim", type=int, default=768, help="output video feature dimension")
    parser.add_argument("--framerate", type=int, default=1)
    parser.add_argument("--gpu_decode", type=int, default=1, help="decode with NVDEC through decord.gpu")
    parser.add_argument("--model_path", type=str, default="ViT-L/14")
    args = parser.parse_args()

    dataset = VideoLoader(
        args.csv,
        framerate=args.framerate,
        size=224,
        centercrop=True,
        gpu_decode=bool(args.gpu_decode),
        num_threads=args.num_decoding_thread,
    )
    n_dataset = len(dataset)
    loader = DataLoader(
        dataset,
        batch_size=1,
        shuffle=False,
        num_workers=0 if args.gpu_decode else args.num_decoding_thread,
        sampler=None,
    )
    preprocess = Normalize(mean=CLIP_MEAN, std=CLIP_STD)
    model, _ = clip.load(args.model_path, device="cuda", jit=False)
    model.eval()
    model = model.cuda()

    with torch.no_grad():
        for k, data in enumerate(loader):
            input_file = data["input"][0]
            output_file = data["output"][0]
            if len(data["video"].shape) > 3:
                print("Computing features of video {}/{}: {}".format(k + 1, n_dataset, input_file))
                video = data["video"].squeeze(0)
                if len(video.shape) == 4:
                    video = preprocess(video.cpu())
                    n_chunk = len(video)
                    features = torch.cuda.FloatTensor(n_chunk, args.feature_dim).fill_(0)
                    n_iter = int(math.ceil(n_chunk / float(args.batch_size)))
                    for i in range(n_iter):
                        min_ind = i * args.batch_size
                        max_ind = (i + 1) * args.batch_size
                        video_batch = video[min_ind:max_ind].cuda()
                        batch_features = model.encode_image(video_batch)
                        if args.l2_normalize:
                            batch_features = F.normalize(batch_features, dim=1)
                        features[min_ind:max_ind] = batch_features
                    features = features.cpu().numpy()
                    if args.half_precision:
                        features = features.astype("float16")
                    os.makedirs(os.path.dirname(output_file), exist_ok=True)
                    np.save(output_file, features)
            else:
                print("Video {} already processed.".format(input_file))


if __name__ == "__main__":
    main()
