"""Minimal Gradio chat front-end for GGUF/GGML models.

Runs a quantized model either through ctransformers or llama-cpp-python, offloading as many
layers as fit to the GPU. Meant to be dropped into a Hugging Face Space or run locally:

    CUDA_VISIBLE_DEVICES=0 BACKEND=llama.cpp python app.py
"""
import os
import threading
import time
from typing import Iterator, List, Tuple

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

import gradio as gr
import torch
from huggingface_hub import hf_hub_download

try:
    from llama_cpp import Llama
except ImportError:  # llama-cpp-python is optional, ctransformers is the default backend
    Llama = None

from ctransformers import AutoConfig, AutoModelForCausalLM

MODEL_REPO = os.environ.get("MODEL_REPO", "TheBloke/Mistral-7B-Instruct-v0.2-GGUF")
MODEL_FILE = os.environ.get("MODEL_FILE", "mistral-7b-instruct-v0.2.Q4_K_M.gguf")
MODEL_TYPE = os.environ.get("MODEL_TYPE", "mistral")
BACKEND = os.environ.get("BACKEND", "ctransformers")  # "ctransformers" or "llama.cpp"
CONTEXT_LENGTH = int(os.environ.get("CONTEXT_LENGTH", "4096"))
MAX_NEW_TOKENS = int(os.environ.get("MAX_NEW_TOKENS", "1024"))

# Offload everything when a GPU is present, otherwise stay on the CPU.
GPU_LAYERS = int(os.environ.get("GPU_LAYERS", "50" if torch.cuda.is_available() else "0"))
TENSOR_SPLIT = [float(x) for x in os.environ["TENSOR_SPLIT"].split(",")] if os.environ.get("TENSOR_SPLIT") else None
MAIN_GPU = int(os.environ.get("MAIN_GPU", "0"))

SYSTEM_PROMPT = "You are a helpful, respectful and honest assistant."

DESCRIPTION = f"""
# {MODEL_REPO}

Backend: **{BACKEND}**, layers on GPU: **{GPU_LAYERS}**, context: **{CONTEXT_LENGTH}** tokens.
"""

_lock = threading.Lock()


def load_llm():
    model_path = hf_hub_download(repo_id=MODEL_REPO, filename=MODEL_FILE)

    if BACKEND == "llama.cpp":
        if Llama is None:
            raise RuntimeError("BACKEND=llama.cpp but llama-cpp-python is not installed")
        return Llama(
            model_path=model_path,
            n_ctx=CONTEXT_LENGTH,
            n_gpu_layers=GPU_LAYERS,
            n_batch=512,
            main_gpu=MAIN_GPU,
            tensor_split=TENSOR_SPLIT,
            offload_kqv=True,
            verbose=False,
        )

    config = AutoConfig.from_pretrained(MODEL_REPO, context_length=CONTEXT_LENGTH)
    return AutoModelForCausalLM.from_pretrained(
        MODEL_REPO,
        model_file=MODEL_FILE,
        model_type=MODEL_TYPE,
        config=config,
        gpu_layers=GPU_LAYERS,
        lib="cuda" if GPU_LAYERS > 0 else None,
    )


llm = load_llm()


def format_prompt(message: str, history: List[Tuple[str, str]], system_prompt: str) -> str:
    prompt = f"<s>[INST] <<SYS>>\n{system_prompt}\n<</SYS>>\n\n"
    for user, assistant in history:
        prompt += f"{user} [/INST] {assistant} </s><s>[INST] "
    prompt += f"{message} [/INST]"
    return prompt


def stream_tokens(prompt: str, max_new_tokens: int, temperature: float, top_p: float, top_k: int,
                  repetition_penalty: float) -> Iterator[str]:
    if BACKEND == "llama.cpp":
        for chunk in llm.create_completion(
            prompt,
            max_tokens=max_new_tokens,
            temperature=temperature,
            top_p=top_p,
            top_k=top_k,
            repeat_penalty=repetition_penalty,
            stream=True,
        ):
            yield chunk["choices"][0]["text"]
    else:
        for text in llm(
            prompt,
            max_new_tokens=max_new_tokens,
            temperature=temperature,
            top_p=top_p,
            top_k=top_k,
            repetition_penalty=repetition_penalty,
            stream=True,
        ):
            yield text


def generate(message: str, history: List[Tuple[str, str]], system_prompt: str = SYSTEM_PROMPT,
             max_new_tokens: int = MAX_NEW_TOKENS, temperature: float = 0.7, top_p: float = 0.95,
             top_k: int = 40, repetition_penalty: float = 1.1) -> Iterator[str]:
    prompt = format_prompt(message, history, system_prompt)
    outputs = []
    t0 = time.time()
    n = 0
    with _lock:  # llama.cpp contexts are not re-entrant
        for text in stream_tokens(prompt, max_new_tokens, temperature, top_p, top_k, repetition_penalty):
            outputs.append(text)
            n += 1
            yield "".join(outputs)
    dt = time.time() - t0
    print(f"generated {n} tokens in {dt:.1f}s ({n / max(dt, 1e-6):.1f} tok/s)")


chat_interface = gr.ChatInterface(
    fn=generate,
    additional_inputs=[
        gr.Textbox(label="System prompt", lines=4, value=SYSTEM_PROMPT),
        gr.Slider(label="Max new tokens", minimum=1, maximum=4096, step=1, value=MAX_NEW_TOKENS),
        gr.Slider(label="Temperature", minimum=0.1, maximum=2.0, step=0.05, value=0.7),
        gr.Slider(label="Top-p (nucleus sampling)", minimum=0.05, maximum=1.0, step=0.05, value=0.95),
        gr.Slider(label="Top-k", minimum=1, maximum=200, step=1, value=40),
        gr.Slider(label="Repetition penalty", minimum=1.0, maximum=2.0, step=0.05, value=1.1),
    ],
    stop_btn=None,
    examples=[
        ["Hello there! How are you doing?"],
        ["Can you explain briefly to me what is the Python programming language?"],
        ["Explain the plot of Cinderella in a sentence."],
        ["How many hours does it take a man to eat a Helicopter?"],
        ["Write a 100-word article on 'Benefits of Open-Source in AI research'"],
    ],
)

with gr.Blocks(css="style.css") as demo:
    gr.Markdown(DESCRIPTION)
    if not torch.cuda.is_available():
        gr.Markdown("\N{WARNING SIGN} Running on CPU, this will be slow. GPU_LAYERS is 0.")
    chat_interface.render()

if __name__ == "__main__":
    demo.queue(max_size=20).launch(server_name=os.environ.get("GRADIO_SERVER_NAME", "0.0.0.0"))
