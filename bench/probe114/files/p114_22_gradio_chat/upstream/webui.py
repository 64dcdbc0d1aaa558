"""Minimal Gradio chat UI for a local HF chat model with token streaming.

    python webui.py --model Qwen/Qwen1.5-7B-Chat --port 7860 [--load-4bit]
"""
import argparse
import gc
import threading
import time

import gradio as gr
import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, TextIteratorStreamer

try:
    import pynvml

    pynvml.nvmlInit()
    _NVML = True
except Exception:
    _NVML = False


def get_args():
    p = argparse.ArgumentParser()
    p.add_argument("--model", default="Qwen/Qwen1.5-7B-Chat")
    p.add_argument("--port", type=int, default=7860)
    p.add_argument("--share", action="store_true")
    p.add_argument("--load-4bit", action="store_true")
    p.add_argument("--max-input-tokens", type=int, default=6144)
    p.add_argument("--gpu", type=int, default=0, help="CUDA device index")
    return p.parse_args()


ARGS = get_args()
DEVICE = f"cuda:{ARGS.gpu}"

torch.backends.cuda.matmul.allow_tf32 = True
torch.backends.cudnn.allow_tf32 = True


def load():
    tok = AutoTokenizer.from_pretrained(ARGS.model, trust_remote_code=True)
    if ARGS.load_4bit:
        q = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16, bnb_4bit_quant_type="nf4")
        model = AutoModelForCausalLM.from_pretrained(
            ARGS.model, quantization_config=q, device_map={"": ARGS.gpu}, trust_remote_code=True
        )
    else:
        model = AutoModelForCausalLM.from_pretrained(ARGS.model, torch_dtype=torch.float16, trust_remote_code=True)
        model = model.half().cuda(ARGS.gpu)
    model.eval()
    return tok, model


TOKENIZER, MODEL = load()
GEN_LOCK = threading.Lock()


def gpu_stats() -> str:
    alloc = torch.cuda.memory_allocated(DEVICE) / 2**30
    reserved = torch.cuda.memory_reserved(DEVICE) / 2**30
    total = torch.cuda.get_device_properties(DEVICE).total_memory / 2**30
    line = f"{torch.cuda.get_device_name(DEVICE)} | {alloc:.1f} / {reserved:.1f} / {total:.0f} GiB"
    if _NVML:
        h = pynvml.nvmlDeviceGetHandleByIndex(ARGS.gpu)
        util = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
        temp = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
        line += f" | util {util}% | {temp}°C"
    return line


def build_inputs(message, history, system_prompt):
    msgs = []
    if system_prompt:
        msgs.append({"role": "system", "content": system_prompt})
    for user, bot in history:
        msgs.append({"role": "user", "content": user})
        if bot:
            msgs.append({"role": "assistant", "content": bot})
    msgs.append({"role": "user", "content": message})
    ids = TOKENIZER.apply_chat_template(msgs, add_generation_prompt=True, return_tensors="pt")
    if ids.shape[1] > ARGS.max_input_tokens:
        ids = ids[:, -ARGS.max_input_tokens:]
        gr.Warning(f"Conversation truncated to the last {ARGS.max_input_tokens} tokens")
    return ids.to(DEVICE)


def chat(message, history, system_prompt, max_new_tokens, temperature, top_p):
    input_ids = build_inputs(message, history, system_prompt)
    streamer = TextIteratorStreamer(TOKENIZER, skip_prompt=True, skip_special_tokens=True, timeout=60)
    gen_kwargs = dict(
        input_ids=input_ids,
        attention_mask=torch.ones_like(input_ids),
        streamer=streamer,
        max_new_tokens=int(max_new_tokens),
        do_sample=temperature > 0,
        temperature=max(float(temperature), 1e-5),
        top_p=float(top_p),
        repetition_penalty=1.05,
    )

    def _run():
        with GEN_LOCK, torch.inference_mode():
            MODEL.generate(**gen_kwargs)

    t = threading.Thread(target=_run, daemon=True)
    t0 = time.time()
    t.start()
    partial = ""
    n = 0
    for piece in streamer:
        partial += piece
        n += 1
        yield partial
    t.join()
    dt = time.time() - t0
    yield partial + f"\n\n<sub>{n} chunks in {dt:.1f}s</sub>"


def clear_cache():
    gc.collect()
    torch.cuda.empty_cache()
    torch.cuda.synchronize(DEVICE)
    return gpu_stats()


PRESETS = {
    "Assistant": "You are a helpful assistant.",
    "Concise": "You are a helpful assistant. Answer in at most three sentences.",
    "Coder": "You are an expert Python programmer. Answer with code first, then a short explanation.",
    "Translator (EN<->ZH)": "Translate the user's message between English and Chinese. Output only the translation.",
}


def export_history(history):
    """Dump the chat as markdown so it can be downloaded from the UI."""
    import tempfile

    lines = [f"# Chat with {ARGS.model}", ""]
    for user, bot in history or []:
        lines.append(f"**You:** {user}")
        lines.append("")
        lines.append(f"**Assistant:** {bot or ''}")
        lines.append("")
    fd, path = tempfile.mkstemp(suffix=".md", prefix="chat_")
    with open(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    return path


def apply_preset(name):
    return PRESETS.get(name, PRESETS["Assistant"])


with gr.Blocks(title="Local chat", theme=gr.themes.Soft()) as demo:
    gr.Markdown(f"## Local chat -- `{ARGS.model}`")
    stats = gr.Markdown(gpu_stats())
    with gr.Accordion("Generation settings", open=False):
        preset = gr.Dropdown(list(PRESETS), value="Assistant", label="Preset")
        system_prompt = gr.Textbox(value=PRESETS["Assistant"], label="System prompt")
        preset.change(apply_preset, inputs=preset, outputs=system_prompt)
        max_new_tokens = gr.Slider(16, 4096, value=1024, step=16, label="Max new tokens")
        temperature = gr.Slider(0.0, 1.5, value=0.7, step=0.05, label="Temperature")
        top_p = gr.Slider(0.05, 1.0, value=0.9, step=0.05, label="Top-p")
    gr.ChatInterface(
        chat,
        additional_inputs=[system_prompt, max_new_tokens, temperature, top_p],
    )
    with gr.Row():
        refresh = gr.Button("Refresh GPU stats")
        free = gr.Button("Free VRAM")
    refresh.click(gpu_stats, outputs=stats)
    free.click(clear_cache, outputs=stats)


if __name__ == "__main__":
    demo.queue(max_size=16).launch(server_name="0.0.0.0", server_port=ARGS.port, share=ARGS.share)
