# Copyright 2024 THU-BPM MarkLLM.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

# ============================================
# upv.py
# Description: Implementation of UPV algorithm
# ============================================

import torch
from functools import partial
from ..base import BaseWatermark
from utils.utils import load_config_file
from utils.transformers_config import TransformersConfig
from exceptions.exceptions import AlgorithmNameMismatchError
from transformers import LogitsProcessor, LogitsProcessorList
from visualize.data_for_visualization import DataForVisualization
from .network_model import UPVGenerator, UPVDetector


class UPVConfig:
    """Config class for UPV algorithm, load config file and initialize parameters."""

    def __init__(self, algorithm_config: str, transformers_config: TransformersConfig, *args, **kwargs) -> None:
        if algorithm_config is None:
            config_dict = load_config_file('config/UPV.json')
        else:
            config_dict = load_config_file(algorithm_config)
        if config_dict['algorithm_name'] != 'UPV':
            raise AlgorithmNameMismatchError('UPV', config_dict['algorithm_name'])

        self.gamma = config_dict['gamma']
        self.delta = config_dict['delta']
        self.z_threshold = config_dict['z_threshold']
        self.prefix_length = config_dict['prefix_length']
        self.bit_number = config_dict['bit_number']
        self.sigma = config_dict['sigma']
        self.default_top_k = config_dict['default_top_k']
        self.generator_model_name = config_dict['generator_model_name']
        self.detector_model_name = config_dict['detector_model_name']
        self.detect_mode = config_dict['detect_mode']

        self.generation_model = transformers_config.model
        self.generation_tokenizer = transformers_config.tokenizer
        self.vocab_size = transformers_config.vocab_size
        self.device = transformers_config.device
        self.gen_kwargs = transformers_config.gen_kwargs


class UPVUtils:
    """Utility class for UPV algorithm, contains helper functions."""

    def __init__(self, config: UPVConfig, *args, **kwargs) -> None:
        self.config = config
        self.generator_model = self._get_generator_model(self.config.bit_number, self.config.prefix_length + 1)
        self.detector_model = self._get_detector_model(self.config.bit_number)
        self.cache = {}
        self.top_k = 0
        self.num_beams = 0
        if "top_k" in self.config.gen_kwargs:
            self.top_k = self.config.gen_kwargs["top_k"]
        if "num_beams" in self.config.gen_kwargs:
            self.num_beams = self.config.gen_kwargs["num_beams"]

    def _get_generator_model(self, input_dim: int, window_size: int) -> UPVGenerator:
        """Load the watermark generator network."""
        model = UPVGenerator(input_dim, window_size)
        model.load_state_dict(torch.load(self.config.generator_model_name, map_location=self.config.device))
        model = model.to(self.config.device)
        model.eval()
        return model

    def _get_detector_model(self, bit_number: int) -> UPVDetector:
        """Load the watermark detector network (public, shares the embedding layer with the generator)."""
        model = UPVDetector(bit_number)
        model.load_state_dict(torch.load(self.config.detector_model_name, map_location=self.config.device))
        model = model.to(self.config.device)
        model.eval()
        return model

    def int_to_bin_list(self, n: int, length: int = 8) -> list[int]:
        """Convert an integer to a binary list of specified length."""
        bin_str = format(n, 'b').zfill(length)
        return [int(b) for b in bin_str]

    def _select_candidates(self, scores: torch.Tensor) -> torch.Tensor:
        """Select candidate tokens based on the generation config."""
        if self.top_k > 0:
            _, candidates = torch.topk(scores, self.top_k)
        elif self.num_beams > 0:
            _, candidates = torch.topk(scores, self.num_beams)
        else:
            _, candidates = torch.topk(scores, self.config.default_top_k)
        return candidates

    def _judge_green(self, input_ids: torch.Tensor, current_number: int) -> bool:
        """Check whether the next token is in the green list, using the generator network."""
        last_nums = input_ids[-self.config.prefix_length:] if self.config.prefix_length > 0 else []
        pair = list(last_nums) + [current_number]
        pair = tuple(int(x) for x in pair)

        if pair in self.cache:
            return self.cache[pair]

        merged_tuple = [self.int_to_bin_list(num, self.config.bit_number) for num in pair]
        merged_tensor = torch.tensor(merged_tuple, dtype=torch.float32, device=self.config.device).unsqueeze(0)
        with torch.no_grad():
            result = self.generator_model(merged_tensor) > 0.5
        self.cache[pair] = bool(result.item())
        return self.cache[pair]

    def get_greenlist_ids(self, input_ids: torch.Tensor, scores: torch.Tensor) -> list[int]:
        """Get greenlist ids for the input_ids."""
        greenlist_ids = []
        candidates = self._select_candidates(scores)
        for v in candidates:
            if self._judge_green(input_ids, int(v)):
                greenlist_ids.append(int(v))
        return greenlist_ids

    def green_token_mask_and_stats(self, input_ids: torch.Tensor) -> tuple[list[int], int, int]:
        """Per-token green/red flags (key-based detection mode)."""
        mask_list = []
        green_token_count = 0
        for idx in range(self.config.prefix_length, len(input_ids)):
            curr_token = input_ids[idx]
            if self._judge_green(input_ids[:idx], int(curr_token)):
                mask_list.append(1)
                green_token_count += 1
            else:
                mask_list.append(0)
        num_tokens_scored = len(input_ids) - self.config.prefix_length
        return mask_list, green_token_count, num_tokens_scored


class UPVLogitsProcessor(LogitsProcessor):
    """LogitsProcessor for UPV algorithm, process logits to add watermark."""

    def __init__(self, config: UPVConfig, utils: UPVUtils, *args, **kwargs) -> None:
        self.config = config
        self.utils = utils

    def _calc_greenlist_mask(self, scores: torch.FloatTensor, greenlist_token_ids: list) -> torch.BoolTensor:
        green_tokens_mask = torch.zeros_like(scores)
        for b_idx in range(len(greenlist_token_ids)):
            green_tokens_mask[b_idx][greenlist_token_ids[b_idx]] = 1
        final_mask = green_tokens_mask.bool()
        return final_mask

    def _bias_greenlist_logits(self, scores: torch.Tensor, greenlist_mask: torch.Tensor, greenlist_bias: float) -> torch.Tensor:
        scores[greenlist_mask] = scores[greenlist_mask] + greenlist_bias
        return scores

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if input_ids.shape[-1] < self.config.prefix_length:
            return scores

        batched_greenlist_ids = [None for _ in range(input_ids.shape[0])]
        for b_idx in range(input_ids.shape[0]):
            greenlist_ids = self.utils.get_greenlist_ids(input_ids[b_idx], scores=scores[b_idx])
            batched_greenlist_ids[b_idx] = greenlist_ids

        green_tokens_mask = self._calc_greenlist_mask(scores=scores, greenlist_token_ids=batched_greenlist_ids)
        scores = self._bias_greenlist_logits(scores=scores, greenlist_mask=green_tokens_mask, greenlist_bias=self.config.delta)
        return scores


class UPV(BaseWatermark):
    """Top-level class for UPV algorithm."""

    def __init__(self, algorithm_config: str, transformers_config: TransformersConfig, *args, **kwargs) -> None:
        self.config = UPVConfig(algorithm_config, transformers_config)
        self.utils = UPVUtils(self.config)
        self.logits_processor = UPVLogitsProcessor(self.config, self.utils)

    def generate_watermarked_text(self, prompt: str, *args, **kwargs) -> str:
        generate_with_watermark = partial(
            self.config.generation_model.generate,
            logits_processor=LogitsProcessorList([self.logits_processor]),
            **self.config.gen_kwargs
        )
        encoded_prompt = self.config.generation_tokenizer(prompt, return_tensors="pt", add_special_tokens=True).to(self.config.device)
        encoded_watermarked_text = generate_with_watermark(**encoded_prompt)
        watermarked_text = self.config.generation_tokenizer.batch_decode(encoded_watermarked_text, skip_special_tokens=True)[0]
        return watermarked_text

    def detect_watermark(self, text: str, return_dict: bool = True, *args, **kwargs):
        encoded_text = self.config.generation_tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"][0].to(self.config.device)

        if self.config.detect_mode == 'key':
            _, green_count, num_scored = self.utils.green_token_mask_and_stats(encoded_text)
            expected = self.config.gamma * num_scored
            z_score = (green_count - expected) / ((num_scored * self.config.gamma * (1 - self.config.gamma)) ** 0.5)
            is_watermarked = z_score > self.config.z_threshold
            score = z_score
        else:
            # network mode: the public detector never sees the secret generator
            bits = [self.utils.int_to_bin_list(int(t), self.config.bit_number) for t in encoded_text]
            inputs = torch.tensor(bits, dtype=torch.float32, device=self.config.device).unsqueeze(0)
            with torch.no_grad():
                prob = self.utils.detector_model(inputs).reshape(-1)
            score = float(prob.item())
            is_watermarked = score > 0.5

        if return_dict:
            return {"is_watermarked": is_watermarked, "score": score}
        else:
            return (is_watermarked, score)

    def get_data_for_visualization(self, text: str, *args, **kwargs) -> DataForVisualization:
        encoded_text = self.config.generation_tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"][0].to(self.config.device)
        mask_list, _, _ = self.utils.green_token_mask_and_stats(encoded_text)
        highlight_values = [-1 for _ in range(self.config.prefix_length)] + mask_list

        decoded_tokens = []
        for token_id in encoded_text:
            token = self.config.generation_tokenizer.decode(token_id.item())
            decoded_tokens.append(token)

        return DataForVisualization(decoded_tokens, highlight_values)
