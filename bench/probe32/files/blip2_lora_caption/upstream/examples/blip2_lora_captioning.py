"""Fine-tune BLIP-2 (OPT-2.7b) for image captioning with int8 weights + LoRA.

Script version of the peft "Fine-tune BLIP-2 with LoRA" notebook.

    python examples/blip2_lora_captioning.py --dataset ybelkada/football-dataset --epochs 10
"""
import argparse
import os

import torch
from datasets import load_dataset
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from torch.utils.data import DataLoader, Dataset
from transformers import AutoProcessor, BitsAndBytesConfig, Blip2ForConditionalGeneration


class ImageCaptioningDataset(Dataset):
    def __init__(self, dataset, processor):
        self.dataset = dataset
        self.processor = processor

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, idx):
        item = self.dataset[idx]
        encoding = self.processor(images=item["image"], padding="max_length", return_tensors="pt")
        # remove batch dimension
        encoding = {k: v.squeeze() for k, v in encoding.items()}
        encoding["text"] = item["text"]
        return encoding


def make_collate_fn(processor):
    def collate_fn(batch):
        # pad the input_ids and attention_mask
        processed_batch = {}
        for key in batch[0].keys():
            if key != "text":
                processed_batch[key] = torch.stack([example[key] for example in batch])
            else:
                text_inputs = processor.tokenizer(
                    [example["text"] for example in batch], padding=True, return_tensors="pt"
                )
                processed_batch["input_ids"] = text_inputs["input_ids"]
                processed_batch["attention_mask"] = text_inputs["attention_mask"]
        return processed_batch

    return collate_fn


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_id", default="ybelkada/blip2-opt-2.7b-fp16-sharded")
    parser.add_argument("--dataset", default="ybelkada/football-dataset")
    parser.add_argument("--output_dir", default="./blip2-lora-captioning")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch_size", type=int, default=3)
    parser.add_argument("--lr", type=float, default=5e-5)
    parser.add_argument("--fp16", action="store_true", help="mixed precision on the GPU")
    parser.add_argument("--lora_r", type=int, default=16)
    parser.add_argument("--num_workers", type=int, default=2)
    return parser.parse_args()


def main():
    args = parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"

    processor = AutoProcessor.from_pretrained(args.model_id)
    quant_config = BitsAndBytesConfig(load_in_8bit=True)
    model = Blip2ForConditionalGeneration.from_pretrained(
        args.model_id, device_map="auto", quantization_config=quant_config
    )
    model = prepare_model_for_kbit_training(model)

    # Let's define the LoraConfig
    config = LoraConfig(
        r=args.lora_r,
        lora_alpha=2 * args.lora_r,
        lora_dropout=0.05,
        bias="none",
        target_modules=["q_proj", "k_proj"],
    )
    model = get_peft_model(model, config)
    model.print_trainable_parameters()

    dataset = load_dataset(args.dataset, split="train")
    train_dataset = ImageCaptioningDataset(dataset, processor)
    train_dataloader = DataLoader(
        train_dataset,
        shuffle=True,
        batch_size=args.batch_size,
        collate_fn=make_collate_fn(processor),
        num_workers=args.num_workers,
        pin_memory=True,
        pin_memory_device="cuda",
    )

    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
    scaler = torch.cuda.amp.GradScaler(enabled=args.fp16)

    model.train()
    for epoch in range(args.epochs):
        print("Epoch:", epoch)
        for idx, batch in enumerate(train_dataloader):
            input_ids = batch.pop("input_ids").to(device)
            pixel_values = batch.pop("pixel_values").to(device, torch.float16)

            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.fp16):
                outputs = model(input_ids=input_ids, pixel_values=pixel_values, labels=input_ids)
            loss = outputs.loss

            print("Loss:", loss.item())

            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad()

            if idx % 10 == 0:
                model.eval()
                with torch.no_grad():
                    generated_output = model.generate(pixel_values=pixel_values, max_new_tokens=25)
                print(processor.batch_decode(generated_output, skip_special_tokens=True))
                model.train()

    os.makedirs(args.output_dir, exist_ok=True)
    model.save_pretrained(args.output_dir)

    # inference on one training image
    model.eval()
    image = dataset[0]["image"]
    inputs = processor(images=image, return_tensors="pt").to(device, torch.float16)
    with torch.no_grad():
        generated_ids = model.generate(**inputs, max_new_tokens=25)
    generated_caption = processor.batch_decode(generated_ids, skip_special_tokens=True)[0]
    print(generated_caption)

    if torch.cuda.is_available():
        print(f"peak memory: {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB")


if __name__ == "__main__":
    main()
