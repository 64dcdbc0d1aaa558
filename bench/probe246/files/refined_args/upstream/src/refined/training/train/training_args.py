import os
from argparse import ArgumentParser
from dataclasses import dataclass, field
from typing import Optional

import torch


@dataclass
class TrainingArgs:
    experiment_name: str = "refined_wikipedia"
    device: str = "cuda:0"
    el: bool = False
    epochs: int = 10
    batch_size: int = 16
    lr: float = 5e-5
    ed_threshold: float = 0.15
    num_warmup_steps: int = 10
    gradient_accumulation_steps: int = 1
    num_candidates_train: int = 30
    num_candidates_eval: int = 30
    n_gpu: int = field(default_factory=torch.cuda.device_count)
    seed: int = 42
    mask_prob: float = 0.70
    mask_random_prob: float = 0.05
    candidate_dropout: float = 0.0
    max_mentions: int = 25
    checkpoint_every_n_steps: int = 1000000
    checkpoint_metric: str = "el"
    transformer_name: str = "roberta-base"
    output_dir: str = "fine_tuned_models"
    restore_model_path: Optional[str] = None
    resume: bool = False
    data_dir: str = os.path.join(os.path.expanduser("~"), ".cache", "refined")
    entity_set: str = "wikipedia"
    download_files: bool = True
    debug: bool = False
    use_fp16: bool = True

    @property
    def warmup_steps(self) -> int:
        return self.num_warmup_steps


def parse_training_args() -> TrainingArgs:
    parser = ArgumentParser()
    parser.add_argument("--experiment_name", type=str, default="test")
    parser.add_argument(
        "--device",
        type=str,
        default="cuda:0" if torch.cuda.is_available() else "cpu",
        help="torch device to train on; with torchrun this is overwritten with cuda:<LOCAL_RANK>",
    )
    parser.add_argument("--el", type=bool, default=False, help="train the mention detection layer as well")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--ed_threshold", type=float, default=0.15)
    parser.add_argument("--num_warmup_steps", type=int, default=10)
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1)
    parser.add_argument("--num_candidates_train", type=int, default=30)
    parser.add_argument("--num_candidates_eval", type=int, default=30)
    parser.add_argument(
        "--n_gpu",
        type=int,
        default=torch.cuda.device_count(),
        help="number of GPUs for DataParallel training (ignored under torchrun)",
    )
    parser.add_argument("--no_cuda", action="store_true", help="force CPU even if a GPU is present")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--mask_prob", type=float, default=0.70)
    parser.add_argument("--mask_random_prob", type=float, default=0.05)
    parser.add_argument("--candidate_dropout", type=float, default=0.0)
    parser.add_argument("--max_mentions", type=int, default=25)
    parser.add_argument("--checkpoint_every_n_steps", type=int, default=1000000)
    parser.add_argument("--checkpoint_metric", type=str, default="el", choices=["el", "ed"])
    parser.add_argument("--transformer_name", type=str, default="roberta-base")
    parser.add_argument("--output_dir", type=str, default="fine_tuned_models")
    parser.add_argument("--restore_model_path", type=str, default=None)
    parser.add_argument("--resume", action="store_true")
    parser.add_argument("--data_dir", type=str, default=os.path.join(os.path.expanduser("~"), ".cache", "refined"))
    parser.add_argument("--entity_set", type=str, default="wikipedia", choices=["wikipedia", "wikidata"])
    parser.add_argument("--download_files", type=bool, default=True)
    parser.add_argument("--debug", action="store_true")
    parser.add_argument("--no_fp16", action="store_true", help="disable mixed precision")
    args = parser.parse_args()

    if args.no_cuda:
        args.device = "cpu"
        args.n_gpu = 0

    training_args = TrainingArgs(
        experiment_name=args.experiment_name,
        device=args.device,
        el=args.el,
        epochs=args.epochs,
        batch_size=args.batch_size,
        lr=args.lr,
        ed_threshold=args.ed_threshold,
        num_warmup_steps=args.num_warmup_steps,
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        num_candidates_train=args.num_candidates_train,
        num_candidates_eval=args.num_candidates_eval,
        n_gpu=args.n_gpu,
        seed=args.seed,
        mask_prob=args.mask_prob,
        mask_random_prob=args.mask_random_prob,
        candidate_dropout=args.candidate_dropout,
        max_mentions=args.max_mentions,
        checkpoint_every_n_steps=args.checkpoint_every_n_steps,
        checkpoint_metric=args.checkpoint_metric,
        transformer_name=args.transformer_name,
        output_dir=args.output_dir,
        restore_model_path=args.restore_model_path,
        resume=args.resume,
        data_dir=args.data_dir,
        entity_set=args.entity_set,
        download_files=args.download_files,
        debug=args.debug,
        use_fp16=not args.no_fp16,
    )
    return training_args


@dataclass
class FineTuningArgs(TrainingArgs):
    """Defaults used by `refined.training.fine_tune.fine_tune` (AIDA fine-tuning on one V100)."""

    epochs: int = 3
    batch_size: int = 1
    lr: float = 1e-5
    checkpoint_every_n_steps: int = 500
    el: bool = True
    restore_model_path: Optional[str] = None
    output_dir: str = "fine_tuned_models/aida"
