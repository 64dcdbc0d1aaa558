"""
KServe predictor for the RetinaNet-style product detector.

Pre-processing (decode, letterbox, normalise) overlaps with the previous batch's forward pass by
running on a dedicated CUDA stream; post-processing uses the fused det_ops kernels.

    python -m detector.predictor --model_name=detector --model_dir=/mnt/models
"""
import argparse
import base64
import io
import logging
import os
from typing import Dict, List

import kserve
import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

from det_ops.ops import batched_nms, decode_and_filter

from .anchors import AnchorGenerator
from .model import build_retinanet

logger = logging.getLogger(__name__)

INPUT_SIZE = 896
MEAN = torch.tensor([123.675, 116.28, 103.53]).view(1, 3, 1, 1)
STD = torch.tensor([58.395, 57.12, 57.375]).view(1, 3, 1, 1)


class DetectorPredictor(kserve.Model):
    def __init__(self, name: str, model_dir: str, score_thresh: float, iou_thresh: float,
                 max_det: int, device_id: int):
        super().__init__(name)
        self.model_dir = model_dir
        self.score_thresh = score_thresh
        self.iou_thresh = iou_thresh
        self.max_det = max_det
        self.device = torch.device(f"cuda:{device_id}")
        self.copy_stream = None
        self.ready = False

    def load(self) -> bool:
        torch.cuda.set_device(self.device)
        torch.backends.cudnn.benchmark = True
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

        ckpt = torch.load(os.path.join(self.model_dir, "model.pth"), map_location=self.device)
        self.model = build_retinanet(ckpt["config"])
        self.model.load_state_dict(ckpt["state_dict"])
        self.model = self.model.to(self.device).eval().half()
        self.anchors = AnchorGenerator(ckpt["config"]["anchors"])(
            (INPUT_SIZE, INPUT_SIZE), device=self.device
        )
        self.class_names = ckpt["config"].get("class_names")
        self.mean = MEAN.to(self.device).half()
        self.std = STD.to(self.device).half()
        self.copy_stream = torch.cuda.Stream(device=self.device, priority=-1)

        # warm-up: cudnn autotuning for every bucket we serve
        for bs in (1, 4, 8):
            x = torch.zeros(bs, 3, INPUT_SIZE, INPUT_SIZE, device=self.device, dtype=torch.half)
            with torch.inference_mode():
                self.model(x)
        torch.cuda.synchronize(self.device)
        self.ready = True
        return self.ready

    # -------------------------------------------------------------- pre-processing
    @staticmethod
    def _letterbox(img: Image.Image):
        w, h = img.size
        scale = INPUT_SIZE / max(w, h)
        nw, nh = int(round(w * scale)), int(round(h * scale))
        arr = np.asarray(img.convert("RGB").resize((nw, nh), Image.BILINEAR))
        canvas = np.full((INPUT_SIZE, INPUT_SIZE, 3), 114, dtype=np.uint8)
        canvas[:nh, :nw] = arr
        return canvas, scale

    def preprocess(self, payload: Dict, headers: Dict[str, str] = None):
        images, scales = [], []
        for inst in payload["instances"]:
            raw = base64.b64decode(inst["image"]["b64"])
            canvas, scale = self._letterbox(Image.open(io.BytesIO(raw)))
            images.append(torch.from_numpy(canvas))
            scales.append(scale)
        host = torch.stack(images).pin_memory()
        with torch.cuda.stream(self.copy_stream):
            x = host.to(self.device, non_blocking=True)
            x = x.permute(0, 3, 1, 2).half()
            x = (x - self.mean) / self.std
        torch.cuda.current_stream(self.device).wait_stream(self.copy_stream)
        x.record_stream(torch.cuda.current_stream(self.device))
        return x, scales

    # -------------------------------------------------------------- inference
    def predict(self, inputs, headers: Dict[str, str] = None) -> Dict:
        x, scales = inputs
        with torch.inference_mode():
            cls_logits, box_deltas = self.model(x)
        results: List[Dict] = []
        for i in range(x.shape[0]):
            boxes, scores, labels = decode_and_filter(
                box_deltas[i].float(), self.anchors, cls_logits[i].float(),
                self.score_thresh, topk=1000, clip=(INPUT_SIZE, INPUT_SIZE),
            )
            keep = batched_nms(boxes, scores, labels, self.iou_thresh, max_out=self.max_det)
            boxes = (boxes[keep] / scales[i]).round().int().cpu().tolist()
            results.append(
                {
                    "boxes": boxes,
                    "scores": scores[keep].cpu().tolist(),
                    "labels": labels[keep].cpu().tolist(),
                }
            )
        return {"predictions": results}

    def postprocess(self, response: Dict, headers: Dict[str, str] = None) -> Dict:
        names = getattr(self, "class_names", None)
        for pred in response["predictions"]:
            if names:
                pred["names"] = [names[c] if 0 <= c < len(names) else str(c) for c in pred["labels"]]
            pred["count"] = len(pred["boxes"])
        if headers and headers.get("x-render", "") == "1":
            response["rendered"] = [self._render(p) for p in response["predictions"]]
        return response

    @staticmethod
    def _render(pred: Dict) -> str:
        """Draw boxes on a blank canvas (debug endpoint used by the labelling UI)."""
        from PIL import ImageDraw

        canvas = Image.new("RGB", (INPUT_SIZE, INPUT_SIZE), (255, 255, 255))
        draw = ImageDraw.Draw(canvas)
        for (x1, y1, x2, y2), score in zip(pred["boxes"], pred["scores"]):
            draw.rectangle([x1, y1, x2, y2], outline=(255, 0, 0), width=2)
            draw.text((x1 + 2, y1 + 2), f"{score:.2f}", fill=(255, 0, 0))
        buf = io.BytesIO()
        canvas.save(buf, format="PNG")
        return base64.b64encode(buf.getvalue()).decode("ascii")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(parents=[kserve.model_server.parser])
    parser.add_argument("--model_dir", default="/mnt/models")
    parser.add_argument("--score_thresh", type=float, default=0.3)
    parser.add_argument("--iou_thresh", type=float, default=0.5)
    parser.add_argument("--max_det", type=int, default=100)
    parser.add_argument("--device_id", type=int, default=int(os.environ.get("LOCAL_RANK", 0)))
    args, _ = parser.parse_known_args()

    model = DetectorPredictor(args.model_name, args.model_dir, args.score_thresh,
                              args.iou_thresh, args.max_det, args.device_id)
    model.load()
    kserve.ModelServer(workers=1).start([model])
