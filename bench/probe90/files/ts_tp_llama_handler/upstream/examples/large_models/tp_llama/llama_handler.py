import json
import logging
import os
import time
from abc import ABC
from pathlib import Path

import torch
import torch.distributed as dist
from fairscale.nn.model_parallel.initialize import (
    get_model_parallel_rank,
    initialize_model_parallel,
    model_parallel_is_initialized,
)
from sentencepiece import SentencePieceProcessor

from ts.handler_utils.timer import timed
from ts.protocol.otf_message_handler import send_intermediate_predict_response
from ts.torch_handler.base_handler import BaseHandler

from llama2 import ModelArgs, Transformer
from generate import Llama, sample_top_p

logger = logging.getLogger(__name__)


class LlamaHandler(BaseHandler, ABC):
    """
    Tensor-parallel Llama-2 handler. TorchServe starts one worker per model with
    `torchrun --nproc-per-node N` (see model-config.yaml), so every rank of the
    process group runs this handler and only rank 0 talks to the frontend.
    """

    def __init__(self):
        super(LlamaHandler, self).__init__()
        self.initialized = False
        self.local_rank = 0
        self.world_size = 1
        self.max_new_tokens = 128
        self.max_batch_size = 4

    def _init_distributed(self, ctx):
        self.local_rank = int(os.environ["LOCAL_RANK"])
        self.world_size = int(os.environ["WORLD_SIZE"])
        if not dist.is_initialized():
            dist.init_process_group("nccl")
        if not model_parallel_is_initialized():
            initialize_model_parallel(self.world_size)

        # TorchServe assigns a contiguous block of GPUs per worker; deviceIds
        # from model-config.yaml are already applied through CUDA_VISIBLE_DEVICES.
        torch.cuda.set_device(self.local_rank)
        self.device = torch.device("cuda", self.local_rank)

        # seed must be the same in all processes
        torch.manual_seed(ctx.model_yaml_config["handler"].get("seed", 1))

    def initialize(self, ctx):
        self._init_distributed(ctx)
        handler_cfg = ctx.model_yaml_config["handler"]
        model_dir = ctx.system_properties.get("model_dir")
        converted_ckpt_dir = handler_cfg["converted_ckpt_dir"]
        tokenizer_path = os.path.join(model_dir, handler_cfg["tokenizer_path"])

        self.max_new_tokens = int(handler_cfg.get("max_new_tokens", 128))
        self.max_batch_size = int(handler_cfg.get("max_batch_size", 4))
        max_seq_len = int(handler_cfg.get("max_seq_len", 2048))

        start = time.time()
        checkpoints = sorted(Path(converted_ckpt_dir).glob("*.pth"))
        assert len(checkpoints) == self.world_size, (
            f"Loading a checkpoint for MP={len(checkpoints)} but world size is {self.world_size}"
        )
        ckpt_path = checkpoints[get_model_parallel_rank()]
        checkpoint = torch.load(ckpt_path, map_location="cpu")
        with open(Path(converted_ckpt_dir) / "params.json", "r") as f:
            params = json.loads(f.read())

        model_args = ModelArgs(
            max_seq_len=max_seq_len,
            max_batch_size=self.max_batch_size,
            **params,
        )
        tokenizer = SentencePieceProcessor(model_file=tokenizer_path)
        model_args.vocab_size = tokenizer.vocab_size()

        torch.set_default_tensor_type(torch.cuda.HalfTensor)
        model = Transformer(model_args)
        model.load_state_dict(checkpoint, strict=False)
        torch.set_default_tensor_type(torch.FloatTensor)
        self.model = model.eval()
        self.generator = Llama(self.model, tokenizer)

        free, total = torch.cuda.mem_get_info()
        logger.info(
            "rank %d loaded Llama in %.1fs, %.1f/%.1f GiB free",
            self.local_rank,
            time.time() - start,
            free / 2**30,
            total / 2**30,
        )
        self.initialized = True

    @timed
    def preprocess(self, requests):
        prompts = []
        params = []
        for req in requests:
            body = req.get("data") or req.get("body")
            if isinstance(body, (bytes, bytearray)):
                body = body.decode("utf-8")
            if isinstance(body, str):
                try:
                    body = json.loads(body)
                except json.JSONDecodeError:
                    body = {"prompt": body}
            prompts.append(body["prompt"])
            params.append(
                {
                    "temperature": float(body.get("temperature", 0.6)),
                    "top_p": float(body.get("top_p", 0.9)),
                    "max_new_tokens": int(body.get("max_new_tokens", self.max_new_tokens)),
                }
            )
        return prompts, params

    def _broadcast_prompts(self, prompts):
        """rank 0 owns the requests; the other ranks only need the token ids"""
        payload = [prompts]
        dist.broadcast_object_list(payload, src=0)
        return payload[0]

    @timed
    def inference(self, input_batch):
        prompts, params = input_batch
        self._t_start = time.time()
        if self.local_rank == 0:
            self._validate(prompts, params)
        prompts = self._broadcast_prompts(prompts)
        temperature = params[0]["temperature"]
        top_p = params[0]["top_p"]
        max_gen_len = max(p["max_new_tokens"] for p in params)

        tokens = [self.generator.tokenizer.encode(p, bos=True, eos=False) for p in prompts]
        stream = self.context is not None and self.context.get_request_header(0, "stream") == "true"

        outputs = [[] for _ in prompts]
        for step_tokens in self.generator.generate_stream(
            prompt_tokens=tokens,
            max_gen_len=max_gen_len,
            temperature=temperature,
            top_p=top_p,
        ):
            for i, tok in enumerate(step_tokens.tolist()):
                outputs[i].append(tok)
            if stream and self.local_rank == 0:
                partial = [self.generator.tokenizer.decode(o) for o in outputs]
                send_intermediate_predict_response(
                    partial, self.context.request_ids, "Intermediate Prediction success", 200, self.context
                )
        torch.cuda.synchronize()
        return outputs

    @timed
    def postprocess(self, outputs):
        texts = [self.generator.tokenizer.decode(o) for o in outputs]
        if self.context is not None and self.local_rank == 0:
            n_tokens = sum(len(o) for o in outputs)
            elapsed = max(time.time() - self._t_start, 1e-6)
            self.context.metrics.add_metric(
                "TokensPerSecond", n_tokens / elapsed, "count", dimensions=None
            )
        return texts

    def _validate(self, prompts, params):
        for p, prm in zip(prompts, params):
            if not p:
                raise ValueError("empty prompt")
            if prm["max_new_tokens"] > 2048:
                raise ValueError("max_new_tokens must be <= 2048")
            if not 0.0 <= prm["top_p"] <= 1.0:
                raise ValueError("top_p must be in [0, 1]")

    def handle(self, data, context):
        self.context = context
        try:
            result = super().handle(data, context)
        except torch.cuda.OutOfMemoryError:
            logger.exception("OOM on rank %d", self.local_rank)
            torch.cuda.empty_cache()
            raise
        return result

    def describe_handle(self):
        return json.dumps(
            {
                "world_size": self.world_size,
                "dtype": "float16",
                "device": torch.cuda.get_device_name(self.local_rank),
                "nccl": ".".join(map(str, torch.cuda.nccl.version())),
            }
        )

    def sample(self, logits, temperature, top_p):
        if temperature > 0:
            probs = torch.softmax(logits / temperature, dim=-1)
            return sample_top_p(probs, top_p)
        return torch.argmax(logits, dim=-1)
