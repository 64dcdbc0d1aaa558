# Copyright (c) Meta Platforms, Inc. and affiliates
# All rights reserved.
#
# This source code is licensed under the license found in the
# MIT_LICENSE file in the root directory of this source tree.

import logging
from dataclasses import dataclass
from enum import Enum, auto
from pathlib import Path
from typing import Any, Callable, List, Optional, Tuple, Union, cast

import torch
import torch.nn as nn
from fairseq2.assets import asset_store
from fairseq2.assets.card import AssetCard
from fairseq2.data import Collater, SequenceData, StringLike
from fairseq2.data.audio import AudioDecoder, WaveformToFbankConverter
from fairseq2.data.text import TextTokenizer
from fairseq2.memory import MemoryBlock
from fairseq2.nn.padding import PaddingMask, get_seqs_and_padding_mask
from fairseq2.typing import DataType, Device
from torch import Tensor

from seamless_communication.inference.generator import (
    SequenceGeneratorOptions,
    UnitYGenerator,
)
from seamless_communication.models.unity import (
    UnitTokenizer,
    UnitYModel,
    load_unity_model,
    load_unity_text_tokenizer,
    load_unity_unit_tokenizer,
    unity_archs,
)
from seamless_communication.models.vocoder import load_vocoder_model
from seamless_communication.toxicity import (
    ETOXBadWordChecker,
    load_etox_bad_word_checker,
)

logging.basicConfig(
    level=logging.INFO,
    format="%(asctime)s %(levelname)s -- %(name)s: %(message)s",
)

logger = logging.getLogger(__name__)


class Task(Enum):
    S2ST = auto()
    S2TT = auto()
    T2ST = auto()
    T2TT = auto()
    ASR = auto()


class Modality(Enum):
    SPEECH = "speech"
    TEXT = "text"


@dataclass
class BatchedSpeechOutput:
    units: List[List[int]]
    """The batched list of generated units."""

    audio_wavs: List[Tensor]
    """The batched list of audio waveforms."""

    sample_rate: int = 16000
    """Sample rate of the audio waveforms."""


class Translator(nn.Module):
    def __init__(
        self,
        model_name_or_card: Union[str, AssetCard],
        vocoder_name_or_card: Union[str, AssetCard, None],
        device: Device,
        text_tokenizer: Optional[TextTokenizer] = None,
        apply_mintox: bool = False,
        dtype: DataType = torch.float16,
        input_modality: Optional[Modality] = None,
        output_modality: Optional[Modality] = None,
    ):
        super().__init__()

        if isinstance(model_name_or_card, AssetCard):
            model_card: AssetCard = model_name_or_card
        else:
            model_card = asset_store.retrieve_card(model_name_or_card)

        # Half precision on the CPU is painfully slow and partially unsupported;
        # fall back to fp32 there. Accelerators keep the requested dtype.
        if device.type == "cpu" and dtype == torch.float16:
            logger.warning("float16 is not supported on CPU, using float32 instead.")
            dtype = torch.float32

        self.input_modality = input_modality
        self.output_modality = output_modality
        self.model: UnitYModel = self.load_model_for_inference(
            load_unity_model, model_card, device, dtype
        )
        if input_modality == Modality.TEXT and self.model.speech_encoder is not None:
            # Drop the speech encoder to save memory in text-only deployments.
            self.model.speech_encoder = None
            self.model.speech_encoder_frontend = None

        if text_tokenizer is None:
            self.text_tokenizer: TextTokenizer = load_unity_text_tokenizer(model_card)
        else:
            self.text_tokenizer = text_tokenizer

        self.unit_tokenizer: Optional[UnitTokenizer] = None
        if self.model.t2u_model is not None:
            self.unit_tokenizer = load_unity_unit_tokenizer(model_card)

        self.bad_word_checker: Optional[ETOXBadWordChecker] = None
        if apply_mintox:
            self.bad_word_checker = load_etox_bad_word_checker("mintox")

        self.apply_mintox = apply_mintox

        self.device = device
        self.decode_audio = AudioDecoder(dtype=torch.float32, device=device)
        self.convert_to_fbank = WaveformToFbankConverter(
            num_mel_bins=80,
            waveform_scale=2**15,
            channel_last=True,
            standardize=True,
            device=device,
            dtype=dtype,
        )
        self.collate = Collater(
            pad_value=self.text_tokenizer.vocab_info.pad_idx or 0, pad_to_multiple=2
        )
        self.vocoder = None
        if vocoder_name_or_card is not None and (
            output_modality is None or output_modality == Modality.SPEECH
        ):
            self.vocoder = self.load_model_for_inference(
                load_vocoder_model, vocoder_name_or_card, device, torch.float32
            )

    @staticmethod
    def load_model_for_inference(
        load_model_fn: Callable[..., nn.Module],
        model_name_or_card: Union[str, AssetCard],
        device: Device,
        dtype: DataType,
    ) -> nn.Module:
        model = load_model_fn(model_name_or_card, device=device, dtype=dtype)
        model.eval()
        return model

    @classmethod
    def get_prediction(
        cls,
        model: UnitYModel,
        text_tokenizer: TextTokenizer,
        unit_tokenizer: Optional[UnitTokenizer],
        seqs: Tensor,
        padding_mask: Optional[PaddingMask],
        input_modality: Modality,
        output_modality: Modality,
        tgt_lang: str,
        text_generation_opts: SequenceGeneratorOptions,
        unit_generation_opts: Optional[SequenceGeneratorOptions],
        unit_generation_ngram_filtering: bool = False,
        duration_factor: float = 1.0,
        prosody_encoder_input: Optional[SequenceData] = None,
    ) -> Tuple[List[StringLike], Optional[Tensor]]:
        # We disregard unit generations opts for the NAR T2U decoder.
        if output_modality != Modality.SPEECH or isinstance(
            model.t2u_model, unity_archs.UnitYNART2UModel
        ):
            unit_generation_opts = None

        generator = UnitYGenerator(
            model,
            text_tokenizer,
            tgt_lang,
            unit_tokenizer if output_modality == Modality.SPEECH else None,
            text_opts=text_generation_opts,
            unit_opts=unit_generation_opts,
        )

        return generator(
            seqs,
            padding_mask,
            input_modality.value,
            output_modality.value,
            ngram_filtering=unit_generation_ngram_filtering,
            duration_factor=duration_factor,
            prosody_encoder_input=prosody_encoder_input,
        )

    @staticmethod
    def get_modalities_from_task_str(task_str: str) -> Tuple[Modality, Modality]:
        try:
            task = Task[task_str.upper()]
        except KeyError:
            raise ValueError(f"Unsupported task: {task_str}")

        if task == Task.S2ST:
            return Modality.SPEECH, Modality.SPEECH
        # ASR is treated as S2TT with src_lang == tgt_lang
        elif task == Task.S2TT or task == Task.ASR:
            return Modality.SPEECH, Modality.TEXT
        elif task == Task.T2TT:
            return Modality.TEXT, Modality.TEXT
        else:
            return Modality.TEXT, Modality.SPEECH

    @torch.inference_mode()
    def predict(
        self,
        input: Union[str, Tensor, SequenceData],
        task_str: str,
        tgt_lang: str,
        src_lang: Optional[str] = None,
        text_generation_opts: Optional[SequenceGeneratorOptions] = None,
        unit_generation_opts: Optional[SequenceGeneratorOptions] = None,
        spkr: Optional[int] = -1,
        sample_rate: int = 16000,
        unit_generation_ngram_filtering: bool = False,
        duration_factor: float = 1.0,
        prosody_encoder_input: Optional[SequenceData] = None,
        src_text: Optional[StringLike] = None,
    ) -> Tuple[List[StringLike], Optional[BatchedSpeechOutput]]:
        """
        The main method used to perform inference on all tasks.

        :param input:
            Either text or path to audio or audio Tensor.
        :param task_str:
            String representing the task.
            Valid choices are "S2ST", "S2TT", "T2ST", "T2TT", "ASR"
        :param tgt_lang:
            Target language to decode into.
        :param src_lang:
            Source language of input, only required for T2ST, T2TT tasks.
        :param spkr:
            Speaker id for vocoder.

        :returns:
            - Batched list of Translated text.
            - Translated BatchedSpeechOutput.
        """
        if text_generation_opts is None:
            text_generation_opts = SequenceGeneratorOptions(
                beam_size=5, soft_max_seq_len=(1, 200)
            )
        if unit_generation_opts is None:
            unit_generation_opts = SequenceGeneratorOptions(
                beam_size=5, soft_max_seq_len=(25, 50)
            )

        input_modality, output_modality = self.get_modalities_from_task_str(task_str)

        if self.input_modality and input_modality != self.input_modality:
            raise ValueError(
                f"Predict called with input_modality {input_modality}, "
                f"but Translator was initialized with {self.input_modality}."
            )

        if isinstance(input, dict) and "seqs" in input:
            src = cast(SequenceData, input)
        elif input_modality == Modality.SPEECH:
            audio = input
            if isinstance(audio, str):
                with Path(audio).open("rb") as fb:
                    block = MemoryBlock(fb.read())
                decoded_audio = self.decode_audio(block)
            else:
                assert (
                    audio.dim() <= 2
                ), "The audio tensor can't be more than 2 dimensions."
                if audio.dim() == 1:
                    audio = audio.unsqueeze(1)
                elif audio.dim() == 2 and audio.size(0) < audio.size(1):
                    logger.warning(
                        "Transposing audio tensor from (bsz, seq_len) -> (seq_len, bsz)."
                    )
                    audio = audio.transpose(0, 1)

                decoded_audio = {
                    "waveform": audio.to(self.device),
                    "sample_rate": sample_rate,
                    "format": -1,
                }
            src = self.collate(self.convert_to_fbank(decoded_audio))["fbank"]
        else:
            if src_lang is None:
                raise ValueError("src_lang must be specified for T2ST, T2TT tasks.")

            text = input
            assert isinstance(text, str)

            self.token_encoder = self.text_tokenizer.create_encoder(
                task="translation", lang=src_lang, mode="source", device=self.device
            )
            src = self.collate(self.token_encoder(text))

        assert isinstance(self.model, UnitYModel)

        seqs, padding_mask = get_seqs_and_padding_mask(src)

        text_output, unit_output = self.get_prediction(
            self.model,
            self.text_tokenizer,
            self.unit_tokenizer,
            seqs,
            padding_mask,
            input_modality,
            output_modality,
            tgt_lang,
            text_generation_opts,
            unit_generation_opts,
            unit_generation_ngram_filtering=unit_generation_ngram_filtering,
            duration_factor=duration_factor,
            prosody_encoder_input=prosody_encoder_input,
        )

        if output_modality == Modality.TEXT:
            return text_output.sentences, None
        else:
            assert unit_output is not None

            if isinstance(self.model.t2u_model, unity_archs.UnitYT2UModel):
                # AR T2U: strip lang tokens.
                units = unit_output.units[:, 1:]
            else:
                units = unit_output.units

            audio_wavs = []
            speech_units = []
            for i in range(len(unit_output.units)):
                assert self.model.t2u_model is not None
                unit_padding_mask = (
                    unit_output.units[i] != self.model.t2u_model.target_vocab_info.pad_idx
                )
                u = units[i][unit_padding_mask[: units.size(1)]].tolist()
                speech_units.append(u)

            if self.vocoder is None:
                return text_output.sentences, BatchedSpeechOutput(
                    units=speech_units, audio_wavs=[], sample_rate=sample_rate
                )

            for i in range(len(speech_units)):
                translated_audio_wav = self.vocoder(
                    speech_units[i], tgt_lang, spkr, dur_prediction=True
                )
                audio_wavs.append(translated_audio_wav)

            return (
                text_output.sentences,
                BatchedSpeechOutput(
                    units=speech_units,
                    audio_wavs=audio_wavs,
                    sample_rate=sample_rate,
                ),
            )
