"""Quantization-aware fine-tuning helpers for pytorch-quantization models.

Loads a calibrated checkpoint (see tools/calibrate_quant_resnet50.py), fine-tunes
it for a few epochs with fake quantization enabled, and exports a QDQ ONNX
graph that TensorRT can consume directly.
"""
import copy
import logging
import math
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from pytorch_quantization import nn as quant_nn
from pytorch_quantization import quant_modules

log = logging.getLogger(__name__)


def seed_everything(seed: int = 42):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def load_calibrated(model_fn, ckpt_path):
    """Build the quantized model and load calibrated amax values."""
    quant_modules.initialize()
    model = model_fn()
    quant_modules.deactivate()
    state = torch.load(ckpt_path, map_location="cuda:0")
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing:
        log.warning("missing keys: %s", missing[:5])
    return model.cuda()


def set_quantizer_state(model, enable_quant=True, enable_calib=False):
    for name, mod in model.named_modules():
        if isinstance(mod, quant_nn.TensorQuantizer):
            if enable_quant:
                mod.enable_quant()
            else:
                mod.disable_quant()
            if enable_calib:
                mod.enable_calib()
            else:
                mod.disable_calib()


def cosine_lr(optimizer, base_lr, step, total_steps, warmup=100):
    if step < warmup:
        lr = base_lr * (step + 1) / warmup
    else:
        progress = (step - warmup) / max(1, total_steps - warmup)
        lr = 0.5 * base_lr * (1 + math.cos(math.pi * progress))
    for g in optimizer.param_groups:
        g["lr"] = lr
    return lr


def finetune(model, train_loader, epochs=2, base_lr=1e-4, label_smoothing=0.1):
    """QAT fine-tune; the quantizer amax stays frozen (learn_amax=False)."""
    model.train()
    criterion = nn.CrossEntropyLoss(label_smoothing=label_smoothing).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=base_lr, momentum=0.9, weight_decay=1e-4)
    total = epochs * len(train_loader)
    step = 0
    for epoch in range(epochs):
        running = 0.0
        for images, target in train_loader:
            images, target = images.cuda(non_blocking=True), target.cuda(non_blocking=True)
            lr = cosine_lr(optimizer, base_lr, step, total)
            out = model(images)
            loss = criterion(out, target)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            running += loss.item()
            step += 1
            if step % 100 == 0:
                log.info("epoch %d step %d lr %.2e loss %.4f", epoch, step, lr, running / 100)
                running = 0.0
    return model


def kl_to_fp32(q_model, fp_model, images, temperature=1.0):
    """Per-batch KL divergence between the quantized and the float model (diagnostic)."""
    with torch.no_grad():
        p = F.log_softmax(q_model(images) / temperature, dim=-1)
        q = F.softmax(fp_model(images) / temperature, dim=-1)
    return F.kl_div(p, q, reduction="batchmean").item()


def export_qdq_onnx(model, onnx_path, input_shape=(1, 3, 224, 224), opset=13):
    """Export with fake-quant nodes rendered as QuantizeLinear/DequantizeLinear."""
    model = copy.deepcopy(model).eval()
    quant_nn.TensorQuantizer.use_fb_fake_quant = True
    dummy = torch.randn(*input_shape, device="cuda")
    with torch.no_grad():
        torch.onnx.export(
            model, dummy, onnx_path,
            input_names=["input"], output_names=["logits"],
            opset_version=opset, do_constant_folding=True,
            dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}},
        )
    quant_nn.TensorQuantizer.use_fb_fake_quant = False
    log.info("wrote %s", onnx_path)


def summarize_quantizers(model):
    rows = []
    for name, mod in model.named_modules():
        if isinstance(mod, quant_nn.TensorQuantizer) and mod.amax is not None:
            amax = mod.amax.detach()
            rows.append((name, float(amax.max().cpu()), tuple(amax.shape), str(amax.device)))
    for r in rows:
        log.info("%-50s amax=%.4f shape=%s on %s", *r)
    return rows
