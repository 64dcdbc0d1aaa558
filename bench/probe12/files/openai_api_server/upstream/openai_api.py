# coding=utf-8
# OpenAI-compatible chat API (usage: python openai_api.py --checkpoint-path THUDM/chatglm3-6b)
# Implements /v1/models and /v1/chat/completions with optional SSE streaming.
import argparse
import time
from contextlib import asynccontextmanager
from threading import Thread
from typing import Dict, List, Literal, Optional, Union

import torch
import uvicorn
from fastapi import FastAPI, HTTPException
from fastapi.middleware.cors import CORSMiddleware
from pydantic import BaseModel, Field
from sse_starlette.sse import EventSourceResponse
from transformers import AutoModelForCausalLM, AutoTokenizer, TextIteratorStreamer
from transformers.generation import GenerationConfig

DEVICE = "cuda"
DEVICE_ID = "0"
CUDA_DEVICE = f"{DEVICE}:{DEVICE_ID}" if DEVICE_ID else DEVICE


def torch_gc():
    if torch.cuda.is_available():
        with torch.cuda.device(CUDA_DEVICE):
            torch.cuda.empty_cache()
            torch.cuda.ipc_collect()


@asynccontextmanager
async def lifespan(app: FastAPI):  # collects GPU memory
    yield
    torch_gc()


app = FastAPI(lifespan=lifespan)
app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_credentials=True,
                   allow_methods=["*"], allow_headers=["*"])


class ModelCard(BaseModel):
    id: str
    object: str = "model"
    created: int = Field(default_factory=lambda: int(time.time()))
    owned_by: str = "owner"


class ModelList(BaseModel):
    object: str = "list"
    data: List[ModelCard] = []


class ChatMessage(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: Optional[str]


class DeltaMessage(BaseModel):
    role: Optional[Literal["user", "assistant", "system"]] = None
    content: Optional[str] = None


class ChatCompletionRequest(BaseModel):
    model: str
    messages: List[ChatMessage]
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    max_length: Optional[int] = None
    stream: Optional[bool] = False
    stop: Optional[List[str]] = None


class ChatCompletionResponseChoice(BaseModel):
    index: int
    message: ChatMessage
    finish_reason: Literal["stop", "length"]


class ChatCompletionResponseStreamChoice(BaseModel):
    index: int
    delta: DeltaMessage
    finish_reason: Optional[Literal["stop", "length"]]


class ChatCompletionResponse(BaseModel):
    model: str
    object: Literal["chat.completion", "chat.completion.chunk"]
    choices: List[Union[ChatCompletionResponseChoice, ChatCompletionResponseStreamChoice]]
    created: Optional[int] = Field(default_factory=lambda: int(time.time()))


@app.get("/v1/models", response_model=ModelList)
async def list_models():
    return ModelList(data=[ModelCard(id="gpt-3.5-turbo")])


def build_inputs(messages: List[ChatMessage]):
    chat = [{"role": m.role, "content": m.content} for m in messages]
    input_ids = tokenizer.apply_chat_template(chat, add_generation_prompt=True, return_tensors="pt")
    return input_ids.to(CUDA_DEVICE)


@app.post("/v1/chat/completions", response_model=ChatCompletionResponse)
async def create_chat_completion(request: ChatCompletionRequest):
    global model, tokenizer
    if request.messages[-1].role != "user":
        raise HTTPException(status_code=400, detail="Invalid request")
    gen_kwargs = dict(max_new_tokens=request.max_length or 1024, do_sample=True,
                      temperature=request.temperature or 0.8, top_p=request.top_p or 0.8)
    input_ids = build_inputs(request.messages)

    if request.stream:
        generate = predict(input_ids, gen_kwargs, request.model)
        return EventSourceResponse(generate, media_type="text/event-stream")

    with torch.no_grad():
        output = model.generate(input_ids, **gen_kwargs)
    response = tokenizer.decode(output[0][input_ids.shape[1]:], skip_special_tokens=True)
    choice_data = ChatCompletionResponseChoice(index=0, message=ChatMessage(role="assistant", content=response),
                                               finish_reason="stop")
    torch_gc()
    return ChatCompletionResponse(model=request.model, choices=[choice_data], object="chat.completion")


async def predict(input_ids, gen_kwargs, model_id: str):
    streamer = TextIteratorStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True, timeout=60.0)
    thread = Thread(target=model.generate, kwargs=dict(input_ids=input_ids, streamer=streamer, **gen_kwargs))
    thread.start()

    choice_data = ChatCompletionResponseStreamChoice(index=0, delta=DeltaMessage(role="assistant"),
                                                     finish_reason=None)
    chunk = ChatCompletionResponse(model=model_id, choices=[choice_data], object="chat.completion.chunk")
    yield "{}".format(chunk.model_dump_json(exclude_unset=True))

    for new_text in streamer:
        if len(new_text) == 0:
            continue
        choice_data = ChatCompletionResponseStreamChoice(index=0, delta=DeltaMessage(content=new_text),
                                                         finish_reason=None)
        chunk = ChatCompletionResponse(model=model_id, choices=[choice_data], object="chat.completion.chunk")
        yield "{}".format(chunk.model_dump_json(exclude_unset=True))

    choice_data = ChatCompletionResponseStreamChoice(index=0, delta=DeltaMessage(), finish_reason="stop")
    chunk = ChatCompletionResponse(model=model_id, choices=[choice_data], object="chat.completion.chunk")
    yield "{}".format(chunk.model_dump_json(exclude_unset=True))
    yield "[DONE]"
    thread.join()
    torch_gc()


def _get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("-c", "--checkpoint-path", type=str, default="THUDM/chatglm3-6b")
    parser.add_argument("--cpu-only", action="store_true", help="Run demo with CPU only")
    parser.add_argument("--server-port", type=int, default=8000)
    parser.add_argument("--server-name", type=str, default="127.0.0.1")
    return parser.parse_args()


if __name__ == "__main__":
    args = _get_args()
    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint_path, trust_remote_code=True)
    if args.cpu_only:
        CUDA_DEVICE = "cpu"
        model = AutoModelForCausalLM.from_pretrained(args.checkpoint_path, trust_remote_code=True).float()
    else:
        model = AutoModelForCausalLM.from_pretrained(args.checkpoint_path, device_map=CUDA_DEVICE,
                                                     torch_dtype=torch.float16, trust_remote_code=True)
    model.generation_config = GenerationConfig.from_pretrained(args.checkpoint_path, trust_remote_code=True)
    model.eval()
    uvicorn.run(app, host=args.server_name, port=args.server_port, workers=1)
