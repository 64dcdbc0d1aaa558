"""TensorRT INT8 entropy calibrator fed from a folder of preprocessed images.

Used by build_engine.py when the ONNX model has no Q/DQ nodes (implicit
quantization). The calibration cache is written next to the engine so that
later builds can skip calibration entirely.
"""
import glob
import logging
import os

import numpy as np
import pycuda.autoinit  # noqa: F401  (creates a CUDA context)
import pycuda.driver as cuda
import tensorrt as trt
from PIL import Image

log = logging.getLogger(__name__)
TRT_LOGGER = trt.Logger(trt.Logger.WARNING)


def preprocess(path, size=(224, 224)):
    img = Image.open(path).convert("RGB").resize(size, Image.BILINEAR)
    x = np.asarray(img, dtype=np.float32) / 255.0
    x = (x - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    return np.ascontiguousarray(x.transpose(2, 0, 1))


class ImageBatchStream:
    def __init__(self, image_dir, batch_size, max_batches=None, size=(224, 224)):
        self.files = sorted(glob.glob(os.path.join(image_dir, "*.jpg")) + glob.glob(os.path.join(image_dir, "*.png")))
        if max_batches is not None:
            self.files = self.files[: batch_size * max_batches]
        self.batch_size = batch_size
        self.size = size
        self.index = 0

    def __len__(self):
        return len(self.files) // self.batch_size

    def next_batch(self):
        if self.index + self.batch_size > len(self.files):
            return None
        batch = [preprocess(f, self.size) for f in self.files[self.index:self.index + self.batch_size]]
        self.index += self.batch_size
        return np.stack(batch).astype(np.float32)

    def reset(self):
        self.index = 0


class EntropyCalibrator(trt.IInt8EntropyCalibrator2):
    def __init__(self, stream: ImageBatchStream, cache_file: str, input_shape=(3, 224, 224)):
        trt.IInt8EntropyCalibrator2.__init__(self)
        self.stream = stream
        self.cache_file = cache_file
        nbytes = stream.batch_size * int(np.prod(input_shape)) * np.dtype(np.float32).itemsize
        self.device_input = cuda.mem_alloc(nbytes)
        self.host_input = cuda.pagelocked_empty(stream.batch_size * int(np.prod(input_shape)), np.float32)
        self.cuda_stream = cuda.Stream()
        log.info("calibrating on %d batches of %d", len(stream), stream.batch_size)

    def get_batch_size(self):
        return self.stream.batch_size

    def get_batch(self, names):
        batch = self.stream.next_batch()
        if batch is None:
            return None
        np.copyto(self.host_input, batch.ravel())
        cuda.memcpy_htod_async(self.device_input, self.host_input, self.cuda_stream)
        self.cuda_stream.synchronize()
        return [int(self.device_input)]

    def read_calibration_cache(self):
        if os.path.exists(self.cache_file):
            log.info("using calibration cache %s", self.cache_file)
            with open(self.cache_file, "rb") as f:
                return f.read()
        return None

    def write_calibration_cache(self, cache):
        with open(self.cache_file, "wb") as f:
            f.write(cache)
        log.info("wrote calibration cache %s (%d bytes)", self.cache_file, len(cache))


def build_int8_engine(onnx_path, engine_path, calibrator, workspace_gb=4, fp16_fallback=True):
    builder = trt.Builder(TRT_LOGGER)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, TRT_LOGGER)
    with open(onnx_path, "rb") as f:
        if not parser.parse(f.read()):
            for i in range(parser.num_errors):
                log.error(parser.get_error(i))
            raise RuntimeError(f"failed to parse {onnx_path}")
    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace_gb << 30)
    config.set_flag(trt.BuilderFlag.INT8)
    if fp16_fallback:
        config.set_flag(trt.BuilderFlag.FP16)
    config.int8_calibrator = calibrator
    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise RuntimeError("engine build failed")
    with open(engine_path, "wb") as f:
        f.write(serialized)
    log.info("saved %s", engine_path)
    return engine_path
