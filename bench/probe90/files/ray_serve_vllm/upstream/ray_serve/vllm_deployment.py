"""
OpenAI-compatible chat endpoint on Ray Serve backed by vLLM's AsyncLLMEngine.

Tensor parallelism: each replica reserves a placement group with one GPU bundle per TP rank,
and vLLM starts its Ray workers inside that group.

    serve run vllm_deployment:build_app model="mistralai/Mistral-7B-Instruct-v0.2" tensor-parallel-size=2
"""
import logging
import os
from typing import AsyncGenerator, Dict, Optional

import ray
import torch
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from ray import serve

from vllm.engine.arg_utils import AsyncEngineArgs
from vllm.engine.async_llm_engine import AsyncLLMEngine
from vllm.entrypoints.openai.protocol import ChatCompletionRequest, ErrorResponse
from vllm.entrypoints.openai.serving_chat import OpenAIServingChat
from vllm.sampling_params import SamplingParams
from vllm.utils import random_uuid

logger = logging.getLogger("ray.serve")

app = FastAPI()


@serve.deployment(
    name="VLLMDeployment",
    autoscaling_config={"min_replicas": 1, "max_replicas": 4, "target_ongoing_requests": 16},
    max_ongoing_requests=64,
    ray_actor_options={"accelerator_type": "A10G"},
)
@serve.ingress(app)
class VLLMDeployment:
    def __init__(
        self,
        engine_args: AsyncEngineArgs,
        response_role: str = "assistant",
        chat_template: Optional[str] = None,
    ):
        logger.info(f"Starting with engine args: {engine_args}")
        logger.info("visible GPUs for this replica: %s", ray.get_gpu_ids())
        self.openai_serving_chat = None
        self.engine_args = engine_args
        self.response_role = response_role
        self.chat_template = chat_template
        self.engine = AsyncLLMEngine.from_engine_args(engine_args)

    @app.post("/v1/chat/completions")
    async def create_chat_completion(self, request: ChatCompletionRequest, raw_request: Request):
        if not self.openai_serving_chat:
            model_config = await self.engine.get_model_config()
            served_model_names = [self.engine_args.model]
            self.openai_serving_chat = OpenAIServingChat(
                self.engine,
                model_config,
                served_model_names,
                self.response_role,
                chat_template=self.chat_template,
            )
        logger.info(f"Request: {request}")
        generator = await self.openai_serving_chat.create_chat_completion(request, raw_request)
        if isinstance(generator, ErrorResponse):
            return JSONResponse(content=generator.model_dump(), status_code=generator.code)
        if request.stream:
            return StreamingResponse(content=generator, media_type="text/event-stream")
        return JSONResponse(content=generator.model_dump())

    @app.post("/generate")
    async def generate(self, request: Request):
        body = await request.json()
        prompt = body.pop("prompt")
        stream = body.pop("stream", False)
        sampling_params = SamplingParams(**body)
        request_id = random_uuid()
        results_generator = self.engine.generate(prompt, sampling_params, request_id)

        if stream:
            async def stream_results() -> AsyncGenerator[bytes, None]:
                async for request_output in results_generator:
                    text_outputs = [output.text for output in request_output.outputs]
                    yield (str({"text": text_outputs}) + "\n").encode("utf-8")

            return StreamingResponse(stream_results())

        final_output = None
        async for request_output in results_generator:
            if await request.is_disconnected():
                await self.engine.abort(request_id)
                return JSONResponse(content={}, status_code=499)
            final_output = request_output
        text_outputs = [output.text for output in final_output.outputs]
        return JSONResponse(content={"text": text_outputs})

    @app.get("/v1/models")
    async def list_models(self):
        return {
            "object": "list",
            "data": [{"id": self.engine_args.model, "object": "model", "owned_by": "ray-serve"}],
        }

    async def check_health(self):
        """Called by Serve's controller; an exception marks the replica unhealthy."""
        await self.engine.check_health()

    @app.get("/stats")
    async def stats(self):
        free, total = torch.cuda.mem_get_info()
        return {
            "free_gib": free / 2**30,
            "total_gib": total / 2**30,
        }


def parse_vllm_args(cli_args: Dict[str, str]) -> AsyncEngineArgs:
    """Turn `serve run ... key=value` arguments into vLLM engine args."""
    args = {k.replace("-", "_"): v for k, v in cli_args.items()}
    return AsyncEngineArgs(
        model=args["model"],
        tensor_parallel_size=int(args.get("tensor_parallel_size", 1)),
        dtype=args.get("dtype", "float16"),
        max_model_len=int(args.get("max_model_len", 8192)),
        gpu_memory_utilization=float(args.get("gpu_memory_utilization", 0.90)),
        enforce_eager=args.get("enforce_eager", "false") == "true",
        quantization=args.get("quantization"),
        kv_cache_dtype=args.get("kv_cache_dtype", "auto"),
        worker_use_ray=True,
        distributed_executor_backend="ray",
        disable_log_requests=True,
    )


def build_app(cli_args: Dict[str, str]) -> serve.Application:
    """Builds the Serve app based on CLI arguments.

    See https://docs.vllm.ai/en/latest/serving/openai_compatible_server.html#command-line-arguments-for-the-server
    for the complete set of arguments.
    """
    engine_args = parse_vllm_args(cli_args)
    tp = engine_args.tensor_parallel_size
    logger.info(f"Tensor parallelism = {tp}")
    pg_resources = [{"CPU": 1}]  # for the deployment replica
    for _ in range(tp):
        pg_resources.append({"CPU": 1, "GPU": 1})  # for the vLLM actors

    # We use the "STRICT_PACK" strategy below to ensure all vLLM actors are placed on
    # the same Ray node.
    return VLLMDeployment.options(
        placement_group_bundles=pg_resources, placement_group_strategy="STRICT_PACK"
    ).bind(
        engine_args,
        cli_args.get("response_role", "assistant"),
        cli_args.get("chat_template"),
    )
