r"""Q-Align: Teaching LMMs for Visual Scoring via Discrete Text-Defined Levels

Reference:
    @article{wu2023qalign,
        title={Q-Align: Teaching LMMs for Visual Scoring via Discrete Text-Defined Levels},
        author={Wu, Haoning and Zhang, Zicheng and Zhang, Weixia and Chen, Chaofeng and others},
        journal={arXiv preprint arXiv:2312.17090},
        year={2023},
    }

The language model is loaded through ``transformers`` with ``trust_remote_code``. It needs ~16GB of
GPU memory in float16; pass ``dtype='4bit'`` to load with bitsandbytes instead.
"""

import torch
from torch import nn
import torchvision.transforms.functional as TF
from PIL import Image

from transformers import AutoModelForCausalLM
from transformers.utils import is_flash_attn_2_available

from pyiqa.utils.registry import ARCH_REGISTRY

QALIGN_REPO = 'q-future/one-align'

TASK_PROMPTS = {
    'quality': 'How would you rate the quality of this image?',
    'aesthetic': 'How would you rate the aesthetics of this image?',
    'vqa': 'How would you rate the quality of this video?',
}


def expand2square(pil_img, background_color):
    width, height = pil_img.size
    if width == height:
        return pil_img
    elif width > height:
        result = Image.new(pil_img.mode, (width, width), background_color)
        result.paste(pil_img, (0, (width - height) // 2))
        return result
    else:
        result = Image.new(pil_img.mode, (height, height), background_color)
        result.paste(pil_img, ((height - width) // 2, 0))
        return result


def pick_dtype(dtype):
    if dtype == 'auto':
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return {'fp16': torch.float16, 'bf16': torch.bfloat16, 'fp32': torch.float32}[dtype]


@ARCH_REGISTRY.register()
class QAlign(nn.Module):

    def __init__(self, dtype='fp16', task='quality', device_map=None, max_batch=8) -> None:
        super().__init__()
        self.task = task
        self.max_batch = max_batch

        load_kwargs = dict(trust_remote_code=True)
        if dtype == '4bit':
            from transformers import BitsAndBytesConfig
            load_kwargs['quantization_config'] = BitsAndBytesConfig(
                load_in_4bit=True, bnb_4bit_compute_dtype=torch.float16, bnb_4bit_quant_type='nf4')
        elif dtype == '8bit':
            load_kwargs['load_in_8bit'] = True
        else:
            load_kwargs['torch_dtype'] = pick_dtype(dtype)

        # flash attention speeds up the 7B decoder considerably for batched scoring
        attn_impl = 'flash_attention_2' if is_flash_attn_2_available() else 'eager'

        self.model = AutoModelForCausalLM.from_pretrained(
            QALIGN_REPO,
            attn_implementation=attn_impl,
            device_map=device_map or {'': 'cuda:0'},
            **load_kwargs,
        )
        self.model.eval()

    def preprocess(self, x):
        """Convert a (B, 3, H, W) tensor in [0, 1] to the list of PIL images Q-Align expects."""
        images = []
        for img in x.detach().float().cpu():
            pil = TF.to_pil_image(img.clamp(0, 1))
            images.append(expand2square(pil, (255, 255, 255)))
        return images

    @torch.no_grad()
    def forward(self, x, task_=None, input_=None):
        task = task_ or self.task
        images = self.preprocess(x)
        scores = []
        for i in range(0, len(images), self.max_batch):
            chunk = images[i:i + self.max_batch]
            if task == 'vqa':
                out = self.model.score([chunk], task_='quality', input_='video')
            else:
                out = self.model.score(chunk, task_=task, input_='image')
            scores.append(out.float())
        return torch.cat(scores).reshape(-1, 1).to(x.device)
