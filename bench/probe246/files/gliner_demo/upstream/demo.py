"""Gradio demo for GLiNER.

    python demo.py --model urchade/gliner_medium-v2.1 --share

Runs on the first GPU. Set CUDA_VISIBLE_DEVICES to pick another card.
"""
import argparse
import os
from typing import Dict, Union

import gradio as gr
import torch

from gliner import GLiNER

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")

EXAMPLES = [
    [
        "Libretto by Marius Petipa, based on the 1822 novella ``Trilby, ou Le Lutin d'Argail`` by Charles Nodier, "
        "first presented by the Ballet of the Moscow Imperial Bolshoi Theatre on January 25/February 6 (Julian/Gregorian "
        "calendar dates), 1870, in Moscow with Polina Karpakova as Trilby and Ludiia Geiten as Miranda and restaged by "
        "Petipa for the Imperial Ballet at the Imperial Bolshoi Kamenny Theatre on January 17–29, 1871 in St. "
        "Petersburg with Adèle Grantzow as Trilby and Lev Ivanov as Count Leopold.",
        "person, book, location, date, actor, character",
        0.3,
        True,
    ],
    [
        "Cristiano Ronaldo dos Santos Aveiro (Portuguese pronunciation: [kɾiʃˈtjɐnu ʁɔˈnaldu]; born 5 February 1985) "
        "is a Portuguese professional footballer who plays as a forward for and captains both Saudi Pro League club "
        "Al Nassr and the Portugal national team.",
        "person, award, date, competitions, teams",
        0.3,
        False,
    ],
    [
        "The Bank of England will hold interest rates at 5.25% until inflation falls, governor Andrew Bailey told "
        "MPs on Tuesday, adding that the Monetary Policy Committee would meet again in London in March.",
        "organization, person, percentage, date, location, committee",
        0.4,
        True,
    ],
]


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="urchade/gliner_medium-v2.1")
    parser.add_argument("--cpu", action="store_true", help="Run the demo on CPU (slow)")
    parser.add_argument("--share", action="store_true")
    parser.add_argument("--port", type=int, default=7860)
    parser.add_argument("--fp16", action="store_true", help="Cast the model to half precision on GPU")
    return parser.parse_args()


args = parse_args()

if args.cpu or not torch.cuda.is_available():
    DEVICE = "cpu"
else:
    DEVICE = "cuda"

model = GLiNER.from_pretrained(args.model).to(DEVICE)
if args.fp16 and DEVICE == "cuda":
    model = model.half()
model.eval()
print(f"Loaded {args.model} on {DEVICE} ({torch.cuda.get_device_name(0) if DEVICE == 'cuda' else 'cpu'})")


def merge_entities(entities):
    if not entities:
        return []
    merged = []
    current = entities[0]
    for next_entity in entities[1:]:
        if next_entity["entity"] == current["entity"] and (
            next_entity["start"] == current["end"] + 1 or next_entity["start"] == current["end"]
        ):
            current["word"] += " " + next_entity["word"]
            current["end"] = next_entity["end"]
        else:
            merged.append(current)
            current = next_entity
    merged.append(current)
    return merged


def ner(text, labels: str, threshold: float, nested_ner: bool) -> Dict[str, Union[str, int, float]]:
    labels = [label.strip() for label in labels.split(",") if label.strip()]
    with torch.inference_mode():
        entities = model.predict_entities(text, labels, flat_ner=not nested_ner, threshold=threshold)
    r = {
        "text": text,
        "entities": [
            {
                "entity": entity["label"],
                "word": entity["text"],
                "start": entity["start"],
                "end": entity["end"],
                "score": 0,
            }
            for entity in entities
        ],
    }
    r["entities"] = merge_entities(r["entities"])
    return r


with gr.Blocks(title="GLiNER-medium-v2.1") as demo:
    gr.Markdown("# GLiNER: Generalist and Lightweight Model for Named Entity Recognition")
    input_text = gr.Textbox(value=EXAMPLES[0][0], label="Text input", placeholder="Enter your text here")
    with gr.Row() as row:
        labels = gr.Textbox(
            value=EXAMPLES[0][1],
            label="Labels",
            placeholder="Enter your labels here (comma separated)",
            scale=2,
        )
        threshold = gr.Slider(0, 1, value=0.3, step=0.01, label="Threshold", info="Lower the threshold to increase how many entities get predicted.", scale=1)
        nested_ner = gr.Checkbox(value=EXAMPLES[0][3], label="Nested NER", info="Allow for nested NER?", scale=0)
    output = gr.HighlightedText(label="Predicted Entities")
    submit_btn = gr.Button("Submit")
    examples = gr.Examples(EXAMPLES, fn=ner, inputs=[input_text, labels, threshold, nested_ner], outputs=output, cache_examples=False)

    input_text.submit(fn=ner, inputs=[input_text, labels, threshold, nested_ner], outputs=output)
    labels.submit(fn=ner, inputs=[input_text, labels, threshold, nested_ner], outputs=output)
    threshold.release(fn=ner, inputs=[input_text, labels, threshold, nested_ner], outputs=output)
    submit_btn.click(fn=ner, inputs=[input_text, labels, threshold, nested_ner], outputs=output)
    nested_ner.change(fn=ner, inputs=[input_text, labels, threshold, nested_ner], outputs=output)

demo.queue()
demo.launch(debug=True, share=args.share, server_port=args.port)
