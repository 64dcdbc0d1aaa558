"""Run a torchvision detection model over a folder of images and dump the predictions.

Example::

    python predict.py --model fasterrcnn_resnet50_fpn_v2 \
        --weights FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1 \
        --input ./images --output ./preds --batch-size 8 --fp16 --draw

Images are decoded on the GPU with nvjpeg when ``--gpu-decode`` is given, otherwise on CPU
worker processes and copied to the GPU on a side stream so the copy overlaps the forward pass.
"""
import argparse
import json
import os
import time
from pathlib import Path

import torch
import torch.utils.data
import torchvision
from torchvision.io import decode_jpeg, decode_image, ImageReadMode, read_file, write_png
from torchvision.ops import batched_nms
from torchvision.transforms.v2 import functional as F
from torchvision.utils import draw_bounding_boxes


class ImageFolderDataset(torch.utils.data.Dataset):
    EXTS = (".jpg", ".jpeg", ".png")

    def __init__(self, root, decode_on_gpu=False):
        self.files = sorted(p for p in Path(root).rglob("*") if p.suffix.lower() in self.EXTS)
        self.decode_on_gpu = decode_on_gpu

    def __len__(self):
        return len(self.files)

    def __getitem__(self, idx):
        path = self.files[idx]
        data = read_file(str(path))
        if self.decode_on_gpu and path.suffix.lower() in (".jpg", ".jpeg"):
            # keep the encoded bytes; they are decoded in one batch on the GPU in the main process
            return data, str(path), True
        img = decode_image(data, mode=ImageReadMode.RGB)
        return img, str(path), False


def collate(batch):
    return tuple(zip(*batch))


class CudaPrefetcher:
    """Copies the next batch to the GPU on a side stream while the current one is being processed."""

    def __init__(self, loader, device):
        self.loader = iter(loader)
        self.device = device
        self.stream = torch.cuda.Stream(device=device)
        self._preload()

    def _preload(self):
        try:
            self.next_imgs, self.next_paths, self.next_encoded = next(self.loader)
        except StopIteration:
            self.next_imgs = None
            return
        with torch.cuda.stream(self.stream):
            if any(self.next_encoded):
                self.next_imgs = decode_jpeg(list(self.next_imgs), mode=ImageReadMode.RGB, device=self.device)
            else:
                self.next_imgs = [img.cuda(self.device, non_blocking=True) for img in self.next_imgs]

    def __iter__(self):
        return self

    def __next__(self):
        torch.cuda.current_stream(self.device).wait_stream(self.stream)
        imgs, paths = self.next_imgs, self.next_paths
        if imgs is None:
            raise StopIteration
        for img in imgs:
            img.record_stream(torch.cuda.current_stream(self.device))
        self._preload()
        return imgs, paths


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="fasterrcnn_resnet50_fpn_v2")
    p.add_argument("--weights", default="DEFAULT")
    p.add_argument("--input", required=True)
    p.add_argument("--output", default="./preds")
    p.add_argument("--batch-size", type=int, default=4)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--score-thresh", type=float, default=0.5)
    p.add_argument("--nms-thresh", type=float, default=0.5)
    p.add_argument("--fp16", action="store_true", help="run the model under autocast(float16)")
    p.add_argument("--gpu-decode", action="store_true", help="decode jpegs with nvjpeg")
    p.add_argument("--draw", action="store_true", help="write images with the boxes drawn")
    p.add_argument("--gpu", type=int, default=0)
    return p.parse_args()


@torch.inference_mode()
def main():
    args = parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device = torch.device(f"cuda:{args.gpu}")
    torch.cuda.set_device(device)

    weights = torchvision.models.get_model_weights(args.model)[args.weights]
    categories = weights.meta["categories"]
    model = torchvision.models.get_model(args.model, weights=weights, box_score_thresh=args.score_thresh)
    model.eval().cuda()
    preprocess = weights.transforms()

    dataset = ImageFolderDataset(args.input, decode_on_gpu=args.gpu_decode)
    loader = torch.utils.data.DataLoader(
        dataset,
        batch_size=args.batch_size,
        num_workers=args.workers,
        collate_fn=collate,
        pin_memory=True,
    )
    os.makedirs(args.output, exist_ok=True)

    results = {}
    n_images, t0 = 0, time.perf_counter()
    for imgs, paths in CudaPrefetcher(loader, device):
        batch = [preprocess(img) for img in imgs]
        with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):
            outputs = model(batch)

        for img, path, out in zip(imgs, paths, outputs):
            # class-aware NMS again with a tighter threshold than the model's default
            keep = batched_nms(out["boxes"].float(), out["scores"].float(), out["labels"], args.nms_thresh)
            boxes = out["boxes"][keep].float().cpu()
            labels = out["labels"][keep].cpu()
            scores = out["scores"][keep].float().cpu()
            results[path] = [
                {"box": b.tolist(), "label": categories[l], "score": round(s.item(), 4)}
                for b, l, s in zip(boxes, labels, scores)
            ]
            if args.draw:
                canvas = draw_bounding_boxes(
                    img.cpu(), boxes, labels=[categories[l] for l in labels], colors="red", width=3
                )
                write_png(canvas, os.path.join(args.output, Path(path).stem + ".png"))
        n_images += len(imgs)

    torch.cuda.synchronize()
    elapsed = time.perf_counter() - t0
    print(f"{n_images} images in {elapsed:.1f}s ({n_images / elapsed:.1f} img/s) on {torch.cuda.get_device_name()}")
    with open(os.path.join(args.output, "predictions.json"), "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
