"""
Exports an InterFuser checkpoint to ONNX, builds a TensorRT engine from it and compares the per-frame latency of
PyTorch (fp32 / fp16 autocast), onnxruntime and TensorRT on one CARLA-sized input. The leaderboard gives the agent
a fixed wall-clock budget per route, so we track the model latency for every release.

    python tools/export_and_benchmark.py --checkpoint output/interfuser.pth.tar --onnx interfuser.onnx \
        --engine interfuser_fp16.plan --fp16 --iters 200
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import onnx
import onnxruntime as ort
import tensorrt as trt

from timm.models import create_model

TRT_LOGGER = trt.Logger(trt.Logger.WARNING)
INPUT_NAMES = ['rgb', 'rgb_left', 'rgb_right', 'rgb_center', 'lidar', 'measurements', 'target_point']
OUTPUT_NAMES = ['traffic', 'waypoints', 'is_junction', 'traffic_light_state', 'stop_sign', 'traffic_feature']


def make_dummy_inputs(batch_size=1):
    return {
        'rgb': torch.randn(batch_size, 3, 224, 224),
        'rgb_left': torch.randn(batch_size, 3, 128, 128),
        'rgb_right': torch.randn(batch_size, 3, 128, 128),
        'rgb_center': torch.randn(batch_size, 3, 128, 128),
        'lidar': torch.randn(batch_size, 3, 224, 224),
        'measurements': torch.randn(batch_size, 7),
        'target_point': torch.randn(batch_size, 2),
    }


class DictWrapper(torch.nn.Module):
    """ONNX export needs positional inputs; InterFuser takes a dict."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, rgb, rgb_left, rgb_right, rgb_center, lidar, measurements, target_point):
        return self.model({'rgb': rgb, 'rgb_left': rgb_left, 'rgb_right': rgb_right, 'rgb_center': rgb_center,
                           'lidar': lidar, 'measurements': measurements, 'target_point': target_point})


def load_model(args):
    model = create_model(args.model)
    ckpt = torch.load(args.checkpoint, map_location='cpu')
    model.load_state_dict(ckpt['state_dict'] if 'state_dict' in ckpt else ckpt)
    model = model.cuda().eval()
    return model


def export_onnx(model, inputs, path, opset=13):
    wrapper = DictWrapper(model).eval()
    torch.onnx.export(wrapper, tuple(inputs[k] for k in INPUT_NAMES), path, input_names=INPUT_NAMES,
                      output_names=OUTPUT_NAMES, opset_version=opset, do_constant_folding=True)
    onnx.checker.check_model(onnx.load(path))
    print(f'exported {path}')


def build_engine(onnx_path, engine_path, fp16=False, workspace_gb=4):
    builder = trt.Builder(TRT_LOGGER)
    network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
    parser = trt.OnnxParser(network, TRT_LOGGER)
    with open(onnx_path, 'rb') as f:
        if not parser.parse(f.read()):
            for i in range(parser.num_errors):
                print(parser.get_error(i))
            raise RuntimeError('failed to parse the ONNX model')
    config = builder.create_builder_config()
    config.max_workspace_size = workspace_gb << 30
    if fp16 and builder.platform_has_fast_fp16:
        config.set_flag(trt.BuilderFlag.FP16)
    engine = builder.build_engine(network, config)
    with open(engine_path, 'wb') as f:
        f.write(engine.serialize())
    return engine


def time_fn(fn, iters, warmup=20, name=''):
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(iters):
        torch.cuda.nvtx.range_push(name)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        times.append(start.elapsed_time(end))
    times = np.array(times)
    return {'mean_ms': float(times.mean()), 'p50_ms': float(np.percentile(times, 50)),
            'p95_ms': float(np.percentile(times, 95))}


def benchmark_torch(model, inputs, iters, fp16=False):
    inputs = {k: v.cuda() for k, v in inputs.items()}

    @torch.no_grad()
    def run():
        with torch.autocast('cuda', dtype=torch.float16, enabled=fp16):
            model(inputs)

    return time_fn(run, iters, name='torch_fp16' if fp16 else 'torch_fp32')


def benchmark_onnxruntime(onnx_path, inputs, iters):
    sess_options = ort.SessionOptions()
    sess_options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(onnx_path, sess_options,
                                providers=['CUDAExecutionProvider', 'CPUExecutionProvider'])
    feeds = {k: v.numpy() for k, v in inputs.items()}
    t = []
    for _ in range(20):
        sess.run(None, feeds)
    for _ in range(iters):
        t0 = time.perf_counter()
        sess.run(None, feeds)
        t.append((time.perf_counter() - t0) * 1000.0)
    return {'mean_ms': float(np.mean(t)), 'p95_ms': float(np.percentile(t, 95)), 'providers': sess.get_providers()}


def benchmark_tensorrt(engine, inputs, iters):
    context = engine.create_execution_context()
    bindings, outputs = [], []
    device_inputs = {k: v.cuda().contiguous() for k, v in inputs.items()}
    for i in range(engine.num_bindings):
        name = engine.get_binding_name(i)
        if engine.binding_is_input(i):
            bindings.append(device_inputs[name].data_ptr())
        else:
            shape = tuple(engine.get_binding_shape(i))
            out = torch.empty(shape, dtype=torch.float32, device='cuda')
            outputs.append(out)
            bindings.append(out.data_ptr())

    def run():
        context.execute_async_v2(bindings=bindings, stream_handle=torch.cuda.current_stream().cuda_stream)

    return time_fn(run, iters, name='tensorrt')


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', default='interfuser_baseline')
    parser.add_argument('--checkpoint', required=True)
    parser.add_argument('--onnx', default='interfuser.onnx')
    parser.add_argument('--engine', default='interfuser.plan')
    parser.add_argument('--fp16', action='store_true')
    parser.add_argument('--iters', type=int, default=200)
    parser.add_argument('--out', default='latency.json')
    args = parser.parse_args()

    torch.backends.cudnn.benchmark = True
    major, minor = torch.cuda.get_device_capability()
    if args.fp16 and major < 7:
        print('fp16 tensor cores need sm_70 or newer, benchmarking fp32 only')
        args.fp16 = False

    model = load_model(args)
    inputs = make_dummy_inputs()

    if not os.path.exists(args.onnx):
        export_onnx(model.float().cpu(), inputs, args.onnx)
        model = model.cuda()

    report = {'device': torch.cuda.get_device_name(0),
              'total_mem_gb': torch.cuda.get_device_properties(0).total_memory / 2 ** 30}
    report['torch_fp32'] = benchmark_torch(model, inputs, args.iters)
    if args.fp16:
        report['torch_fp16'] = benchmark_torch(model, inputs, args.iters, fp16=True)
    report['onnxruntime'] = benchmark_onnxruntime(args.onnx, inputs, args.iters)

    engine = build_engine(args.onnx, args.engine, fp16=args.fp16)
    report['tensorrt'] = benchmark_tensorrt(engine, inputs, args.iters)

    print(json.dumps(report, indent=2))
    with open(args.out, 'w') as f:
        json.dump(report, f, indent=2)


if __name__ == '__main__':
    main()
