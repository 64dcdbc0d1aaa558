import argparse
import logging
import os
import time

import torch
from transformers import AutoTokenizer, TextGenerationPipeline

from auto_gptq import AutoGPTQForCausalLM, BaseQuantizeConfig


pretrained_model_dir = "facebook/opt-125m"
quantized_model_dir = "opt-125m-4bit-128g"

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pretrained_model_dir", default=pretrained_model_dir)
    parser.add_argument("--quantized_model_dir", default=quantized_model_dir)
    parser.add_argument("--bits", type=int, default=4, choices=[2, 3, 4, 8])
    parser.add_argument("--group_size", type=int, default=128)
    parser.add_argument("--desc_act", action="store_true")
    parser.add_argument("--use_triton", action="store_true", help="use the triton qlinear backend instead of the cuda one")
    parser.add_argument("--use_marlin", action="store_true")
    parser.add_argument("--device", default="cuda:0")
    return parser.parse_args()


def main():
    args = get_args()
    tokenizer = AutoTokenizer.from_pretrained(args.pretrained_model_dir, use_fast=True)
    examples = [
        tokenizer(
            "auto-gptq is an easy-to-use model quantization library with user-friendly apis, based on GPTQ algorithm."
        )
    ]

    quantize_config = BaseQuantizeConfig(
        bits=args.bits,  # quantize model to 4-bit
        group_size=args.group_size,  # it is recommended to set the value to 128
        desc_act=args.desc_act,  # set to False can significantly speed up inference but the perplexity may slightly bad
    )

    # load un-quantized model, by default, the model will always be loaded into CPU memory
    model = AutoGPTQForCausalLM.from_pretrained(args.pretrained_model_dir, quantize_config)

    # quantize model, the examples should be list of dict whose keys can only be "input_ids" and "attention_mask"
    start = time.time()
    model.quantize(examples, use_triton=args.use_triton)
    logging.info(f"quantization took {time.time() - start:.1f}s, peak {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")

    # save quantized model
    model.save_quantized(args.quantized_model_dir)

    # save quantized model using safetensors
    model.save_quantized(args.quantized_model_dir, use_safetensors=True)

    # load quantized model to the first GPU
    model = AutoGPTQForCausalLM.from_quantized(
        args.quantized_model_dir,
        device=args.device,
        use_triton=args.use_triton,
        use_marlin=args.use_marlin,
        disable_exllama=False,
    )

    # inference with model.generate
    prompt = "auto_gptq is"
    inputs = tokenizer(prompt, return_tensors="pt").to(model.device)
    print(tokenizer.decode(model.generate(**inputs)[0]))

    # or you can also use pipeline
    pipeline = TextGenerationPipeline(model=model, tokenizer=tokenizer)
    print(pipeline(prompt)[0]["generated_text"])

    torch.cuda.synchronize()
    input_ids = tokenizer(prompt, return_tensors="pt").input_ids.cuda()
    t0 = time.time()
    with torch.inference_mode():
        model.generate(input_ids=input_ids, max_new_tokens=64, do_sample=False)
    torch.cuda.synchronize()  # wait for generate
    print(f"64 tokens in {time.time() - t0:.2f}s")


if __name__ == "__main__":
    logging.basicConfig(format="%(asctime)s %(levelname)s [%(name)s] %(message)s", level=logging.INFO, datefmt="%Y-%m-%d %H:%M:%S")
    main()
