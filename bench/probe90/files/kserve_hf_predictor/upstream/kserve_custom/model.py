"""
Custom KServe predictor for sequence classification / zero-shot NLI models.

    python -m kserve_custom.model --model_name=nli --model_dir=/mnt/models \
        --max_batch_size=64 --gpu_memory_fraction=0.9

Implements the v1 (`/v1/models/nli:predict`) and v2 open inference protocol handlers.
"""
import argparse
import logging
import os
import time
from typing import Dict, List, Union

import numpy as np
import torch
from kserve import InferRequest, InferResponse, Model, ModelServer, model_server
from kserve.errors import InvalidInput
from kserve.utils.utils import get_predict_input, get_predict_response
from transformers import AutoModelForSequenceClassification, AutoTokenizer

logger = logging.getLogger(__name__)


class NLIModel(Model):
    def __init__(self, name: str, model_dir: str, max_batch_size: int, max_length: int,
                 gpu_memory_fraction: float, use_amp: bool):
        super().__init__(name)
        self.model_dir = model_dir
        self.max_batch_size = max_batch_size
        self.max_length = max_length
        self.gpu_memory_fraction = gpu_memory_fraction
        self.use_amp = use_amp
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = None
        self.model = None
        self.labels: List[str] = []
        self.ready = False

    def load(self) -> bool:
        if self.device.type == "cuda" and self.gpu_memory_fraction < 1.0:
            torch.cuda.set_per_process_memory_fraction(self.gpu_memory_fraction, 0)
            torch.backends.cudnn.benchmark = True
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self.model = AutoModelForSequenceClassification.from_pretrained(self.model_dir)
        self.model.to(self.device).eval()
        self.labels = [self.model.config.id2label[i] for i in range(self.model.config.num_labels)]
        self.ready = True
        logger.info("loaded %s on %s", self.model_dir, self.device)
        return self.ready

    # ------------------------------------------------------------------ protocol glue
    @staticmethod
    def _from_v2(request: InferRequest):
        """v2 protocol: two BYTES tensors named 'premise' and 'hypothesis'."""
        by_name = {inp.name: inp for inp in request.inputs}
        if "premise" not in by_name:
            raise InvalidInput("v2 request needs a BYTES input named 'premise'")
        premises = [p.decode() if isinstance(p, bytes) else p for p in by_name["premise"].data]
        hyps = by_name.get("hypothesis")
        hyps = [h.decode() if isinstance(h, bytes) else h for h in hyps.data] if hyps else [""] * len(premises)
        return [{"premise": p, "hypothesis": h} for p, h in zip(premises, hyps)]

    def preprocess(self, payload: Union[Dict, InferRequest], headers: Dict[str, str] = None):
        if isinstance(payload, InferRequest):
            payload = {"instances": self._from_v2(payload)}
        instances = get_predict_input(payload)
        if isinstance(instances, np.ndarray):
            instances = instances.tolist()
        pairs = []
        for inst in instances:
            if isinstance(inst, dict):
                pairs.append((inst["premise"], inst.get("hypothesis", "")))
            elif isinstance(inst, (list, tuple)) and len(inst) == 2:
                pairs.append((inst[0], inst[1]))
            else:
                raise InvalidInput(f"instance must be a dict or a [premise, hypothesis] pair: {inst!r}")
        if len(pairs) > self.max_batch_size:
            raise InvalidInput(f"batch {len(pairs)} exceeds max_batch_size={self.max_batch_size}")
        return pairs

    def predict(self, pairs, headers: Dict[str, str] = None) -> Union[Dict, InferResponse]:
        start = time.perf_counter()
        enc = self.tokenizer(
            [p for p, _ in pairs],
            [h for _, h in pairs],
            padding=True,
            truncation="only_first",
            max_length=self.max_length,
            return_tensors="pt",
        )
        enc = {k: v.to(self.device, non_blocking=True) for k, v in enc.items()}
        with torch.no_grad(), torch.cuda.amp.autocast(enabled=self.use_amp):
            logits = self.model(**enc).logits
        probs = torch.softmax(logits.float(), dim=-1).cpu().numpy()
        if self.device.type == "cuda":
            torch.cuda.synchronize()
        logger.debug("predict batch=%d %.1f ms", len(pairs), (time.perf_counter() - start) * 1e3)
        results = [
            {"label": self.labels[int(np.argmax(p))], "scores": dict(zip(self.labels, p.tolist()))}
            for p in probs
        ]
        return get_predict_response(headers and headers.get("payload") or {}, results, self.name) \
            if isinstance(headers, dict) and headers.get("protocol") == "v2" else {"predictions": results}

    def health(self) -> Dict:
        info = {"ready": self.ready, "device": str(self.device)}
        if torch.cuda.is_available():
            info.update(
                allocated_mb=torch.cuda.memory_allocated() / 2**20,
                reserved_mb=torch.cuda.memory_reserved() / 2**20,
                gpu=torch.cuda.get_device_name(0),
            )
        return info


parser = argparse.ArgumentParser(parents=[model_server.parser])
parser.add_argument("--model_dir", default="/mnt/models", help="directory with the HF checkpoint")
parser.add_argument("--max_batch_size", type=int, default=64)
parser.add_argument("--max_length", type=int, default=256)
parser.add_argument("--gpu_memory_fraction", type=float, default=0.9)
parser.add_argument("--no_amp", action="store_true", help="disable fp16 autocast on GPU")
args, _ = parser.parse_known_args()

if __name__ == "__main__":
    if os.environ.get("CUDA_VISIBLE_DEVICES", "") == "":
        logger.warning("CUDA_VISIBLE_DEVICES is empty: the predictor will run on CPU")
    model = NLIModel(
        args.model_name,
        args.model_dir,
        max_batch_size=args.max_batch_size,
        max_length=args.max_length,
        gpu_memory_fraction=args.gpu_memory_fraction,
        use_amp=not args.no_amp and torch.cuda.is_available(),
    )
    model.load()
    ModelServer(workers=1).start([model])
