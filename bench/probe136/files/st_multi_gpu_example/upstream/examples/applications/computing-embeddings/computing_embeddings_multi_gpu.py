"""
This example starts multiple processes (1 per GPU), which encode
sentences in parallel. This gives a near linear speed-up
when encoding large text collections.

Usage:
    CUDA_VISIBLE_DEVICES=0,1 python computing_embeddings_multi_gpu.py
    python computing_embeddings_multi_gpu.py --devices cuda:0 cuda:1 cuda:2 cuda:3
"""

import argparse
import logging
import time

import torch

from sentence_transformers import LoggingHandler, SentenceTransformer

logging.basicConfig(
    format="%(asctime)s - %(message)s", datefmt="%Y-%m-%d %H:%M:%S", level=logging.INFO, handlers=[LoggingHandler()]
)
logger = logging.getLogger(__name__)


def parse_args():
    parser = argparse.ArgumentParser(description="Encode a large corpus on several GPUs")
    parser.add_argument("--model", default="all-MiniLM-L6-v2")
    parser.add_argument("--num_sentences", type=int, default=100_000)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--chunk_size", type=int, default=None)
    parser.add_argument(
        "--devices",
        nargs="+",
        default=None,
        help="Target devices, e.g. cuda:0 cuda:1. Defaults to every visible GPU.",
    )
    return parser.parse_args()


# Important, you need to shield your code with if __name__. Otherwise, CUDA runs into issues when spawning new processes.
if __name__ == "__main__":
    args = parse_args()

    # Create a large list of 100k sentences
    sentences = ["This is sentence {}".format(i) for i in range(args.num_sentences)]

    # Define the model
    model = SentenceTransformer(args.model)

    target_devices = args.devices
    if target_devices is None:
        target_devices = [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    logger.info(f"Encoding on {len(target_devices)} devices: {target_devices}")

    # Start the multi-process pool on all available CUDA devices
    pool = model.start_multi_process_pool(target_devices=target_devices)

    # Compute the embeddings using the multi-process pool
    start = time.time()
    emb = model.encode_multi_process(sentences, pool, batch_size=args.batch_size, chunk_size=args.chunk_size)
    elapsed = time.time() - start
    print("Embeddings computed. Shape:", emb.shape)
    print(f"Throughput: {len(sentences) / elapsed:.1f} sentences/s on {len(target_devices)} GPUs")

    # Optional: Stop the processes in the pool
    model.stop_multi_process_pool(pool)
