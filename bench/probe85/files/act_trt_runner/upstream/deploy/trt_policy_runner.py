"""Low-latency on-robot inference for an ACT chunking policy.

Two backends:
  * ``trt``   -- TensorRT engine built from the exported ONNX graph, driven through pycuda (default on the robot PC)
  * ``torch`` -- the TorchScript export, for debugging on a workstation

    python deploy/export_onnx.py --ckpt policy_best.ckpt --out act.onnx
    python deploy/trt_policy_runner.py --onnx act.onnx --engine act_fp16.plan --backend trt --hz 50
"""

import argparse
import os
import time
from dataclasses import dataclass

import numpy as np
import pycuda.autoinit  # noqa: F401  (creates the CUDA context)
import pycuda.driver as cuda
import tensorrt as trt
import torch

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)


@dataclass
class HostDeviceMem:
    host: np.ndarray
    device: object
    name: str


def build_engine(onnx_path: str, engine_path: str, fp16: bool = True, workspace_gb: int = 2) -> None:
    """Parse the ONNX export and serialize a TensorRT engine next to it."""
    builder = trt.Builder(TRT_LOGGER)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, TRT_LOGGER)
    with open(onnx_path, "rb") as f:
        if not parser.parse(f.read()):
            for i in range(parser.num_errors):
                print(parser.get_error(i))
            raise RuntimeError(f"failed to parse {onnx_path}")

    config = builder.create_builder_config()
    config.set_memory_pool_limit(trt.MemoryPoolType.WORKSPACE, workspace_gb << 30)
    if fp16 and builder.platform_has_fast_fp16:
        config.set_flag(trt.BuilderFlag.FP16)

    serialized = builder.build_serialized_network(network, config)
    if serialized is None:
        raise RuntimeError("TensorRT engine build failed")
    with open(engine_path, "wb") as f:
        f.write(serialized)


class TRTPolicy:
    """Runs one forward pass of the exported policy: (qpos, images) -> action chunk."""

    def __init__(self, engine_path: str):
        with open(engine_path, "rb") as f:
            runtime = trt.Runtime(TRT_LOGGER)
            self.engine = runtime.deserialize_cuda_engine(f.read())
        self.context = self.engine.create_execution_context()
        self.stream = cuda.Stream()
        self.inputs, self.outputs, self.bindings = [], [], []
        for i in range(self.engine.num_io_tensors):
            name = self.engine.get_tensor_name(i)
            shape = tuple(self.engine.get_tensor_shape(name))
            dtype = trt.nptype(self.engine.get_tensor_dtype(name))
            size = int(np.prod(shape))
            host_mem = cuda.pagelocked_empty(size, dtype)
            device_mem = cuda.mem_alloc(host_mem.nbytes)
            self.bindings.append(int(device_mem))
            mem = HostDeviceMem(host_mem, device_mem, name)
            if self.engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT:
                self.inputs.append(mem)
            else:
                self.outputs.append(mem)

    def __call__(self, qpos: np.ndarray, images: np.ndarray) -> np.ndarray:
        np.copyto(self.inputs[0].host, qpos.ravel())
        np.copyto(self.inputs[1].host, images.ravel())
        for inp in self.inputs:
            cuda.memcpy_htod_async(inp.device, inp.host, self.stream)
        self.context.execute_async_v2(bindings=self.bindings, stream_handle=self.stream.handle)
        for out in self.outputs:
            cuda.memcpy_dtoh_async(out.host, out.device, self.stream)
        self.stream.synchronize()
        return self.outputs[0].host.copy()


class TorchPolicy:
    def __init__(self, torchscript_path: str):
        self.policy = torch.jit.load(torchscript_path).cuda().eval()

    @torch.inference_mode()
    def __call__(self, qpos: np.ndarray, images: np.ndarray) -> np.ndarray:
        qpos_t = torch.from_numpy(qpos).float().cuda(non_blocking=True)
        images_t = torch.from_numpy(images).float().cuda(non_blocking=True)
        return self.policy(qpos_t, images_t).float().cpu().numpy()


class TemporalEnsembler:
    """Exponentially weighted average over overlapping action chunks (ACT's temporal aggregation)."""

    def __init__(self, chunk: int, action_dim: int, horizon: int, k: float = 0.01):
        self.chunk, self.k = chunk, k
        self.buffer = np.zeros((horizon, horizon + chunk, action_dim), dtype=np.float32)
        self.t = 0

    def __call__(self, chunk_actions: np.ndarray) -> np.ndarray:
        self.buffer[self.t, self.t : self.t + self.chunk] = chunk_actions
        candidates = self.buffer[:, self.t]
        populated = np.any(candidates != 0, axis=1)
        candidates = candidates[populated]
        weights = np.exp(-self.k * np.arange(len(candidates)))
        weights /= weights.sum()
        self.t += 1
        return (candidates * weights[:, None]).sum(axis=0)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--onnx", default="act.onnx")
    parser.add_argument("--engine", default="act_fp16.plan")
    parser.add_argument("--torchscript", default="act_ts.pt")
    parser.add_argument("--backend", choices=["trt", "torch"], default="trt")
    parser.add_argument("--hz", type=float, default=50.0)
    parser.add_argument("--chunk", type=int, default=100)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--fake-robot", action="store_true", help="random observations instead of the ALOHA arms")
    args = parser.parse_args()

    if args.backend == "trt":
        if not os.path.exists(args.engine):
            print(f"building TensorRT engine {args.engine} from {args.onnx} (this takes a few minutes)")
            build_engine(args.onnx, args.engine)
        policy = TRTPolicy(args.engine)
    else:
        policy = TorchPolicy(args.torchscript)

    if args.fake_robot:
        from deploy.fake_robot import FakeAloha as Robot
    else:
        from aloha_scripts.real_env import make_real_env

        Robot = lambda: make_real_env(init_node=True)  # noqa: E731
    env = Robot()
    ensembler = TemporalEnsembler(args.chunk, 14, args.horizon)

    dt = 1.0 / args.hz
    ts = env.reset()
    latencies = []
    for step in range(args.horizon):
        t0 = time.perf_counter()
        obs = ts.observation
        qpos = np.asarray(obs["qpos"], dtype=np.float32)[None]
        images = np.stack([obs["images"][c] for c in sorted(obs["images"])], axis=0).transpose(0, 3, 1, 2)[None] / 255.0
        chunk_actions = policy(qpos, images.astype(np.float32)).reshape(args.chunk, 14)
        action = ensembler(chunk_actions)
        latencies.append(time.perf_counter() - t0)
        ts = env.step(action)
        time.sleep(max(0.0, dt - (time.perf_counter() - t0)))

    lat = np.array(latencies) * 1000
    print(f"policy latency: mean {lat.mean():.2f} ms, p99 {np.percentile(lat, 99):.2f} ms over {len(lat)} steps")


if __name__ == "__main__":
    main()
