"""Batch evaluation of a TrOCR checkpoint (IAM / SROIE line crops) with beam search.

Reports CER / WER and throughput. Mirrors the fairseq-era TrOCR numbers with the
HF port of the model.
"""
import argparse
import csv
import os
import time
from pathlib import Path

import torch
from evaluate import load as load_metric
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from tqdm import tqdm
from transformers import TrOCRProcessor, VisionEncoderDecoderModel


class LineCrops(Dataset):
    """A csv of `file_name,text` rows next to a folder of line images."""

    def __init__(self, root, csv_name, processor):
        self.root = Path(root)
        with open(self.root / csv_name, newline="", encoding="utf-8") as f:
            self.rows = [r for r in csv.reader(f) if r]
        self.processor = processor

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, idx):
        file_name, text = self.rows[idx][0], self.rows[idx][1]
        image = Image.open(self.root / "images" / file_name).convert("RGB")
        pixel_values = self.processor(images=image, return_tensors="pt").pixel_values[0]
        return pixel_values, text


def collate(batch):
    pixel_values = torch.stack([b[0] for b in batch])
    texts = [b[1] for b in batch]
    return pixel_values, texts


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--model", default="microsoft/trocr-base-printed")
    p.add_argument("--data_root", required=True)
    p.add_argument("--csv", default="test.csv")
    p.add_argument("--batch_size", type=int, default=32)
    p.add_argument("--num_beams", type=int, default=5)
    p.add_argument("--max_new_tokens", type=int, default=64)
    p.add_argument("--length_penalty", type=float, default=2.0)
    p.add_argument("--fp16", action="store_true", help="half-precision inference on the GPU")
    p.add_argument("--gpu", type=int, default=0, help="which GPU to use")
    p.add_argument("--out", default="predictions.tsv")
    return p.parse_args()


def main():
    args = parse_args()
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True

    device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")
    processor = TrOCRProcessor.from_pretrained(args.model)
    model = VisionEncoderDecoderModel.from_pretrained(args.model)
    model.config.decoder_start_token_id = processor.tokenizer.cls_token_id
    model.config.pad_token_id = processor.tokenizer.pad_token_id
    model.config.eos_token_id = processor.tokenizer.sep_token_id
    if args.fp16:
        model.half()
    model.to(device)
    model.eval()

    dataset = LineCrops(args.data_root, args.csv, processor)
    loader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False,
                        num_workers=min(8, os.cpu_count() or 1), pin_memory=True,
                        collate_fn=collate)

    cer_metric = load_metric("cer")
    wer_metric = load_metric("wer")
    preds, refs = [], []
    n_images, t_model = 0, 0.0
    with torch.inference_mode():
        for pixel_values, texts in tqdm(loader, desc="decoding"):
            pixel_values = pixel_values.to(device, non_blocking=True)
            if args.fp16:
                pixel_values = pixel_values.half()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            generated = model.generate(
                pixel_values,
                num_beams=args.num_beams,
                max_new_tokens=args.max_new_tokens,
                length_penalty=args.length_penalty,
                early_stopping=True,
                no_repeat_ngram_size=3,
            )
            end.record()
            torch.cuda.synchronize(device)
            t_model += start.elapsed_time(end) / 1000.0
            batch_preds = processor.batch_decode(generated, skip_special_tokens=True)
            preds.extend(batch_preds)
            refs.extend(texts)
            n_images += pixel_values.size(0)

    cer = cer_metric.compute(predictions=preds, references=refs)
    wer = wer_metric.compute(predictions=preds, references=refs)
    print(f"images: {n_images}  CER: {cer:.4f}  WER: {wer:.4f}")
    print(f"model time: {t_model:.1f}s  ({n_images / max(t_model, 1e-6):.1f} lines/s, beams={args.num_beams})")
    print(f"peak memory: {torch.cuda.max_memory_allocated(device) / 2**20:.0f} MiB")

    with open(args.out, "w", encoding="utf-8") as f:
        for ref, pred in zip(refs, preds):
            f.write(f"{ref}\t{pred}\n")
    # also keep a copy on the host of the last batch for debugging
    torch.save(generated.cpu(), Path(args.out).with_suffix(".last_batch.pt"))


if __name__ == "__main__":
    main()
