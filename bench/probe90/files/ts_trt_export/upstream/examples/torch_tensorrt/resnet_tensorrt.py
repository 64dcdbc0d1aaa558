"""
Compile a torchvision ResNet-50 with Torch-TensorRT (TorchScript front-end or the dynamo
"tensorrt" backend), benchmark it against eager fp16, and save the artefact that
torch-model-archiver packs into resnet-50-trt.mar.

    python resnet_tensorrt.py --precision fp16 --batch-size 32 --ir ts
    torch-model-archiver --model-name res50-trt --handler image_classifier \
        --version 1.0 --serialized-file res50_trt_fp16.ts --extra-files ./index_to_name.json
"""
import argparse
import json
import logging
import time

import numpy as np
import torch
import torch_tensorrt
import torchvision.models as models

logging.basicConfig(level=logging.INFO)
logger = logging.getLogger("resnet_tensorrt")

PRECISIONS = {
    "fp32": torch.float32,
    "fp16": torch.half,
}


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--precision", default="fp16", choices=list(PRECISIONS))
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--min-batch", type=int, default=1)
    p.add_argument("--ir", default="ts", choices=["ts", "dynamo"])
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--workspace-gb", type=int, default=4)
    p.add_argument("--out", default=None)
    p.add_argument("--val-dir", default=None)
    return p.parse_args()


def benchmark(model, inp, iters, warmup, label):
    with torch.no_grad():
        for _ in range(warmup):
            model(inp)
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        timings = []
        for _ in range(iters):
            start.record()
            model(inp)
            end.record()
            torch.cuda.synchronize()  # wait for the end event
            timings.append(start.elapsed_time(end))
    timings = np.array(timings)
    logger.info(
        "%-12s bs=%d  mean %.2f ms  p50 %.2f ms  p99 %.2f ms  %.1f img/s",
        label,
        inp.shape[0],
        timings.mean(),
        np.percentile(timings, 50),
        np.percentile(timings, 99),
        inp.shape[0] * 1000.0 / timings.mean(),
    )
    return timings


def compile_ts(model, args, dtype):
    example = torch.randn((args.batch_size, 3, 224, 224)).to("cuda").to(dtype)
    traced = torch.jit.trace(model, example)
    trt_ts = torch_tensorrt.compile(
        traced,
        ir="ts",
        inputs=[
            torch_tensorrt.Input(
                min_shape=[args.min_batch, 3, 224, 224],
                opt_shape=[args.batch_size, 3, 224, 224],
                max_shape=[args.batch_size, 3, 224, 224],
                dtype=dtype,
            )
        ],
        enabled_precisions={dtype},
        workspace_size=args.workspace_gb << 30,
        truncate_long_and_double=True,
    )
    return trt_ts, example


def compile_dynamo(model, args, dtype):
    example = torch.randn((args.batch_size, 3, 224, 224), dtype=dtype, device="cuda")
    opt = torch.compile(
        model,
        backend="tensorrt",
        options={
            "enabled_precisions": {dtype},
            "min_block_size": 2,
            "optimization_level": 3,
        },
        dynamic=False,
    )
    opt(example)
    return opt, example


def top1_agreement(ref_model, trt_model, folder, batch_size, dtype, limit=512):
    """Fraction of validation images where eager and TensorRT agree on the top-1 class."""
    import torchvision.datasets as datasets
    import torchvision.transforms as T

    tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(),
                    T.Normalize((0.485, 0.456, 0.406), (0.229, 0.224, 0.225))])
    ds = datasets.ImageFolder(folder, transform=tf)
    loader = torch.utils.data.DataLoader(ds, batch_size=batch_size, num_workers=4, pin_memory=True)
    agree = seen = 0
    with torch.no_grad():
        for x, _ in loader:
            if x.shape[0] != batch_size:
                break
            x = x.to("cuda", non_blocking=True).to(dtype)
            agree += (ref_model(x).argmax(1) == trt_model(x).argmax(1)).sum().item()
            seen += x.shape[0]
            if seen >= limit:
                break
    return agree / max(seen, 1)


def main():
    args = parse_args()
    dtype = PRECISIONS[args.precision]

    model = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
    model = model.eval().to(dtype).cuda()

    if args.ir == "ts":
        trt_model, example = compile_ts(model, args, dtype)
    else:
        trt_model, example = compile_dynamo(model, args, dtype)

    eager_t = benchmark(model, example, args.iters, args.warmup, "eager")
    trt_t = benchmark(trt_model, example, args.iters, args.warmup, "tensorrt")
    logger.info("speed-up %.2fx", eager_t.mean() / trt_t.mean())

    with torch.no_grad():
        ref = model(example).float()
        got = trt_model(example).float()
    max_err = (ref - got).abs().max().item()
    logger.info("max abs diff vs eager: %.4e", max_err)
    if args.val_dir:
        agreement = top1_agreement(model, trt_model, args.val_dir, args.batch_size, dtype)
        logger.info("top-1 agreement with eager: %.2f%%", 100 * agreement)
        if agreement < 0.99:
            raise SystemExit("TensorRT engine disagrees with eager on >1% of images")

    out = args.out or f"res50_trt_{args.precision}.ts"
    if args.ir == "ts":
        torch.jit.save(trt_model, out)
    else:
        torch_tensorrt.save(trt_model, out, inputs=[example])
    meta = {
        "precision": args.precision,
        "batch_size": args.batch_size,
        "gpu": torch.cuda.get_device_name(0),
        "max_abs_err": max_err,
    }
    with open(out + ".json", "w") as fp:
        json.dump(meta, fp, indent=2)
    logger.info("saved %s", out)


if __name__ == "__main__":
    start = time.time()
    main()
    logger.info("done in %.1fs", time.time() - start)
