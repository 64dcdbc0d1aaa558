"""
Triton Python-backend model that serves a Hugging Face causal LM with token streaming.

The model is decoupled (see config.pbtxt): each request gets zero or more partial responses
followed by a final response flagged with TRITONSERVER_RESPONSE_COMPLETE_FINAL.
"""
import gc
import json
import os
import threading
from typing import Dict, List

import numpy as np
import torch
import triton_python_backend_utils as pb_utils
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    StoppingCriteria,
    StoppingCriteriaList,
    TextIteratorStreamer,
)

_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}


def _param(cfg: Dict, key: str, default: str) -> str:
    return cfg.get("parameters", {}).get(key, {}).get("string_value", default)


class TritonPythonModel:
    def initialize(self, args):
        self.model_config = json.loads(args["model_config"])
        self.logger = pb_utils.Logger
        self.decoupled = pb_utils.using_decoupled_model_transaction_policy(self.model_config)

        model_id = _param(self.model_config, "model_id", "meta-llama/Llama-2-7b-chat-hf")
        dtype = _DTYPES[_param(self.model_config, "torch_dtype", "float16")]
        attn_impl = _param(self.model_config, "attn_implementation", "sdpa")
        load_in_8bit = _param(self.model_config, "load_in_8bit", "false").lower() == "true"
        self.max_new_tokens_default = int(_param(self.model_config, "max_new_tokens_default", "256"))

        device_id = args["model_instance_device_id"]
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", device_id)
        self.device = torch.device("cuda", int(device_id)) if args["model_instance_kind"] == "GPU" else torch.device("cpu")

        self.tokenizer = AutoTokenizer.from_pretrained(model_id, use_fast=True)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

        quant_cfg = None
        if load_in_8bit:
            quant_cfg = BitsAndBytesConfig(load_in_8bit=True, llm_int8_threshold=6.0)

        self.model = AutoModelForCausalLM.from_pretrained(
            model_id,
            torch_dtype=dtype,
            attn_implementation=attn_impl,
            quantization_config=quant_cfg,
            device_map={"": self.device.index or 0},
            low_cpu_mem_usage=True,
        )
        self.model.eval()
        self.model.generation_config.pad_token_id = self.tokenizer.pad_token_id

        free, total = torch.cuda.mem_get_info(self.device)
        self.logger.log_info(
            f"[llm] loaded {model_id} ({dtype}, attn={attn_impl}) on {torch.cuda.get_device_name(self.device)}; "
            f"{free / 2**30:.1f} GiB free of {total / 2**30:.1f} GiB"
        )
        # simple guard: refuse requests whose KV cache would not fit
        per_token = 2 * self.model.config.num_hidden_layers * self.model.config.hidden_size * 2
        self.max_total_tokens = int(0.8 * free / per_token)

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _scalar(request, name, default):
        t = pb_utils.get_input_tensor_by_name(request, name)
        if t is None:
            return default
        return t.as_numpy().reshape(-1)[0]

    def _prompt(self, request) -> str:
        t = pb_utils.get_input_tensor_by_name(request, "text_input").as_numpy()
        raw = t.reshape(-1)[0]
        return raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)

    def _response(self, text: str) -> pb_utils.InferenceResponse:
        out = pb_utils.Tensor("text_output", np.array([text.encode("utf-8")], dtype=np.object_))
        return pb_utils.InferenceResponse(output_tensors=[out])

    # ------------------------------------------------------------------ execute
    def execute(self, requests: List):
        if not self.decoupled:
            return [self._generate_blocking(r) for r in requests]
        for request in requests:
            self._generate_streaming(request)
        return None

    def _gen_kwargs(self, request, inputs):
        max_tokens = int(self._scalar(request, "max_tokens", self.max_new_tokens_default))
        temperature = float(self._scalar(request, "temperature", 0.7))
        top_p = float(self._scalar(request, "top_p", 0.95))
        budget = self.max_total_tokens - inputs["input_ids"].shape[1]
        return dict(
            **inputs,
            max_new_tokens=max(1, min(max_tokens, budget)),
            do_sample=temperature > 0,
            temperature=max(temperature, 1e-5),
            top_p=top_p,
        )

    def _stop_criteria(self, request):
        t = pb_utils.get_input_tensor_by_name(request, "stop")
        if t is None:
            return None
        words = [w.decode("utf-8") if isinstance(w, bytes) else str(w) for w in t.as_numpy().reshape(-1)]
        stop_ids = [self.tokenizer.encode(w, add_special_tokens=False) for w in words if w]

        class _StopOnWords(StoppingCriteria):
            def __call__(self, input_ids, scores, **kwargs):
                for ids in stop_ids:
                    n = len(ids)
                    if n and input_ids.shape[1] >= n and input_ids[0, -n:].tolist() == ids:
                        return True
                return False

        return StoppingCriteriaList([_StopOnWords()])

    def _generate_blocking(self, request):
        inputs = self.tokenizer(self._prompt(request), return_tensors="pt").to("cuda")
        kwargs = self._gen_kwargs(request, inputs)
        stopping = self._stop_criteria(request)
        if stopping is not None:
            kwargs["stopping_criteria"] = stopping
        with torch.inference_mode():
            ids = self.model.generate(**kwargs)
        text = self.tokenizer.decode(ids[0, inputs["input_ids"].shape[1]:], skip_special_tokens=True)
        return self._response(text)

    def _generate_streaming(self, request):
        sender = request.get_response_sender()
        inputs = self.tokenizer(self._prompt(request), return_tensors="pt")
        inputs = {k: v.to(self.device) for k, v in inputs.items()}
        streamer = TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
        kwargs = self._gen_kwargs(request, inputs)
        kwargs["streamer"] = streamer

        def _run():
            with torch.inference_mode():
                self.model.generate(**kwargs)

        worker = threading.Thread(target=_run, daemon=True)
        worker.start()
        try:
            for piece in streamer:
                if piece:
                    sender.send(self._response(piece))
        except Exception as exc:  # pylint: disable=broad-except
            err = pb_utils.TritonError(f"generation failed: {exc}")
            sender.send(pb_utils.InferenceResponse(error=err))
        finally:
            worker.join()
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def finalize(self):
        self.logger.log_info("[llm] unloading")
        del self.model
        gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.ipc_collect()
