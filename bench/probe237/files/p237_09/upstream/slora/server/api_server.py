# Adapted from lightllm's api_server: HTTP front-end of the S-LoRA server.
#
# Processes:
#   http server (this file) -> router (batching, adapter scheduling, GPU workers via rpyc)
#                          <- detokenization
import argparse
import asyncio
import json
import multiprocessing as mp
import os
import sys
import time
import uuid
from http import HTTPStatus
from typing import AsyncGenerator

import torch
import uvicorn
import uvloop
from fastapi import BackgroundTasks, FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from slora.server.detokenization.manager import start_detokenization_process
from slora.server.httpserver.manager import HttpServerManager
from slora.server.input_params import InputParams
from slora.server.router.manager import start_router_process
from slora.server.sampling_params import SamplingParams
from slora.utils.net_utils import alloc_can_use_network_port

asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())

GB = 1024 ** 3
MB = 1024 ** 2
TIMEOUT_KEEP_ALIVE = 5  # seconds.

app = FastAPI()
isFirst = True
httpserver_manager: HttpServerManager = None


def create_error_response(status_code: HTTPStatus, message: str) -> JSONResponse:
    return JSONResponse({"message": message}, status_code=status_code.value)


@app.get("/healthz")
@app.get("/health")
def healthcheck():
    return "OK"


@app.post("/generate")
async def generate(request: Request) -> Response:
    global isFirst
    if isFirst:
        loop = asyncio.get_event_loop()
        loop.create_task(httpserver_manager.handle_loop())
        isFirst = False

    request_dict = await request.json()
    adapter_dir = request_dict["lora_dir"] if "lora_dir" in request_dict else None
    prompt = request_dict.pop("inputs")
    sample_params_dict = request_dict["parameters"]
    return_details = sample_params_dict.pop("return_details", False)
    sampling_params = SamplingParams(**sample_params_dict)
    sampling_params.verify()

    if "req_id" in request_dict:
        request_id = request_dict["req_id"]
    else:
        request_id = uuid.uuid4().hex
    results_generator = httpserver_manager.generate(adapter_dir, prompt, sampling_params, request_id)

    final_output = []
    count_output_tokens = 0
    tokens = []
    async for request_output, metadata, finished in results_generator:
        count_output_tokens += 1
        if finished == -1:
            return Response(status_code=499)
        if await request.is_disconnected():
            await httpserver_manager.abort(request_id)
            return Response(status_code=499)
        final_output.append(request_output)
        if return_details:
            metadata["text"] = request_output
            tokens.append(metadata)

    assert final_output is not None
    ret = {
        "generated_text": ["".join(final_output)],
        "count_output_tokens": count_output_tokens,
    }
    if return_details:
        ret["tokens"] = tokens
    return Response(content=json.dumps(ret, ensure_ascii=False).encode("utf-8"))


@app.post("/generate_stream")
async def generate_stream(request: Request) -> Response:
    global isFirst
    if isFirst:
        loop = asyncio.get_event_loop()
        loop.create_task(httpserver_manager.handle_loop())
        isFirst = False

    request_dict = await request.json()
    adapter_dir = request_dict["lora_dir"] if "lora_dir" in request_dict else None
    prompt = request_dict.pop("inputs")
    sample_params_dict = request_dict["parameters"]
    _ = sample_params_dict.pop("return_details", False)
    sampling_params = SamplingParams(**sample_params_dict)
    sampling_params.verify()

    request_id = request_dict.get("req_id", uuid.uuid4().hex)
    results_generator = httpserver_manager.generate(adapter_dir, prompt, sampling_params, request_id)

    async def stream_results() -> AsyncGenerator[bytes, None]:
        async for request_output, metadata, finished in results_generator:
            ret = {
                "token": {
                    "id": metadata.get("id", None),
                    "text": request_output,
                    "logprob": metadata.get("logprob", None),
                    "special": False,
                },
                "generated_text": None,
                "finished": finished,
                "details": None,
            }
            yield ("data:" + json.dumps(ret, ensure_ascii=False) + "\n\n").encode("utf-8")

    async def abort_request() -> None:
        await httpserver_manager.abort(request_id)

    background_tasks = BackgroundTasks()
    background_tasks.add_task(abort_request)
    return StreamingResponse(stream_results(), media_type="text/event-stream", background=background_tasks)


def print_mem_stats(args):
    model_dir = args.model_dir
    model_name = args.model_dir.split("/")[-1]
    try:
        fp = 2
        config = json.load(open(os.path.join(model_dir, "config.json")))
        num_hidden_layers = config["num_hidden_layers"]
        hidden_size = config["hidden_size"]
        num_params = 12 * num_hidden_layers * hidden_size ** 2
    except Exception:
        print("model size unknown, skip memory stats")
        return
    model_size = num_params * fp
    token_kv = 2 * num_hidden_layers * hidden_size * fp
    free, total = torch.cuda.mem_get_info()
    print(f"{model_name}: weights ~{model_size / GB:.1f} GB, kv per token {token_kv / MB:.3f} MB")
    print(f"GPU 0: {free / GB:.1f} GB free of {total / GB:.1f} GB; "
          f"max_total_token_num={args.max_total_token_num} needs "
          f"{args.max_total_token_num * token_kv / GB:.1f} GB of KV + LoRA pool")


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", type=str, default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--model_dir", type=str, default=None,
                        help="the model weight dir path, the app will load config, weights and tokenizer from this dir")
    parser.add_argument("--tokenizer_mode", type=str, default="slow",
                        help="tokenizer load mode, can be slow or auto")
    parser.add_argument("--max_total_token_num", type=int, default=6000,
                        help="the total token nums the gpu and model can support, equals = max_batch * (input_len + output_len)")
    parser.add_argument("--batch_max_tokens", type=int, default=None,
                        help="max tokens num for new cat batch, it control prefill batch size to Preventing OOM")
    parser.add_argument("--eos_id", type=int, default=2)
    parser.add_argument("--running_max_req_size", type=int, default=1000,
                        help="the max size for forward requests in the same time")
    parser.add_argument("--tp", type=int, default=1, help="model tp parral size, the default is 1")
    parser.add_argument("--max_req_input_len", type=int, default=2048)
    parser.add_argument("--max_req_total_len", type=int, default=2048 + 1024)
    parser.add_argument("--nccl_port", type=int, default=28765,
                        help="the nccl_port to build a distributed environment for PyTorch")
    parser.add_argument("--mode", type=str, default=[], nargs="+",
                        help="Model mode: [int8kv] [int8weight | int4weight]")
    parser.add_argument("--trust_remote_code", action="store_true")
    parser.add_argument("--disable_log_stats", action="store_true")
    parser.add_argument("--log_stats_interval", type=int, default=10)

    # ---------- S-LoRA specific ----------
    parser.add_argument("--lora-dirs", type=str, default=[], action="append",
                        help="the adapter weight dirs associate with base model dir")
    parser.add_argument("--fair-weights", type=int, default=[], action="append")
    parser.add_argument("--dummy", action="store_true")
    parser.add_argument("--swap", action="store_true")
    parser.add_argument("--pool-size-lora", type=int, default=0)
    parser.add_argument("--prefetch", action="store_true",
                        help="prefetch adapters of queued requests to GPU on a side stream")
    parser.add_argument("--prefetch-size", type=int, default=0)
    parser.add_argument("--scheduler", type=str, default="slora")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--batch-num-adapters", type=int, default=None)
    parser.add_argument("--enable-abort", action="store_true")

    # debug settings
    parser.add_argument("--no-lora-swap", action="store_true")
    parser.add_argument("--no-lora-compute", action="store_true")
    parser.add_argument("--no-kernel", action="store_true",
                        help="use torch bmm instead of the custom bgmv CUDA kernel")
    parser.add_argument("--no-mem-pool", action="store_true")
    parser.add_argument("--bmm", action="store_true")
    parser.add_argument("--no-lora", action="store_true")
    return parser.parse_args()


def main():
    args = parse_args()

    assert args.max_req_input_len < args.max_req_total_len
    if args.batch_max_tokens is None:
        batch_max_tokens = int(1 / 6 * args.max_total_token_num)
        batch_max_tokens = max(batch_max_tokens, args.max_req_total_len)
        args.batch_max_tokens = batch_max_tokens
    else:
        assert args.batch_max_tokens >= args.max_req_total_len, "batch_max_tokens must >= max_req_total_len"

    num_gpus = torch.cuda.device_count()
    if args.tp > num_gpus:
        print(f"--tp {args.tp} requested but only {num_gpus} GPUs are visible "
              f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})")
        sys.exit(1)
    print_mem_stats(args)

    can_use_ports = alloc_can_use_network_port(num=3 + args.tp, used_nccl_port=args.nccl_port)
    router_port, detokenization_port, httpserver_port = can_use_ports[0:3]
    model_rpc_ports = can_use_ports[3:]

    global httpserver_manager
    httpserver_manager = HttpServerManager(
        args.model_dir,
        args.tokenizer_mode,
        router_port=router_port,
        httpserver_port=httpserver_port,
        total_token_num=args.max_total_token_num,
        max_req_input_len=args.max_req_input_len,
        max_req_total_len=args.max_req_total_len,
        trust_remote_code=args.trust_remote_code,
        dummy=args.dummy,
    )
    input_params = InputParams(
        max_req_total_len=args.max_req_total_len,
        max_total_token_num=args.max_total_token_num,
        pool_size_lora=args.pool_size_lora,
        batch_max_tokens=args.batch_max_tokens,
        running_max_req_size=args.running_max_req_size,
        swap=args.swap,
        prefetch=args.prefetch,
        prefetch_size=args.prefetch_size,
        scheduler=args.scheduler,
        profile=args.profile,
        batch_num_adapters=args.batch_num_adapters,
        enable_abort=args.enable_abort,
        dummy=args.dummy,
        no_lora_swap=args.no_lora_swap,
        no_lora_compute=args.no_lora_compute,
        no_kernel=args.no_kernel,
        no_mem_pool=args.no_mem_pool,
        bmm=args.bmm,
        no_lora=args.no_lora,
        fair_weights=args.fair_weights,
    )

    pipe_router_reader, pipe_router_writer = mp.Pipe(duplex=False)
    pipe_detoken_reader, pipe_detoken_writer = mp.Pipe(duplex=False)
    proc_router = mp.Process(
        target=start_router_process,
        args=(args, router_port, detokenization_port, model_rpc_ports, args.mode,
              input_params, pipe_router_writer),
    )
    proc_router.start()
    proc_detoken = mp.Process(
        target=start_detokenization_process,
        args=(args, detokenization_port, httpserver_port, pipe_detoken_writer, args.trust_remote_code),
    )
    proc_detoken.start()

    # wait for the GPU workers to load weights and warm up
    router_init_state = pipe_router_reader.recv()
    detoken_init_state = pipe_detoken_reader.recv()
    if router_init_state != "init ok" or detoken_init_state != "init ok":
        proc_router.kill()
        proc_detoken.kill()
        print("router init state:", router_init_state, "detoken init state:", detoken_init_state)
        sys.exit(1)
    assert proc_router.is_alive() and proc_detoken.is_alive()

    start = time.time()
    uvicorn.run(app, host=args.host, port=args.port, log_level="debug",
                timeout_keep_alive=TIMEOUT_KEEP_ALIVE, loop="uvloop")
    print(f"server ran for {time.time() - start:.0f}s")


if __name__ == "__main__":
    # CUDA cannot be re-initialised in forked children
    mp.set_start_method("spawn")
    main()
