import os
import os.path
import sys
import json
import random
import argparse

# Pin the visible GPU before torch initialises CUDA (``--gpu 1`` etc.).
if "--gpu" in sys.argv:
    os.environ["CUDA_VISIBLE_DEVICES"] = sys.argv[sys.argv.index("--gpu") + 1]

import numpy as np
import torch

sys.path.append('..')
from easyeditor import (
    FTHyperParams,
    IKEHyperParams,
    KNHyperParams,
    MEMITHyperParams,
    ROMEHyperParams,
    LoRAHyperParams,
    MENDHyperParams,
    SERACHparams,
    GraceHyperParams,
    WISEHyperParams,
)
from easyeditor import BaseEditor
from easyeditor.models.ike import encode_ike_facts
from sentence_transformers import SentenceTransformer
from easyeditor import KnowEditDataset


def preprocess_wiki_recent(datas):
    prompts = [data['prompt'] for data in datas]
    subjects = [data['subject'] for data in datas]
    target_new = [data['target_new'] for data in datas]
    portability_r = [data['portability_r'] for data in datas]
    portability_s = [data['portability_s'] for data in datas]
    portability_l = [data['portability_l'] for data in datas]
    locality_rs = [data['locality_rs'] for data in datas]
    locality_f = [data['locality_f'] for data in datas]
    return prompts, subjects, target_new, portability_r, portability_s, portability_l, locality_rs, locality_f


def build_inputs(prompts, portability_r, portability_s, portability_l, locality_rs, locality_f):
    portability_inputs = {}
    locality_inputs = {}
    for name, values in (("Reasoning", portability_r), ("Subject_Aliasing", portability_s), ("Logical_Generalization", portability_l)):
        portability_prompts, portability_answers = [], []
        for item in values:
            if item is None:
                portability_prompts.append(None)
                portability_answers.append(None)
                continue
            portability_prompts.append(item['prompt'])
            portability_answers.append(item['ground_truth'])
        portability_inputs[name] = {'prompt': portability_prompts, 'ground_truth': portability_answers}
    for name, values in (("Relation_Specificity", locality_rs), ("Forgetfulness", locality_f)):
        locality_prompts, locality_answers = [], []
        for item in values:
            if item is None:
                locality_prompts.append(None)
                locality_answers.append(None)
                continue
            locality_prompts.append(item['prompt'])
            locality_answers.append(item['ground_truth'])
        locality_inputs[name] = {'prompt': locality_prompts, 'ground_truth': locality_answers}
    return portability_inputs, locality_inputs


HPARAMS_CLASSES = {
    'FT': FTHyperParams,
    'IKE': IKEHyperParams,
    'KN': KNHyperParams,
    'MEMIT': MEMITHyperParams,
    'ROME': ROMEHyperParams,
    'LoRA': LoRAHyperParams,
    'MEND': MENDHyperParams,
    'SERAC': SERACHparams,
    'GRACE': GraceHyperParams,
    'WISE': WISEHyperParams,
}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('--editing_method', required=True, type=str)
    parser.add_argument('--hparams_dir', required=True, type=str)
    parser.add_argument('--data_dir', required=True, type=str)
    parser.add_argument('--ds_size', default=None, type=int)
    parser.add_argument('--metrics_save_dir', default='./output', type=str)
    parser.add_argument('--datatype', default=None, type=str)
    parser.add_argument('--train_data_path', type=str)
    parser.add_argument('--pre_file', default='./seq_pre.json', type=str)
    parser.add_argument('--gpu', default='0', type=str,
                        help='GPU id(s) exposed through CUDA_VISIBLE_DEVICES')
    parser.add_argument('--seed', default=42, type=int)
    args = parser.parse_args()

    if not torch.cuda.is_available():
        raise SystemExit("KnowEdit evaluation needs at least one CUDA GPU.")
    print(f"Visible GPUs: {torch.cuda.device_count()} (CUDA {torch.version.cuda})")

    # TF32 matmuls are fine for the locality/portability metrics and ~2x faster on A100
    torch.backends.cuda.matmul.allow_tf32 = True
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    editing_hparams = HPARAMS_CLASSES.get(args.editing_method)
    if editing_hparams is None:
        raise NotImplementedError(args.editing_method)

    datas = KnowEditDataset(args.data_dir, size=args.ds_size)
    if args.datatype == 'counterfact' or args.datatype == 'recent' or args.datatype == 'zsre':
        prompts, subjects, target_new, portability_r, portability_s, portability_l, locality_rs, locality_f = preprocess_wiki_recent(datas)
    elif args.datatype == 'wikibio':
        prompts = [data['prompt'] for data in datas]
        subjects = [data['subject'] for data in datas]
        target_new = [data['target_new'] for data in datas]
        locality_rs = [data['locality_rs'] for data in datas]
        locality_f = [data['locality_f'] for data in datas]
        portability_r = portability_s = portability_l = [None] * len(prompts)
    else:
        raise ValueError(f"unknown datatype {args.datatype}")

    portability_inputs, locality_inputs = build_inputs(
        prompts, portability_r, portability_s, portability_l, locality_rs, locality_f
    )

    hparams = editing_hparams.from_hparams(args.hparams_dir)
    args.pre_file = f"./{hparams.model_name.split('/')[-1]}_{args.datatype}_pre_edit.json"
    print(args.pre_file)
    if args.pre_file is not None and os.path.exists(args.pre_file):
        pre_edit = json.load(open(args.pre_file, 'r'))
        assert len(pre_edit) == len(prompts)
    else:
        pre_edit = None

    if args.editing_method == 'IKE':
        train_ds = KnowEditDataset(args.train_data_path)
        sentence_model = SentenceTransformer(hparams.sentence_model_name).to(f'cuda:{hparams.device}')
        encode_ike_facts(sentence_model, train_ds, hparams)
    else:
        train_ds = None

    editor = BaseEditor.from_hparams(hparams)
    metrics, edited_model, _ = editor.edit(
        prompts=prompts,
        target_new=target_new,
        subject=subjects,
        locality_inputs=locality_inputs,
        portability_inputs=portability_inputs,
        train_ds=train_ds,
        keep_original_weight=True,
        pre_file=args.pre_file,
        pre_edit=pre_edit,
        test_generation=True,
    )
    if not os.path.exists(args.metrics_save_dir):
        os.makedirs(args.metrics_save_dir)
    json.dump(metrics, open(os.path.join(args.metrics_save_dir, f'{args.editing_method}_{args.datatype}_{hparams.model_name.split("/")[-1]}_results.json'), 'w'), indent=4)
    print(f"Peak GPU memory: {torch.cuda.max_memory_allocated() / 2 ** 30:.2f} GiB")
