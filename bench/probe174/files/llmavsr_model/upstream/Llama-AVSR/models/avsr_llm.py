"""Audio-visual speech recognition with a frozen LLM decoder (LLaMA / Llama-3.x).

Pre-trained AV-HuBERT (video) and Whisper (audio) encoders are frozen; their features are
compressed with a 1-D conv projector and prepended as soft prompts to the tokenised
instruction. Only the projectors and the LoRA adapters of the LLM are trained.
"""

import logging
from dataclasses import dataclass, field
from typing import List, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import (
    AutoModelForCausalLM,
    AutoTokenizer,
    BitsAndBytesConfig,
    WhisperModel,
)

logger = logging.getLogger(__name__)

IGNORE_INDEX = -100


@dataclass
class AVSRLLMConfig:
    llm_id: str = "meta-llama/Meta-Llama-3.1-8B"
    whisper_id: str = "openai/whisper-medium"
    avhubert_ckpt: Optional[str] = None
    modality: str = "audiovisual"          # audio | video | audiovisual
    downsample_audio: int = 3
    downsample_video: int = 2
    lora_rank: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_targets: List[str] = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj"])
    use_4bit: bool = False
    attn_implementation: str = "flash_attention_2"
    prompt: str = "Transcribe the speech in the video and audio: "


class ConvProjector(nn.Module):
    """Stride-k 1-D conv that reduces the frame rate and maps to the LLM hidden size."""

    def __init__(self, in_dim, out_dim, stride):
        super().__init__()
        self.conv = nn.Conv1d(in_dim, in_dim, kernel_size=stride, stride=stride)
        self.proj = nn.Sequential(nn.Linear(in_dim, out_dim), nn.GELU(), nn.Linear(out_dim, out_dim))

    def forward(self, x, lengths):
        x = self.conv(x.transpose(1, 2)).transpose(1, 2)
        lengths = torch.div(lengths, self.conv.stride[0], rounding_mode="floor")
        return self.proj(x), lengths


def load_avhubert_encoder(ckpt_path):
    """Load the AV-HuBERT encoder from a fairseq checkpoint (user_dir must be importable)."""
    from fairseq import checkpoint_utils

    models, _, _ = checkpoint_utils.load_model_ensemble_and_task([ckpt_path])
    encoder = models[0]
    if hasattr(encoder, "decoder"):
        encoder = encoder.encoder.w2v_model
    encoder.remove_pretraining_modules()
    return encoder


class AVSRLLM(nn.Module):
    def __init__(self, cfg: AVSRLLMConfig):
        super().__init__()
        self.cfg = cfg
        self.tokenizer = AutoTokenizer.from_pretrained(cfg.llm_id, use_fast=True)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

        quant_config = None
        if cfg.use_4bit:
            quant_config = BitsAndBytesConfig(
                load_in_4bit=True,
                bnb_4bit_quant_type="nf4",
                bnb_4bit_use_double_quant=True,
                bnb_4bit_compute_dtype=torch.bfloat16,
            )

        self.llm = AutoModelForCausalLM.from_pretrained(
            cfg.llm_id,
            torch_dtype=torch.bfloat16,
            quantization_config=quant_config,
            attn_implementation=cfg.attn_implementation,
            device_map={"": torch.cuda.current_device()},
        )
        self.llm.config.use_cache = False
        if cfg.use_4bit:
            self.llm = prepare_model_for_kbit_training(self.llm, use_gradient_checkpointing=True)
        lora_cfg = LoraConfig(
            r=cfg.lora_rank,
            lora_alpha=cfg.lora_alpha,
            lora_dropout=cfg.lora_dropout,
            target_modules=cfg.lora_targets,
            bias="none",
            task_type="CAUSAL_LM",
        )
        self.llm = get_peft_model(self.llm, lora_cfg)
        self.llm.print_trainable_parameters()
        hidden = self.llm.config.hidden_size

        self.audio_encoder = None
        self.video_encoder = None
        if cfg.modality in ("audio", "audiovisual"):
            self.audio_encoder = WhisperModel.from_pretrained(cfg.whisper_id).encoder
            self.audio_encoder.requires_grad_(False)
            self.audio_proj = ConvProjector(self.audio_encoder.config.d_model, hidden, cfg.downsample_audio)
        if cfg.modality in ("video", "audiovisual"):
            self.video_encoder = load_avhubert_encoder(cfg.avhubert_ckpt)
            self.video_encoder.requires_grad_(False)
            self.video_proj = ConvProjector(self.video_encoder.encoder_embed_dim, hidden, cfg.downsample_video)

    def trainable_parameters(self):
        return [p for p in self.parameters() if p.requires_grad]

    @torch.no_grad()
    def encode_audio(self, mel):
        return self.audio_encoder(mel).last_hidden_state

    @torch.no_grad()
    def encode_video(self, video, padding_mask):
        feats, _ = self.video_encoder.extract_finetune(
            source={"video": video, "audio": None}, padding_mask=padding_mask
        )
        return feats

    def build_inputs(self, batch):
        """Concatenate [modality tokens | prompt | target] embeddings and build labels."""
        embeds, lengths = [], None
        if self.audio_encoder is not None:
            a = self.encode_audio(batch["mel"])
            a, a_len = self.audio_proj(a, batch["mel_lengths"])
            embeds.append(a)
            lengths = a_len
        if self.video_encoder is not None:
            v = self.encode_video(batch["video"], batch["video_padding_mask"])
            v, v_len = self.video_proj(v, batch["video_lengths"])
            embeds.append(v)
            lengths = v_len if lengths is None else lengths + v_len
        mm = torch.cat(embeds, dim=1)  # fp32 projector output; cast happens under autocast

        text_embeds = self.llm.get_input_embeddings()(batch["input_ids"])
        inputs_embeds = torch.cat([mm, text_embeds], dim=1)
        mm_mask = torch.ones(mm.shape[:2], dtype=batch["attention_mask"].dtype, device=mm.device)
        attention_mask = torch.cat([mm_mask, batch["attention_mask"]], dim=1)
        mm_labels = torch.full(mm.shape[:2], IGNORE_INDEX, dtype=torch.long, device=mm.device)
        labels = torch.cat([mm_labels, batch["labels"]], dim=1)
        return inputs_embeds, attention_mask, labels

    def forward(self, batch):
        inputs_embeds, attention_mask, labels = self.build_inputs(batch)
        out = self.llm(inputs_embeds=inputs_embeds, attention_mask=attention_mask, labels=labels)
        return out.loss

    @torch.no_grad()
    def generate(self, batch, max_new_tokens=64, num_beams=4):
        inputs_embeds, attention_mask, _ = self.build_inputs(batch)
        out = self.llm.generate(
            inputs_embeds=inputs_embeds,
            attention_mask=attention_mask,
            max_new_tokens=max_new_tokens,
            num_beams=num_beams,
            do_sample=False,
            pad_token_id=self.tokenizer.pad_token_id,
        )
        return self.tokenizer.batch_decode(out, skip_special_tokens=True)
