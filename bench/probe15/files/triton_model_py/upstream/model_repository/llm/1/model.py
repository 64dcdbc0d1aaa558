"""Triton Inference Server python backend serving a HF causal LM (decoupled streaming)."""
import json
import os
import threading

import numpy as np
import torch
import triton_python_backend_utils as pb_utils
from torch.utils.dlpack import from_dlpack, to_dlpack
from transformers import AutoModelForCausalLM, AutoTokenizer, TextIteratorStreamer


class TritonPythonModel:
    def initialize(self, args):
        self.model_config = json.loads(args["model_config"])
        params = {k: v["string_value"] for k, v in self.model_config.get("parameters", {}).items()}
        self.model_path = params.get("model_path", "/models/hf/llama-3-8b-instruct")
        self.max_new_tokens_default = int(params.get("max_new_tokens", "512"))

        # Triton tells us which GPU this instance was placed on (instance_group kind: KIND_GPU)
        device_id = int(args["model_instance_device_id"])
        kind = args["model_instance_kind"]
        if kind == "GPU":
            torch.cuda.set_device(device_id)
            self.device = torch.device(f"cuda:{device_id}")
        else:
            self.device = torch.device("cpu")

        self.decoupled = pb_utils.using_decoupled_model_transaction_policy(self.model_config)
        self.tokenizer = AutoTokenizer.from_pretrained(self.model_path)
        self.model = AutoModelForCausalLM.from_pretrained(
            self.model_path,
            torch_dtype=torch.float16,
            attn_implementation="flash_attention_2",
        ).to(self.device).eval()
        out_cfg = pb_utils.get_output_config_by_name(self.model_config, "text_output")
        self.output_dtype = pb_utils.triton_string_to_numpy(out_cfg["data_type"])
        pb_utils.Logger.log_info(f"loaded {self.model_path} on {self.device} (decoupled={self.decoupled})")

    def _prompt(self, request):
        t = pb_utils.get_input_tensor_by_name(request, "text_input")
        return t.as_numpy().flatten()[0].decode("utf-8")

    def _param(self, request, name, default):
        t = pb_utils.get_input_tensor_by_name(request, name)
        return default if t is None else t.as_numpy().flatten()[0]

    def _generate_stream(self, request):
        sender = request.get_response_sender()
        prompt = self._prompt(request)
        max_new = int(self._param(request, "max_tokens", self.max_new_tokens_default))
        temperature = float(self._param(request, "temperature", 0.7))
        ids = self.tokenizer(prompt, return_tensors="pt").input_ids.to(self.device)
        streamer = TextIteratorStreamer(self.tokenizer, skip_prompt=True, skip_special_tokens=True)
        kwargs = dict(input_ids=ids, max_new_tokens=max_new, do_sample=temperature > 0,
                      temperature=max(temperature, 1e-5), streamer=streamer)
        th = threading.Thread(target=self.model.generate, kwargs=kwargs)
        th.start()
        for piece in streamer:
            out = pb_utils.Tensor("text_output", np.array([piece.encode("utf-8")], dtype=self.output_dtype))
            sender.send(pb_utils.InferenceResponse(output_tensors=[out]))
        th.join()
        sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)

    def _generate_batch(self, requests):
        prompts = [self._prompt(r) for r in requests]
        enc = self.tokenizer(prompts, return_tensors="pt", padding=True).to(self.device)
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
            out = self.model.generate(**enc, max_new_tokens=self.max_new_tokens_default, do_sample=False)
        texts = self.tokenizer.batch_decode(out[:, enc.input_ids.shape[1]:], skip_special_tokens=True)
        responses = []
        for text in texts:
            t = pb_utils.Tensor("text_output", np.array([text.encode("utf-8")], dtype=self.output_dtype))
            responses.append(pb_utils.InferenceResponse(output_tensors=[t]))
        return responses

    def _embeddings(self, request):
        # zero-copy path: the client sends token ids already on the GPU
        ids_t = pb_utils.get_input_tensor_by_name(request, "input_ids")
        ids = from_dlpack(ids_t.to_dlpack()).to(self.device)
        with torch.inference_mode():
            hidden = self.model(ids, output_hidden_states=True).hidden_states[-1].mean(1)
        return pb_utils.InferenceResponse(
            output_tensors=[pb_utils.Tensor.from_dlpack("embedding", to_dlpack(hidden.float().contiguous()))])

    def execute(self, requests):
        if self.decoupled:
            for r in requests:
                self._generate_stream(r)
            return None
        if pb_utils.get_input_tensor_by_name(requests[0], "input_ids") is not None:
            return [self._embeddings(r) for r in requests]
        return self._generate_batch(requests)

    def finalize(self):
        del self.model
        torch.cuda.empty_cache()
        pb_utils.Logger.log_info("model unloaded")
