#!/usr/bin/env python3

# Copyright (C) 2020 Unbabel
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
"""
Command for Minimum Bayes Risk Decoding.
========================================

This script is inspired in Chantal Amrhein script used in:
    Title: Identifying Weaknesses in Machine Translation Metrics Through Minimum Bayes Risk Decoding: A Case Study for COMET
    URL: https://arxiv.org/abs/2202.05148

optional arguments:
  -h, --help            Show this help message and exit.
  -s SOURCES, --sources SOURCES
                        (required, type: Path_fr)
  -t TRANSLATIONS, --translations TRANSLATIONS
                        (required, type: Path_fr)
  --batch_size BATCH_SIZE
                        (type: int, default: 8)
  --num_samples NUM_SAMPLES
                        (required, type: int)
  --model MODEL         (type: Union[str, Path_fr], default: wmt20-comet-da)
  --model_storage_path MODEL_STORAGE_PATH
                        (type: Union[Path_d, null], default: null)
  -o OUTPUT, --output OUTPUT
                        Best candidates after running MBR decoding. (required, type: str)
"""
import os
from typing import List, Tuple

import torch
from jsonargparse import ArgumentParser
from jsonargparse.typing import Path_fr
from pytorch_lightning import seed_everything
from tqdm import tqdm

from comet import download_model, load_from_checkpoint
from comet.models import RegressionMetric, UnifiedMetric
from comet.models.utils import Prediction


def build_embeddings(
    sources: List[str],
    translations: List[str],
    model: RegressionMetric,
    batch_size: int,
) -> Tuple[torch.Tensor]:
    """Tokenization and respective encoding of source and translation sentences using
    a RegressionMetric model.

    Args:
        sources (List[str]): List of source sentences.
        translations (List[str]): List of translation sentences.
        model (RegressionMetric): RegressionMetric model that will be used to embed
            sentences.
        batch_size (int): batch size used during encoding.

    Returns:
        source and translation embeddings.
    """
    # TODO: Optimize this function to have faster MBR decoding!
    src_batches = [
        sources[i : i + batch_size] for i in range(0, len(sources), batch_size)
    ]
    src_inputs = [model.encoder.prepare_sample(batch) for batch in src_batches]
    mt_batches = [
        translations[i : i + batch_size]
        for i in range(0, len(translations), batch_size)
    ]
    mt_inputs = [model.encoder.prepare_sample(batch) for batch in mt_batches]

    src_embeddings = []
    with torch.no_grad():
        for batch in src_inputs:
            input_ids = batch["input_ids"].to(model.device)
            attention_mask = batch["attention_mask"].to(model.device)
            src_embeddings.append(
                model.get_sentence_embedding(input_ids, attention_mask)
            )
    src_embeddings = torch.vstack(src_embeddings)

    mt_embeddings = []
    with torch.no_grad():
        for batch in tqdm(mt_inputs, desc="Encoding sentences...", dynamic_ncols=True):
            input_ids = batch["input_ids"].to(model.device)
            attention_mask = batch["attention_mask"].to(model.device)
            mt_embeddings.append(
                model.get_sentence_embedding(input_ids, attention_mask)
            )
    mt_embeddings = torch.vstack(mt_embeddings)

    return src_embeddings, mt_embeddings


def mbr_decoding(
    src_embeddings: torch.Tensor, mt_embeddings: torch.Tensor, model: RegressionMetric
) -> torch.Tensor:
    """Performs MBR Decoding for each translation for a given source.

    Args:
        src_embeddings (torch.Tensor): Embeddings of source sentences.
        mt_embeddings (torch.Tensor): Embeddings of MT sentences.
        model (RegressionMetric): RegressionMetric Model.

    Returns:
        torch.Tensor: matrix [batch_size x num_samples] with the MBR scores.
    """
    n_sent, num_samples, _ = mt_embeddings.shape
    mbr_matrix = torch.zeros(n_sent, num_samples)
    with torch.no_grad():
        # Loop over all source sentences
        for i in tqdm(
            range(mbr_matrix.shape[0]), desc="MBR Scores...", dynamic_ncols=True
        ):
            source = src_embeddings[i, :].repeat(num_samples, 1)
            # Loop over all hypothesis
            for j in range(mbr_matrix.shape[1]):
                translation = mt_embeddings[i, j, :].repeat(num_samples, 1)
                # Score current hypothesis against all others
                pseudo_refs = mt_embeddings[i, :]
                scores = model.estimate(source, translation, pseudo_refs)[
                    "score"
                ].squeeze(1)
                scores = torch.cat([scores[0:j], scores[j + 1 :]])
                mbr_matrix[i, j] = scores.mean()

    return mbr_matrix


def mbr_command() -> None:
    parser = ArgumentParser(description="Command for Minimum Bayes Risk Decoding.")
    parser.add_argument("-s", "--sources", type=Path_fr, required=True)
    parser.add_argument("-t", "--translations", type=Path_fr, required=True)
    parser.add_argument("--batch_size", type=int, default=8)
    parser.add_argument(
        "--num_samples",
        type=int,
        required=True,
        help="Number of samples (candidates) per source sentence.",
    )
    parser.add_argument(
        "--model",
        type=str,
        required=False,
        default="Unbabel/wmt22-comet-da",
        help="COMET model to be used.",
    )
    parser.add_argument(
        "--model_storage_path",
        help=(
            "Path to the directory where models will be stored. "
            + "By default its saved in ~/.cache/torch/unbabel_comet/"
        ),
        default=None,
    )
    parser.add_argument(
        "--rerank_top_k",
        type=int,
        default=0,
        help="Chooses the topK candidates according to --qe_model before applying MBR.",
    )
    parser.add_argument(
        "--qe_model",
        type=str,
        required=False,
        default=None,
        help="Reference Free model used for top-k reranking.",
    )
    parser.add_argument(
        "--gpus",
        type=int,
        default=1,
        help="Number of GPUs used for MBR (currently only 1 is supported).",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=str,
        required=True,
        help="Best candidates after running MBR decoding.",
    )
    cfg = parser.parse_args()
    seed_everything(1)

    if cfg.model.endswith(".ckpt") and os.path.exists(cfg.model):
        model_path = cfg.model
    else:
        model_path = download_model(cfg.model, saving_directory=cfg.model_storage_path)
    model = load_from_checkpoint(model_path)

    if not isinstance(model, RegressionMetric) or isinstance(model, UnifiedMetric):
        raise Exception(
            "Invalid model type: {}. MBR decoding requires a RegressionMetric.".format(
                type(model)
            )
        )

    with open(cfg.sources(), encoding="utf-8") as fp:
        sources = [line.strip() for line in fp.readlines()]

    with open(cfg.translations(), encoding="utf-8") as fp:
        translations = [line.strip() for line in fp.readlines()]

    assert (
        len(sources) * cfg.num_samples == len(translations)
    ), "Number of translations must be a multiple of num_samples."

    if cfg.rerank_top_k > 0:
        if cfg.qe_model is None:
            raise Exception("--rerank_top_k requires --qe_model.")
        qe_model = load_from_checkpoint(download_model(cfg.qe_model))
        qe_inputs = [
            {"src": sources[i // cfg.num_samples], "mt": translations[i]}
            for i in range(len(translations))
        ]
        qe_scores = qe_model.predict(
            qe_inputs, batch_size=cfg.batch_size, gpus=cfg.gpus, progress_bar=True
        ).scores
        qe_scores = torch.tensor(qe_scores).view(len(sources), cfg.num_samples)
        top_k = qe_scores.topk(cfg.rerank_top_k, dim=1).indices
        translations = [
            translations[i * cfg.num_samples + j]
            for i in range(len(sources))
            for j in top_k[i].tolist()
        ]
        cfg.num_samples = cfg.rerank_top_k
        del qe_model
        torch.cuda.empty_cache()

    if cfg.gpus > 0:
        model.cuda()
    model.eval()

    src_embeddings, mt_embeddings = build_embeddings(
        sources, translations, model, cfg.batch_size
    )
    mt_embeddings = mt_embeddings.reshape(len(sources), cfg.num_samples, -1)
    mbr_matrix = mbr_decoding(src_embeddings, mt_embeddings, model)

    translations = [
        translations[i : i + cfg.num_samples]
        for i in range(0, len(translations), cfg.num_samples)
    ]
    assert len(sources) == len(translations)

    best_candidates = []
    for i, samples in enumerate(translations):
        best_cand_idx = torch.argmax(mbr_matrix[i, :])
        best_candidates.append(samples[best_cand_idx])

    with open(cfg.output, "w", encoding="utf-8") as fp:
        for sample in best_candidates:
            fp.write(sample + "\n")

    result = Prediction(candidates=best_candidates, mbr_matrix=mbr_matrix.tolist())
    return result


if __name__ == "__main__":
    mbr_command()
