"""Evaluate a video-LLM navigation agent (LLaVA-style, NaVid) on VLN-CE R2R/RxR.

The agent sees the RGB history of the episode plus the instruction and emits a
low-level action sentence ("move forward 75 cm", "turn left 30 degrees",
"stop") that is parsed into habitat actions.

Usage (8 GPUs, each GPU evaluates one shard of the split):
    python navid/eval_navid_vlnce.py --model-path checkpoints/navid-7b-full-224 \
        --exp-config VLN_CE/vlnce_baselines/config/r2r_baselines/navid_r2r.yaml \
        --split val_unseen --num-chunks 8
"""
import argparse
import json
import os
import re
import subprocess
import sys
from typing import List

import numpy as np
import torch
import tqdm
from habitat import Env
from habitat.utils.visualizations.utils import images_to_video

from llava.constants import DEFAULT_IMAGE_TOKEN, IMAGE_TOKEN_INDEX
from llava.conversation import conv_templates
from llava.mm_utils import KeywordsStoppingCriteria, tokenizer_image_token
from llava.model.builder import load_pretrained_model
from vlnce_baselines.config.default import get_config

ACTION_PATTERNS = {
    0: re.compile(r"\bstop\b"),
    1: re.compile(r"forward"),
    2: re.compile(r"turn left"),
    3: re.compile(r"turn right"),
}


def pick_attn_implementation() -> str:
    # FlashAttention-2 needs Ampere or newer; fall back to SDPA on V100s
    major, _ = torch.cuda.get_device_capability()
    if major >= 8:
        return "flash_attention_2"
    return "sdpa"


def parse_action(text: str):
    text = text.lower()
    for action_id, pattern in ACTION_PATTERNS.items():
        if pattern.search(text):
            numbers = re.findall(r"\d+", text)
            amount = int(numbers[0]) if numbers else None
            return action_id, amount
    return 1, 25  # default: small step forward


class NaVidAgent:
    def __init__(self, model_path: str, model_name: str, temperature: float = 0.0):
        self.device = torch.device("cuda")
        attn_impl = pick_attn_implementation()
        self.tokenizer, self.model, self.image_processor, _ = load_pretrained_model(
            model_path,
            None,
            model_name,
            device_map="cuda",
            torch_dtype=torch.bfloat16,
            attn_implementation=attn_impl,
        )
        self.model.eval()
        self.temperature = temperature
        self.conv_mode = "vicuna_v1"
        self.rgb_history: List[np.ndarray] = []
        self.pending_actions: List[int] = []

    def reset(self):
        self.rgb_history = []
        self.pending_actions = []

    def _build_prompt(self, instruction: str) -> str:
        conv = conv_templates[self.conv_mode].copy()
        question = (
            "Imagine you are a robot programmed for navigation tasks. You have been "
            "given a video of historical observations and an image of the current "
            f"observation <image>. Your assigned task is: '{instruction}'. "
            "Analyze this series of images to decide your next move, which could "
            "involve turning left or right by a specific degree or moving forward "
            "a certain distance."
        )
        conv.append_message(conv.roles[0], DEFAULT_IMAGE_TOKEN + "\n" + question)
        conv.append_message(conv.roles[1], None)
        return conv.get_prompt()

    @torch.inference_mode()
    def act(self, observations, instruction: str) -> int:
        if self.pending_actions:
            return self.pending_actions.pop(0)

        self.rgb_history.append(observations["rgb"])
        frames = self.rgb_history[-32:]
        video = self.image_processor.preprocess(frames, return_tensors="pt")["pixel_values"]
        video = video.to(dtype=torch.bfloat16).cuda(non_blocking=True)

        prompt = self._build_prompt(instruction)
        input_ids = tokenizer_image_token(
            prompt, self.tokenizer, IMAGE_TOKEN_INDEX, return_tensors="pt"
        ).unsqueeze(0).cuda()
        stopping = KeywordsStoppingCriteria(["</s>"], self.tokenizer, input_ids)

        with torch.autocast("cuda", dtype=torch.bfloat16):
            output_ids = self.model.generate(
                input_ids,
                images=[video],
                do_sample=self.temperature > 0,
                temperature=self.temperature,
                max_new_tokens=32,
                use_cache=True,
                stopping_criteria=[stopping],
            )
        text = self.tokenizer.batch_decode(
            output_ids[:, input_ids.shape[1]:], skip_special_tokens=True
        )[0].strip()

        action_id, amount = parse_action(text)
        if action_id == 1 and amount:
            self.pending_actions = [1] * max(0, amount // 25 - 1)
        elif action_id in (2, 3) and amount:
            self.pending_actions = [action_id] * max(0, amount // 15 - 1)
        return action_id


def evaluate_shard(args):
    config = get_config(args.exp_config)
    config.defrost()
    config.TASK_CONFIG.DATASET.SPLIT = args.split
    config.TASK_CONFIG.SIMULATOR.HABITAT_SIM_V0.GPU_DEVICE_ID = 0
    config.freeze()

    env = Env(config.TASK_CONFIG)
    episodes = env.episodes
    shard = episodes[args.chunk_idx :: args.num_chunks]
    env.episode_iterator = iter(shard)

    agent = NaVidAgent(args.model_path, args.model_name)
    os.makedirs(args.result_dir, exist_ok=True)
    results = {}

    for _ in tqdm.trange(len(shard), desc=f"chunk {args.chunk_idx}"):
        observations = env.reset()
        agent.reset()
        instruction = env.current_episode.instruction.instruction_text
        frames = []
        while not env.episode_over:
            action = agent.act(observations, instruction)
            observations = env.step(action)
            if args.save_video:
                frames.append(observations["rgb"])
        metrics = env.get_metrics()
        ep_id = env.current_episode.episode_id
        results[ep_id] = {k: metrics[k] for k in ("success", "spl", "oracle_success", "ndtw", "distance_to_goal")}
        if args.save_video:
            images_to_video(frames, os.path.join(args.result_dir, "videos"), f"{ep_id}")
        # the KV cache of long videos fragments the allocator quickly
        torch.cuda.empty_cache()

    with open(os.path.join(args.result_dir, f"{args.split}_{args.chunk_idx}.json"), "w") as f:
        json.dump(results, f, indent=2)


def launch_all(args):
    """Spawn one evaluation process per GPU and wait for all of them."""
    procs = []
    for chunk_idx in range(args.num_chunks):
        env = dict(os.environ)
        env["CUDA_VISIBLE_DEVICES"] = str(chunk_idx % args.num_gpus)
        cmd = [sys.executable, __file__, "--worker", "--chunk-idx", str(chunk_idx)] + sys.argv[1:]
        procs.append(subprocess.Popen(cmd, env=env))
    for p in procs:
        p.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--model-name", default="navid-7b")
    parser.add_argument("--exp-config", required=True)
    parser.add_argument("--split", default="val_unseen")
    parser.add_argument("--result-dir", default="results/navid")
    parser.add_argument("--num-chunks", type=int, default=1)
    parser.add_argument("--chunk-idx", type=int, default=0)
    parser.add_argument("--num-gpus", type=int, default=8)
    parser.add_argument("--save-video", action="store_true")
    parser.add_argument("--worker", action="store_true")
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = True

    if args.num_chunks > 1 and not args.worker:
        launch_all(args)
    else:
        evaluate_shard(args)


if __name__ == "__main__":
    main()
