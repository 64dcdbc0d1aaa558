import json
import os
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchaudio
from transformers import AutoModel, Wav2Vec2FeatureExtractor

from .llama import ModelArgs, Transformer
from .tokenizer import Tokenizer
from .utils import sample_top_p, _download


class LLaMA_adapter(nn.Module):
    """MU-LLaMA: LLaMA-7B + frozen MERT-v1-330M music encoder + music understanding adapter."""

    def __init__(self, llama_ckpt_dir, llama_tokenizer, knn=False, knn_dir="./ckpts",
                 max_seq_len=512, max_batch_size=1, query_len=10, query_layer=32,
                 mert_path="m-a-p/MERT-v1-330M", w_bias=False, w_lora=False, lora_rank=16,
                 legacy_bridge=False, phase="finetune"):
        super().__init__()

        # 1. MERT encoder (frozen)
        self.mert_model = AutoModel.from_pretrained(mert_path, trust_remote_code=True)
        self.mert_processor = Wav2Vec2FeatureExtractor.from_pretrained(mert_path, trust_remote_code=True)
        self.mu_mert_agg = nn.Conv1d(in_channels=25, out_channels=1, kernel_size=1)
        self.mu_mert_proj = nn.Linear(1024, 4096)

        if legacy_bridge:
            bridge_norm_layer = nn.LayerNorm
            bridge_bias = True
        else:
            bridge_norm_layer = RMSNorm
            bridge_bias = False

        self.mu_mert_norm_1 = bridge_norm_layer(4096)
        self.mu_mert_f1_1 = nn.Linear(4096, 4096 * 4, bias=bridge_bias)
        self.mu_mert_f2_1 = nn.Linear(4096 * 4, 4096, bias=bridge_bias)
        self.mu_mert_f3_1 = nn.Linear(4096, 4096 * 4, bias=bridge_bias)

        self.mu_mert_norm_2 = bridge_norm_layer(4096)
        self.mu_mert_f1_2 = nn.Linear(4096, 4096 * 4, bias=bridge_bias)
        self.mu_mert_f2_2 = nn.Linear(4096 * 4, 4096, bias=bridge_bias)
        self.mu_mert_f3_2 = nn.Linear(4096, 4096 * 4, bias=bridge_bias)

        self.mu_mert_norm_3 = bridge_norm_layer(4096)
        self.mu_mert_f1_3 = nn.Linear(4096, 4096 * 4, bias=bridge_bias)
        self.mu_mert_f2_3 = nn.Linear(4096 * 4, 4096, bias=bridge_bias)
        self.mu_mert_f3_3 = nn.Linear(4096, 4096 * 4, bias=bridge_bias)

        # 2. LLaMA
        with open(os.path.join(llama_ckpt_dir, "params.json"), "r") as f:
            params = json.loads(f.read())
        bias_lora = phase == "finetune"
        model_args: ModelArgs = ModelArgs(
            max_seq_len=max_seq_len, max_batch_size=max_batch_size,
            w_bias=bias_lora, w_lora=bias_lora, lora_rank=lora_rank, **params,
        )
        self.tokenizer = Tokenizer(model_path=llama_tokenizer)
        model_args.vocab_size = self.tokenizer.n_words

        # build LLaMA in half precision directly on the GPU to keep host RAM low
        torch.set_default_tensor_type(torch.cuda.HalfTensor)
        self.llama = Transformer(model_args)
        torch.set_default_tensor_type(torch.FloatTensor)

        ckpts = sorted(Path(llama_ckpt_dir).glob("*.pth"))
        for ckpt in ckpts:
            ckpt = torch.load(ckpt, map_location="cpu")
            self.llama.load_state_dict(ckpt, strict=False)

        # 3. adapter prefix
        self.query_layer = query_layer
        self.query_len = query_len
        self.prefix_query = nn.Embedding(query_layer * query_len, model_args.dim)

        self.knn = knn
        if knn:
            import faiss
            self.index = faiss.read_index(_download("https://huggingface.co/csuhan/knn/resolve/main/knn.index", knn_dir))

        self.criterion = torch.nn.CrossEntropyLoss(ignore_index=0)
        self.phase = phase
        self.get_trainable_params(self.phase)

        for name, param in self.named_parameters():
            if param.requires_grad:
                print(f"Trainable param: {name}, {param.shape}, {param.dtype}")

    def get_trainable_params(self, phase="finetune"):
        for name, para in self.named_parameters():
            para.requires_grad = False

        if phase == "finetune":
            for name, para in self.named_parameters():
                if name.startswith("llama."):
                    if "norm" in name or "bias" in name or "lora" in name:
                        para.data = para.data.float()
                        para.requires_grad = True
        elif phase == "pretrain":
            train_param_name = ["gate", "mu_mert", "prefix_query"]
            for name, para in self.named_parameters():
                for train_name in train_param_name:
                    if train_name in name:
                        para.data = para.data.float()
                        para.requires_grad = True
        else:
            raise ValueError(f"Unknown model phase: {phase}")

    def encode_audio(self, x):
        xs = []
        for sub_x in x:
            all_inputs = [
                self.mert_processor(sub_x[ix * self.mert_processor.sampling_rate: min((ix + 60) * self.mert_processor.sampling_rate, len(sub_x))],
                                    sampling_rate=self.mert_processor.sampling_rate, return_tensors="pt").to(self.mert_model.device)
                for ix in range(0, len(sub_x) // (self.mert_processor.sampling_rate * 60) + 1, 60)
            ]
            aggoutputs = torch.zeros(1, 25, 1024).to(self.mert_model.device)
            for inputs in all_inputs:
                with torch.no_grad():
                    outputs = self.mert_model(**inputs, output_hidden_states=True)
                all_layer_hidden_states = torch.stack(outputs.hidden_states).squeeze()
                sub_x = all_layer_hidden_states.mean(-2).unsqueeze(0)
                aggoutputs += sub_x
            aggoutputs /= len(all_inputs)
            sub_x = self.mu_mert_agg(aggoutputs.to(self.mu_mert_agg.weight.device)).squeeze()
            del aggoutputs
            xs.append(sub_x)
        x = torch.stack(xs, dim=0)
        return x

    def forward_audio(self, inputs, cache_size=10, cache_t=20, cache_weight=0.5):
        outputs = []
        outputs_weights = []
        for input_type, (input, input_weight) in inputs.items():
            outputs.append(F.normalize(self.encode_audio(input), dim=-1))
            outputs_weights.append(input_weight)
        outputs_weights = [x / (sum(outputs_weights) + 1e-6) for x in outputs_weights]

        audio_feats = sum([output * output_weight for output, output_weight in zip(outputs, outputs_weights)])
        device = audio_feats.device

        if self.knn:
            audio_feats_ori = audio_feats
            sims, indices = self.index.search(audio_feats.cpu(), int(cache_size))
            B = sims.shape[0]
            prototypes = [self.index.reconstruct(x) for x in indices.reshape(-1, ).tolist()]
            prototypes = torch.vstack(prototypes).reshape(B, int(cache_size), -1)  # [N, top_k, 1024]
            sims = torch.tensor(sims, device=device)
            prototypes = torch.tensor(prototypes, device=device)

            sims = (sims * cache_t).softmax(dim=-1)
            audio_feats = sims @ prototypes
            audio_feats = audio_feats / audio_feats.norm(dim=-1, keepdim=True)
            audio_feats = (1 - cache_weight) * audio_feats_ori + cache_weight * audio_feats
            audio_feats = audio_feats / audio_feats.norm(dim=-1, keepdim=True)

        audio_feats = audio_feats.unsqueeze(1)  # B, 1, D
        audio_feats = self.mu_mert_proj(audio_feats)
        audio_feats_norm = self.mu_mert_norm_1(audio_feats)
        audio_feats = audio_feats + self.mu_mert_f2_1(F.silu(self.mu_mert_f1_1(audio_feats_norm)) * self.mu_mert_f3_1(audio_feats_norm))
        audio_feats_norm = self.mu_mert_norm_2(audio_feats)
        audio_feats = audio_feats + self.mu_mert_f2_2(F.silu(self.mu_mert_f1_2(audio_feats_norm)) * self.mu_mert_f3_2(audio_feats_norm))
        audio_feats_norm = self.mu_mert_norm_3(audio_feats)
        audio_feats = audio_feats + self.mu_mert_f2_3(F.silu(self.mu_mert_f1_3(audio_feats_norm)) * self.mu_mert_f3_3(audio_feats_norm))
        return audio_feats

    @torch.inference_mode()
    def forward_inference(self, audio_feats, tokens, start_pos: int):
        _bsz, seqlen = tokens.shape
        h = self.llama.tok_embeddings(tokens)
        freqs_cis = self.llama.freqs_cis.to(h.device)
        freqs_cis = freqs_cis[start_pos:start_pos + seqlen]
        mask = None
        mask = torch.full((1, 1, seqlen, seqlen), float("-inf"), device=h.device)
        mask = torch.triu(mask, diagonal=start_pos + 1).type_as(h)

        for layer in self.llama.layers[:-1 * self.query_layer]:
            h = layer(h, start_pos, freqs_cis, mask)

        prefix_query = self.prefix_query.weight.reshape(self.query_layer, 1, 4096).unsqueeze(1)
        prefix_index = 0
        audio_proj = audio_feats
        for layer in self.llama.layers[-1 * self.query_layer:]:
            h = layer(h, start_pos, freqs_cis, mask, audio_proj + prefix_query[prefix_index].repeat(_bsz, 1, 1))
            prefix_index = prefix_index + 1

        h = self.llama.norm(h)
        output = self.llama.output(h[:, -1, :])
        return output.float()

    def forward(self, tokens, labels, audios=None, imgs=None, videos=None):
        audio_feats = self.forward_audio({"Audio": [audios, 1]})
        _bsz, seqlen = tokens.shape

        h = self.llama.tok_embeddings(tokens)
        freqs_cis = self.llama.freqs_cis.to(h.device)
        freqs_cis = freqs_cis[:seqlen]
        mask = torch.full((1, 1, seqlen, seqlen), float("-inf"), device=h.device)
        mask = torch.triu(mask, diagonal=0 + 1).type_as(h)

        for layer in self.llama.layers[:-1 * self.query_layer]:
            h = layer(h, 0, freqs_cis, mask)

        prefix_query = self.prefix_query.weight.reshape(self.query_layer, 1, 4096).unsqueeze(1)
        prefix_index = 0
        audio_proj = audio_feats
        for layer in self.llama.layers[-1 * self.query_layer:]:
            h = layer(h, 0, freqs_cis, mask, audio_proj + prefix_query[prefix_index])
            prefix_index = prefix_index + 1

        h = self.llama.norm(h)
        output = self.llama.output(h)
        output = output[:, :-1, :]
        labels = labels[:, 1:]

        if labels.sum() == 0:
            c_loss = output.mean() * 0
        else:
            assert self.llama.vocab_size == 32000
            c_loss = self.criterion(output.reshape(-1, self.llama.vocab_size), labels.flatten())
        return c_loss, c_loss

    @torch.inference_mode()
    def generate(self, inputs, prompts, max_gen_len: int = 256, temperature: float = 0.1, top_p: float = 0.75,
                 cache_size=10, cache_t=20, cache_weight=0.5):
        bsz = len(prompts)
        params = self.llama.params
        assert bsz <= params.max_batch_size, (bsz, params.max_batch_size)

        with torch.cuda.amp.autocast():
            audio_query = self.forward_audio(inputs, cache_size, cache_t, cache_weight)

        if isinstance(prompts[0], str):
            prompts = [self.tokenizer.encode(x, bos=True, eos=False) for x in prompts]

        min_prompt_size = min([len(t) for t in prompts])
        max_prompt_size = max([len(t) for t in prompts])
        total_len = min(params.max_seq_len, max_gen_len + max_prompt_size)

        tokens = torch.full((bsz, total_len), self.tokenizer.pad_id).cuda().long()
        for k, t in enumerate(prompts):
            tokens[k, : len(t)] = torch.tensor(t).cuda().long()
        input_text_mask = tokens != self.tokenizer.pad_id
        start_pos = min_prompt_size
        prev_pos = 0
        for cur_pos in range(start_pos, total_len):
            with torch.cuda.amp.autocast(dtype=torch.float16):
                logits = self.forward_inference(audio_query, tokens[:, prev_pos:cur_pos], prev_pos)
            if temperature > 0:
                probs = torch.softmax(logits / temperature, dim=-1)
                next_token = sample_top_p(probs, top_p)
            else:
                next_token = torch.argmax(logits, dim=-1)
            next_token = next_token.reshape(-1)

            next_token = torch.where(input_text_mask[:, cur_pos], tokens[:, cur_pos], next_token)
            tokens[:, cur_pos] = next_token
            # trick: early stop if bsz==1
            if bsz == 1 and next_token[0] == self.tokenizer.eos_id:
                break
            prev_pos = cur_pos

        decoded = []
        for i, t in enumerate(tokens.tolist()):
            t = t[: len(prompts[i]) + max_gen_len]
            try:
                t = t[: t.index(self.tokenizer.eos_id)]
            except ValueError:
                pass
            decoded.append(self.tokenizer.decode(t))
        return decoded


class RMSNorm(torch.nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        output = self._norm(x.float()).type_as(x)
        return output * self.weight


_MODELS = {
    "7B": "https://huggingface.co/mu-llama/MU-LLaMA/resolve/main/checkpoint.pth",
}


def available_models():
    return list(_MODELS.keys())


def load(model_path, llama_dir, mert_path="m-a-p/MERT-v1-330M", device="cuda" if torch.cuda.is_available() else "cpu",
         knn=False, knn_dir="./ckpts", llama_type="7B", max_seq_len=512, max_batch_size=1):
    llama_ckpt_dir = os.path.join(llama_dir, llama_type)
    llama_tokenzier_path = llama_dir

    print(f"Loading LLaMA-Adapter from {model_path}")
    ckpt = torch.load(model_path, map_location="cpu")
    model_cfg = ckpt.get("config", {})

    model = LLaMA_adapter(
        llama_ckpt_dir, llama_tokenzier_path, knn=knn, knn_dir=knn_dir,
        max_seq_len=max_seq_len, max_batch_size=max_batch_size,
        query_len=model_cfg.get("query_len", 10), query_layer=model_cfg.get("query_layer", 32),
        mert_path=mert_path, w_bias=model_cfg.get("w_bias", False), w_lora=model_cfg.get("w_lora", False),
        lora_rank=model_cfg.get("lora_rank", 16), legacy_bridge=model_cfg.get("legacy_bridge", False),
        phase="finetune",
    )

    load_result = model.load_state_dict(ckpt["model"], strict=False)
    assert len(load_result.unexpected_keys) == 0, f"Unexpected keys: {load_result.unexpected_keys}"
    return model.to(device)
