"""
Annotate a FineWeb-style dump with the FineWeb-Edu educational-quality classifier and
keep documents with an int score >= threshold.

One datatrove task per GPU: the Slurm executor starts `tasks` array jobs with one GPU each,
every task reads its shard of the input files, scores documents in batches and writes
the kept documents (with the score in metadata) back to S3.

    python examples/fineweb_edu_annotation.py s3://fineweb/CC-MAIN-2024-10 s3://fineweb-edu/CC-MAIN-2024-10
"""

import argparse
import time
from typing import Iterable

from datatrove.data import Document, DocumentsPipeline
from datatrove.executor import LocalPipelineExecutor
from datatrove.executor.slurm import SlurmPipelineExecutor
from datatrove.pipeline.base import PipelineStep
from datatrove.pipeline.readers import JsonlReader, ParquetReader
from datatrove.pipeline.writers.jsonl import JsonlWriter
from datatrove.utils.batching import batched
from datatrove.utils.logging import logger

MODEL_NAME = "HuggingFaceFW/fineweb-edu-classifier"


class EduClassifierAnnotator(PipelineStep):
    name = "🎓 FineWeb-Edu classifier"
    type = "🔢 - ANNOTATOR"
    _requires_dependencies = ["torch", "transformers"]

    def __init__(
        self,
        model_name: str = MODEL_NAME,
        batch_size: int = 512,
        max_length: int = 512,
        threshold: int = 3,
        compile_model: bool = True,
    ):
        super().__init__()
        self.model_name = model_name
        self.batch_size = batch_size
        self.max_length = max_length
        self.threshold = threshold
        self.compile_model = compile_model

    def _load(self, rank: int):
        import torch
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import is_flash_attn_2_available

        n_gpus = torch.cuda.device_count()
        torch.cuda.set_device(rank % n_gpus)
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

        self.tokenizer = AutoTokenizer.from_pretrained(self.model_name)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            self.model_name,
            torch_dtype=torch.bfloat16,
            attn_implementation="flash_attention_2" if is_flash_attn_2_available() else "sdpa",
        ).to(self.device)
        self.model.eval()
        if self.compile_model:
            self.model = torch.compile(self.model, mode="max-autotune", dynamic=True)
        torch.backends.cuda.matmul.allow_tf32 = True

    def _score_batch(self, batch: list[Document]) -> list[float]:
        import torch

        inputs = self.tokenizer(
            [doc.text for doc in batch],
            return_tensors="pt",
            padding="longest",
            truncation=True,
            max_length=self.max_length,
        )
        inputs = {k: v.to(self.device, non_blocking=True) for k, v in inputs.items()}
        with torch.inference_mode():
            logits = self.model(**inputs).logits.squeeze(-1).float()
        return logits.cpu().tolist()

    def run(self, data: DocumentsPipeline, rank: int = 0, world_size: int = 1) -> DocumentsPipeline:
        import torch

        self._load(rank)
        n_seen = n_kept = 0
        t0 = time.perf_counter()
        for batch in batched(data, self.batch_size):
            with self.track_time(unit="batch"):
                scores = self._score_batch(batch)
            for doc, score in zip(batch, scores):
                n_seen += 1
                doc.metadata["edu_score"] = score
                doc.metadata["edu_int_score"] = int(round(max(0, min(score, 5))))
                self.stat_update("scored")
                if doc.metadata["edu_int_score"] >= self.threshold:
                    n_kept += 1
                    self.stat_update("kept")
                    yield doc
                else:
                    self.stat_update("dropped")
            if n_seen % (self.batch_size * 100) == 0:
                torch.cuda.synchronize()
                rate = n_seen / (time.perf_counter() - t0)
                mem = torch.cuda.max_memory_allocated() / 2**30
                logger.info(f"rank {rank}: {n_seen} docs, {rate:.0f} docs/s, kept {n_kept}, peak mem {mem:.1f} GiB")


def make_pipeline(input_path: str, output_path: str, reader: str, limit: int, threshold: int) -> list:
    if reader == "parquet":
        read_step = ParquetReader(input_path, glob_pattern="*.parquet", limit=limit)
    else:
        read_step = JsonlReader(input_path, glob_pattern="*.jsonl.gz", limit=limit)
    return [
        read_step,
        EduClassifierAnnotator(threshold=threshold),
        JsonlWriter(output_path, output_filename="${rank}.jsonl.gz"),
    ]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input_path")
    parser.add_argument("output_path")
    parser.add_argument("--logs", default="logs/fineweb-edu-annotation")
    parser.add_argument("--reader", choices=["jsonl", "parquet"], default="jsonl")
    parser.add_argument("--tasks", type=int, default=512)
    parser.add_argument("--limit", type=int, default=-1)
    parser.add_argument("--threshold", type=int, default=3)
    parser.add_argument("--local", action="store_true", help="run on this machine with one task per GPU")
    parser.add_argument("--local-gpus", type=int, default=8)
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    pipeline = make_pipeline(args.input_path, args.output_path, args.reader, args.limit, args.threshold)

    if args.local:
        executor = LocalPipelineExecutor(
            pipeline=pipeline,
            tasks=args.local_gpus,
            workers=args.local_gpus,
            logging_dir=args.logs,
        )
    else:
        executor = SlurmPipelineExecutor(
            job_name="fineweb-edu-annotation",
            pipeline=pipeline,
            tasks=args.tasks,
            time="10:00:00",
            partition="hopper-prod",
            qos="normal",
            cpus_per_task=12,
            mem_per_cpu_gb=8,
            logging_dir=args.logs,
            sbatch_args={"gres": "gpu:1"},
            env_command="source ~/.bashrc && conda activate fineweb && export CUDA_DEVICE_MAX_CONNECTIONS=1",
        )
    executor.run()


if __name__ == "__main__":
    main()
