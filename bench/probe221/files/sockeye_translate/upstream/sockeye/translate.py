# Copyright 2017--2023 Amazon.com, Inc. or its affiliates. All Rights Reserved.
#
# Licensed under the Apache License, Version 2.0 (the "License"). You may not
# use this file except in compliance with the License. A copy of the License
# is located at
#
#     http://aws.amazon.com/apache2.0/

"""
Translation CLI.
"""
import argparse
import logging
import sys
import time
from contextlib import ExitStack
from typing import Generator, Optional, List

import torch

from . import arguments
from . import constants as C
from . import inference
from . import utils
from .lexicon import load_restrict_lexicon
from .log import setup_main_logger
from .model import load_models
from .output_handler import get_output_handler, OutputHandler
from .utils import check_condition

logger = logging.getLogger(__name__)


def main():
    params = arguments.ConfigArgumentParser(description='Translate CLI')
    arguments.add_translate_cli_args(params)
    args = params.parse_args()
    run_translate(args)


def run_translate(args: argparse.Namespace):
    # Seed randomly unless a seed has been passed
    utils.seed_rngs(args.seed if args.seed is not None else int(time.time()))

    if args.output is not None:
        setup_main_logger(console=not args.quiet,
                          file_logging=not args.no_logfile,
                          path="%s.%s" % (args.output, C.LOG_NAME),
                          level=args.loglevel)
    else:
        setup_main_logger(file_logging=False, level=args.loglevel)

    utils.log_basic_info(args)

    if args.nbest_size > 1:
        if args.output_type != C.OUTPUT_HANDLER_JSON:
            logger.warning("For nbest translation, you must specify `--output-type '%s'; overriding your setting of "
                           "'%s'.", C.OUTPUT_HANDLER_JSON, args.output_type)
            args.output_type = C.OUTPUT_HANDLER_JSON
    output_handler = get_output_handler(args.output_type, args.output)

    device = utils.init_device(args)
    logger.info(f"Translate Device: {device}")

    if args.dtype == C.DTYPE_INT8:
        check_condition(device.type == "cpu", "int8 dynamic quantization is only supported on CPU (--use-cpu)")

    models, source_vocabs, target_vocabs = load_models(device=device,
                                                       model_folders=args.models,
                                                       checkpoints=args.checkpoints,
                                                       dtype=args.dtype,
                                                       clamp_to_dtype=args.clamp_to_dtype,
                                                       inference_only=True)

    restrict_lexicon = None
    if args.restrict_lexicon is not None:
        restrict_lexicon = load_restrict_lexicon(args.restrict_lexicon, source_vocabs[0], target_vocabs[0],
                                                 k=args.restrict_lexicon_topk)

    brevity_penalty_weight = args.brevity_penalty_weight
    if args.brevity_penalty_type == C.BREVITY_PENALTY_CONSTANT:
        if args.brevity_penalty_constant_length_ratio > 0.0:
            constant_length_ratio = args.brevity_penalty_constant_length_ratio
        else:
            constant_length_ratio = sum(model.length_ratio_mean for model in models) / len(models)
            logger.info("Using average of constant length ratios saved in the model configs: %f",
                        constant_length_ratio)
    elif args.brevity_penalty_type == C.BREVITY_PENALTY_LEARNED:
        constant_length_ratio = -1.0
    elif args.brevity_penalty_type == C.BREVITY_PENALTY_NONE:
        brevity_penalty_weight = 0.0
        constant_length_ratio = -1.0
    else:
        raise ValueError("Unknown brevity penalty type %s" % args.brevity_penalty_type)

    scorer = inference.CandidateScorer(
        length_penalty_alpha=args.length_penalty_alpha,
        length_penalty_beta=args.length_penalty_beta,
        brevity_penalty_weight=brevity_penalty_weight)
    scorer.to(models[0].dtype)

    translator = inference.Translator(device=device,
                                      ensemble_mode=args.ensemble_mode,
                                      scorer=scorer,
                                      batch_size=args.batch_size,
                                      beam_size=args.beam_size,
                                      beam_search_stop=args.beam_search_stop,
                                      nbest_size=args.nbest_size,
                                      models=models,
                                      source_vocabs=source_vocabs,
                                      target_vocabs=target_vocabs,
                                      restrict_lexicon=restrict_lexicon,
                                      strip_unknown_words=args.strip_unknown_words,
                                      sample=args.sample,
                                      output_scores=output_handler.reports_score(),
                                      constant_length_ratio=constant_length_ratio,
                                      max_output_length_num_stds=args.max_output_length_num_stds,
                                      max_input_length=args.max_input_length,
                                      max_output_length=args.max_output_length,
                                      prevent_unk=args.prevent_unk,
                                      greedy=args.greedy)
    read_and_translate(translator=translator,
                       output_handler=output_handler,
                       chunk_size=args.chunk_size,
                       input_file=args.input,
                       input_factors=args.input_factors,
                       input_is_json=args.json_input)


def make_inputs(input_file: Optional[str], translator: inference.Translator,
                input_is_json: bool) -> Generator[inference.TranslatorInput, None, None]:
    """Generates TranslatorInput instances from input (stdin or file)."""
    stream = sys.stdin if input_file is None else open(input_file, encoding="utf-8")
    try:
        for sentence_id, line in enumerate(stream, 1):
            if input_is_json:
                yield inference.make_input_from_json_string(sentence_id=sentence_id, json_string=line,
                                                            translator=translator)
            else:
                yield inference.make_input_from_factored_string(sentence_id=sentence_id, factored_string=line,
                                                                translator=translator)
    finally:
        if input_file is not None:
            stream.close()


def read_and_translate(translator: inference.Translator,
                       output_handler: OutputHandler,
                       chunk_size: Optional[int],
                       input_file: Optional[str] = None,
                       input_factors: Optional[List[str]] = None,
                       input_is_json: bool = False) -> None:
    """
    Reads from either a file or stdin and translates each line, calling the output_handler with the result.
    """
    batch_size = translator.max_batch_size
    if chunk_size is None:
        if translator.max_batch_size == 1:
            # No batching, therefore there is not need to read segments in chunks.
            chunk_size = C.CHUNK_SIZE_NO_BATCHING
        else:
            # Get a constant number of batches per call to Translator.translate.
            chunk_size = C.CHUNK_SIZE_PER_BATCH_SEGMENT * translator.max_batch_size
    else:
        if chunk_size < translator.max_batch_size:
            logger.warning("You specified a chunk size (%d) smaller than the max batch size (%d). This will lead to "
                           "a reduction in translation efficiency. Consider choosing a larger chunk size.",
                           chunk_size, batch_size)

    logger.info("Translating...")

    total_time, total_lines = 0.0, 0
    for chunk in utils.grouper(make_inputs(input_file, translator, input_is_json), size=chunk_size):
        chunk_time = translate(output_handler, chunk, translator)
        total_lines += len(chunk)
        total_time += chunk_time

    if total_lines != 0:
        logger.info("Processed %d lines. Total time: %.4f, sec/sent: %.4f, sent/sec: %.4f",
                    total_lines, total_time, total_time / total_lines, total_lines / total_time)
    else:
        logger.info("Processed 0 lines.")


def translate(output_handler: OutputHandler,
              trans_inputs: List[inference.TranslatorInput],
              translator: inference.Translator) -> float:
    """
    Translates each line from source_data, calling output handler after translating a batch.

    :return: Total time taken.
    """
    tic = time.time()
    trans_outputs = translator.translate(trans_inputs)
    if translator.device.type == "cuda":
        # make the timing honest: wait for queued kernels
        torch.cuda.synchronize(translator.device)
    total_time = time.time() - tic
    batch_time = total_time / len(trans_inputs)
    for trans_input, trans_output in zip(trans_inputs, trans_outputs):
        output_handler.handle(trans_input, trans_output, batch_time)
    return total_time


if __name__ == '__main__':
    main()
