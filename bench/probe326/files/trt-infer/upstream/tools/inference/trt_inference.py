"""TensorRT inference for exported anomaly models (PaDiM / PatchCore / EfficientAD).

Build the engine first (see tools/export_trt.sh), then:

    python tools/inference/trt_inference.py \
        --engine results/efficient_ad/mvtec/bottle/weights/onnx/model_fp16.engine \
        --metadata results/efficient_ad/mvtec/bottle/weights/onnx/metadata.json \
        --input datasets/MVTec/bottle/test/broken_large --output results/trt_vis

Runs on the line PCs (Jetson Orin / RTX A2000); no torch required at inference time.
"""

import argparse
import json
import logging
import time
from pathlib import Path

import cv2
import numpy as np
import pycuda.autoinit  # noqa: F401  (creates and pushes the CUDA context)
import pycuda.driver as cuda
import tensorrt as trt

logger = logging.getLogger("trt_inference")

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)
IMAGENET_MEAN = np.array([0.485, 0.456, 0.406], dtype=np.float32)
IMAGENET_STD = np.array([0.229, 0.224, 0.225], dtype=np.float32)
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff")


class HostDeviceMem:
    """Pair of page-locked host buffer and device buffer."""

    def __init__(self, host_mem, device_mem):
        self.host = host_mem
        self.device = device_mem

    def __repr__(self):
        return f"Host:\n{self.host}\nDevice:\n{self.device}"


class TRTInferencer:
    """Thin wrapper around a serialized TensorRT engine with anomalib metadata."""

    def __init__(self, engine_path: Path, metadata_path: Path):
        with open(engine_path, "rb") as f:
            runtime = trt.Runtime(TRT_LOGGER)
            self.engine = runtime.deserialize_cuda_engine(f.read())
        if self.engine is None:
            raise RuntimeError(f"Could not deserialize engine {engine_path}")
        self.context = self.engine.create_execution_context()
        self.inputs, self.outputs, self.bindings, self.stream = self._allocate_buffers()
        with open(metadata_path, encoding="utf-8") as f:
            self.metadata = json.load(f)
        self.input_shape = tuple(self.engine.get_binding_shape(0))
        logger.info("Loaded engine %s, input shape %s", engine_path, self.input_shape)

    def _allocate_buffers(self):
        inputs, outputs, bindings = [], [], []
        stream = cuda.Stream()
        for binding in self.engine:
            size = trt.volume(self.engine.get_binding_shape(binding))
            dtype = trt.nptype(self.engine.get_binding_dtype(binding))
            host_mem = cuda.pagelocked_empty(size, dtype)
            device_mem = cuda.mem_alloc(host_mem.nbytes)
            bindings.append(int(device_mem))
            if self.engine.binding_is_input(binding):
                inputs.append(HostDeviceMem(host_mem, device_mem))
            else:
                outputs.append(HostDeviceMem(host_mem, device_mem))
        return inputs, outputs, bindings, stream

    def pre_process(self, image: np.ndarray) -> np.ndarray:
        _, _, height, width = self.input_shape
        image = cv2.resize(image, (width, height), interpolation=cv2.INTER_LINEAR)
        image = image.astype(np.float32) / 255.0
        image = (image - IMAGENET_MEAN) / IMAGENET_STD
        image = image.transpose(2, 0, 1)[None]
        return np.ascontiguousarray(image)

    def infer(self, image: np.ndarray) -> list:
        np.copyto(self.inputs[0].host, image.ravel())
        for inp in self.inputs:
            cuda.memcpy_htod_async(inp.device, inp.host, self.stream)
        self.context.execute_async_v2(bindings=self.bindings, stream_handle=self.stream.handle)
        for out in self.outputs:
            cuda.memcpy_dtoh_async(out.host, out.device, self.stream)
        self.stream.synchronize()
        return [out.host for out in self.outputs]

    def post_process(self, raw_outputs: list, original_shape: tuple) -> dict:
        _, _, height, width = self.input_shape
        anomaly_map = raw_outputs[0].reshape(height, width).astype(np.float32)
        if len(raw_outputs) > 1 and raw_outputs[1].size == 1:
            pred_score = float(raw_outputs[1][0])
        else:
            pred_score = float(anomaly_map.max())

        meta = self.metadata
        # min-max normalisation exactly like anomalib's normalize_min_max
        if "min" in meta and "max" in meta:
            image_threshold = meta["image_threshold"]
            pixel_threshold = meta["pixel_threshold"]
            anomaly_map = self._normalize(anomaly_map, pixel_threshold, meta["pixel_min"], meta["pixel_max"])
            pred_score = float(self._normalize(np.array(pred_score), image_threshold, meta["min"], meta["max"]))
            threshold = 0.5
        else:
            threshold = meta.get("image_threshold", 0.5)

        anomaly_map = cv2.resize(anomaly_map, (original_shape[1], original_shape[0]))
        pred_mask = (anomaly_map >= threshold).astype(np.uint8)
        return {
            "anomaly_map": anomaly_map,
            "pred_score": pred_score,
            "pred_label": "Anomalous" if pred_score >= threshold else "Normal",
            "pred_mask": pred_mask,
        }

    @staticmethod
    def _normalize(targets, threshold, min_val, max_val):
        normalized = ((targets - threshold) / (max_val - min_val)) + 0.5
        return np.clip(normalized, 0.0, 1.0)


def superimpose(image: np.ndarray, anomaly_map: np.ndarray, alpha: float = 0.4) -> np.ndarray:
    heat = cv2.applyColorMap((anomaly_map * 255).astype(np.uint8), cv2.COLORMAP_JET)
    heat = cv2.cvtColor(heat, cv2.COLOR_BGR2RGB)
    return cv2.addWeighted(heat, alpha, image, 1 - alpha, 0)


def iter_images(path: Path):
    if path.is_file():
        yield path
        return
    for p in sorted(path.rglob("*")):
        if p.suffix.lower() in IMAGE_EXTENSIONS:
            yield p


def get_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", type=Path, required=True, help="Serialized TensorRT engine (.engine/.trt)")
    parser.add_argument("--metadata", type=Path, required=True, help="metadata.json written by anomalib export")
    parser.add_argument("--input", type=Path, required=True, help="Image file or folder")
    parser.add_argument("--output", type=Path, default=None, help="Folder for visualisations")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--log-level", default="INFO")
    return parser.parse_args()


def main():
    args = get_args()
    logging.basicConfig(level=args.log_level)
    inferencer = TRTInferencer(args.engine, args.metadata)

    dummy = np.zeros(inferencer.input_shape, dtype=np.float32)
    for _ in range(args.warmup):
        inferencer.infer(dummy)

    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)

    latencies = []
    n_anomalous = 0
    for image_path in iter_images(args.input):
        image = cv2.cvtColor(cv2.imread(str(image_path)), cv2.COLOR_BGR2RGB)
        tic = time.perf_counter()
        raw = inferencer.infer(inferencer.pre_process(image))
        latencies.append((time.perf_counter() - tic) * 1000.0)
        result = inferencer.post_process(raw, image.shape[:2])
        n_anomalous += result["pred_label"] == "Anomalous"
        logger.info("%s: %s (%.3f)", image_path.name, result["pred_label"], result["pred_score"])
        if args.output is not None:
            vis = superimpose(image, result["anomaly_map"])
            cv2.imwrite(str(args.output / image_path.name), cv2.cvtColor(vis, cv2.COLOR_RGB2BGR))

    if latencies:
        logger.info(
            "%d images, %d anomalous, mean latency %.2f ms (p95 %.2f ms)",
            len(latencies),
            n_anomalous,
            float(np.mean(latencies)),
            float(np.percentile(latencies, 95)),
        )


if __name__ == "__main__":
    main()
