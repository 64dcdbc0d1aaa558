from fastapi import FastAPI, Request
from transformers import AutoTokenizer, AutoModel
import uvicorn, json, datetime
import os
import torch

DEVICE = "cuda"
DEVICE_ID = "0"
CUDA_DEVICE = f"{DEVICE}:{DEVICE_ID}" if DEVICE_ID else DEVICE

MODEL_PATH = os.environ.get("MODEL_PATH", "THUDM/chatglm3-6b")
# 量化等级: None 表示不量化 (fp16 需要约 13GB 显存), 8 或 4 分别需要约 8GB / 6GB
QUANTIZE_BITS = int(os.environ.get("QUANTIZE_BITS", "0")) or None


def torch_gc():
    if torch.cuda.is_available():
        with torch.cuda.device(CUDA_DEVICE):
            torch.cuda.empty_cache()
            torch.cuda.ipc_collect()


app = FastAPI()


@app.post("/")
async def create_item(request: Request):
    global model, tokenizer
    json_post_raw = await request.json()
    json_post = json.dumps(json_post_raw)
    json_post_list = json.loads(json_post)
    prompt = json_post_list.get('prompt')
    history = json_post_list.get('history')
    max_length = json_post_list.get('max_length')
    top_p = json_post_list.get('top_p')
    temperature = json_post_list.get('temperature')
    response, history = model.chat(tokenizer,
                                   prompt,
                                   history=history,
                                   max_length=max_length if max_length else 2048,
                                   top_p=top_p if top_p else 0.7,
                                   temperature=temperature if temperature else 0.95)
    now = datetime.datetime.now()
    time = now.strftime("%Y-%m-%d %H:%M:%S")
    answer = {
        "response": response,
        "history": history,
        "status": 200,
        "time": time
    }
    log = "[" + time + "] " + '", prompt:"' + prompt + '", response:"' + repr(response) + '"'
    print(log)
    torch_gc()
    return answer


@app.post("/stream")
async def create_stream_item(request: Request):
    global model, tokenizer
    from sse_starlette.sse import EventSourceResponse

    json_post_raw = await request.json()
    prompt = json_post_raw.get('prompt')
    history = json_post_raw.get('history') or []
    max_length = json_post_raw.get('max_length') or 2048
    top_p = json_post_raw.get('top_p') or 0.7
    temperature = json_post_raw.get('temperature') or 0.95

    async def event_gen():
        last = ""
        for response, _ in model.stream_chat(tokenizer, prompt, history=history, max_length=max_length,
                                             top_p=top_p, temperature=temperature):
            delta = response[len(last):]
            last = response
            if await request.is_disconnected():
                break
            yield json.dumps({"delta": delta, "finished": False}, ensure_ascii=False)
        yield json.dumps({"delta": "", "finished": True}, ensure_ascii=False)
        torch_gc()

    return EventSourceResponse(event_gen())


# ---------------------------------------------------------------------------
# OpenAI 兼容接口 (供 LangChain / Chatchat 等以 openai-api 方式接入)
# ---------------------------------------------------------------------------
EMBEDDING_PATH = os.environ.get("EMBEDDING_PATH", "BAAI/bge-large-zh-v1.5")
embedding_model = None

from typing import List, Literal, Optional, Union  # noqa: E402
from pydantic import BaseModel, Field  # noqa: E402


class ChatMessage(BaseModel):
    role: Literal["user", "assistant", "system"]
    content: str


class ChatCompletionRequest(BaseModel):
    model: str
    messages: List[ChatMessage]
    temperature: Optional[float] = 0.8
    top_p: Optional[float] = 0.8
    max_tokens: Optional[int] = None
    stream: Optional[bool] = False


class EmbeddingRequest(BaseModel):
    input: Union[List[str], str]
    model: str


@app.get("/v1/models")
async def list_models():
    return {"object": "list", "data": [{"id": "chatglm3-6b", "object": "model", "owned_by": "owner"}]}


@app.post("/v1/embeddings")
async def get_embeddings(request: EmbeddingRequest):
    global embedding_model
    if embedding_model is None:
        from sentence_transformers import SentenceTransformer
        embedding_model = SentenceTransformer(EMBEDDING_PATH, device="cuda")
    texts = request.input if isinstance(request.input, list) else [request.input]
    embeddings = embedding_model.encode(texts, normalize_embeddings=True).tolist()
    data = [{"object": "embedding", "embedding": e, "index": i} for i, e in enumerate(embeddings)]
    n_tokens = sum(len(t) for t in texts)
    return {
        "data": data,
        "model": request.model,
        "object": "list",
        "usage": {"prompt_tokens": n_tokens, "total_tokens": n_tokens},
    }


@app.post("/v1/chat/completions")
async def create_chat_completion(request: ChatCompletionRequest):
    global model, tokenizer
    if not request.messages or request.messages[-1].role != "user":
        return {"error": "last message must come from the user"}
    query = request.messages[-1].content
    prev_messages = request.messages[:-1]
    history = []
    if prev_messages and prev_messages[0].role == "system":
        history.append({"role": "system", "content": prev_messages.pop(0).content})
    for m in prev_messages:
        history.append({"role": m.role, "content": m.content})

    response, _ = model.chat(
        tokenizer,
        query,
        history=history,
        max_length=request.max_tokens or 2048,
        top_p=request.top_p,
        temperature=request.temperature,
    )
    torch_gc()
    now = int(datetime.datetime.now().timestamp())
    return {
        "id": f"chatcmpl-{now}",
        "object": "chat.completion",
        "created": now,
        "model": request.model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": response}, "finish_reason": "stop"}
        ],
    }


if __name__ == '__main__':
    tokenizer = AutoTokenizer.from_pretrained(MODEL_PATH, trust_remote_code=True)
    if QUANTIZE_BITS:
        # cpm_kernels 提供的 int8/int4 CUDA kernel
        model = AutoModel.from_pretrained(MODEL_PATH, trust_remote_code=True).quantize(QUANTIZE_BITS).cuda()
    else:
        model = AutoModel.from_pretrained(MODEL_PATH, trust_remote_code=True).half().cuda()
    # 多显卡支持，使用下面两行代替上面一行，将num_gpus改为你实际的显卡数量
    # from utils import load_model_on_gpus
    # model = load_model_on_gpus("THUDM/chatglm3-6b", num_gpus=2)
    model.eval()
    uvicorn.run(app, host='0.0.0.0', port=8000, workers=1)
