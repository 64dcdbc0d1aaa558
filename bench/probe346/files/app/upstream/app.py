"""
Gradio demo: continue a MIDI file with a REMI-tokenised GPT-2 (MidiTok + transformers).

    python app.py --model Natooz/remi-gpt2-pop909 --port 7860
"""
import argparse
import os
import tempfile
import time

import gradio as gr
import torch
from miditok import REMI, TokenizerConfig
from symusic import Score
from transformers import AutoModelForCausalLM, GenerationConfig

parser = argparse.ArgumentParser()
parser.add_argument("--model", default=os.environ.get("MODEL_ID", "Natooz/remi-gpt2-pop909"))
parser.add_argument("--port", type=int, default=7860)
parser.add_argument("--share", action="store_true")
parser.add_argument("--no-compile", action="store_true", help="skip torch.compile (faster start-up)")
cli = parser.parse_args()

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
DTYPE = torch.float16 if DEVICE == "cuda" else torch.float32
MAX_NEW_TOKENS = 1024

# Ampere+: let cuBLAS use TF32 for the fp32 bits (logits processor, sampling)
torch.backends.cuda.matmul.allow_tf32 = True

print(f"Loading {cli.model} on {DEVICE} ({DTYPE})")
tokenizer = REMI.from_pretrained(cli.model)
model = AutoModelForCausalLM.from_pretrained(cli.model, torch_dtype=DTYPE).to(DEVICE)
model.eval()

if DEVICE != "cpu" and not cli.no_compile:
    # CUDA graphs make the per-token decode loop ~2x faster for this small model
    model.forward = torch.compile(model.forward, mode="reduce-overhead", fullgraph=False)

gen_config = GenerationConfig(
    max_new_tokens=MAX_NEW_TOKENS,
    do_sample=True,
    top_k=20,
    top_p=0.95,
    temperature=1.0,
    pad_token_id=tokenizer.pad_token_id,
    eos_token_id=tokenizer["EOS_None"],
)


def _status(t0, n_tokens):
    dt = time.time() - t0
    mem = torch.cuda.max_memory_allocated() / 2 ** 20 if DEVICE == "cuda" else 0.0
    return f"{n_tokens} tokens in {dt:.1f}s ({n_tokens / max(dt, 1e-6):.0f} tok/s), peak mem {mem:.0f} MiB"


@torch.inference_mode()
def continue_midi(midi_file, n_bars_prompt, temperature, top_p, seed):
    if midi_file is None:
        raise gr.Error("Please upload a MIDI file")
    t0 = time.time()
    score = Score(midi_file.name if hasattr(midi_file, "name") else midi_file)
    tokens = tokenizer(score)
    ids = tokens[0].ids if isinstance(tokens, list) else tokens.ids

    # keep only the first n bars as prompt
    bar_id = tokenizer["Bar_None"]
    bar_pos = [i for i, t in enumerate(ids) if t == bar_id]
    if len(bar_pos) > n_bars_prompt:
        ids = ids[: bar_pos[int(n_bars_prompt)]]

    input_ids = torch.tensor([[tokenizer["BOS_None"]] + ids], device=DEVICE)
    generator = torch.Generator(device=DEVICE).manual_seed(int(seed))
    torch.manual_seed(int(seed))

    with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=DEVICE == "cuda"):
        out = model.generate(
            input_ids,
            generation_config=gen_config,
            temperature=float(temperature),
            top_p=float(top_p),
        )

    new_ids = out[0, input_ids.shape[1]:].tolist()
    all_ids = ids + new_ids
    midi = tokenizer.decode([all_ids])
    path = os.path.join(tempfile.mkdtemp(), "continuation.mid")
    midi.dump_midi(path)

    status = _status(t0, len(new_ids))
    del out
    torch.cuda.empty_cache()
    return path, status


with gr.Blocks(title="REMI GPT-2 continuation") as demo:
    gr.Markdown("## Continue your MIDI with a REMI GPT-2\nRuns on a single GPU; CPU works but is slow.")
    with gr.Row():
        midi_in = gr.File(label="MIDI prompt", file_types=[".mid", ".midi"])
        with gr.Column():
            n_bars = gr.Slider(1, 16, value=4, step=1, label="Bars of prompt")
            temp = gr.Slider(0.5, 1.5, value=1.0, step=0.05, label="Temperature")
            top_p = gr.Slider(0.5, 1.0, value=0.95, step=0.01, label="Top-p")
            seed = gr.Number(value=0, label="Seed", precision=0)
            btn = gr.Button("Generate")
    midi_out = gr.File(label="Continuation")
    status = gr.Textbox(label="Status")
    btn.click(continue_midi, inputs=[midi_in, n_bars, temp, top_p, seed], outputs=[midi_out, status])

if __name__ == "__main__":
    demo.queue(max_size=16).launch(server_name="0.0.0.0", server_port=cli.port, share=cli.share)
