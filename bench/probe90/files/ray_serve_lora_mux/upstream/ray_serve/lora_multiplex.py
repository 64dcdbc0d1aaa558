"""
Multi-LoRA serving on Ray Serve with model multiplexing.

One 4-bit (NF4) base model per replica; LoRA adapters are loaded on demand and cached per replica
(@serve.multiplexed), so requests carrying the same `serve_multiplexed_model_id` header are routed
to a replica that already holds that adapter.

    serve run lora_multiplex:app base_model=meta-llama/Llama-2-13b-hf
    curl -H "serve_multiplexed_model_id: support-bot-v3" -d '{"prompt": "..."}' localhost:8000/
"""
import asyncio
import logging
import os
import time
from contextlib import contextmanager
from typing import Dict, Optional

import torch
from peft import PeftModel
from ray import serve
from starlette.requests import Request
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

logger = logging.getLogger("ray.serve")

ADAPTER_ROOT = os.environ.get("LORA_ADAPTER_ROOT", "s3://ml-serving-artifacts/lora")
PROFILE = os.environ.get("LORA_NVTX", "0") == "1"


@contextmanager
def nvtx_range(name: str):
    """NVTX ranges show up in nsys timelines when the replica is profiled."""
    if PROFILE:
        torch.cuda.nvtx.range_push(name)
    try:
        yield
    finally:
        if PROFILE:
            torch.cuda.nvtx.range_pop()


def _download_adapter(adapter_id: str, dst: str) -> str:
    """Fetch an adapter directory (adapter_config.json + adapter_model.safetensors)."""
    import fsspec

    local = os.path.join(dst, adapter_id)
    if os.path.isdir(local):
        return local
    fs, root = fsspec.core.url_to_fs(ADAPTER_ROOT)
    fs.get(f"{root}/{adapter_id}", local, recursive=True)
    return local


@serve.deployment(
    ray_actor_options={"num_gpus": 1, "num_cpus": 4},
    max_ongoing_requests=16,
    autoscaling_config={"min_replicas": 1, "max_replicas": 8, "target_ongoing_requests": 8},
)
class MultiLoraLLM:
    def __init__(self, base_model: str, max_adapters: int = 8, cache_dir: str = "/tmp/lora"):
        self.cache_dir = cache_dir
        os.makedirs(cache_dir, exist_ok=True)
        bnb_cfg = BitsAndBytesConfig(
            load_in_4bit=True,
            bnb_4bit_quant_type="nf4",
            bnb_4bit_use_double_quant=True,
            bnb_4bit_compute_dtype=torch.bfloat16,
        )
        t0 = time.time()
        self.tokenizer = AutoTokenizer.from_pretrained(base_model)
        self.tokenizer.pad_token = self.tokenizer.eos_token
        self.base = AutoModelForCausalLM.from_pretrained(
            base_model,
            quantization_config=bnb_cfg,
            device_map="cuda:0",
            torch_dtype=torch.bfloat16,
            attn_implementation="flash_attention_2",
        )
        self.base.eval()
        self.model: Optional[PeftModel] = None
        self.max_adapters = max_adapters
        self._lock = asyncio.Lock()
        logger.info(
            "base %s loaded in %.0fs; %s",
            base_model,
            time.time() - t0,
            torch.cuda.memory_summary(abbreviated=True).splitlines()[6],
        )

    @serve.multiplexed(max_num_models_per_replica=8)
    async def get_adapter(self, adapter_id: str) -> str:
        path = await asyncio.to_thread(_download_adapter, adapter_id, self.cache_dir)
        async with self._lock:
            with nvtx_range(f"load_adapter:{adapter_id}"):
                if self.model is None:
                    self.model = PeftModel.from_pretrained(self.base, path, adapter_name=adapter_id)
                else:
                    self.model.load_adapter(path, adapter_name=adapter_id)
        return adapter_id

    def _evict_unused(self, keep: str):
        """Ray evicts from its LRU; drop the weights of adapters it no longer tracks."""
        if self.model is None:
            return
        loaded = list(self.model.peft_config.keys())
        if len(loaded) <= self.max_adapters:
            return
        for name in loaded:
            if name != keep:
                self.model.delete_adapter(name)
                break
        torch.cuda.empty_cache()

    @torch.inference_mode()
    def _generate(self, adapter_id: str, prompt: str, params: Dict) -> str:
        self.model.set_adapter(adapter_id)
        enc = self.tokenizer(prompt, return_tensors="pt").to("cuda:0")
        with nvtx_range("generate"):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = self.model.generate(
                    **enc,
                    max_new_tokens=int(params.get("max_new_tokens", 256)),
                    do_sample=float(params.get("temperature", 0.0)) > 0,
                    temperature=max(float(params.get("temperature", 0.0)), 1e-5),
                    top_p=float(params.get("top_p", 1.0)),
                    pad_token_id=self.tokenizer.eos_token_id,
                )
        return self.tokenizer.decode(out[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)

    async def __call__(self, request: Request) -> Dict:
        body = await request.json()
        adapter_id = serve.get_multiplexed_model_id()
        if not adapter_id:
            return {"error": "missing serve_multiplexed_model_id header"}
        await self.get_adapter(adapter_id)
        self._evict_unused(adapter_id)
        start = time.perf_counter()
        text = await asyncio.to_thread(self._generate, adapter_id, body["prompt"], body)
        torch.cuda.synchronize()
        return {
            "adapter": adapter_id,
            "text": text,
            "latency_s": round(time.perf_counter() - start, 3),
        }


@serve.deployment(num_replicas=1, ray_actor_options={"num_cpus": 0.5})
class AdapterRouter:
    """Thin HTTP front that forwards the multiplex header to the LLM deployment."""

    def __init__(self, llm):
        self.llm = llm

    async def __call__(self, request: Request) -> Dict:
        adapter_id = request.headers.get("serve_multiplexed_model_id", "")
        handle = self.llm.options(multiplexed_model_id=adapter_id)
        return await handle.remote(request)


def build_app(args: Dict[str, str]):
    base_model = args.get("base_model", "meta-llama/Llama-2-13b-hf")
    max_adapters = int(args.get("max_adapters", 8))
    return AdapterRouter.bind(MultiLoraLLM.bind(base_model, max_adapters=max_adapters))


app = build_app({})
