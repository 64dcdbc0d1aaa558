# Copyright (c) Kyutai, all rights reserved.
# This source code is licensed under the license found in the
# LICENSE file in the root directory of this source tree.
"""Retrieves the pretrained models for Moshi and Mimi."""
from dataclasses import dataclass, field
import json
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


def _default_device() -> str:
    """Pick the accelerator when present, so that `get_mimi()` without args does the right thing."""
    return "cuda" if torch.cuda.is_available() else "cpu"


def _is_safetensors(path: Path | str) -> bool:
    return Path(path).suffix in (".safetensors", ".sft", ".sfts")


@dataclass
class CheckpointInfo:
    """
    Contains the paths to all the checkpoints needed to instantiate a model,
    along with the raw config so that custom architectures can be loaded.

    Args:
        moshi_weights: path to the checkpoint for the Moshi LM.
        mimi_weights: path to the checkpoint for the Mimi audio tokenizer.
        tokenizer: path to the text tokenizer.
        lm_config: config for instantiating the LM model.
            Can be None if the original Moshi 7B config should be used.
        raw_config: raw config, including original keys not intended for the LM.
        model_type: indicate the intended use, should be `moshi` or `hibiki`.
        lora_weights: path to an optional checkpoint with lora weights.
        lm_gen_config: optional default arguments for the LMGen.
    """
    moshi_weights: Path
    mimi_weights: Path
    tokenizer: Path
    lm_config: dict | None = None
    raw_config: dict | None = None
    model_type: str = 'moshi'
    lora_weights: Path | None = None
    lm_gen_config: dict = field(default_factory=dict)

    @staticmethod
    def from_hf_repo(
        hf_repo: str,
        moshi_weights: Path | str | None = None,
        mimi_weights: Path | str | None = None,
        tokenizer: Path | str | None = None,
        config_path: Path | str | None = None,
        lora_weights: Path | str | None = None,
    ) -> 'CheckpointInfo':
        """Downloads the checkpoints from the given repo, along with its config.

        Extra overrides are possible for each of Moshi, Mimi, or the text tokenizer,
        which should be either None (no override), or a path to a local file.
        """
        if config_path is None:
            try:
                config_path = hf_hub_download(hf_repo, 'config.json')
            except Exception:
                # if the repo doesn't have a config.json, fall back to the Moshi 7B config.
                config_path = None
        if config_path is None:
            lm_config = None
            raw_config = None
            model_type = 'moshi'
            lm_gen_config = {}
            mimi_name = MIMI_NAME
            moshi_name = MOSHI_NAME
            tokenizer_name = TEXT_TOKENIZER_NAME
        else:
            raw_config = json.loads(Path(config_path).read_text())
            lm_config = dict(raw_config)
            moshi_name = lm_config.pop('moshi_name', MOSHI_NAME)
            model_type = lm_config.pop('model_type', 'moshi')
            lm_gen_config = lm_config.pop('lm_gen_config', {})
            mimi_name = lm_config.pop('mimi_name', MIMI_NAME)
            tokenizer_name = lm_config.pop('tokenizer_name', TEXT_TOKENIZER_NAME)

        if moshi_weights is None:
            moshi_weights = hf_hub_download(hf_repo, moshi_name)
        if mimi_weights is None:
            mimi_weights = hf_hub_download(hf_repo, mimi_name)
        if tokenizer is None:
            tokenizer = hf_hub_download(hf_repo, tokenizer_name)
        if lora_weights is None and lm_config is not None and 'lora_name' in lm_config:
            lora_weights = hf_hub_download(hf_repo, lm_config.pop('lora_name'))

        return CheckpointInfo(
            Path(moshi_weights), Path(mimi_weights), Path(tokenizer),
            lm_config, raw_config, model_type, None if lora_weights is None else Path(lora_weights),
            lm_gen_config=lm_gen_config)

    def get_mimi(self, device: torch.device | str | None = None) -> MimiModel:
        if device is None:
            device = _default_device()
        if self.lm_config is None:
            num_codebooks = 8
        else:
            num_codebooks = self.lm_config['dep_q']
        return get_mimi(self.mimi_weights, num_codebooks=num_codebooks, device=device)

    def get_moshi(
        self,
        device: torch.device | str | None = None,
        dtype: torch.dtype = torch.bfloat16,
        fuse_lora: bool = True,
    ) -> LMModel:
        if device is None:
            device = _default_device()
        model = get_moshi_lm(
            self.moshi_weights, lm_kwargs=self.lm_config, device=device, dtype=dtype,
            lora_weights=self.lora_weights, fuse_lora=fuse_lora)
        if self.model_type == 'hibiki':
            # Sometime the model samples the EOS (2) too early, which we want to ignore.
            # We keep generating if the input file is not finished, and this is a way
            # to implicitely replace early EOS with PAD.
            model.text_emb.weight.data[2] = model.text_emb.weight.data[3]
        return model

    def get_text_tokenizer(self) -> sentencepiece.SentencePieceProcessor:
        return sentencepiece.SentencePieceProcessor(str(self.tokenizer))  # type: ignore


def get_mimi(filename: str | Path,
             device: torch.device | str = "cpu",
             num_codebooks: int = 8) -> MimiModel:
    """Return a pretrained Mimi model."""
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
    if _is_safetensors(filename):
        load_model(model, filename)
    else:
        pkg = torch.load(filename, "cpu")
        model.load_state_dict(pkg["model"])
    model.set_num_codebooks(num_codebooks)
    return model


def get_moshi_lm(filename: str | Path | None,
                 lm_kwargs: tp.Optional[tp.Dict[str, tp.Any]] = None,
                 device: torch.device | str = "cpu",
                 dtype: torch.dtype = torch.bfloat16,
                 lora_weights: str | Path | None = None,
                 fuse_lora: bool = False,
                 lm_kwargs_overrides={}) -> LMModel:
    if lm_kwargs is None:
        lm_kwargs = _lm_kwargs
    lm_kwargs = dict(lm_kwargs)
    assert lm_kwargs is not None

    if "conditioners" in lm_kwargs:
        lm_kwargs["condition_provider"] = get_conditioner_provider(
            lm_kwargs["dim"], device, lm_kwargs
        )
        del lm_kwargs["conditioners"]
    lm_kwargs.update(lm_kwargs_overrides)

    init_device = device
    if filename is not None:
        # Instantiating on meta then assigning the weights avoids a full random init on the GPU.
        init_device = torch.device('meta')

    model = LMModel(
        device=init_device,
        dtype=dtype,
        **lm_kwargs)

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

    if lora_weights is not None:
        from ..modules.lora import replace_all_linear_with_lora, replace_lora_with_linear
        replace_all_linear_with_lora(model, lm_kwargs.get("lora_rank", 128),
                                     lm_kwargs.get("lora_scaling", 2.0), device=device)
        model.load_state_dict(load_file(lora_weights, device=str(device)), strict=False)
        if fuse_lora:
            model = replace_lora_with_linear(model)
    model.eval()
    return model


def get_conditioner_provider(output_dim: int, device: torch.device | str, cfg: dict):
    from ..conditioners import ConditionProvider, LUTConditioner
    conditioners = {}
    for name, cond_cfg in cfg["conditioners"].items():
        if cond_cfg["type"] != "lut":
            raise ValueError(f"unsupported conditioner type {cond_cfg['type']}")
        conditioners[name] = LUTConditioner(output_dim=output_dim, device=device, **cond_cfg["lut"])
    return ConditionProvider(conditioners, device=device)
