#!/usr/bin/python3
import sys
import os
import argparse
import time
import logging
from collections import defaultdict

import numpy as np
import torch

from katago.train import modelconfigs
from katago.train import data_processing_pytorch
from katago.train.load_model import load_model
from katago.train.metrics_pytorch import Metrics
from katago.train.metrics_logging import accumulate_metrics, log_metrics

# HANDLE COMMAND AND ARGS -------------------------------------------------------------------

description = """
Test neural net on Go positions from npz files of batches from selfplay.
"""

parser = argparse.ArgumentParser(description=description)
parser.add_argument('-npzdir', help='Directory with npz data', required=True)
parser.add_argument('-checkpoint', help='Checkpoint to test', required=True)
parser.add_argument('-pos-len', help='Spatial length of expected training data', type=int, required=True)
parser.add_argument('-batch-size', help='Batch size to use for testing', type=int, required=True)
parser.add_argument('-use-swa', help='Use SWA model', action="store_true", required=False)
parser.add_argument('-max-batches', help='Maximum number of batches for testing', type=int, required=False)
parser.add_argument('-gpu-idx', help='GPU idx', type=int, required=False)
parser.add_argument('-benchmark-batches', help='Also time this many forward passes', type=int, default=0, required=False)

args = vars(parser.parse_args())


def main(args):
    npzdir = args["npzdir"]
    checkpoint_file = args["checkpoint"]
    pos_len = args["pos_len"]
    batch_size = args["batch_size"]
    use_swa = args["use_swa"]
    max_batches = args["max_batches"]
    gpu_idx = args["gpu_idx"]
    benchmark_batches = args["benchmark_batches"]

    world_size = 1
    rank = 0

    # SET UP LOGGING -------------------------------------------------------------

    logging.root.handlers = []
    logging.basicConfig(
        level=logging.INFO,
        format="%(message)s",
        handlers=[
            logging.StreamHandler(stream=sys.stdout)
        ],
    )
    np.set_printoptions(linewidth=150)

    logging.info(str(sys.argv))

    # FIGURE OUT GPU ------------------------------------------------------------
    if gpu_idx is not None and torch.cuda.is_available():
        torch.cuda.set_device(gpu_idx)
        logging.info("Using GPU device: " + torch.cuda.get_device_name())
        device = torch.device("cuda", gpu_idx)
    elif torch.cuda.is_available():
        device = torch.device("cuda")
        logging.info("Using default GPU device")
    else:
        device = torch.device("cpu")
        logging.warning("WARNING: No GPU, using CPU")

    # LOAD MODEL ---------------------------------------------------------------------
    model, swa_model, _ = load_model(checkpoint_file, use_swa, device=device, pos_len=pos_len, verbose=True)
    model_config = model.config
    if swa_model is not None:
        model = swa_model.module
    model.eval()

    metrics_obj = Metrics(batch_size, world_size, model)

    val_files = [os.path.join(npzdir, fname) for fname in os.listdir(npzdir) if fname.endswith(".npz")]
    val_files.sort()
    logging.info(f"Found {len(val_files)} npz files to test on")

    # TEST ---------------------------------------------------------------------------
    metric_sums = defaultdict(float)
    metric_weights = defaultdict(float)
    num_batches_tested = 0
    total_forward_time = 0.0
    with torch.no_grad():
        for batch in data_processing_pytorch.read_npz_training_data(
            val_files,
            batch_size,
            world_size,
            rank,
            pos_len=pos_len,
            device=device,
            randomize_symmetries=True,
            model_config=model_config,
        ):
            if max_batches is not None and num_batches_tested >= max_batches:
                break

            t0 = time.perf_counter()
            model_outputs = model(batch["binaryInputNCHW"], batch["globalInputNC"])
            postprocessed = model.postprocess_output(model_outputs)
            total_forward_time += time.perf_counter() - t0

            metrics = metrics_obj.metrics_dict_batchwise(
                model,
                postprocessed,
                extra_outputs=None,
                batch=batch,
                is_training=False,
                main_loss_scale=None,
                intermediate_loss_scale=None,
            )
            accumulate_metrics(metric_sums, metric_weights, metrics, batch_size, decay=1.0, new_weight=1.0)
            num_batches_tested += 1
            if num_batches_tested % 100 == 0:
                logging.info(f"Tested {num_batches_tested} batches")

        log_metrics(metric_sums, metric_weights, {}, None)

        # Benchmark pure inference throughput on a synthetic batch
        if benchmark_batches > 0:
            num_bin = modelconfigs.get_num_bin_input_features(model_config)
            num_global = modelconfigs.get_num_global_input_features(model_config)
            inputs = torch.zeros((batch_size, num_bin, pos_len, pos_len), dtype=torch.float32, device=device)
            inputs[:, 0, :, :] = 1.0
            globals_ = torch.zeros((batch_size, num_global), dtype=torch.float32, device=device)
            def sync():
                # Kernels are launched asynchronously, wait for them before reading the clock
                if device.type == "cuda":
                    torch.cuda.synchronize()

            for _ in range(3):
                model(inputs, globals_)
            sync()
            t0 = time.perf_counter()
            for _ in range(benchmark_batches):
                model(inputs, globals_)
            sync()
            elapsed = time.perf_counter() - t0
            logging.info("Benchmark: %.1f positions/s" % (benchmark_batches * batch_size / elapsed))

    if num_batches_tested > 0:
        logging.info("Average forward time per batch: %.4f s" % (total_forward_time / num_batches_tested))


if __name__ == "__main__":
    main(args)
