"""Audio-chat inference for Qwen-Audio-Chat (v1, remote code) and Qwen2-Audio-7B-Instruct.

    # v1: audio understanding via the remote-code chat() API
    python qwen_audio/chat_demo.py --model Qwen/Qwen-Audio-Chat --audio assets/1272-128104-0000.flac \
        --prompt "what does the person say?"

    # v2: HF-native processor + generate()
    python qwen_audio/chat_demo.py --model Qwen/Qwen2-Audio-7B-Instruct --audio assets/glass-breaking.mp3 \
        --prompt "What's that sound?" --flash-attn
"""
import argparse
import os
from io import BytesIO
from urllib.request import urlopen

import librosa
import torch
from transformers import AutoModelForCausalLM, AutoProcessor, AutoTokenizer, GenerationConfig

torch.manual_seed(1234)


def load_audio(path_or_url: str, sr: int):
    if path_or_url.startswith(("http://", "https://")):
        return librosa.load(BytesIO(urlopen(path_or_url).read()), sr=sr)[0]
    return librosa.load(path_or_url, sr=sr)[0]


def run_qwen_audio_v1(args):
    # Note: The default behavior now has injection attack prevention off.
    tokenizer = AutoTokenizer.from_pretrained(args.model, trust_remote_code=True)

    # use bf16
    # model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen-Audio-Chat", device_map="auto", trust_remote_code=True, bf16=True).eval()
    # use fp16
    # model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen-Audio-Chat", device_map="auto", trust_remote_code=True, fp16=True).eval()
    # use cpu only
    # model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen-Audio-Chat", device_map="cpu", trust_remote_code=True).eval()
    # use cuda device
    model = AutoModelForCausalLM.from_pretrained(args.model, device_map="cuda", trust_remote_code=True, bf16=args.bf16).eval()

    # Specify hyperparameters for generation (No need to do this if you are using transformers>=4.32.0)
    model.generation_config = GenerationConfig.from_pretrained(args.model, trust_remote_code=True)

    # 1st dialogue turn
    query = tokenizer.from_list_format([
        {"audio": args.audio},  # Either a local path or an url
        {"text": args.prompt},
    ])
    response, history = model.chat(tokenizer, query=query, history=None)
    print(response)

    # 2nd dialogue turn: ask for timestamps of the grounded event
    if args.followup:
        response, history = model.chat(tokenizer, args.followup, history=history)
        print(response)
        # the model can output <|startoftranscript|> style timestamps; pull them out
        audio_info = tokenizer.process_audio(response)
        if audio_info is not None:
            print("grounded segments:", audio_info.get("audio_span_tokens"))


def run_qwen2_audio(args):
    from transformers import Qwen2AudioForConditionalGeneration

    processor = AutoProcessor.from_pretrained(args.model)
    model_kwargs = dict(device_map="auto", torch_dtype=torch.bfloat16 if args.bf16 else torch.float16)
    if args.flash_attn:
        model_kwargs["attn_implementation"] = "flash_attention_2"
    model = Qwen2AudioForConditionalGeneration.from_pretrained(args.model, **model_kwargs)
    model.eval()

    conversation = [
        {"role": "system", "content": "You are a helpful assistant."},
        {
            "role": "user",
            "content": [
                {"type": "audio", "audio_url": args.audio},
                {"type": "text", "text": args.prompt},
            ],
        },
    ]
    text = processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
    audios = []
    for message in conversation:
        if isinstance(message["content"], list):
            for ele in message["content"]:
                if ele["type"] == "audio":
                    audios.append(load_audio(ele["audio_url"], sr=processor.feature_extractor.sampling_rate))

    inputs = processor(text=text, audios=audios, return_tensors="pt", padding=True)
    inputs.input_ids = inputs.input_ids.to("cuda")
    inputs = inputs.to("cuda")

    with torch.inference_mode():
        generate_ids = model.generate(**inputs, max_length=args.max_length, do_sample=False)
    generate_ids = generate_ids[:, inputs.input_ids.size(1):]

    response = processor.batch_decode(generate_ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)[0]
    print(response)

    if args.show_memory:
        print(f"max allocated: {torch.cuda.max_memory_allocated() / 1e9:.2f} GB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="Qwen/Qwen2-Audio-7B-Instruct")
    ap.add_argument("--audio", required=True)
    ap.add_argument("--prompt", default="What does the person say?")
    ap.add_argument("--followup", default=None)
    ap.add_argument("--bf16", action="store_true", default=True)
    ap.add_argument("--flash-attn", action="store_true", help="requires `pip install flash-attn --no-build-isolation`")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--show-memory", action="store_true")
    args = ap.parse_args()

    if not torch.cuda.is_available():
        raise SystemExit("This demo needs a CUDA GPU (Qwen-Audio 7B in bf16 needs ~20GB of VRAM).")

    if "Qwen2-Audio" in args.model:
        run_qwen2_audio(args)
    else:
        run_qwen_audio_v1(args)


if __name__ == "__main__":
    main()
