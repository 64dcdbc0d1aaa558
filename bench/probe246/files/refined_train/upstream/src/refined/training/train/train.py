import os
import random
from typing import Dict, List, Optional

import numpy as np
import torch
import torch.distributed as dist
from torch.cuda.amp import GradScaler, autocast
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler
from tqdm.auto import tqdm, trange
from transformers import AdamW, get_linear_schedule_with_warmup

from refined.data_types.doc_types import Doc
from refined.dataset_reading.entity_linking.wikipedia_dataset import WikipediaDataset
from refined.doc_preprocessing.preprocessor import PreprocessorInferenceOnly
from refined.doc_preprocessing.wikidata_mapper import WikidataMapper
from refined.evaluation.evaluation import evaluate
from refined.inference.processor import Refined
from refined.model_components.config import NER_TAG_TO_IX, ModelConfig
from refined.model_components.refined_model import RefinedModel
from refined.resource_management.aws import S3Manager
from refined.resource_management.resource_manager import ResourceManager
from refined.torch_overrides.data_parallel_refined import DataParallelReFinED
from refined.training.train.training_args import TrainingArgs, parse_training_args
from refined.utilities.general_utils import get_logger

LOG = get_logger(name=__name__)


def set_seed(seed: int, n_gpu: int):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    if n_gpu > 0:
        torch.cuda.manual_seed_all(seed)


def setup_distributed(training_args: TrainingArgs) -> int:
    """Initialise torch.distributed when launched with torchrun; returns the local rank (or -1)."""
    local_rank = int(os.environ.get("LOCAL_RANK", -1))
    if local_rank == -1:
        return -1
    torch.cuda.set_device(local_rank)
    dist.init_process_group(backend="nccl", init_method="env://")
    training_args.device = f"cuda:{local_rank}"
    training_args.n_gpu = 1
    LOG.info(f"rank {dist.get_rank()} / {dist.get_world_size()} on {torch.cuda.get_device_name(local_rank)}")
    return local_rank


def main():
    training_args = parse_training_args()
    local_rank = setup_distributed(training_args)
    is_main = local_rank in (-1, 0)

    set_seed(training_args.seed, training_args.n_gpu)

    resource_manager = ResourceManager(
        S3Manager(),
        data_dir=training_args.data_dir,
        entity_set=training_args.entity_set,
        load_qcode_to_title=True,
        load_descriptions_tns=True,
        model_name=None,
    )
    if training_args.download_files and is_main:
        resource_manager.download_data_if_needed()
        resource_manager.download_additional_files_if_needed()
        resource_manager.download_training_files_if_needed()
    if local_rank != -1:
        dist.barrier()

    preprocessor = PreprocessorInferenceOnly(
        data_dir=training_args.data_dir,
        debug=training_args.debug,
        max_candidates=training_args.num_candidates_train,
        transformer_name=training_args.transformer_name,
        ner_tag_to_ix=NER_TAG_TO_IX,
        entity_set=training_args.entity_set,
        use_precomputed_description_embeddings=False,
    )

    wikidata_mapper = WikidataMapper(resource_manager=resource_manager)

    wikipedia_dataset_file_path = resource_manager.get_training_data_files()["wikipedia_training_dataset"]
    training_dataset = WikipediaDataset(
        start=100,
        end=100000000,
        preprocessor=preprocessor,
        resource_manager=resource_manager,
        wikidata_mapper=wikidata_mapper,
        dataset_path=wikipedia_dataset_file_path,
        batch_size=training_args.batch_size,
        num_workers=8 * max(training_args.n_gpu, 1),
        prefetch=100,
        mask=training_args.mask_prob,
        random_mask=training_args.mask_random_prob,
        lower_case_prob=0.05,
        candidate_dropout=training_args.candidate_dropout,
        max_mentions=training_args.max_mentions,
        sample_k_candidates=5,
        add_main_entity=True,
    )
    training_dataloader = DataLoader(
        dataset=training_dataset,
        batch_size=None,
        num_workers=8 * max(training_args.n_gpu, 1),
        pin_memory=True if training_args.n_gpu == 1 else False,
        prefetch_factor=5,
        persistent_workers=True,
    )

    model = RefinedModel(
        ModelConfig(
            data_dir=training_args.data_dir,
            transformer_name=training_args.transformer_name,
            ner_tag_to_ix=NER_TAG_TO_IX,
        ),
        preprocessor=preprocessor,
    )

    if training_args.restore_model_path is not None:
        # TODO load `ModelConfig` file (from the directory) and initialise RefinedModel from that
        # to avoid issues when model config differs
        LOG.info(f"Restored model from {training_args.restore_model_path}")
        checkpoint = torch.load(training_args.restore_model_path, map_location="cpu")
        model.load_state_dict(checkpoint, strict=False)

    model = model.to(training_args.device)

    evaluation_dataset_name_to_docs: Dict[str, List[Doc]] = {}
    if is_main:
        evaluation_dataset_name_to_docs = {
            "AIDA": list(
                resource_manager.get_evaluation_documents("aida_dev", preprocessor=preprocessor)
            ),
            "WIKI": list(
                resource_manager.get_evaluation_documents("wiki_dev", preprocessor=preprocessor)
            )[:1000],
        }

    run(
        model=model,
        training_dataloader=training_dataloader,
        evaluation_dataset_name_to_docs=evaluation_dataset_name_to_docs,
        training_args=training_args,
        preprocessor=preprocessor,
        local_rank=local_rank,
    )

    if local_rank != -1:
        dist.destroy_process_group()


def run(
    model: RefinedModel,
    training_dataloader: DataLoader,
    evaluation_dataset_name_to_docs: Dict[str, List[Doc]],
    training_args: TrainingArgs,
    preprocessor: PreprocessorInferenceOnly,
    local_rank: int = -1,
):
    optimizer = AdamW(model.parameters(), lr=training_args.lr, eps=1e-8)

    total_steps = len(training_dataloader) * training_args.epochs
    scheduler = get_linear_schedule_with_warmup(
        optimizer,
        num_warmup_steps=training_args.warmup_steps,
        num_training_steps=total_steps / training_args.gradient_accumulation_steps,
    )
    scaler = GradScaler()

    if training_args.restore_model_path is not None and training_args.resume:
        LOG.info("Restoring optimizer and scheduler")
        optimizer_checkpoint = torch.load(
            os.path.join(os.path.dirname(training_args.restore_model_path), "optimizer.pt"),
            map_location="cpu",
        )
        scheduler_checkpoint = torch.load(
            os.path.join(os.path.dirname(training_args.restore_model_path), "scheduler.pt"),
            map_location="cpu",
        )
        scaler_checkpoint = torch.load(
            os.path.join(os.path.dirname(training_args.restore_model_path), "scaler.pt"),
            map_location="cpu",
        )
        optimizer.load_state_dict(optimizer_checkpoint)
        scheduler.load_state_dict(scheduler_checkpoint)
        scaler.load_state_dict(scaler_checkpoint)

    if local_rank != -1:
        model = DDP(model, device_ids=[local_rank], output_device=local_rank, find_unused_parameters=True)
    elif training_args.n_gpu > 1:
        model = DataParallelReFinED(model, device_ids=list(range(training_args.n_gpu)), output_device=0)

    train(
        model=model,
        training_dataloader=training_dataloader,
        optimizer=optimizer,
        scheduler=scheduler,
        scaler=scaler,
        evaluation_dataset_name_to_docs=evaluation_dataset_name_to_docs,
        training_args=training_args,
        preprocessor=preprocessor,
        is_main=local_rank in (-1, 0),
    )


def train(
    model,
    training_dataloader: DataLoader,
    optimizer,
    scheduler,
    scaler: GradScaler,
    evaluation_dataset_name_to_docs: Dict[str, List[Doc]],
    training_args: TrainingArgs,
    preprocessor: PreprocessorInferenceOnly,
    is_main: bool = True,
):
    model.train()
    best_f1 = 0.0
    for epoch_num in trange(training_args.epochs, disable=not is_main):
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        total_loss = 0.0
        for step, batch in tqdm(
            enumerate(training_dataloader), total=len(training_dataloader), desc="Training", disable=not is_main
        ):
            batch = batch.to(training_args.device)
            with autocast():
                output = model(batch=batch)
                loss = output.ed_loss + output.et_loss + (output.description_loss * 0.01)
                if training_args.n_gpu > 1:
                    loss = loss.mean()
                loss = loss / training_args.gradient_accumulation_steps

            total_loss += loss.item()
            scaler.scale(loss).backward()

            if (step + 1) % training_args.gradient_accumulation_steps == 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                scaler.step(optimizer)
                scaler.update()
                scheduler.step()
                optimizer.zero_grad()

            if step % 100 == 0 and is_main:
                LOG.info(
                    f"epoch {epoch_num} step {step} loss {total_loss / (step + 1):.4f} "
                    f"mem {torch.cuda.memory_allocated() / 1e9:.1f}GB"
                )

            if (step + 1) % training_args.checkpoint_every_n_steps == 0 and is_main:
                best_f1 = run_checkpoint_eval_and_save(
                    best_f1, evaluation_dataset_name_to_docs, model, optimizer, preprocessor, scaler,
                    scheduler, training_args,
                )

        if is_main:
            best_f1 = run_checkpoint_eval_and_save(
                best_f1, evaluation_dataset_name_to_docs, model, optimizer, preprocessor, scaler, scheduler,
                training_args,
            )


def run_checkpoint_eval_and_save(
    best_f1, evaluation_dataset_name_to_docs, model, optimizer, preprocessor, scaler, scheduler, training_args
):
    model_to_eval = model.module if hasattr(model, "module") else model
    model_to_eval.eval()
    refined = Refined(
        model_file_or_model=model_to_eval,
        model_config_file_or_model_config=model_to_eval.config,
        preprocessor=preprocessor,
        device=training_args.device,
        use_precomputed_descriptions=False,
        download_files=False,
    )
    evaluation_metrics = evaluate(
        refined=refined,
        evaluation_dataset_name_to_docs=evaluation_dataset_name_to_docs,
        el=training_args.checkpoint_metric == "el",
        ed=True,
        ed_threshold=training_args.ed_threshold,
    )
    average_f1 = sum(m.get_f1() for m in evaluation_metrics.values()) / max(len(evaluation_metrics), 1)
    if average_f1 > best_f1:
        LOG.info(f"Obtained best F1 so far ({average_f1:.3f}) [average over datasets]")
        best_f1 = average_f1
        output_dir = os.path.join(training_args.output_dir, f"f1_{average_f1:.4f}")
        os.makedirs(output_dir, exist_ok=True)
        torch.save(model_to_eval.state_dict(), os.path.join(output_dir, "model.pt"))
        torch.save(optimizer.state_dict(), os.path.join(output_dir, "optimizer.pt"))
        torch.save(scheduler.state_dict(), os.path.join(output_dir, "scheduler.pt"))
        torch.save(scaler.state_dict(), os.path.join(output_dir, "scaler.pt"))
        model_to_eval.config.to_file(os.path.join(output_dir, "config.json"))
    model_to_eval.train()
    return best_f1


if __name__ == "__main__":
    main()
