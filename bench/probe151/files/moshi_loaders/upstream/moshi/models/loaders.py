# Copyright (c) Kyutai, all rights reserved.
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
"""Retrieves the pretrained models for Moshi and Mimi."""
from dataclasses import dataclass, field
import json
import logging
from pathlib import Path
import typing as tp

from huggingface_hub import hf_hub_download
from safetensors.torch import load_model, load_file
import sentencepiece
import torch

from .compression import MimiModel
from .lm import LMModel
from ..modules import SEANetEncoder, SEANetDecoder, transformer
from ..quantization import SplitResidualVectorQuantizer

logger = logging.getLogger(__name__)

SAMPLE_RATE = 24000
FRAME_RATE = 12.5

TEXT_TOKENIZER_NAME = 'tokenizer_spm_32k_3.model'
MOSHI_NAME = 'model.safetensors'
MIMI_NAME = 'tokenizer-e351c8d8-checkpoint125.safetensors'
DEFAULT_REPO = 'kyutai/moshiko-pytorch-bf16'


_seanet_kwargs = {
    "channels": 1,
    "dimension": 512,
    "causal": True,
    "n_filters": 64,
    "n_residual_layers": 1,
    "activation": "ELU",
    "compress": 2,
    "dilation_base": 2,
    "disable_norm_outer_blocks": 0,
    "kernel_size": 7,
    "residual_kernel_size": 3,
    "last_kernel_size": 3,
    # We train using weight_norm but then the weights are pre-processed for inference so
    # that we can use a normal convolution.
    "norm": "none",
    "pad_mode": "constant",
    "ratios": [8, 6, 5, 4],
    "true_skip": True,
}
_quantizer_kwargs = {
    "dimension": 256,
    "n_q": 32,
    "bins": 2048,
    "input_dimension": _seanet_kwargs["dimension"],
    "output_dimension": _seanet_kwargs["dimension"],
}
_transformer_kwargs = {
    "d_model": _seanet_kwargs["dimension"],
    "num_heads": 8,
    "num_layers": 8,
    "causal": True,
    "layer_scale": 0.01,
    "context": 250,
    "conv_layout": True,
    "max_period": 10000,
    "gating": "none",
    "norm": "layer_norm",
    "positional_embedding": "rope",
    "dim_feedforward": 2048,
    "input_dimension": _seanet_kwargs["dimension"],
    "output_dimensions": [_seanet_kwargs["dimension"]],
}

_lm_kwargs = {
    "dim": 4096,
    "text_card": 32000,
    "existing_text_padding_id": 3,
    "n_q": 16,
    "dep_q": 8,
    "card": _quantizer_kwargs["bins"],
    "num_heads": 32,
    "num_layers": 32,
    "hidden_scale": 4.125,
    "causal": True,
    "layer_scale": None,
    "context": 3000,
    "max_period": 10000,
    "gating": "silu",
    "norm": "rms_norm_f32",
    "positional_embedding": "rope",
    "depformer_dim": 1024,
    "depformer_dim_feedforward": int(4.125 * 1024),
    "depformer_num_heads": 16,
    "depformer_num_layers": 6,
    "depformer_causal": True,
    "depformer_layer_scale": None,
    "depformer_multi_linear": True,
    "depformer_context": 8,
    "depformer_max_period": 10000,
    "depformer_gating": "silu",
    "depformer_pos_emb": "none",
    "depformer_weights_per_step": True,
    "delays": [0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1],
}


def _is_safetensors(path: Path | str) -> bool:
    return Path(path).suffix in (".safetensors", ".sft", ".sfts")


def default_device() -> str:
    """Pick the accelerator if one is present. Mimi alone runs fine on CPU, Moshi does not."""
    if torch.cuda.is_available():
        return "cuda"
    if torch.backends.mps.is_available():
        return "mps"
    return "cpu"


def default_dtype(device: str | torch.device) -> torch.dtype:
    device = torch.device(device)
    if device.type == "cuda" and torch.cuda.is_bf16_supported():
        return torch.bfloat16
    if device.type == "cuda":
        # Pre-Ampere cards (T4, V100) have no bf16 tensor cores.
        return torch.float16
    return torch.float32


@dataclass
class CheckpointInfo:
    """Contains the paths to all the components of a model, along with the config."""
    moshi_weights: Path
    mimi_weights: Path
    tokenizer: Path
    lm_config: dict | None = None
    raw_config: dict | None = None
    model_type: str = "moshi"
    lora_weights: Path | None = None
    model_id: dict = field(default_factory=dict)

    @staticmethod
    def from_hf_repo(
        hf_repo: str,
        moshi_weights: Path | str | None = None,
        mimi_weights: Path | str | None = None,
        tokenizer: Path | str | None = None,
        config_path: Path | str | None = None,
    ) -> "CheckpointInfo":
        if config_path is None:
            try:
                config_path = hf_hub_download(hf_repo, "config.json")
            except Exception:
                config_path = None
        lm_config = None
        raw_config = None
        if config_path is not None:
            raw_config = json.loads(Path(config_path).read_text())
            lm_config = dict(raw_config)
        if moshi_weights is None:
            moshi_weights = hf_hub_download(hf_repo, MOSHI_NAME)
        if mimi_weights is None:
            mimi_weights = hf_hub_download(hf_repo, MIMI_NAME)
        if tokenizer is None:
            tokenizer = hf_hub_download(hf_repo, TEXT_TOKENIZER_NAME)
        return CheckpointInfo(
            Path(moshi_weights), Path(mimi_weights), Path(tokenizer),
            lm_config=lm_config, raw_config=raw_config)

    def get_mimi(self, device: torch.device | str = "cpu") -> MimiModel:
        num_codebooks = 8 if self.lm_config is None else self.lm_config.get("n_q", 16) // 2
        return get_mimi(self.mimi_weights, num_codebooks=num_codebooks, device=device)

    def get_moshi(self, device: torch.device | str = "cpu",
                  dtype: torch.dtype = torch.bfloat16) -> LMModel:
        return get_moshi_lm(self.moshi_weights, lm_kwargs=self.lm_config,
                            device=device, dtype=dtype)

    def get_text_tokenizer(self) -> sentencepiece.SentencePieceProcessor:
        return sentencepiece.SentencePieceProcessor(str(self.tokenizer))  # type: ignore


def get_mimi(filename: str | Path | None,
             device: torch.device | str = "cpu",
             num_codebooks: int = 8) -> MimiModel:
    """Return a pretrained Mimi model, or unintialized if `filename` is None."""
    encoder = SEANetEncoder(**_seanet_kwargs)
    decoder = SEANetDecoder(**_seanet_kwargs)
    encoder_transformer = transformer.ProjectedTransformer(
        device=device, **_transformer_kwargs
    )
    decoder_transformer = transformer.ProjectedTransformer(
        device=device, **_transformer_kwargs
    )
    quantizer = SplitResidualVectorQuantizer(
        **_quantizer_kwargs,
    )
    model = MimiModel(
        encoder,
        decoder,
        quantizer,
        channels=1,
        sample_rate=SAMPLE_RATE,
        frame_rate=FRAME_RATE,
        encoder_frame_rate=SAMPLE_RATE / encoder.hop_length,
        causal=True,
        resample_method="conv",
        encoder_transformer=encoder_transformer,
        decoder_transformer=decoder_transformer,
    ).to(device=device)
    model.eval()
    if filename is not None:
        if _is_safetensors(filename):
            load_model(model, filename, device=str(device))
        else:
            pkg = torch.load(filename, "cpu")
            model.load_state_dict(pkg["model"])
    model.set_num_codebooks(num_codebooks)
    return model


def get_moshi_lm(filename: str | Path | None,
                 lm_kwargs: tp.Optional[tp.Dict[str, tp.Any]] = None,
                 device: torch.device | str = "cpu",
                 dtype: torch.dtype = torch.bfloat16) -> LMModel:
    if lm_kwargs is None:
        lm_kwargs = _lm_kwargs
    lm_kwargs = dict(lm_kwargs)
    assert lm_kwargs is not None

    if "conditioners" in lm_kwargs:
        lm_kwargs.pop("conditioners")
    if "fuser" in lm_kwargs:
        lm_kwargs.pop("fuser")

    # Init the model on the meta device, then materialize straight on the target device.
    model = LMModel(
        device="meta",
        dtype=dtype,
        **lm_kwargs,
    )
    if filename is not None:
        if _is_safetensors(filename):
            state = load_file(filename, device=str(device))
            for key, value in state.items():
                if value.dtype.is_floating_point:
                    if key.startswith('condition_provider.') or key.startswith('fuser.'):
                        value = value.float()
                    else:
                        value = value.to(dtype)
                state[key] = value
            model.load_state_dict(state, assign=True)
        else:
            pkg = torch.load(filename, "cpu")
            model.load_state_dict(pkg["fsdp_best_state"]["model"], assign=True)
    model.eval()
    return model.to(device)


def log_gpu_memory(prefix: str = ""):
    """Small helper used by the server to print how much memory the models take."""
    if not torch.cuda.is_available():
        return
    free, total = torch.cuda.mem_get_info()
    used = (total - free) / 2 ** 30
    logger.info("%sGPU memory used: %.2f GiB / %.2f GiB", prefix, used, total / 2 ** 30)
