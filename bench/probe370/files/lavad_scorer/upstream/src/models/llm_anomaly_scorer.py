"""Query Llama-2-chat with the (cleaned) frame captions of each video and turn the answers into
frame-level anomaly scores (LAVAD, training-free VAD).

Launched with torchrun so that the Llama model-parallel group is set up, e.g.

    torchrun --nproc_per_node 2 -m src.models.llm_anomaly_scorer --ckpt_dir libs/llama/llama-2-13b-chat ...
"""
import argparse
import json
import re
from pathlib import Path

import numpy as np
import torch
from tqdm import tqdm

from libs.llama.llama import Llama
from src.data.video_record import VideoRecord


class LLMAnomalyScorer:
    def __init__(
        self,
        root_path,
        annotationfile_path,
        batch_size,
        frame_interval,
        summary_prompt,
        context_prompt,
        format_prompt,
        output_scores_dir,
        output_summary_dir,
        captions_dir,
        ckpt_dir,
        tokenizer_path,
        temperature,
        top_p,
        max_seq_len,
        max_gen_len,
    ):
        self.root_path = Path(root_path)
        self.annotationfile_path = Path(annotationfile_path)
        self.batch_size = batch_size
        self.frame_interval = frame_interval
        self.summary_prompt = summary_prompt
        self.context_prompt = context_prompt
        self.format_prompt = format_prompt
        self.output_scores_dir = Path(output_scores_dir)
        self.output_summary_dir = Path(output_summary_dir)
        self.captions_dir = Path(captions_dir)
        self.temperature = temperature
        self.top_p = top_p
        self.max_gen_len = max_gen_len

        self.generator = Llama.build(
            ckpt_dir=ckpt_dir,
            tokenizer_path=tokenizer_path,
            max_seq_len=max_seq_len,
            max_batch_size=batch_size,
        )

    def _prepare_dialogs(self, captions, batch_frame_idxs, is_summary):
        if is_summary:
            prompt = self.context_prompt + " " + self.format_prompt
            batch_clip_caption = [f"{captions[str(idx)]}." for idx in batch_frame_idxs]
        else:
            prompt = self.summary_prompt
            batch_clip_caption = [" ".join(captions[str(idx)]) for idx in batch_frame_idxs]

        dialogs = [
            [
                {"role": "system", "content": prompt},
                {"role": "user", "content": clip_caption},
            ]
            for clip_caption in batch_clip_caption
        ]
        return dialogs

    def _parse_score(self, response):
        pattern = r"\[(\d+(?:\.\d+)?)\]"
        match = re.search(pattern, response)
        if match is None:
            return -1
        score = float(match.group(1))
        return score if 0 <= score <= 1 else -1

    def _interpolate_unmatched_scores(self, scores):
        valid_scores = [(idx, s) for idx, s in scores.items() if s != -1]
        video_scores = np.interp(
            list(scores.keys()),
            [idx for idx, _ in valid_scores],
            [s for _, s in valid_scores],
        )
        return dict(zip(scores.keys(), video_scores))

    def _generate(self, dialogs):
        results = self.generator.chat_completion(
            dialogs,
            max_gen_len=self.max_gen_len,
            temperature=self.temperature,
            top_p=self.top_p,
        )
        return [result["generation"]["content"] for result in results]

    def __call__(self, video, is_summary):
        captions_path = self.captions_dir / f"{video.path.name}.json"
        with open(captions_path) as f:
            captions = json.load(f)

        video_frame_idxs = list(range(video.start_frame, video.end_frame + 1, self.frame_interval))
        outputs = {}
        for batch_start in range(0, len(video_frame_idxs), self.batch_size):
            batch_frame_idxs = video_frame_idxs[batch_start : batch_start + self.batch_size]
            dialogs = self._prepare_dialogs(captions, batch_frame_idxs, is_summary)
            responses = self._generate(dialogs)
            for idx, response in zip(batch_frame_idxs, responses):
                outputs[idx] = response if not is_summary else self._parse_score(response)

        if is_summary:
            outputs = self._interpolate_unmatched_scores(outputs)
            output_path = self.output_scores_dir / f"{video.path.name}.json"
        else:
            output_path = self.output_summary_dir / f"{video.path.name}.json"

        output_path.parent.mkdir(parents=True, exist_ok=True)
        with open(output_path, "w") as f:
            json.dump({str(k): v for k, v in outputs.items()}, f, indent=4)

        # free the KV-cache activations of the previous batch before the next (long) video
        torch.cuda.empty_cache()


def run(scorer, video_list, score_summary, resume):
    for video in tqdm(video_list):
        target_dir = scorer.output_scores_dir if score_summary else scorer.output_summary_dir
        if resume and (target_dir / f"{video.path.name}.json").exists():
            continue
        scorer(video, is_summary=score_summary)


def main(args):
    video_list = [VideoRecord(x.strip().split(), args.root_path) for x in open(args.annotationfile_path)]
    if args.num_jobs > 1:
        chunk = (len(video_list) + args.num_jobs - 1) // args.num_jobs
        video_list = video_list[args.job_index * chunk : (args.job_index + 1) * chunk]

    scorer = LLMAnomalyScorer(
        root_path=args.root_path,
        annotationfile_path=args.annotationfile_path,
        batch_size=args.batch_size,
        frame_interval=args.frame_interval,
        summary_prompt=args.summary_prompt,
        context_prompt=args.context_prompt,
        format_prompt=args.format_prompt,
        output_scores_dir=args.output_scores_dir,
        output_summary_dir=args.output_summary_dir,
        captions_dir=args.captions_dir,
        ckpt_dir=args.ckpt_dir,
        tokenizer_path=args.tokenizer_path,
        temperature=args.temperature,
        top_p=args.top_p,
        max_seq_len=args.max_seq_len,
        max_gen_len=args.max_gen_len,
    )
    run(scorer, video_list, args.score_summary, args.resume)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--root_path", type=str, required=True)
    parser.add_argument("--annotationfile_path", type=str, required=True)
    parser.add_argument("--batch_size", type=int, default=32)
    parser.add_argument("--frame_interval", type=int, default=16)
    parser.add_argument("--summary_prompt", type=str, default="Please summarize what happened in few sentences, based on the following temporal description of a scene. Do not include any unnecessary details or descriptions.")
    parser.add_argument("--context_prompt", type=str, default="If you were a law enforcement agency, how would you rate the scene described on a scale from 0 to 1, with 0 representing a standard scene and 1 denoting a scene with suspicious activities?")
    parser.add_argument("--format_prompt", type=str, default="Please provide the response in the form of a Python list and respond with only one number in the provided list below [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] without any textual explanation. It should begin with '[' and end with  ']'.")
    parser.add_argument("--output_scores_dir", type=str, default=None)
    parser.add_argument("--output_summary_dir", type=str, default=None)
    parser.add_argument("--captions_dir", type=str, required=True)
    parser.add_argument("--ckpt_dir", type=str, required=True)
    parser.add_argument("--tokenizer_path", type=str, required=True)
    parser.add_argument("--temperature", type=float, default=0.6)
    parser.add_argument("--top_p", type=float, default=0.9)
    parser.add_argument("--max_seq_len", type=int, default=1024)
    parser.add_argument("--max_gen_len", type=int, default=None)
    parser.add_argument("--score_summary", action="store_true")
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--num_jobs", type=int, default=1)
    parser.add_argument("--job_index", type=int, default=0)
    args = parser.parse_args()
    main(args)
