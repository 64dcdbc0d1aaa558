import argparse
import ast
import csv
from pathlib import Path

import numpy as np
import torch

import tensorrt_llm
import tensorrt_llm.profiler
from tensorrt_llm.logger import logger
from tensorrt_llm.runtime import PYTHON_BINDINGS, ModelRunner

if PYTHON_BINDINGS:
    from tensorrt_llm.runtime import ModelRunnerCpp

from utils import DEFAULT_HF_MODEL_DIRS, load_tokenizer, read_model_name


def parse_arguments(args=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--max_output_len", type=int, required=True)
    parser.add_argument("--engine_dir", type=str, default="engine_outputs")
    parser.add_argument("--tokenizer_dir", default=None)
    parser.add_argument("--input_text", type=str, nargs="+", default=["Born in north-east France, Soyer trained as a"])
    parser.add_argument("--input_file", type=str, default=None)
    parser.add_argument("--output_csv", type=str, default=None)
    parser.add_argument("--use_py_session", action="store_true", help="use the python runtime session instead of the C++ one")
    parser.add_argument("--num_beams", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--top_k", type=int, default=1)
    parser.add_argument("--top_p", type=float, default=0.0)
    parser.add_argument("--streaming", action="store_true")
    parser.add_argument("--run_profiling", action="store_true")
    parser.add_argument("--log_level", type=str, default="info")
    parser.add_argument("--cuda_graph_mode", action="store_true")
    return parser.parse_args(args=args)


def parse_input(tokenizer, input_text=None, input_file=None, pad_id=None, max_input_length=923):
    batch_input_ids = []
    if input_file is None:
        for curr_text in input_text:
            input_ids = tokenizer.encode(curr_text, add_special_tokens=True, truncation=True, max_length=max_input_length)
            batch_input_ids.append(input_ids)
    elif input_file.endswith(".csv"):
        with open(input_file, "r") as csv_file:
            for line in csv.reader(csv_file, delimiter=","):
                input_ids = np.array(line, dtype="int32")
                batch_input_ids.append(input_ids[-max_input_length:])
    else:
        raise ValueError(f"unsupported input file {input_file}")
    return [torch.tensor(x, dtype=torch.int32) for x in batch_input_ids]


def print_output(tokenizer, output_ids, input_lengths, sequence_lengths, output_csv=None):
    batch_size, num_beams, _ = output_ids.size()
    rows = []
    for b in range(batch_size):
        inputs = output_ids[b][0][:input_lengths[b]].tolist()
        print(f'Input [Text {b}]: "{tokenizer.decode(inputs)}"')
        for beam in range(num_beams):
            out_end = sequence_lengths[b][beam]
            outputs = output_ids[b][beam][input_lengths[b]:out_end].tolist()
            print(f'Output [Text {b} Beam {beam}]: "{tokenizer.decode(outputs)}"')
            rows.append(outputs)
    if output_csv is not None:
        with open(output_csv, "w") as f:
            csv.writer(f).writerows(rows)


def main(args):
    runtime_rank = tensorrt_llm.mpi_rank()
    logger.set_level(args.log_level)
    model_name, model_version = read_model_name(args.engine_dir)
    tokenizer, pad_id, end_id = load_tokenizer(tokenizer_dir=args.tokenizer_dir or DEFAULT_HF_MODEL_DIRS[model_name],
                                               model_name=model_name, model_version=model_version)
    batch_input_ids = parse_input(tokenizer, args.input_text, args.input_file, pad_id)
    input_lengths = [x.size(0) for x in batch_input_ids]

    runner_cls = ModelRunner if args.use_py_session else ModelRunnerCpp
    runner_kwargs = dict(engine_dir=args.engine_dir, rank=runtime_rank, debug_mode=False)
    if not args.use_py_session:
        runner_kwargs.update(max_batch_size=len(batch_input_ids), max_input_len=max(input_lengths),
                             max_output_len=args.max_output_len, max_beam_width=args.num_beams)
    if args.use_py_session and args.cuda_graph_mode:
        runner_kwargs.update(cuda_graph_mode=True)
    runner = runner_cls.from_dir(**runner_kwargs)

    with torch.no_grad():
        outputs = runner.generate(
            batch_input_ids,
            max_new_tokens=args.max_output_len,
            end_id=end_id,
            pad_id=pad_id,
            temperature=args.temperature,
            top_k=args.top_k,
            top_p=args.top_p,
            num_beams=args.num_beams,
            streaming=args.streaming,
            output_sequence_lengths=True,
            return_dict=True,
        )
        torch.cuda.synchronize()  # make sure every rank finished decoding

    if runtime_rank == 0:
        output_ids = outputs["output_ids"]
        sequence_lengths = outputs["sequence_lengths"]
        print_output(tokenizer, output_ids, input_lengths, sequence_lengths, args.output_csv)

    if args.run_profiling:
        ite = 10
        for _ in range(ite):
            with torch.no_grad():
                runner.generate(batch_input_ids, max_new_tokens=args.max_output_len, end_id=end_id, pad_id=pad_id)
                torch.cuda.synchronize()  # warmup
        tensorrt_llm.profiler.start("tmp")
        for _ in range(ite):
            with torch.no_grad():
                runner.generate(batch_input_ids, max_new_tokens=args.max_output_len, end_id=end_id, pad_id=pad_id)
                torch.cuda.synchronize()
        tensorrt_llm.profiler.stop("tmp")
        print(f"batch_size: {len(batch_input_ids)}, avg latency of {ite} iterations: : "
              f"{tensorrt_llm.profiler.elapsed_time_in_sec('tmp') / ite} sec")


if __name__ == "__main__":
    main(parse_arguments())
