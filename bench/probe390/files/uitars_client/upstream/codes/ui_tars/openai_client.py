# Copyright (c) ByteDance Ltd. and/or its affiliates
# SPDX-License-Identifier: Apache-2.0
"""Minimal agent loop against a UI-TARS endpoint served by vLLM (deploy/serve_vllm.sh)
or by a Hugging Face Inference Endpoint. Screenshots are sent as base64 data URLs."""
import base64
import io
import os
import time
from typing import List, Optional

from openai import OpenAI
from PIL import Image

from ui_tars.action_parser import (parse_action_to_structure_output,
                                   parsing_response_to_pyautogui_code)
from ui_tars.prompt import COMPUTER_USE

DEFAULT_BASE_URL = os.environ.get("UI_TARS_BASE_URL", "http://127.0.0.1:8000/v1")
DEFAULT_API_KEY = os.environ.get("UI_TARS_API_KEY", "empty")
MAX_HISTORY_IMAGES = 5


def encode_image(image: Image.Image) -> str:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("utf-8")


class UITarsClient:
    def __init__(self, base_url: str = DEFAULT_BASE_URL, api_key: str = DEFAULT_API_KEY,
                 model: str = "ui-tars", language: str = "English", temperature: float = 0.0,
                 max_tokens: int = 400):
        self.client = OpenAI(base_url=base_url, api_key=api_key)
        self.model = model
        self.language = language
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.history_images: List[Image.Image] = []
        self.history_responses: List[str] = []

    def reset(self):
        self.history_images.clear()
        self.history_responses.clear()

    def _build_messages(self, instruction: str):
        messages = [{
            "role": "user",
            "content": [{"type": "text",
                         "text": COMPUTER_USE.format(instruction=instruction, language=self.language)}],
        }]
        images = self.history_images[-MAX_HISTORY_IMAGES:]
        offset = len(self.history_images) - len(images)
        for i, image in enumerate(images):
            messages.append({
                "role": "user",
                "content": [{"type": "image_url",
                             "image_url": {"url": f"data:image/png;base64,{encode_image(image)}"}}],
            })
            idx = offset + i
            if idx < len(self.history_responses):
                messages.append({"role": "assistant",
                                 "content": [{"type": "text", "text": self.history_responses[idx]}]})
        return messages

    def step(self, instruction: str, screenshot: Image.Image, retries: int = 3) -> Optional[dict]:
        self.history_images.append(screenshot)
        messages = self._build_messages(instruction)
        last_err = None
        for attempt in range(retries):
            try:
                resp = self.client.chat.completions.create(
                    model=self.model,
                    messages=messages,
                    temperature=self.temperature,
                    max_tokens=self.max_tokens,
                    frequency_penalty=1,
                )
                text = resp.choices[0].message.content
                break
            except Exception as e:  # network hiccups, server warming up
                last_err = e
                time.sleep(2 ** attempt)
        else:
            raise RuntimeError(f"UI-TARS endpoint failed after {retries} retries: {last_err}")

        self.history_responses.append(text)
        width, height = screenshot.size
        actions = parse_action_to_structure_output(
            text, factor=1000, origin_resized_height=height, origin_resized_width=width,
            model_type="qwen25vl")
        code = parsing_response_to_pyautogui_code(actions, image_height=height, image_width=width)
        return {"response": text, "actions": actions, "pyautogui": code}


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--image", required=True)
    parser.add_argument("--instruction", required=True)
    parser.add_argument("--base_url", default=DEFAULT_BASE_URL)
    args = parser.parse_args()

    client = UITarsClient(base_url=args.base_url)
    out = client.step(args.instruction, Image.open(args.image).convert("RGB"))
    print(out["response"])
    print(out["pyautogui"])
