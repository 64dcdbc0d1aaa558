#!/usr/bin/env python3
# Copyright 2021 Xiaomi Corporation (Author: Liyong Guo, Fangjun Kuang)
"""
Decode a CTC model with an HLG graph (1best / whole-lattice rescoring).

    ./conformer_ctc/decode.py --epoch 25 --avg 10 --method 1best --max-duration 300
"""
import argparse
import logging
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import k2
import sentencepiece as spm
import torch
import torch.nn as nn
from asr_datamodule import LibriSpeechAsrDataModule
from conformer import Conformer

from icefall.checkpoint import average_checkpoints, load_checkpoint
from icefall.decode import get_lattice, nbest_decoding, one_best_decoding, rescore_with_whole_lattice
from icefall.lexicon import Lexicon
from icefall.utils import AttributeDict, get_texts, setup_logger, store_transcripts, write_error_stats


def get_parser():
    parser = argparse.ArgumentParser(formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--epoch", type=int, default=25)
    parser.add_argument("--avg", type=int, default=10)
    parser.add_argument("--method", type=str, default="1best", help="1best, nbest, whole-lattice-rescoring")
    parser.add_argument("--num-paths", type=int, default=100)
    parser.add_argument("--lm-dir", type=str, default="data/lm", help="Directory containing G_4_gram.pt")
    parser.add_argument("--exp-dir", type=str, default="conformer_ctc/exp")
    parser.add_argument("--lang-dir", type=str, default="data/lang_bpe_500")
    return parser


def get_params() -> AttributeDict:
    return AttributeDict(
        {
            "subsampling_factor": 4,
            "feature_dim": 80,
            "nhead": 8,
            "attention_dim": 512,
            "num_decoder_layers": 6,
            "search_beam": 20,
            "output_beam": 8,
            "min_active_states": 30,
            "max_active_states": 10000,
            "use_double_scores": True,
        }
    )


def decode_one_batch(params, model, HLG, batch, word_table, G=None) -> Dict[str, List[List[str]]]:
    device = HLG.device
    feature = batch["inputs"]
    feature = feature.to(device)
    supervisions = batch["supervisions"]

    nnet_output, memory, memory_key_padding_mask = model(feature, supervisions)
    # nnet_output is (N, T, C)

    supervision_segments = torch.stack(
        (
            supervisions["sequence_idx"],
            supervisions["start_frame"] // params.subsampling_factor,
            supervisions["num_frames"] // params.subsampling_factor,
        ),
        1,
    ).to(torch.int32)

    lattice = get_lattice(
        nnet_output=nnet_output,
        decoding_graph=HLG,
        supervision_segments=supervision_segments,
        search_beam=params.search_beam,
        output_beam=params.output_beam,
        min_active_states=params.min_active_states,
        max_active_states=params.max_active_states,
        subsampling_factor=params.subsampling_factor,
    )

    if params.method == "1best":
        best_path = one_best_decoding(lattice=lattice, use_double_scores=params.use_double_scores)
        hyps = get_texts(best_path)
        hyps = [[word_table[i] for i in ids] for ids in hyps]
        return {"no_rescore": hyps}

    assert params.method == "whole-lattice-rescoring"
    best_path_dict = rescore_with_whole_lattice(lattice=lattice, G_with_epsilon_loops=G, lm_scale_list=[0.5, 0.7, 0.9])
    ans = dict()
    for lm_scale_str, best_path in best_path_dict.items():
        hyps = get_texts(best_path)
        ans[lm_scale_str] = [[word_table[i] for i in ids] for ids in hyps]
    return ans


@torch.no_grad()
def main():
    parser = get_parser()
    LibriSpeechAsrDataModule.add_arguments(parser)
    args = parser.parse_args()
    args.exp_dir = Path(args.exp_dir)
    args.lang_dir = Path(args.lang_dir)
    args.lm_dir = Path(args.lm_dir)

    params = get_params()
    params.update(vars(args))
    setup_logger(f"{params.exp_dir}/log-{params.method}/log-decode")
    logging.info("Decoding started")

    lexicon = Lexicon(params.lang_dir)
    max_token_id = max(lexicon.tokens)
    num_classes = max_token_id + 1  # +1 for the blank

    device = torch.device("cpu")
    if torch.cuda.is_available():
        device = torch.device("cuda", 0)

    logging.info(f"device: {device}")

    HLG = k2.Fsa.from_dict(torch.load(f"{params.lang_dir}/HLG.pt", map_location=device))
    HLG = HLG.to(device)
    assert HLG.requires_grad is False

    if not hasattr(HLG, "lm_scores"):
        HLG.lm_scores = HLG.scores.clone()

    G = None
    if params.method == "whole-lattice-rescoring":
        first_word_disambig_id = lexicon.word_table["#0"]
        G = k2.Fsa.from_dict(torch.load(params.lm_dir / "G_4_gram.pt", map_location="cpu"))
        G.labels[G.labels >= first_word_disambig_id] = 0
        G.__dict__["_properties"] = None
        G = k2.Fsa.from_fsas([G]).to(device)
        G = k2.arc_sort(G)
        G.lm_scores = G.scores.clone()

    model = Conformer(
        num_features=params.feature_dim,
        nhead=params.nhead,
        d_model=params.attention_dim,
        num_classes=num_classes,
        subsampling_factor=params.subsampling_factor,
        num_decoder_layers=params.num_decoder_layers,
    )
    filenames = [f"{params.exp_dir}/epoch-{i}.pt" for i in range(params.epoch - params.avg + 1, params.epoch + 1)]
    model.load_state_dict(average_checkpoints(filenames, device=device))
    model.to(device)
    model.eval()

    librispeech = LibriSpeechAsrDataModule(args)
    test_dl = librispeech.test_dataloaders(librispeech.test_clean_cuts())

    results = defaultdict(list)
    for batch_idx, batch in enumerate(test_dl):
        texts = batch["supervisions"]["text"]
        hyps_dict = decode_one_batch(params, model, HLG, batch, lexicon.word_table, G=G)
        for lm_scale, hyps in hyps_dict.items():
            for ref, hyp in zip(texts, hyps):
                results[lm_scale].append((ref.split(), hyp))
        if batch_idx % 100 == 0:
            logging.info(f"batch {batch_idx}, cuts processed until now is {len(results)}")

    for key, res in results.items():
        store_transcripts(filename=params.exp_dir / f"recogs-test-clean-{key}.txt", texts=res)
        write_error_stats(params.exp_dir / f"errs-test-clean-{key}.txt", f"test-clean-{key}", res)

    logging.info("Done!")


torch.set_num_threads(1)
torch.set_num_interop_threads(1)

if __name__ == "__main__":
    main()
