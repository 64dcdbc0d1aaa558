"""Caption every `frame_interval`-th frame of each video with BLIP-2 (LAVAD step 1).

The captions of several BLIP-2 variants are later cleaned with ImageBind text-image similarity.
"""
import argparse
import json
from pathlib import Path

import torch
from PIL import Image
from tqdm import tqdm
from transformers import Blip2ForConditionalGeneration, Blip2Processor

from src.data.video_record import VideoRecord


class ImageCaptioner:
    def __init__(
        self,
        batch_size,
        frame_interval,
        imagefile_template,
        pretrained_model_name,
        dtype_str,
        device,
        root_path,
        annotationfile_path,
        output_dir,
    ):
        self.batch_size = batch_size
        self.frame_interval = frame_interval
        self.imagefile_template = imagefile_template
        self.device = device
        self.dtype = getattr(torch, dtype_str)
        self.root_path = Path(root_path)
        self.annotationfile_path = Path(annotationfile_path)
        self.output_dir = Path(output_dir)

        self.processor = Blip2Processor.from_pretrained(pretrained_model_name)
        self.model = Blip2ForConditionalGeneration.from_pretrained(pretrained_model_name, torch_dtype=self.dtype)
        self.model.to(self.device)
        self.model.eval()

    def _load_batch(self, video, frame_idxs):
        images = []
        for idx in frame_idxs:
            frame_path = video.path / self.imagefile_template.format(idx)
            images.append(Image.open(frame_path).convert("RGB"))
        return images

    @torch.no_grad()
    def __call__(self, video):
        output_path = self.output_dir / f"{video.path.name}.json"
        if output_path.exists():
            return

        video_captions = {}
        frame_idxs = list(range(video.start_frame, video.end_frame + 1, self.frame_interval))
        for batch_start in range(0, len(frame_idxs), self.batch_size):
            batch_idxs = frame_idxs[batch_start : batch_start + self.batch_size]
            images = self._load_batch(video, batch_idxs)
            inputs = self.processor(images=images, return_tensors="pt").to(self.device, self.dtype)
            generated_ids = self.model.generate(**inputs, max_new_tokens=30)
            generated_text = self.processor.batch_decode(generated_ids, skip_special_tokens=True)
            for idx, text in zip(batch_idxs, generated_text):
                video_captions[str(idx)] = text.strip()

        output_path.parent.mkdir(parents=True, exist_ok=True)
        with open(output_path, "w") as f:
            json.dump(video_captions, f, indent=4)


def main(args):
    # TF32 matmuls are fine for captioning and noticeably faster on Ampere GPUs
    torch.backends.cuda.matmul.allow_tf32 = True
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    video_list = [VideoRecord(x.strip().split(), args.root_path) for x in open(args.annotationfile_path)]
    if args.num_jobs > 1:
        chunk = (len(video_list) + args.num_jobs - 1) // args.num_jobs
        video_list = video_list[args.job_index * chunk : (args.job_index + 1) * chunk]

    captioner = ImageCaptioner(
        batch_size=args.batch_size,
        frame_interval=args.frame_interval,
        imagefile_template=args.imagefile_template,
        pretrained_model_name=args.pretrained_model_name,
        dtype_str=args.dtype,
        device=device,
        root_path=args.root_path,
        annotationfile_path=args.annotationfile_path,
        output_dir=args.output_dir,
    )

    for video in tqdm(video_list, desc=f"captioning on {device}"):
        captioner(video)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--root_path", type=str, required=True)
    parser.add_argument("--annotationfile_path", type=str, required=True)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--frame_interval", type=int, default=16)
    parser.add_argument("--imagefile_template", type=str, default="{:06d}.jpg")
    parser.add_argument("--pretrained_model_name", type=str, default="Salesforce/blip2-opt-6.7b-coco")
    parser.add_argument("--dtype", type=str, default="float16", choices=["float16", "float32", "bfloat16"])
    parser.add_argument("--output_dir", type=str, required=True)
    parser.add_argument("--num_jobs", type=int, default=1)
    parser.add_argument("--job_index", type=int, default=0)
    args = parser.parse_args()
    main(args)
