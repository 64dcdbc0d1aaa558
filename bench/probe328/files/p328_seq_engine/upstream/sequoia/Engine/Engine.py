import gc
import time

import torch

from .Llama_modules import LlamaForCausalLM_FI, LlamaForCausalLM_Offload


class KV_Cache:
    """Static KV cache shared by all layers: [L, B, H_kv, max_length, D]."""

    def __init__(self, config, max_length, device, dtype, batch_size=1) -> None:
        self.config = config
        self.max_length = max_length
        self.device = device
        self.dtype = dtype
        head_dim = config.hidden_size // config.num_attention_heads
        num_kv_heads = getattr(config, "num_key_value_heads", config.num_attention_heads)
        self.k_cache = torch.zeros(
            config.num_hidden_layers, batch_size, num_kv_heads, max_length, head_dim, device=device, dtype=dtype
        )
        self.v_cache = torch.zeros(
            config.num_hidden_layers, batch_size, num_kv_heads, max_length, head_dim, device=device, dtype=dtype
        )
        self.num_layers = config.num_hidden_layers
        self.kv_offset = 0

    def initialize_kv(self, k_cache: torch.Tensor, v_cache: torch.Tensor, kv_len: int):
        self.k_cache[..., :kv_len, :] = k_cache[..., :kv_len, :]
        self.v_cache[..., :kv_len, :] = v_cache[..., :kv_len, :]
        self.kv_offset = kv_len

    def gather_kv(self, indices: list[int]):
        self.k_cache[..., : len(indices), :] = self.k_cache[..., indices, :]
        self.v_cache[..., : len(indices), :] = self.v_cache[..., indices, :]
        self.k_cache[..., len(indices) :, :] = 0.0
        self.v_cache[..., len(indices) :, :] = 0.0
        self.kv_offset = len(indices)

    def gather_kv_incremental(self, indices: torch.LongTensor, offset: int):
        self.k_cache[..., offset : offset + len(indices), :] = self.k_cache[..., indices, :]
        self.v_cache[..., offset : offset + len(indices), :] = self.v_cache[..., indices, :]
        self.k_cache[..., offset + len(indices) :, :] = 0.0
        self.v_cache[..., offset + len(indices) :, :] = 0.0
        self.kv_offset = offset + len(indices)

    def update_kv_cache(self, new_k_cache, new_v_cache, layer_idx: int, storage_ids: torch.LongTensor, debug=False):
        input_length = len(storage_ids)
        if debug:
            assert input_length == new_k_cache.shape[-2]
            assert input_length == new_v_cache.shape[-2]
        self.k_cache[layer_idx].index_copy_(dim=-2, index=storage_ids, source=new_k_cache)
        self.v_cache[layer_idx].index_copy_(dim=-2, index=storage_ids, source=new_v_cache)
        return self.k_cache[layer_idx], self.v_cache[layer_idx]

    def clear(self):
        self.k_cache.zero_()
        self.v_cache.zero_()
        self.kv_offset = 0

    def get_usable_length(self, input_length: int):
        return self.max_length - self.kv_offset - input_length


class InferenceEngine:
    def __init__(self, max_length: int, model_name_or_path: str, dtype=torch.float16, device="cuda:0") -> None:
        self.device = device
        self.dtype = dtype
        self.max_length = max_length
        self.model = LlamaForCausalLM_FI.from_pretrained(model_name_or_path, torch_dtype=dtype, device_map=device)
        self.model.eval()
        self.model_config = self.model.config
        self.kv_cache = KV_Cache(self.model_config, max_length=max_length, device=device, dtype=dtype)

    @torch.inference_mode()
    def model_run(self, input_ids, storage_ids, position_ids, attn_mask, debug=False):
        if debug:
            _, input_length = input_ids.shape
            assert storage_ids.shape[0] == input_length
            assert attn_mask.shape[0] == input_length
            assert attn_mask.shape[1] == self.max_length
            assert position_ids.shape[1] == input_length
            assert attn_mask.device == self.device
            assert input_ids.device == self.device
            assert storage_ids.device == self.device
            assert position_ids.device == self.device

        logits = self.model(
            input_ids=input_ids,
            max_length=self.max_length,
            storage_ids=storage_ids,
            attention_mask=attn_mask,
            position_ids=position_ids,
            kv_cache=self.kv_cache,
            debug=debug,
        )
        return logits

    def clear_kv(self):
        self.kv_cache.clear()

    def initialize_kv(self, k_cache, v_cache, kv_len):
        self.kv_cache.initialize_kv(k_cache, v_cache, kv_len)

    def gather_kv(self, indices: list[int]):
        self.kv_cache.gather_kv(indices)

    def get_kv_cache(self, in_place=False):
        if not in_place:
            return self.kv_cache.k_cache.clone(), self.kv_cache.v_cache.clone()
        else:
            return self.kv_cache.k_cache, self.kv_cache.v_cache


def capture_graph(engine: InferenceEngine, decoding_seqlen: int = 1, mempool=None, n_warmups: int = 3):
    device = engine.device
    dtype = engine.dtype
    static_input_ids = torch.full((1, decoding_seqlen), 0, dtype=torch.long, device=device)
    static_position_ids = torch.full((1, decoding_seqlen), 0, dtype=torch.long, device=device)
    static_storage_ids = torch.arange(decoding_seqlen, dtype=torch.long, device=device)
    static_attn_mask = torch.full((decoding_seqlen, engine.max_length), 0, dtype=dtype, device=device)
    static_attn_mask = static_attn_mask[None, None, :, :]
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(n_warmups):
            static_logits = engine.model_run(
                input_ids=static_input_ids,
                storage_ids=static_storage_ids,
                position_ids=static_position_ids,
                attn_mask=static_attn_mask,
            )
        s.synchronize()
    torch.cuda.current_stream().wait_stream(s)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, pool=mempool):
        static_logits = engine.model_run(
            input_ids=static_input_ids,
            storage_ids=static_storage_ids,
            position_ids=static_position_ids,
            attn_mask=static_attn_mask,
        )

    def run(input_ids, storage_ids, position_ids, attn_mask):
        static_input_ids.copy_(input_ids)
        static_storage_ids.copy_(storage_ids)
        static_position_ids.copy_(position_ids)
        static_attn_mask.copy_(attn_mask)
        graph.replay()
        return static_logits.clone()

    return run


class GraphInferenceEngine:
    def __init__(self, max_length: int, model_name_or_path: str, dtype=torch.float16, device: str = "cuda:0") -> None:
        self.device = device
        self.dtype = dtype
        self.max_length = max_length
        self.engine = InferenceEngine(
            max_length=max_length, model_name_or_path=model_name_or_path, dtype=dtype, device=device
        )
        self.callables = {}
        self.mempool = None

    @torch.inference_mode()
    def initialize_cuda_graph(self, decoding_seqlens: list[int], n_warmups=3):
        gc.collect()
        self.mempool = torch.cuda.graphs.graph_pool_handle()
        for decoding_seqlen in decoding_seqlens:
            if decoding_seqlen not in self.callables and decoding_seqlen != 0:
                self.callables[decoding_seqlen] = capture_graph(
                    engine=self.engine, decoding_seqlen=decoding_seqlen, mempool=self.mempool, n_warmups=n_warmups
                )
        self.engine.clear_kv()

    @torch.inference_mode()
    def graph_inference(self, input_ids, storage_ids, position_ids, attn_mask, debug=False):
        if debug:
            return self.engine.model_run(input_ids, storage_ids, position_ids, attn_mask, debug=True)
        dec_length = input_ids.shape[1]
        if dec_length in self.callables.keys():
            logits = self.callables[dec_length](input_ids, storage_ids, position_ids, attn_mask)
        else:
            logits = self.engine.model_run(input_ids, storage_ids, position_ids, attn_mask)
        return logits

    def clear_kv(self):
        self.engine.clear_kv()

    def initialize_kv(self, k_cache, v_cache, kv_len):
        self.engine.initialize_kv(k_cache, v_cache, kv_len)

    def get_kv_cache(self, in_place=False):
        return self.engine.get_kv_cache(in_place=in_place)

    def gather_kv(self, indices: list[int]):
        self.engine.gather_kv(indices)

    @torch.inference_mode()
    def inference(self, input_ids, storage_ids, position_ids, attn_mask):
        return self.engine.model_run(input_ids, storage_ids, position_ids, attn_mask)


class OffloadEngine:
    """Target model with layer weights resident in pinned host memory, streamed in per layer.

    Used for the 70B-on-one-L40 offloading experiments: while layer i runs on the GPU,
    layer i+1 is copied host->device on a side stream.
    """

    def __init__(self, max_length: int, model_name_or_path: str, dtype=torch.float16, device="cuda:0", stay_layers=0):
        self.device = device
        self.dtype = dtype
        self.max_length = max_length
        self.model = LlamaForCausalLM_Offload.from_pretrained(model_name_or_path, torch_dtype=dtype)
        self.model.eval()
        self.model_config = self.model.config
        self.kv_cache = KV_Cache(self.model_config, max_length=max_length, device=device, dtype=dtype)
        self.load_stream = torch.cuda.Stream()

        layers = self.model.model.layers
        for i, layer in enumerate(layers):
            for name, p in layer.named_parameters():
                if i < stay_layers:
                    p.data = p.data.to(device)
                else:
                    p.data = p.data.pin_memory()
        self.model.model.embed_tokens.to(device)
        self.model.model.norm.to(device)
        self.model.lm_head.to(device)
        self.model.set_offload(device=device, stay_layers=stay_layers, load_stream=self.load_stream)

    @torch.inference_mode()
    def model_run(self, input_ids, storage_ids, position_ids, attn_mask, debug=False):
        t0 = time.perf_counter()
        logits = self.model(
            input_ids=input_ids,
            max_length=self.max_length,
            storage_ids=storage_ids,
            attention_mask=attn_mask,
            position_ids=position_ids,
            kv_cache=self.kv_cache,
        )
        if debug:
            print(f"[offload] forward {input_ids.shape[1]} tokens: {time.perf_counter() - t0:.3f}s")
        return logits

    def clear_kv(self):
        self.kv_cache.clear()

    def gather_kv(self, indices: list[int]):
        self.kv_cache.gather_kv(indices)

    def get_kv_cache(self, in_place=False):
        if not in_place:
            return self.kv_cache.k_cache.clone(), self.kv_cache.v_cache.clone()
        return self.kv_cache.k_cache, self.kv_cache.v_cache
