import os
import argparse
import shutil
from types import SimpleNamespace

import gradio as gr
import torch
from PIL import Image

from vis_corrector import Corrector
from mplug_owl.modeling_mplug_owl import MplugOwlForConditionalGeneration
from mplug_owl.tokenization_mplug_owl import MplugOwlTokenizer
from mplug_owl.processing_mplug_owl import MplugOwlImageProcessor, MplugOwlProcessor


# ------------------------------------------------------------------
#   LVLM that produces the (possibly hallucinated) initial answer
# ------------------------------------------------------------------
pretrained_ckpt = 'MAGAer13/mplug-owl-llama-7b'
model = MplugOwlForConditionalGeneration.from_pretrained(
    pretrained_ckpt,
    torch_dtype=torch.bfloat16,
).to("cuda:1")
image_processor = MplugOwlImageProcessor.from_pretrained(pretrained_ckpt)
tokenizer = MplugOwlTokenizer.from_pretrained(pretrained_ckpt)
processor = MplugOwlProcessor(image_processor, tokenizer)

# generate kwargs (the same in transformers) can be passed in the do_generate()
generate_kwargs = {
    'do_sample': False,
    'top_k': 5,
    'max_length': 512
}

PROMPT_TEMPLATE = '''The following is a conversation between a curious human and AI assistant. The assistant gives helpful, detailed, and polite answers to the user's questions.
Human: <image>
Human: {}
AI: '''


def get_lvlm_output(image, question):
    prompts = [PROMPT_TEMPLATE.format(question)]
    inputs = processor(text=prompts, images=[image], return_tensors='pt')
    inputs = {k: v.bfloat16() if v.dtype == torch.float else v for k, v in inputs.items()}
    inputs = {k: v.to(model.device) for k, v in inputs.items()}
    with torch.no_grad():
        res = model.generate(**inputs, **generate_kwargs)
    sentence = tokenizer.decode(res.tolist()[0], skip_special_tokens=True)
    return sentence


# ------------------------------------------------------------------
#   Woodpecker corrector
# ------------------------------------------------------------------
parser = argparse.ArgumentParser(description="Woodpecker gradio demo.")
parser.add_argument('--api-key', type=str, required=True, help="key to the OPENAI API.")
parser.add_argument('--api-base', type=str, default="https://api.openai.com/v1", help="base url of the OPENAI API.")
parser.add_argument('--val-model-path', type=str, default="Salesforce/blip2-flan-t5-xxl", help="path to BLIP-2 VQA model.")
parser.add_argument('--qa2c-model-path', type=str, default="khhuang/zerofec-qa2claim-t5-base", help="path to qa2claim model.")
parser.add_argument('--detector-config', type=str, required=True, help="Path to the detector config, in the form of 'path/to/GroundingDINO_SwinT_OGC.py' ")
parser.add_argument('--detector-model', type=str, required=True, help="Path to the detector checkpoint, in the form of 'path/to/groundingdino_swint_ogc.pth' ")
parser.add_argument('--cache-dir', type=str, default='./cache_dir', help='dir for caching intermediate image')
parser.add_argument('--port', type=int, default=7860)
args = parser.parse_args()

corrector = Corrector(args)
os.makedirs(args.cache_dir, exist_ok=True)


def get_output(image: Image.Image, text: str):
    if image is None or not text:
        return "", "", None

    img_path = os.path.join(args.cache_dir, "gradio_input.png")
    image.save(img_path)

    # 1. query the LVLM
    lvlm_answer = get_lvlm_output(image, text)

    # 2. correct it
    sample = {
        'img_path': img_path,
        'input_desc': lvlm_answer,
        'query': text,
    }
    corrected_sample = corrector.correct(sample)
    output_text = corrected_sample['output']

    # 3. draw the boxes that grounded the correction
    vis_img = corrected_sample.get('vis_img', None)
    return lvlm_answer, output_text, vis_img


def clear_cache():
    if os.path.exists(args.cache_dir):
        shutil.rmtree(args.cache_dir)
    os.makedirs(args.cache_dir, exist_ok=True)
    torch.cuda.empty_cache()
    return None, "", "", "", None


title_markdown = ("""
# Woodpecker: Hallucination Correction for Multimodal Large Language Models
[[Paper]](https://arxiv.org/abs/2310.16045) [[Code]](https://github.com/BradyFU/Woodpecker)
""")

examples = [
    ["examples/case1.jpg", "Describe this image."],
    ["examples/case2.jpg", "How many people are there in the image?"],
    ["examples/case3.jpg", "What is the color of the bus?"],
]


with gr.Blocks(title="Woodpecker") as demo:
    gr.Markdown(title_markdown)
    with gr.Row():
        with gr.Column(scale=3):
            image_input = gr.Image(type="pil", label="Image")
            text_input = gr.Textbox(label="Query", placeholder="Ask something about the image ...")
            with gr.Row():
                submit_btn = gr.Button(value="Submit", variant="primary")
                clear_btn = gr.Button(value="Clear")
            gr.Examples(examples=examples, inputs=[image_input, text_input])
        with gr.Column(scale=5):
            lvlm_output = gr.Textbox(label="mPLUG-Owl output (before correction)", lines=6)
            corrected_output = gr.Textbox(label="Woodpecker output (after correction)", lines=6)
            vis_output = gr.Image(type="pil", label="Grounding")

    submit_btn.click(get_output, inputs=[image_input, text_input],
                     outputs=[lvlm_output, corrected_output, vis_output])
    clear_btn.click(clear_cache, inputs=None,
                    outputs=[image_input, text_input, lvlm_output, corrected_output, vis_output])


demo.queue().launch(server_name="0.0.0.0", server_port=args.port, share=False)
