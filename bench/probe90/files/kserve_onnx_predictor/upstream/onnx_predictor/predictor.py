"""
KServe custom predictor serving an ONNX text encoder with ONNX Runtime.

Inputs are tokenised on the host and bound to device memory with IO binding so the encoder
output never leaves the GPU before pooling; pooling/normalisation run in torch on the same
device (zero-copy through DLPack).

    python -m onnx_predictor.predictor --model_name=e5 --model_path=/mnt/models/model.onnx
"""
import argparse
import logging
import os
from typing import Dict, List

import numpy as np
import onnxruntime as ort
import torch
import torch.nn.functional as F
from kserve import Model, ModelServer, model_server
from transformers import AutoTokenizer

logger = logging.getLogger(__name__)


def make_session(model_path: str, device_id: int, use_trt: bool) -> ort.InferenceSession:
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = int(os.environ.get("ORT_INTRA_OP_THREADS", "2"))
    so.add_session_config_entry("session.disable_prepacking", "0")

    providers = []
    if use_trt:
        providers.append(
            (
                "TensorrtExecutionProvider",
                {
                    "device_id": device_id,
                    "trt_fp16_enable": True,
                    "trt_engine_cache_enable": True,
                    "trt_engine_cache_path": "/mnt/cache/trt",
                    "trt_max_workspace_size": 4 << 30,
                },
            )
        )
    providers.append(
        (
            "CUDAExecutionProvider",
            {
                "device_id": device_id,
                "arena_extend_strategy": "kSameAsRequested",
                "cudnn_conv_algo_search": "EXHAUSTIVE",
                "do_copy_in_default_stream": True,
            },
        )
    )
    providers.append("CPUExecutionProvider")
    sess = ort.InferenceSession(model_path, sess_options=so, providers=providers)
    logger.info("ORT providers in use: %s", sess.get_providers())
    if "CUDAExecutionProvider" not in sess.get_providers():
        raise RuntimeError("CUDAExecutionProvider unavailable: is onnxruntime-gpu installed?")
    return sess


def export_onnx(hf_model_dir: str, out_path: str, opset: int = 17, fp16: bool = True):
    """One-off export of the HF encoder (run in CI on a GPU runner before packaging)."""
    from transformers import AutoModel

    model = AutoModel.from_pretrained(hf_model_dir).eval().cuda()
    if fp16:
        model = model.half()
    tok = AutoTokenizer.from_pretrained(hf_model_dir)
    dummy = tok(["query: warm up the exporter"] * 2, padding="max_length", max_length=32,
                return_tensors="pt")
    args = (dummy["input_ids"].cuda(), dummy["attention_mask"].cuda())
    with torch.no_grad():
        torch.onnx.export(
            model,
            args,
            out_path,
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "seq"},
                "attention_mask": {0: "batch", 1: "seq"},
                "last_hidden_state": {0: "batch", 1: "seq"},
            },
            opset_version=opset,
            do_constant_folding=True,
        )
    logger.info("exported %s (fp16=%s, opset=%d)", out_path, fp16, opset)
    return out_path


class OnnxEncoder(Model):
    def __init__(self, name: str, model_path: str, tokenizer_dir: str, device_id: int,
                 use_trt: bool, max_length: int):
        super().__init__(name)
        self.model_path = model_path
        self.tokenizer_dir = tokenizer_dir
        self.device_id = device_id
        self.use_trt = use_trt
        self.max_length = max_length
        self.device = torch.device("cuda", device_id)
        self.ready = False

    def load(self) -> bool:
        self.tokenizer = AutoTokenizer.from_pretrained(self.tokenizer_dir)
        self.session = make_session(self.model_path, self.device_id, self.use_trt)
        self.output_name = self.session.get_outputs()[0].name
        self.ready = True
        return True

    def _run_bound(self, input_ids: np.ndarray, attention_mask: np.ndarray) -> torch.Tensor:
        """IO binding: inputs copied once to the device, output allocated by ORT on the device."""
        binding = self.session.io_binding()
        ids_ort = ort.OrtValue.ortvalue_from_numpy(input_ids, "cuda", self.device_id)
        binding.bind_ortvalue_input("input_ids", ids_ort)
        binding.bind_cpu_input("attention_mask", attention_mask)
        binding.bind_output(self.output_name, "cuda", self.device_id)
        self.session.run_with_iobinding(binding)
        out = binding.get_outputs()[0]
        return torch.from_dlpack(out.to_dlpack())

    def predict(self, payload: Dict, headers: Dict[str, str] = None) -> Dict:
        texts: List[str] = payload["instances"]
        enc = self.tokenizer(
            texts, padding=True, truncation=True, max_length=self.max_length, return_tensors="np"
        )
        input_ids = enc["input_ids"].astype(np.int64)
        attention_mask = enc["attention_mask"].astype(np.int64)
        hidden = self._run_bound(input_ids, attention_mask)
        mask = torch.as_tensor(attention_mask, device=self.device).unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1)
        emb = F.normalize(pooled.float(), dim=-1)
        return {"predictions": emb.cpu().numpy().tolist()}


    def metadata(self) -> Dict:
        return {
            "name": self.name,
            "providers": self.session.get_providers() if self.ready else [],
            "inputs": [i.name for i in self.session.get_inputs()] if self.ready else [],
            "max_length": self.max_length,
        }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(parents=[model_server.parser])
    parser.add_argument("--model_path", default="/mnt/models/model.onnx")
    parser.add_argument("--tokenizer_dir", default="/mnt/models")
    parser.add_argument("--device_id", type=int, default=0)
    parser.add_argument("--use_trt", action="store_true")
    parser.add_argument("--max_length", type=int, default=512)
    parser.add_argument("--export_from", default=None,
                        help="HF checkpoint dir: export model.onnx first, then serve it")
    args, _ = parser.parse_known_args()
    if args.export_from:
        export_onnx(args.export_from, args.model_path)
    m = OnnxEncoder(args.model_name, args.model_path, args.tokenizer_dir, args.device_id,
                    args.use_trt, args.max_length)
    m.load()
    ModelServer().start([m])
