import argparse
import os
import random
import json

import numpy as np
import torch
import torch.backends.cudnn as cudnn
from tqdm import tqdm
from PIL import Image

from minigpt4.common.config import Config
from minigpt4.common.dist_utils import get_rank
from minigpt4.common.registry import registry
from minigpt4.conversation.conversation import Chat, CONV_VISION

# imports modules for registration
from minigpt4.datasets.builders import *
from minigpt4.models import *
from minigpt4.processors import *
from minigpt4.runners import *
from minigpt4.tasks import *


def parse_args():
    parser = argparse.ArgumentParser(description="LURE revisor inference")
    parser.add_argument("--cfg-path", required=True, help="path to configuration file.")
    parser.add_argument("--gpu-id", type=int, default=0, help="specify the gpu to load the model.")
    parser.add_argument("--input_caption", type=str, required=True,
                        help="jsonl with the captions of the base LVLM, objects masked as [IDK]")
    parser.add_argument("--input_image", type=str, required=True, help="folder of COCO val2014 images")
    parser.add_argument("--output_file", type=str, required=True)
    parser.add_argument("--num_beams", type=int, default=1)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument(
        "--options",
        nargs="+",
        help="override some settings in the used config, the key-value pair "
        "in xxx=yyy format will be merged into config file (deprecate), "
        "change to --cfg-options instead.",
    )
    args = parser.parse_args()
    return args


def setup_seeds(config):
    seed = config.run_cfg.seed + get_rank()

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

    cudnn.benchmark = False
    cudnn.deterministic = True


REVISE_PROMPT = (
    "According to the picture, remove the information that does not exist in the following description: "
)


def load_captions(path):
    records = []
    with open(path, "r") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            records.append(json.loads(line))
    return records


# ========================================
#             Model Initialization
# ========================================

print('Initializing Chat')
args = parse_args()
cfg = Config(args)
setup_seeds(cfg)

model_config = cfg.model_cfg
model_config.device_8bit = args.gpu_id
model_cls = registry.get_model_class(model_config.arch)
model = model_cls.from_config(model_config).to('cuda:{}'.format(args.gpu_id))

vis_processor_cfg = cfg.datasets_cfg.cc_sbu_align.vis_processor.train
vis_processor = registry.get_processor_class(vis_processor_cfg.name).from_config(vis_processor_cfg)
chat = Chat(model, vis_processor, device='cuda:{}'.format(args.gpu_id))
print('Initialization Finished')


records = load_captions(args.input_caption)
done = set()
if os.path.exists(args.output_file):
    with open(args.output_file, "r") as f:
        for line in f:
            done.add(json.loads(line)["image_id"])
    print("resume: {} captions already revised".format(len(done)))

with open(args.output_file, "a") as fout:
    for record in tqdm(records):
        image_id = record["image_id"]
        if image_id in done:
            continue
        image_name = "COCO_val2014_{:012d}.jpg".format(int(image_id))
        image = Image.open(os.path.join(args.input_image, image_name)).convert("RGB")

        chat_state = CONV_VISION.copy()
        img_list = []
        chat.upload_img(image, chat_state, img_list)
        chat.ask(REVISE_PROMPT + record["caption"], chat_state)
        revised = chat.answer(
            conv=chat_state,
            img_list=img_list,
            num_beams=args.num_beams,
            temperature=args.temperature,
            max_new_tokens=300,
            max_length=2000,
        )[0]

        fout.write(json.dumps({"image_id": image_id,
                               "caption": record["caption"],
                               "revised": revised}) + "\n")
        fout.flush()

        # the revisor keeps the vision features of every image alive otherwise
        del img_list
        torch.cuda.empty_cache()
