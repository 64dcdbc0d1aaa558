#!/usr/bin/env python
"""
Benchmark client for the resnet ensemble that passes the input batch through CUDA shared
memory, so the server reads it straight from device memory instead of over gRPC.

    python cuda_shm_client.py -u localhost:8001 -m preprocessing_ensemble -b 16 --iters 500
"""
import argparse
import sys
import time

import numpy as np
import torch
import tritonclient.grpc as grpcclient
import tritonclient.utils.cuda_shared_memory as cudashm
import tritonclient.utils.shared_memory as shm
from tritonclient import utils


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("-u", "--url", default="localhost:8001")
    parser.add_argument("-m", "--model-name", default="resnet50_trt")
    parser.add_argument("-b", "--batch-size", type=int, default=16)
    parser.add_argument("--iters", type=int, default=200)
    parser.add_argument("--device-id", type=int, default=0)
    parser.add_argument("--system-shm", action="store_true",
                        help="use POSIX shared memory instead of CUDA IPC")
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args()


class ShmSession:
    """Owns the input/output regions and their registration with the server."""

    def __init__(self, client, batch, device_id, use_system_shm):
        self.client = client
        self.device_id = device_id
        self.system = use_system_shm
        self.in_shape = (batch, 3, 224, 224)
        self.out_shape = (batch, 1000)
        self.in_bytes = int(np.prod(self.in_shape)) * np.dtype(np.float16).itemsize
        self.out_bytes = int(np.prod(self.out_shape)) * np.dtype(np.float32).itemsize

        client.unregister_system_shared_memory()
        client.unregister_cuda_shared_memory()

        if self.system:
            self.in_handle = shm.create_shared_memory_region("input_data", "/input_simple", self.in_bytes)
            self.out_handle = shm.create_shared_memory_region("output_data", "/output_simple", self.out_bytes)
            client.register_system_shared_memory("input_data", "/input_simple", self.in_bytes)
            client.register_system_shared_memory("output_data", "/output_simple", self.out_bytes)
        else:
            self.in_handle = cudashm.create_shared_memory_region("input_data", self.in_bytes, device_id)
            self.out_handle = cudashm.create_shared_memory_region("output_data", self.out_bytes, device_id)
            client.register_cuda_shared_memory(
                "input_data", cudashm.get_raw_handle(self.in_handle), device_id, self.in_bytes
            )
            client.register_cuda_shared_memory(
                "output_data", cudashm.get_raw_handle(self.out_handle), device_id, self.out_bytes
            )

    def write_input(self, batch: torch.Tensor):
        if self.system:
            shm.set_shared_memory_region(self.in_handle, [batch.cpu().numpy()])
        else:
            # copy device-to-device from a torch tensor already on the GPU
            cudashm.set_shared_memory_region_from_dlpack(self.in_handle, [batch])

    def read_output(self):
        if self.system:
            return shm.get_contents_as_numpy(self.out_handle, np.float32, self.out_shape)
        return cudashm.get_contents_as_numpy(self.out_handle, np.float32, self.out_shape)

    def close(self):
        self.client.unregister_system_shared_memory()
        self.client.unregister_cuda_shared_memory()
        if self.system:
            shm.destroy_shared_memory_region(self.in_handle)
            shm.destroy_shared_memory_region(self.out_handle)
        else:
            cudashm.destroy_shared_memory_region(self.in_handle)
            cudashm.destroy_shared_memory_region(self.out_handle)


def check_server(client, model_name, verbose=False):
    """Print server/model metadata and make sure the input layout matches what we send."""
    meta = client.get_model_metadata(model_name, as_json=True)
    if verbose:
        print("server:", client.get_server_metadata(as_json=True).get("version"))
        print("model inputs:", [(i["name"], i["datatype"], i["shape"]) for i in meta["inputs"]])
    dtypes = {i["name"]: i["datatype"] for i in meta["inputs"]}
    if dtypes.get("INPUT__0") not in ("FP16", None):
        raise SystemExit(f"unexpected INPUT__0 dtype {dtypes.get('INPUT__0')}")
    stats = client.get_inference_statistics(model_name, as_json=True)
    for s in stats.get("model_stats", []):
        print(f"{s['name']} v{s['version']}: {s.get('inference_count', 0)} inferences so far")


def main():
    args = parse_args()
    client = grpcclient.InferenceServerClient(url=args.url, verbose=args.verbose)
    if not client.is_model_ready(args.model_name):
        print(f"model {args.model_name} is not ready", file=sys.stderr)
        sys.exit(1)

    check_server(client, args.model_name, args.verbose)
    session = ShmSession(client, args.batch_size, args.device_id, args.system_shm)
    device = torch.device(f"cuda:{args.device_id}")

    inputs = [grpcclient.InferInput("INPUT__0", list(session.in_shape), "FP16")]
    inputs[0].set_shared_memory("input_data", session.in_bytes)
    outputs = [grpcclient.InferRequestedOutput("OUTPUT__0")]
    outputs[0].set_shared_memory("output_data", session.out_bytes)

    latencies = []
    for i in range(args.iters):
        batch = torch.randn(session.in_shape, device=device, dtype=torch.float16)
        torch.cuda.synchronize(device)
        t0 = time.perf_counter()
        session.write_input(batch)
        result = client.infer(model_name=args.model_name, inputs=inputs, outputs=outputs)
        out = result.get_output("OUTPUT__0")
        if out is None:
            raise utils.InferenceServerException("OUTPUT__0 missing in response")
        logits = session.read_output()
        latencies.append(time.perf_counter() - t0)
        if i == 0:
            print("top-1 of first sample:", int(np.argmax(logits[0])))

    lat = np.array(latencies[10:]) * 1000.0
    print(
        f"batch={args.batch_size} shm={'system' if args.system_shm else 'cuda'} "
        f"p50={np.percentile(lat, 50):.2f}ms p95={np.percentile(lat, 95):.2f}ms "
        f"throughput={args.batch_size * 1000.0 / lat.mean():.1f} img/s"
    )
    session.close()


if __name__ == "__main__":
    main()
