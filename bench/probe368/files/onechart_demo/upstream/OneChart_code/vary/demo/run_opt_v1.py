import argparse
import json
import os
import re

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image
from transformers import AutoTokenizer, TextStreamer

from vary.model import *
from vary.utils.conversation import conv_templates, SeparatorStyle
from vary.utils.utils import disable_torch_init, KeywordsStoppingCriteria
from vary.model.plug.blip_process import BlipImageEvalProcessor


DEFAULT_IMAGE_TOKEN = "<image>"
DEFAULT_IMAGE_PATCH_TOKEN = '<imgpad>'
DEFAULT_IM_START_TOKEN = '<img>'
DEFAULT_IM_END_TOKEN = '</img>'


def list_json_value(json_dict):
    rst_str = []
    sort_flag = True
    try:
        for key, value in json_dict.items():
            if isinstance(value, dict):
                decimal_out = list_json_value(value)
                rst_str = rst_str + decimal_out
                sort_flag = False
            elif isinstance(value, list):
                return []
            else:
                if isinstance(value, float) or isinstance(value, int):
                    rst_str.append(value)
                else:
                    # num_value = value.replace("%", "").replace("$", "").replace(" ", "").replace(",", "")
                    value = re.findall(r'\d+\.?\d*', str(value))
                    if len(value) > 0:
                        rst_str.append(float(value[0]))
    except Exception as e:
        print(e)
        return []
    return rst_str


def norm_(rst_list):
    if len(rst_list) < 2:
        return rst_list
    min_vals = min(rst_list)
    max_vals = max(rst_list)
    rst_list = np.array(rst_list)
    normalized_tensor = (rst_list - min_vals) / (max_vals - min_vals + 1e-9)
    return list(normalized_tensor)


def load_image(image_file):
    image = Image.open(image_file).convert('RGB')
    return image


def eval_model(args):
    # Model
    disable_torch_init()
    model_name = os.path.expanduser(args.model_name)

    tokenizer = AutoTokenizer.from_pretrained(model_name, trust_remote_code=True)
    model = varyOPTForCausalLM.from_pretrained(model_name)
    model.to(device='cuda', dtype=torch.bfloat16)

    image_processor_high = BlipImageEvalProcessor(image_size=1024)
    use_im_start_end = True
    image_token_len = 256

    qs = 'Convert the key information of the chart to a python dict:'

    if use_im_start_end:
        qs = DEFAULT_IM_START_TOKEN + DEFAULT_IMAGE_PATCH_TOKEN * image_token_len + DEFAULT_IM_END_TOKEN + '\n' + qs
    else:
        qs = DEFAULT_IMAGE_TOKEN + '\n' + qs

    conv_mode = "v1"
    conv = conv_templates[conv_mode].copy()
    conv.append_message(conv.roles[0], qs)
    conv.append_message(conv.roles[1], None)
    prompt = conv.get_prompt()

    inputs = tokenizer([prompt])

    image = load_image(args.image_file)
    image_1 = image.copy()
    image_tensor_1 = image_processor_high(image_1)

    input_ids = torch.as_tensor(inputs.input_ids).cuda()

    stop_str = conv.sep if conv.sep_style != SeparatorStyle.TWO else conv.sep2
    keywords = [stop_str]
    stopping_criteria = KeywordsStoppingCriteria(keywords, tokenizer, input_ids)
    streamer = TextStreamer(tokenizer, skip_prompt=True, skip_special_tokens=True)

    with torch.autocast("cuda", dtype=torch.bfloat16):
        output_ids = model.generate(
            input_ids,
            images=[(image_tensor_1.unsqueeze(0).half().cuda(), image_tensor_1.unsqueeze(0).half().cuda())],
            do_sample=False,
            num_beams=1,
            # no_repeat_ngram_size = 20,
            streamer=streamer,
            max_new_tokens=4096,
            stopping_criteria=[stopping_criteria]
        )
        outputs = tokenizer.decode(output_ids[0, input_ids.shape[1]:])
        outputs = outputs.replace("<Number>", "")
        outputs = outputs.strip()
        if outputs.endswith(stop_str):
            outputs = outputs[:-len(stop_str)]
        response_str = outputs

    if args.reliable_check:
        # auxiliary number-decoder head: compare the values regressed from the <Number> token
        # hidden states against the values parsed from the generated dict
        pred_nums = model.pred_locs
        try:
            outputs_json = json.loads(outputs)
            list_v = list_json_value(outputs_json['values'])
            list_v = [round(x, 4) for x in norm_(list_v)]
            gt_nums = torch.tensor(list_v).reshape(1, -1)
            response_str = response_str + "\n<Chart>: " + str(pred_nums[:len(list_v)])
            pred_nums_ = torch.tensor(pred_nums[:len(list_v)]).reshape(1, -1)
            reliable_distence = F.l1_loss(pred_nums_, gt_nums)
            response_str = response_str + "\nreliable_distence: " + str(reliable_distence)
            if reliable_distence < 0.1:
                response_str = response_str + "\nAfter OneChart checking, this prediction is reliable."
            else:
                response_str = response_str + "\nThis prediction may have errors! "
        except Exception as e:
            response_str = response_str + "\nThis prediction may have errors! "
            print(e)
    print(response_str)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-name", type=str, default="kppkkp/OneChart")
    parser.add_argument("--image-file", type=str, required=True)
    parser.add_argument("--reliable_check", action='store_true')
    args = parser.parse_args()

    eval_model(args)
