"""ONNX Runtime runner with TensorRT / CUDA execution providers and IO binding.

Inputs and outputs stay on the GPU as torch tensors: IO binding hands their
device pointers to ONNX Runtime so no host round-trip happens per request.
"""
import logging
import os
import time
from typing import Dict, List, Optional

import numpy as np
import onnxruntime as ort
import torch

log = logging.getLogger(__name__)

_NP_TO_TORCH = {
    np.float32: torch.float32,
    np.float16: torch.float16,
    np.int64: torch.int64,
    np.int32: torch.int32,
    np.bool_: torch.bool,
}
_ORT_TYPE_TO_NP = {
    "tensor(float)": np.float32,
    "tensor(float16)": np.float16,
    "tensor(int64)": np.int64,
    "tensor(int32)": np.int32,
    "tensor(bool)": np.bool_,
}


def build_providers(device_id: int = 0, use_trt: bool = True, fp16: bool = True,
                    cache_dir: str = "./trt_cache") -> List:
    providers = []
    if use_trt:
        os.makedirs(cache_dir, exist_ok=True)
        providers.append(("TensorrtExecutionProvider", {
            "device_id": device_id,
            "trt_fp16_enable": fp16,
            "trt_int8_enable": False,
            "trt_engine_cache_enable": True,
            "trt_engine_cache_path": cache_dir,
            "trt_max_workspace_size": 4 << 30,
        }))
    providers.append(("CUDAExecutionProvider", {
        "device_id": device_id,
        "arena_extend_strategy": "kNextPowerOfTwo",
        "gpu_mem_limit": 8 * 1024 ** 3,
        "cudnn_conv_algo_search": "EXHAUSTIVE",
        "do_copy_in_default_stream": True,
    }))
    providers.append("CPUExecutionProvider")
    return providers


class OrtRunner:
    def __init__(self, onnx_path: str, device_id: int = 0, use_trt: bool = True, fp16: bool = True,
                 intra_op_threads: Optional[int] = None):
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        so.enable_mem_pattern = True
        if intra_op_threads:
            so.intra_op_num_threads = intra_op_threads
        self.device_id = device_id
        self.device = torch.device(f"cuda:{device_id}")
        self.session = ort.InferenceSession(onnx_path, sess_options=so,
                                            providers=build_providers(device_id, use_trt, fp16))
        active = self.session.get_providers()
        if "CUDAExecutionProvider" not in active:
            log.warning("CUDA EP unavailable, running on %s", active)
        self.inputs = self.session.get_inputs()
        self.outputs = self.session.get_outputs()
        self.binding = self.session.io_binding()

    def _alloc_output(self, meta, batch: int) -> torch.Tensor:
        shape = [batch if not isinstance(d, int) else d for d in meta.shape]
        dtype = _NP_TO_TORCH[_ORT_TYPE_TO_NP[meta.type]]
        return torch.empty(shape, dtype=dtype, device=self.device)

    def __call__(self, feeds: Dict[str, torch.Tensor]) -> Dict[str, torch.Tensor]:
        self.binding.clear_binding_inputs()
        self.binding.clear_binding_outputs()
        batch = next(iter(feeds.values())).shape[0]
        for meta in self.inputs:
            t = feeds[meta.name].contiguous()
            if not t.is_cuda:
                t = t.to(self.device, non_blocking=True)
            self.binding.bind_input(
                name=meta.name, device_type="cuda", device_id=self.device_id,
                element_type=_ORT_TYPE_TO_NP[meta.type], shape=tuple(t.shape), buffer_ptr=t.data_ptr())
        outs = {}
        for meta in self.outputs:
            o = self._alloc_output(meta, batch)
            self.binding.bind_output(
                name=meta.name, device_type="cuda", device_id=self.device_id,  # outputs stay on the device
                element_type=_ORT_TYPE_TO_NP[meta.type], shape=tuple(o.shape), buffer_ptr=o.data_ptr())
            outs[meta.name] = o
        torch.cuda.current_stream().synchronize()
        self.session.run_with_iobinding(self.binding)
        return outs

    def run_numpy(self, feeds: Dict[str, np.ndarray]) -> List[np.ndarray]:
        """Plain host-memory path (debugging / CPU fallback)."""
        return self.session.run(None, feeds)


def benchmark(runner: OrtRunner, batch: int = 8, iters: int = 200, warmup: int = 20):
    meta = runner.inputs[0]
    shape = [batch if not isinstance(d, int) else d for d in meta.shape]
    x = torch.randn(*shape, device=runner.device).to(_NP_TO_TORCH[_ORT_TYPE_TO_NP[meta.type]])
    for _ in range(warmup):
        runner({meta.name: x})
    torch.cuda.synchronize()  # finish warm-up
    t0 = time.perf_counter()
    for _ in range(iters):
        runner({meta.name: x})
    torch.cuda.synchronize()
    dt = (time.perf_counter() - t0) / iters
    log.info("batch %d: %.2f ms/iter, %.1f samples/s", batch, dt * 1e3, batch / dt)
    return dt
