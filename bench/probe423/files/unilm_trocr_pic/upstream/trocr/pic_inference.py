# Single-image / folder inference for a fairseq TrOCR checkpoint.
#
#   python pic_inference.py --model trocr-base-handwritten.pt --image IAM/image/c04-110-00.jpg
#
import argparse
import glob
import os

import torch
import torchvision.transforms as transforms
from PIL import Image

import fairseq
from fairseq import utils
from fairseq_cli import generate  # noqa: F401  (registers generation dataclasses)

import task  # noqa: F401  (registers the text_recognition task)
import deit  # noqa: F401
import trocr_models  # noqa: F401


def init(model_path, beam=5, use_fp16=False):
    model, cfg, inference_task = fairseq.checkpoint_utils.load_model_ensemble_and_task(
        [model_path],
        arg_overrides={"beam": beam, "task": "text_recognition", "data": "", "fp16": use_fp16},
    )

    device = "cuda" if torch.cuda.is_available() else "cpu"
    model[0].to(device)
    if use_fp16:
        model[0].half()
    model[0].eval()

    img_transform = transforms.Compose([
        transforms.Resize((384, 384), interpolation=3),
        transforms.ToTensor(),
        transforms.Normalize(0.5, 0.5),
    ])

    generator = inference_task.build_generator(
        model, cfg.generation, extra_gen_cls_kwargs={"lm_model": None, "lm_weight": None}
    )
    bpe = inference_task.build_bpe(cfg.bpe)
    return model, cfg, inference_task, generator, bpe, img_transform, device


def preprocess(img_path, img_transform, device, use_fp16=False):
    im = Image.open(img_path).convert("RGB").resize((384, 384))
    im = img_transform(im).unsqueeze(0).to(device).float()
    if use_fp16:
        im = im.half()
    return {"net_input": {"imgs": im}}


def get_text(cfg, generator, model, sample, bpe):
    decoder_output = generator.generate(model, sample, prefix_tokens=None, constraints=None,
                                        bos_token=None)
    decoder_output = decoder_output[0][0]  # top1

    hypo_tokens, hypo_str, alignment = utils.post_process_prediction(
        hypo_tokens=decoder_output["tokens"].int().cpu(),
        src_str="",
        alignment=decoder_output["alignment"],
        align_dict=None,
        tgt_dict=model[0].decoder.dictionary,
        remove_bpe=cfg.common_eval.post_process,
        extra_symbols_to_ignore=generate.get_symbols_to_strip_from_output(generator),
    )
    detok_hypo_str = bpe.decode(hypo_str)
    return detok_hypo_str


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--image", help="a single line image")
    ap.add_argument("--folder", help="or a folder of line images")
    ap.add_argument("--beam", type=int, default=10)
    ap.add_argument("--fp16", action="store_true")
    args = ap.parse_args()

    model, cfg, _, generator, bpe, img_transform, device = init(args.model, args.beam, args.fp16)
    paths = [args.image] if args.image else sorted(glob.glob(os.path.join(args.folder, "*")))
    with torch.no_grad():
        for p in paths:
            sample = preprocess(p, img_transform, device, args.fp16)
            text = get_text(cfg, generator, model, sample, bpe)
            print(f"{os.path.basename(p)}\t{text}")


if __name__ == "__main__":
    main()
