import gradio as gr
import torch
from PIL import Image
from transformers import DonutProcessor, VisionEncoderDecoderModel

model_name = "ahmed-masry/unichart-chartqa-960"
model = VisionEncoderDecoderModel.from_pretrained(model_name)
processor = DonutProcessor.from_pretrained(model_name)
device = "cuda" if torch.cuda.is_available() else "cpu"
model.to(device)


def predict(image, input_prompt):
    input_prompt = "<chartqa> " + input_prompt + " <s_answer>"
    decoder_input_ids = processor.tokenizer(input_prompt, add_special_tokens=False, return_tensors="pt").input_ids
    pixel_values = processor(image, return_tensors="pt").pixel_values

    outputs = model.generate(
        pixel_values.to(device),
        decoder_input_ids=decoder_input_ids.to(device),
        max_length=model.decoder.config.max_position_embeddings,
        early_stopping=True,
        pad_token_id=processor.tokenizer.pad_token_id,
        eos_token_id=processor.tokenizer.eos_token_id,
        use_cache=True,
        num_beams=4,
        bad_words_ids=[[processor.tokenizer.unk_token_id]],
        return_dict_in_generate=True,
    )
    sequence = processor.batch_decode(outputs.sequences)[0]
    sequence = sequence.replace(processor.tokenizer.eos_token, "").replace(processor.tokenizer.pad_token, "")
    sequence = sequence.split("<s_answer>")[1].strip()
    return sequence


image = gr.components.Image(type="pil", label="Chart Image")
input_prompt = gr.components.Textbox(label="Input Prompt")
model_output = gr.components.Textbox(label="Model Output")
examples = [["chart_example_1.png", "What is the share of respondents who prefer Whatsapp in the 18-29 age group?"],
            ["chart_example_2.png", "<extract_data_table>"]]

title = "Interactive demo: UniChart"
description = "Gradio Demo for the UniChart model. Upload a chart image and type a question (ChartQA) or a task token such as <extract_data_table> or <summarize_chart>."
article = "<p style='text-align: center'><a href='https://arxiv.org/abs/2305.14761'>UniChart: A Universal Vision-language Pretrained Model for Chart Comprehension and Reasoning</a></p>"

interface = gr.Interface(fn=predict,
                         inputs=[image, input_prompt],
                         outputs=model_output,
                         examples=examples,
                         title=title,
                         description=description,
                         article=article,
                         enable_queue=True)
interface.launch(debug=True)
