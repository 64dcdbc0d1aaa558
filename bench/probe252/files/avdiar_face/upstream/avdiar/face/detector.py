"""Face detection + tracking front-end for the AV diarization pipeline.

Two detectors are supported:
  * ``retinaface``: RetinaFace-R50 (PyTorch), batched on the GPU, NMS done by the
    compiled extension ``avdiar._C`` (see setup.py / csrc/nms_kernel.cu);
  * ``scrfd``: InsightFace SCRFD-10G exported to ONNX, run with onnxruntime-gpu.

Both return, per frame, an array of [x1, y1, x2, y2, score] in pixels.
"""

import os
import logging
from typing import List, Sequence

import cv2
import numpy as np
import torch
import torch.nn.functional as F

logger = logging.getLogger(__name__)

try:
    from avdiar import _C  # built by `python setup.py build_ext --inplace`
    _HAS_EXT = True
except ImportError:
    _C = None
    _HAS_EXT = False
    logger.warning("avdiar._C not built, falling back to torchvision NMS (slower for >5k boxes)")

from torchvision.ops import nms as tv_nms

from avdiar.face.retinaface import RetinaFace, PriorBox, decode_boxes, cfg_re50

RETINA_WEIGHTS = os.environ.get("AVDIAR_RETINA_WEIGHTS", os.path.expanduser("~/.cache/avdiar/Resnet50_Final.pth"))
SCRFD_ONNX = os.environ.get("AVDIAR_SCRFD_ONNX", os.path.expanduser("~/.cache/avdiar/scrfd_10g_bnkps.onnx"))
MEAN_BGR = (104.0, 117.0, 123.0)


def batched_nms(boxes: torch.Tensor, scores: torch.Tensor, iou_thr: float) -> torch.Tensor:
    """NMS on one frame. Uses the CUDA kernel from the extension when the boxes are on the GPU."""
    if boxes.numel() == 0:
        return torch.empty((0,), dtype=torch.long, device=boxes.device)
    if _HAS_EXT and boxes.is_cuda:
        dets = torch.cat([boxes, scores[:, None]], dim=1).contiguous()
        return _C.nms_cuda(dets, iou_thr)
    return tv_nms(boxes, scores, iou_thr)


class RetinaFaceDetector:

    def __init__(self, device="cuda", weights=RETINA_WEIGHTS, conf_th=0.8, nms_th=0.4, max_size=640, half=True):
        self.device = torch.device(device)
        self.conf_th = conf_th
        self.nms_th = nms_th
        self.max_size = max_size
        self.half = half and self.device.type == "cuda"
        net = RetinaFace(cfg=cfg_re50, phase="test")
        state = torch.load(weights, map_location=lambda storage, loc: storage.cuda(self.device.index or 0))
        state = {k.replace("module.", "", 1): v for k, v in state.items()}
        net.load_state_dict(state, strict=False)
        self.net = net.to(self.device).eval()
        if self.half:
            self.net = self.net.half()
        self._priors = {}

    def _get_priors(self, h, w):
        key = (h, w)
        if key not in self._priors:
            self._priors[key] = PriorBox(cfg_re50, image_size=(h, w)).forward().to(self.device)
        return self._priors[key]

    def _preprocess(self, frames: Sequence[np.ndarray]):
        h0, w0 = frames[0].shape[:2]
        scale = min(1.0, self.max_size / max(h0, w0))
        h, w = int(round(h0 * scale)), int(round(w0 * scale))
        batch = np.stack([cv2.resize(f, (w, h)) if scale != 1.0 else f for f in frames]).astype(np.float32)
        batch -= np.array(MEAN_BGR, dtype=np.float32)
        x = torch.from_numpy(batch).permute(0, 3, 1, 2).pin_memory().to(self.device, non_blocking=True)
        return (x.half() if self.half else x), scale, (h, w)

    @torch.no_grad()
    def detect(self, frames: Sequence[np.ndarray]) -> List[np.ndarray]:
        x, scale, (h, w) = self._preprocess(frames)
        loc, conf, _ = self.net(x)
        priors = self._get_priors(h, w)
        boxes = decode_boxes(loc.float(), priors, cfg_re50["variance"])
        boxes = boxes * torch.tensor([w, h, w, h], device=boxes.device) / scale
        scores = F.softmax(conf.float(), dim=-1)[..., 1]
        out = []
        for b in range(boxes.shape[0]):
            keep = scores[b] > self.conf_th
            bb, sc = boxes[b][keep], scores[b][keep]
            idx = batched_nms(bb, sc, self.nms_th)
            out.append(torch.cat([bb[idx], sc[idx, None]], dim=1).cpu().numpy())
        return out


class SCRFDDetector:
    """InsightFace SCRFD through onnxruntime. Only the detection head is used."""

    def __init__(self, model_path=SCRFD_ONNX, conf_th=0.5, nms_th=0.4, input_size=(640, 640), gpu_id=0):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        providers = [("CUDAExecutionProvider", {"device_id": gpu_id, "cudnn_conv_algo_search": "HEURISTIC"}), "CPUExecutionProvider"]
        self.session = ort.InferenceSession(model_path, sess_options=so, providers=providers)
        logger.info("SCRFD providers: %s", self.session.get_providers())
        self.input_name = self.session.get_inputs()[0].name
        self.conf_th = conf_th
        self.nms_th = nms_th
        self.input_size = input_size

    def detect(self, frames: Sequence[np.ndarray]) -> List[np.ndarray]:
        out = []
        for f in frames:
            blob = cv2.dnn.blobFromImage(f, 1.0 / 128, self.input_size, (127.5, 127.5, 127.5), swapRB=True)
            net_outs = self.session.run(None, {self.input_name: blob})
            out.append(self._postprocess(net_outs, f.shape[:2]))
        return out

    def _postprocess(self, net_outs, hw):
        # strides 8/16/32, 2 anchors per location; outputs are [scores..., bboxes..., kps...]
        h, w = hw
        sx, sy = w / self.input_size[0], h / self.input_size[1]
        dets = []
        for i, stride in enumerate((8, 16, 32)):
            scores = net_outs[i].reshape(-1)
            bbox = net_outs[i + 3].reshape(-1, 4) * stride
            fh, fw = self.input_size[1] // stride, self.input_size[0] // stride
            cy, cx = np.mgrid[:fh, :fw]
            centers = np.stack([cx, cy], -1).reshape(-1, 2).repeat(2, axis=0) * stride
            keep = scores >= self.conf_th
            c, b, s = centers[keep], bbox[keep], scores[keep]
            x1y1 = c - b[:, :2]
            x2y2 = c + b[:, 2:]
            dets.append(np.concatenate([x1y1 * [sx, sy], x2y2 * [sx, sy], s[:, None]], axis=1))
        dets = np.concatenate(dets, 0) if dets else np.zeros((0, 5), np.float32)
        if len(dets) == 0:
            return dets
        keep = tv_nms(torch.from_numpy(dets[:, :4]).float(), torch.from_numpy(dets[:, 4]).float(), self.nms_th).numpy()
        return dets[keep]


class IoUTracker:
    """Greedy IoU tracker (same logic as the TalkNet/SyncNet track_shot, but online)."""

    def __init__(self, iou_th=0.5, max_missed=10, min_len=10):
        self.iou_th = iou_th
        self.max_missed = max_missed
        self.min_len = min_len
        self.active = []
        self.finished = []

    @staticmethod
    def _iou(a, b):
        xA, yA = max(a[0], b[0]), max(a[1], b[1])
        xB, yB = min(a[2], b[2]), min(a[3], b[3])
        inter = max(0.0, xB - xA) * max(0.0, yB - yA)
        ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
        return inter / ua if ua > 0 else 0.0

    def update(self, frame_idx, dets):
        used = set()
        for trk in self.active:
            best, best_iou = None, self.iou_th
            for j, d in enumerate(dets):
                if j in used:
                    continue
                iou = self._iou(trk["boxes"][-1], d[:4])
                if iou > best_iou:
                    best, best_iou = j, iou
            if best is not None:
                used.add(best)
                trk["frames"].append(frame_idx)
                trk["boxes"].append(dets[best][:4].tolist())
                trk["missed"] = 0
            else:
                trk["missed"] += 1
        still = []
        for trk in self.active:
            if trk["missed"] > self.max_missed:
                if len(trk["frames"]) >= self.min_len:
                    self.finished.append(trk)
            else:
                still.append(trk)
        self.active = still
        for j, d in enumerate(dets):
            if j not in used:
                self.active.append({"frames": [frame_idx], "boxes": [d[:4].tolist()], "missed": 0})

    def close(self):
        self.finished.extend(t for t in self.active if len(t["frames"]) >= self.min_len)
        self.active = []
        return self.finished


def build_detector(name="retinaface", device="cuda", **kw):
    if name == "retinaface":
        return RetinaFaceDetector(device=device, **kw)
    if name == "scrfd":
        gpu_id = torch.device(device).index or 0
        return SCRFDDetector(gpu_id=gpu_id, **kw)
    raise ValueError("unknown detector %s" % name)
