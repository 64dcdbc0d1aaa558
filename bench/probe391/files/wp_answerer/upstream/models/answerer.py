from typing import Dict
from tqdm import tqdm
import torch
from PIL import Image
from transformers import Blip2Processor, Blip2ForConditionalGeneration

# Answer the object-level questions with a VQA model (BLIP-2) on the cropped regions,
# and the attribute-level ones on the full image.

BLIP2_CKPT = "Salesforce/blip2-flan-t5-xxl"


class Answerer:
    '''
        Input:
            'generated_questions': a list of 2-ele list, each [qs(str), involved entities(str)]
            'entity_info': A dict, containing entity name str, and corresponding entity information
        Output:
            'generated_qa_pairs': a list of dicts, each dict is {'question': str, 'answer': str}
    '''

    def __init__(self, args):
        # keep the VQA model off the card that holds the detector when there is a second one
        self.device = "cuda:1" if torch.cuda.device_count() > 1 else "cuda:0"
        self.processor = Blip2Processor.from_pretrained(BLIP2_CKPT, cache_dir=args.cache_dir)
        self.model = Blip2ForConditionalGeneration.from_pretrained(
            BLIP2_CKPT, cache_dir=args.cache_dir, torch_dtype=torch.float16
        ).to(self.device)
        self.model.eval()

    @torch.no_grad()
    def vqa(self, image: Image.Image, question: str, max_new_tokens: int = 30) -> str:
        prompt = f"Question: {question} Answer:"
        inputs = self.processor(images=image, text=prompt, return_tensors="pt").to(self.device, torch.float16)
        out = self.model.generate(**inputs, max_new_tokens=max_new_tokens)
        return self.processor.decode(out[0], skip_special_tokens=True).strip()

    def generate_answers(self, sample: Dict):
        generated_qs = sample['generated_questions']
        global_entity_dict = sample['entity_info']
        raw_image = Image.open(sample['img_path']).convert("RGB")

        all_qa_pairs = []
        for gen_qs in tqdm(generated_qs, desc="answering", leave=False):
            cur_qa_pairs = []
            for question, involved in gen_qs:
                entities = [e.strip() for e in involved.split('.') if e.strip()]
                # object-level question on a single instance -> ask on the crop
                if len(entities) == 1 and entities[0] in global_entity_dict \
                        and global_entity_dict[entities[0]]['total_count'] == 1:
                    crop = Image.open(global_entity_dict[entities[0]]['crop_path'][0]).convert("RGB")
                    answer = self.vqa(crop, question)
                else:
                    answer = self.vqa(raw_image, question)
                cur_qa_pairs.append({'question': question, 'answer': answer})
            all_qa_pairs.append(cur_qa_pairs)

        sample['generated_qa_pairs'] = all_qa_pairs
        return sample
