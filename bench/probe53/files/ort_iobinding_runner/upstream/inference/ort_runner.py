"""ONNX Runtime runner with zero-copy IO binding of torch tensors and optional EP-level graph replay.

Used by the serving path after `export.py --format onnx`: the pre/post-processing stays in torch on the
accelerator, ORT runs the exported graph on the same device, and no tensor ever goes through host memory.

    python inference/ort_runner.py --model artifacts/encoder.onnx --batch 32 --seq 128 --cuda-graph
"""
import argparse
import time
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import onnxruntime as ort
import torch

_TORCH_TO_NP = {
    torch.float16: np.float16,
    torch.float32: np.float32,
    torch.int64: np.int64,
    torch.int32: np.int32,
    torch.bool: np.bool_,
}

_ORT_TO_TORCH = {
    "tensor(float16)": torch.float16,
    "tensor(float)": torch.float32,
    "tensor(int64)": torch.int64,
    "tensor(int32)": torch.int32,
}


def make_session(
    model_path: str,
    device_id: int = 0,
    use_trt: bool = False,
    enable_cuda_graph: bool = False,
    fp16: bool = True,
    trt_cache_dir: str = "trt_cache",
    intra_op_threads: int = 4,
) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = intra_op_threads
    so.log_severity_level = 3

    providers: List = []
    if use_trt:
        providers.append((
            "TensorrtExecutionProvider",
            {
                "device_id": device_id,
                "trt_fp16_enable": fp16,
                "trt_engine_cache_enable": True,
                "trt_engine_cache_path": trt_cache_dir,
                "trt_max_workspace_size": 4 << 30,
            },
        ))
    providers.append((
        "CUDAExecutionProvider",
        {
            "device_id": device_id,
            "arena_extend_strategy": "kSameAsRequested",
            "cudnn_conv_algo_search": "EXHAUSTIVE",
            "do_copy_in_default_stream": True,
            "enable_cuda_graph": "1" if enable_cuda_graph else "0",
        },
    ))
    providers.append("CPUExecutionProvider")

    sess = ort.InferenceSession(model_path, sess_options=so, providers=providers)
    if "CUDAExecutionProvider" not in sess.get_providers():
        raise RuntimeError(f"accelerator EP not active ({sess.get_providers()}); is onnxruntime-gpu installed?")
    return sess


class OrtTorchRunner:
    """Binds torch tensors directly; outputs are preallocated torch tensors on the same device."""

    def __init__(self, model_path: str, device: str = "cuda:0", enable_cuda_graph: bool = False, **kw):
        self.device = torch.device(device)
        self.device_id = self.device.index or 0
        self.enable_cuda_graph = enable_cuda_graph
        self.sess = make_session(model_path, device_id=self.device_id, enable_cuda_graph=enable_cuda_graph, **kw)
        self.input_names = [i.name for i in self.sess.get_inputs()]
        self.outputs_meta = self.sess.get_outputs()
        self.binding = self.sess.io_binding()
        # with EP graph replay, buffers must keep the same addresses across runs
        self._static_in: Dict[str, torch.Tensor] = {}
        self._static_out: Dict[str, torch.Tensor] = {}

    def _bind_input(self, name: str, t: torch.Tensor):
        t = t.contiguous()
        self.binding.bind_input(name=name, device_type="cuda", device_id=self.device_id,
                                element_type=_TORCH_TO_NP[t.dtype], shape=tuple(t.shape), buffer_ptr=t.data_ptr())
        return t

    def _bind_output(self, name: str, shape: Sequence[int], dtype: torch.dtype) -> torch.Tensor:
        out = torch.empty(tuple(shape), dtype=dtype, device=self.device)
        self.binding.bind_output(name=name, device_type="cuda", device_id=self.device_id,
                                 element_type=_TORCH_TO_NP[dtype], shape=tuple(out.shape), buffer_ptr=out.data_ptr())
        return out

    def _resolve_shape(self, meta, inputs: Dict[str, torch.Tensor], overrides: Optional[Dict[str, Tuple[int, ...]]]):
        if overrides and meta.name in overrides:
            return overrides[meta.name]
        ref = next(iter(inputs.values()))
        shape = []
        for i, d in enumerate(meta.shape):
            shape.append(d if isinstance(d, int) else ref.shape[i])
        return tuple(shape)

    def run(self, inputs: Dict[str, torch.Tensor], output_shapes: Optional[Dict[str, Tuple[int, ...]]] = None):
        if self.enable_cuda_graph:
            if not self._static_in:
                for name in self.input_names:
                    self._static_in[name] = self._bind_input(name, inputs[name].clone())
                for meta in self.outputs_meta:
                    shape = self._resolve_shape(meta, inputs, output_shapes)
                    self._static_out[meta.name] = self._bind_output(meta.name, shape, _ORT_TO_TORCH[meta.type])
            else:
                for name in self.input_names:
                    self._static_in[name].copy_(inputs[name])
            outputs = self._static_out
        else:
            self.binding.clear_binding_inputs()
            self.binding.clear_binding_outputs()
            keep = [self._bind_input(n, inputs[n]) for n in self.input_names]  # noqa: F841 keep alive
            outputs = {
                m.name: self._bind_output(m.name, self._resolve_shape(m, inputs, output_shapes), _ORT_TO_TORCH[m.type])
                for m in self.outputs_meta
            }
        # torch wrote the inputs on its current stream; ORT reads them on its own stream
        torch.cuda.current_stream().synchronize()
        self.sess.run_with_iobinding(self.binding)
        return outputs


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--model", required=True)
    p.add_argument("--device", default="cuda:0")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--trt", action="store_true")
    p.add_argument("--cuda-graph", action="store_true")
    p.add_argument("--iters", type=int, default=200)
    args = p.parse_args()

    runner = OrtTorchRunner(args.model, device=args.device, use_trt=args.trt, enable_cuda_graph=args.cuda_graph)
    dev = runner.device
    inputs = {
        "input_ids": torch.randint(0, 30000, (args.batch, args.seq), dtype=torch.int64, device=dev),
        "attention_mask": torch.ones(args.batch, args.seq, dtype=torch.int64, device=dev),
    }
    for _ in range(10):
        runner.run(inputs)

    t0 = time.perf_counter()
    for _ in range(args.iters):
        out = runner.run(inputs)
    torch.cuda.synchronize()
    ms = 1e3 * (time.perf_counter() - t0) / args.iters
    print(f"providers={runner.sess.get_providers()} {ms:.3f} ms/iter")
    for k, v in out.items():
        print(k, tuple(v.shape), v.dtype, float(v.float().abs().mean()))


if __name__ == "__main__":
    main()
