#!/usr/bin/env python3
# Copyright      2022  Xiaomi Corp.        (authors: Fangjun Kuang)
#
# See LICENSE for clarification regarding multiple authors
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
A server for streaming ASR recognition. By streaming it means the audio samples
are coming in real-time. You don't need to wait until all audio samples are
captured before sending them for recognition.

It supports multiple clients sending at the same time.

Usage:
    ./streaming_server.py --help

    ./streaming_server.py \
      --port 6006 \
      --use-gpu true \
      --nn-model-filename ./cpu_jit.pt \
      --bpe-model-filename ./bpe.model
"""

import argparse
import asyncio
import http
import json
import logging
import math
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import List, Optional, Tuple

import numpy as np
import sentencepiece as spm
import torch
import websockets
from stream import Stream, stack_states, unstack_states

from sherpa import streaming_greedy_search


def str2bool(v):
    return str(v).lower() in ("yes", "true", "t", "y", "1")


def get_args():
    parser = argparse.ArgumentParser(
        formatter_class=argparse.ArgumentDefaultsHelpFormatter
    )

    parser.add_argument("--port", type=int, default=6006, help="The server will listen on this port")
    parser.add_argument(
        "--nn-model-filename",
        type=str,
        help="""The torchscript model. You can use
          icefall/egs/librispeech/ASR/pruned_transducer_statelessX/export.py --jit=1
        to generate this model.
        """,
    )
    parser.add_argument("--bpe-model-filename", type=str, help="The BPE model")
    parser.add_argument(
        "--use-gpu",
        type=str2bool,
        default=False,
        help="True to use GPU (cuda:0) for the neural network computation",
    )
    parser.add_argument("--decode-chunk-size", type=int, default=8)
    parser.add_argument("--decode-left-context", type=int, default=32)
    parser.add_argument("--nn-pool-size", type=int, default=1, help="Number of threads for NN computation")
    parser.add_argument("--max-batch-size", type=int, default=50)
    parser.add_argument("--max-wait-ms", type=float, default=10)
    parser.add_argument("--max-message-size", type=int, default=(1 << 20))
    parser.add_argument("--max-queue-size", type=int, default=32)
    parser.add_argument("--max-active-connections", type=int, default=500)
    parser.add_argument(
        "--nvtx",
        type=str2bool,
        default=False,
        help="Emit NVTX ranges around each NN batch (for Nsight Systems)",
    )

    return parser.parse_args()


class StreamingServer(object):
    def __init__(
        self,
        nn_model_filename: str,
        bpe_model_filename: str,
        use_gpu: bool,
        nn_pool_size: int,
        max_wait_ms: float,
        max_batch_size: int,
        max_message_size: int,
        max_queue_size: int,
        max_active_connections: int,
        decode_chunk_size: int,
        decode_left_context: int,
        nvtx: bool = False,
    ):
        if use_gpu and torch.cuda.is_available():
            device = torch.device("cuda", 0)
        else:
            device = torch.device("cpu")
        logging.info(f"Using device: {device}")

        self.model = torch.jit.load(nn_model_filename, map_location=device)
        self.model.eval()
        self.device = device
        self.nvtx = nvtx

        self.sp = spm.SentencePieceProcessor()
        self.sp.load(bpe_model_filename)
        self.blank_id = self.model.decoder.blank_id
        self.context_size = self.model.decoder.context_size

        self.decode_chunk_size = decode_chunk_size
        self.decode_left_context = decode_left_context

        # Warm up the model so that the first client does not pay the
        # cost of the TorchScript profiling executor / cuDNN autotuning.
        with torch.no_grad():
            x = torch.zeros(1, 32, 80, device=self.device)
            x_lens = torch.tensor([32], device=self.device)
            self.model.encoder(x, x_lens)
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)

        self.nn_pool = ThreadPoolExecutor(
            max_workers=nn_pool_size,
            thread_name_prefix="nn",
        )

        self.stream_queue = asyncio.Queue()
        self.max_wait_ms = max_wait_ms
        self.max_batch_size = max_batch_size
        self.max_message_size = max_message_size
        self.max_queue_size = max_queue_size
        self.max_active_connections = max_active_connections

        self.current_active_connections = 0
        self.start_time = time.time()

    async def warmup(self) -> None:
        """Do nothing except push a few requests to the nn thread pool."""
        await asyncio.sleep(0.1)

    async def stream_consumer_task(self):
        """This function extracts streams from the queue, batches them up, sends
        them to the RNN-T model for computation and decoding.
        """
        while True:
            if self.stream_queue.empty():
                await asyncio.sleep(self.max_wait_ms / 1000)
                continue

            batch = []
            try:
                while len(batch) < self.max_batch_size:
                    item = self.stream_queue.get_nowait()

                    assert item[0].num_processed_frames >= 0
                    batch.append(item)
            except asyncio.QueueEmpty:
                pass
            stream_list = [b[0] for b in batch]
            future_list = [b[1] for b in batch]

            loop = asyncio.get_running_loop()
            await loop.run_in_executor(
                self.nn_pool,
                self.run_model_and_do_search,
                stream_list,
            )

            for f in future_list:
                self.stream_queue.task_done()
                f.set_result(None)

    def run_model_and_do_search(self, stream_list: List[Stream]) -> None:
        """Run the encoder on a batch of streams and update their hyps."""
        if self.nvtx:
            torch.cuda.nvtx.range_push(f"nn-batch-{len(stream_list)}")

        chunk_size = self.decode_chunk_size
        features = [s.features[: chunk_size * 2 + 7] for s in stream_list]
        features = torch.nn.utils.rnn.pad_sequence(
            features, batch_first=True, padding_value=math.log(1e-10)
        ).to(self.device)
        feature_lens = torch.tensor([chunk_size * 2 + 7] * len(stream_list), device=self.device)

        states = stack_states([s.states for s in stream_list])
        processed_lens = torch.tensor(
            [s.num_processed_frames for s in stream_list], device=self.device
        )

        with torch.no_grad():
            encoder_out, encoder_out_lens, next_states = self.model.encoder.streaming_forward(
                x=features,
                x_lens=feature_lens,
                states=states,
                processed_lens=processed_lens,
                left_context=self.decode_left_context,
            )
            encoder_out = self.model.joiner.encoder_proj(encoder_out)
            hyps = [s.hyp for s in stream_list]
            next_hyps = streaming_greedy_search(
                model=self.model, encoder_out=encoder_out, hyps=hyps
            )

        next_states = unstack_states(next_states)
        for i, s in enumerate(stream_list):
            s.states = next_states[i]
            s.hyp = next_hyps[i]
            s.features = s.features[chunk_size * 2 :]
            s.num_processed_frames += chunk_size

        if self.nvtx:
            torch.cuda.nvtx.range_pop()

    async def process_request(
        self, path: str, request_headers: websockets.Headers
    ) -> Optional[Tuple[http.HTTPStatus, websockets.Headers, bytes]]:
        if path == "/stats":
            stats = {
                "device": str(self.device),
                "uptime_s": round(time.time() - self.start_time, 1),
                "active_connections": self.current_active_connections,
            }
            if self.device.type == "cuda":
                stats["gpu_util"] = torch.cuda.utilization(self.device)
                stats["gpu_mem_util"] = torch.cuda.memory_usage(self.device)
                stats["allocated_mb"] = torch.cuda.memory_allocated(self.device) // 2**20
            return http.HTTPStatus.OK, [("Content-Type", "application/json")], json.dumps(stats).encode()

        if self.current_active_connections < self.max_active_connections:
            self.current_active_connections += 1
            return None

        # Refuse new connections
        status = http.HTTPStatus.SERVICE_UNAVAILABLE  # 503
        header = {"Hint": "The server is overloaded. Please retry later."}
        response = b"The server is busy. Please retry later."

        return status, header, response

    async def run(self, port: int):
        task = asyncio.create_task(self.stream_consumer_task())
        await self.warmup()

        async with websockets.serve(
            self.handle_connection,
            host="",
            port=port,
            max_size=self.max_message_size,
            max_queue=self.max_queue_size,
            process_request=self.process_request,
        ):
            await asyncio.Future()  # run forever

        await task  # not reachable

    async def handle_connection(self, socket: websockets.WebSocketServerProtocol):
        """Receive audio samples from the client, process it, and send
        decoding result back to the client.
        """
        try:
            await self.handle_connection_impl(socket)
        finally:
            # Decrement so that it can accept new connections
            self.current_active_connections -= 1

            logging.info(
                f"Disconnected: {socket.remote_address}. "
                f"Number of connections: {self.current_active_connections}/{self.max_active_connections}"  # noqa
            )

    async def handle_connection_impl(self, socket: websockets.WebSocketServerProtocol):
        logging.info(f"Connected: {socket.remote_address}")
        stream = Stream(context_size=self.context_size, blank_id=self.blank_id, initial_states=None)
        async for message in socket:
            samples = np.frombuffer(message, dtype=np.float32)
            stream.accept_waveform(16000, torch.from_numpy(samples))
            await socket.send(self.sp.decode(stream.hyp[self.context_size :]))


@torch.no_grad()
def main():
    args = get_args()
    logging.info(vars(args))

    server = StreamingServer(
        nn_model_filename=args.nn_model_filename,
        bpe_model_filename=args.bpe_model_filename,
        use_gpu=args.use_gpu,
        nn_pool_size=args.nn_pool_size,
        max_batch_size=args.max_batch_size,
        max_wait_ms=args.max_wait_ms,
        max_message_size=args.max_message_size,
        max_queue_size=args.max_queue_size,
        max_active_connections=args.max_active_connections,
        decode_chunk_size=args.decode_chunk_size,
        decode_left_context=args.decode_left_context,
        nvtx=args.nvtx,
    )
    asyncio.run(server.run(args.port))


# See https://github.com/pytorch/pytorch/issues/38342
# and https://github.com/pytorch/pytorch/issues/33354
#
# If we don't do this, the delay increases whenever there is
# a new request that changes the actual batch size.
# If you use `py-spy dump --pid <server-pid> --native`, you will
# see a lot of time is spent in re-compiling the torch script model.
torch._C._jit_set_profiling_executor(False)
torch._C._jit_set_profiling_mode(False)
torch._C._set_graph_executor_optimize(False)
"""
// Use the following in C++
torch::jit::getExecutorMode() = false;
torch::jit::getProfilingMode() = false;
torch::jit::setGraphExecutorOptimize(false);
"""

if __name__ == "__main__":
    log_format = "%(asctime)s %(levelname)s [%(filename)s:%(lineno)d] %(message)s"  # noqa
    logging.basicConfig(format=log_format, level=logging.INFO)
    main()
