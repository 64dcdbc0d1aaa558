# Closed-form cross-attention refinement (CFR) + per-concept LoRA training for MACE.
#
# Stage 1 removes the residual information of the target phrase from the cross-attention
# key/value projections in closed form; stage 2 trains one LoRA per concept with an
# attention-map loss computed on Grounded-SAM masks; the LoRAs are fused afterwards by
# src/fuse_lora_close_form.py.
import gc
import logging
import math
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn.functional as F
import torch.utils.checkpoint
import transformers
import diffusers
from accelerate import Accelerator
from accelerate.logging import get_logger
from accelerate.utils import ProjectConfiguration, set_seed
from diffusers import AutoencoderKL, DDPMScheduler, UNet2DConditionModel
from diffusers.optimization import get_scheduler
from diffusers.utils.import_utils import is_xformers_available
from packaging import version
from PIL import Image
from tqdm.auto import tqdm
from transformers import CLIPTextModel, CLIPTokenizer

from src.dataset import MACEDataset
from src.cfr_utils import AttnController, get_ca_layers, prepare_k_v, closed_form_refinement
from src.lora import inject_trainable_lora_extended, save_lora_weight

logger = get_logger(__name__)


def collate_fn(examples, with_prior_preservation=False):
    input_ids = [example["instance_prompt_ids"] for example in examples]
    pixel_values = [example["instance_images"] for example in examples]
    masks = [example["instance_masks"] for example in examples]
    concept_ids = [example["concept_id"] for example in examples]

    if with_prior_preservation:
        input_ids += [example["class_prompt_ids"] for example in examples]
        pixel_values += [example["class_images"] for example in examples]

    pixel_values = torch.stack(pixel_values)
    pixel_values = pixel_values.to(memory_format=torch.contiguous_format).float()
    masks = torch.stack(masks)
    input_ids = torch.cat(input_ids, dim=0)

    return {
        "input_ids": input_ids,
        "pixel_values": pixel_values,
        "masks": masks,
        "concept_ids": torch.tensor(concept_ids),
    }


@torch.no_grad()
def get_gsam_masks(image_dir, concept, args):
    """Segment the concept in the generated training images with Grounded-SAM."""
    from groundingdino.util.inference import load_model, load_image, predict
    from segment_anything import build_sam, SamPredictor

    device = "cuda"
    grounding_model = load_model(args.grounding_dino_config, args.grounding_dino_ckpt, device=device)
    sam = build_sam(checkpoint=args.sam_ckpt).to(device)
    predictor = SamPredictor(sam)

    out_dir = os.path.join(image_dir, "masks")
    os.makedirs(out_dir, exist_ok=True)
    for name in sorted(os.listdir(image_dir)):
        if not name.endswith((".png", ".jpg")):
            continue
        image_source, image = load_image(os.path.join(image_dir, name))
        boxes, logits, phrases = predict(
            model=grounding_model,
            image=image,
            caption=concept,
            box_threshold=args.box_threshold,
            text_threshold=args.text_threshold,
            device=device,
        )
        predictor.set_image(image_source)
        h, w, _ = image_source.shape
        boxes_xyxy = boxes * torch.Tensor([w, h, w, h])
        boxes_xyxy[:, :2] -= boxes_xyxy[:, 2:] / 2
        boxes_xyxy[:, 2:] += boxes_xyxy[:, :2]
        transformed = predictor.transform.apply_boxes_torch(boxes_xyxy, image_source.shape[:2]).to(device)
        if len(transformed) == 0:
            mask = np.zeros((h, w), dtype=np.uint8)
        else:
            masks, _, _ = predictor.predict_torch(point_coords=None, point_labels=None,
                                                  boxes=transformed, multimask_output=False)
            mask = masks.any(dim=0)[0].cpu().numpy().astype(np.uint8)
        Image.fromarray(mask * 255).save(os.path.join(out_dir, name.rsplit(".", 1)[0] + "_mask.png"))

    del grounding_model, sam, predictor
    gc.collect()
    torch.cuda.empty_cache()


def main(args: SimpleNamespace):
    logging_dir = Path(args.output_dir, args.logging_dir)
    accelerator_project_config = ProjectConfiguration(project_dir=args.output_dir, logging_dir=logging_dir)

    accelerator = Accelerator(
        gradient_accumulation_steps=args.gradient_accumulation_steps,
        mixed_precision=args.mixed_precision,
        log_with=args.report_to,
        project_config=accelerator_project_config,
    )

    logging.basicConfig(
        format="%(asctime)s - %(levelname)s - %(name)s - %(message)s",
        datefmt="%m/%d/%Y %H:%M:%S",
        level=logging.INFO,
    )
    logger.info(accelerator.state, main_process_only=False)
    if accelerator.is_local_main_process:
        transformers.utils.logging.set_verbosity_warning()
        diffusers.utils.logging.set_verbosity_info()
    else:
        transformers.utils.logging.set_verbosity_error()
        diffusers.utils.logging.set_verbosity_error()

    if args.seed is not None:
        set_seed(args.seed)

    if accelerator.is_main_process and args.output_dir is not None:
        os.makedirs(args.output_dir, exist_ok=True)

    # Load the tokenizer, scheduler and models
    tokenizer = CLIPTokenizer.from_pretrained(args.pretrained_model_name_or_path, subfolder="tokenizer")
    noise_scheduler = DDPMScheduler.from_pretrained(args.pretrained_model_name_or_path, subfolder="scheduler")
    text_encoder = CLIPTextModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="text_encoder")
    vae = AutoencoderKL.from_pretrained(args.pretrained_model_name_or_path, subfolder="vae")
    unet = UNet2DConditionModel.from_pretrained(args.pretrained_model_name_or_path, subfolder="unet")

    vae.requires_grad_(False)
    text_encoder.requires_grad_(False)
    unet.requires_grad_(False)

    # For mixed precision training we cast the frozen weights to half precision
    weight_dtype = torch.float32
    if accelerator.mixed_precision == "fp16":
        weight_dtype = torch.float16
    elif accelerator.mixed_precision == "bf16":
        weight_dtype = torch.bfloat16

    unet.to(accelerator.device, dtype=weight_dtype)
    vae.to(accelerator.device, dtype=weight_dtype)
    text_encoder.to(accelerator.device, dtype=weight_dtype)

    if args.enable_xformers_memory_efficient_attention:
        if is_xformers_available():
            import xformers

            xformers_version = version.parse(xformers.__version__)
            if xformers_version == version.parse("0.0.16"):
                logger.warn(
                    "xFormers 0.0.16 cannot be used for training in some GPUs. If you observe problems during training, please update xFormers to at least 0.0.17."
                )
            unet.enable_xformers_memory_efficient_attention()
        else:
            raise ValueError("xformers is not available. Make sure it is installed correctly")

    if args.gradient_checkpointing:
        unet.enable_gradient_checkpointing()

    # Enable TF32 for faster training on Ampere GPUs,
    # cf https://pytorch.org/docs/stable/notes/cuda.html#tensorfloat-32-tf32-on-ampere-devices
    if args.allow_tf32:
        torch.backends.cuda.matmul.allow_tf32 = True

    # ------------------------------------------------------------------
    # Stage 0: masks for the attention loss
    # ------------------------------------------------------------------
    if args.use_gsam_mask and accelerator.is_main_process:
        for concept, image_dir in zip(args.multi_concept, args.instance_data_dir):
            get_gsam_masks(image_dir, concept[0], args)
    accelerator.wait_for_everyone()

    # ------------------------------------------------------------------
    # Stage 1: closed-form refinement of the cross-attention projections
    # ------------------------------------------------------------------
    ca_layers = get_ca_layers(unet)
    projection_matrices = [l.to_v for l in ca_layers] + [l.to_k for l in ca_layers]
    if args.train_seperate:
        old_texts = [c[0] for c in args.multi_concept]
        new_texts = [args.mapping_concept[i] for i in range(len(old_texts))]
        all_contexts, all_valuess = prepare_k_v(text_encoder, projection_matrices, ca_layers,
                                                old_texts, new_texts, tokenizer,
                                                with_to_k=True, all_words=args.all_words)
        closed_form_refinement(projection_matrices, all_contexts, all_valuess,
                               lamb=args.lamb, preserve_scale=args.preserve_weight,
                               cache_dict_path=args.cache_path if args.use_cache else None)
        del all_contexts, all_valuess
        torch.cuda.empty_cache()  # CFR keeps large k/v caches on the GPU

    # ------------------------------------------------------------------
    # Stage 2: LoRA per concept with attention loss
    # ------------------------------------------------------------------
    if args.scale_lr:
        args.learning_rate = (
            args.learning_rate * args.gradient_accumulation_steps * args.train_batch_size * accelerator.num_processes
        )

    # Use 8-bit Adam for lower memory usage or to fine-tune the model in 16GB GPUs
    if args.use_8bit_adam:
        try:
            import bitsandbytes as bnb
        except ImportError:
            raise ImportError(
                "To use 8-bit Adam, please install the bitsandbytes library: `pip install bitsandbytes`."
            )
        optimizer_class = bnb.optim.AdamW8bit
    else:
        optimizer_class = torch.optim.AdamW

    for concept_idx, concept in enumerate(args.multi_concept):
        unet_lora_params, _ = inject_trainable_lora_extended(unet, r=args.rank)
        optimizer = optimizer_class(
            [{"params": [p for group in unet_lora_params for p in group]}],
            lr=args.learning_rate,
            betas=(args.adam_beta1, args.adam_beta2),
            weight_decay=args.adam_weight_decay,
            eps=args.adam_epsilon,
        )

        train_dataset = MACEDataset(
            tokenizer=tokenizer,
            size=args.resolution,
            multi_concept=[concept],
            mapping=[args.mapping_concept[concept_idx]],
            instance_data_root=[args.instance_data_dir[concept_idx]],
            use_pooler=args.use_pooler,
            use_gsam_mask=args.use_gsam_mask,
        )
        train_dataloader = torch.utils.data.DataLoader(
            train_dataset,
            batch_size=args.train_batch_size,
            shuffle=True,
            collate_fn=lambda examples: collate_fn(examples, False),
            num_workers=args.dataloader_num_workers,
            pin_memory=True,
        )

        num_update_steps_per_epoch = math.ceil(len(train_dataloader) / args.gradient_accumulation_steps)
        max_train_steps = args.max_train_steps or args.num_train_epochs * num_update_steps_per_epoch
        lr_scheduler = get_scheduler(
            args.lr_scheduler,
            optimizer=optimizer,
            num_warmup_steps=args.lr_warmup_steps * accelerator.num_processes,
            num_training_steps=max_train_steps * accelerator.num_processes,
        )

        unet, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
            unet, optimizer, train_dataloader, lr_scheduler
        )

        attn_controller = AttnController()
        attn_controller.register(unet, resolution=args.resolution)

        progress_bar = tqdm(range(max_train_steps), disable=not accelerator.is_local_main_process)
        progress_bar.set_description(f"LoRA [{concept[0]}]")
        global_step = 0
        unet.train()
        while global_step < max_train_steps:
            for step, batch in enumerate(train_dataloader):
                with accelerator.accumulate(unet):
                    latents = vae.encode(batch["pixel_values"].to(dtype=weight_dtype)).latent_dist.sample()
                    latents = latents * vae.config.scaling_factor

                    noise = torch.randn_like(latents)
                    bsz = latents.shape[0]
                    timesteps = torch.randint(0, noise_scheduler.config.num_train_timesteps, (bsz,), device=latents.device)
                    timesteps = timesteps.long()
                    noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps)

                    encoder_hidden_states = text_encoder(batch["input_ids"])[0]

                    attn_controller.reset()
                    model_pred = unet(noisy_latents, timesteps, encoder_hidden_states).sample

                    # attention loss: push the concept tokens' maps to zero inside the mask
                    attn_maps = attn_controller.get_token_maps(token_ids=batch["input_ids"], tokenizer=tokenizer,
                                                               concept=concept[0])
                    masks = F.interpolate(batch["masks"].to(dtype=attn_maps.dtype), size=attn_maps.shape[-2:], mode="nearest")
                    loss = (attn_maps * masks).sum(dim=(-1, -2)).mean() / masks.sum().clamp(min=1)

                    accelerator.backward(loss)
                    if accelerator.sync_gradients:
                        params_to_clip = [p for group in unet_lora_params for p in group]
                        accelerator.clip_grad_norm_(params_to_clip, args.max_grad_norm)
                    optimizer.step()
                    lr_scheduler.step()
                    optimizer.zero_grad(set_to_none=True)

                if accelerator.sync_gradients:
                    progress_bar.update(1)
                    global_step += 1
                logs = {"loss": loss.detach().item(), "lr": lr_scheduler.get_last_lr()[0]}
                progress_bar.set_postfix(**logs)
                accelerator.log(logs, step=global_step)
                if global_step >= max_train_steps:
                    break

        attn_controller.remove()
        accelerator.wait_for_everyone()
        if accelerator.is_main_process:
            save_lora_weight(accelerator.unwrap_model(unet),
                             os.path.join(args.output_dir, f"lora_{concept_idx}.pt"))
        del optimizer, lr_scheduler, train_dataloader
        gc.collect()
        torch.cuda.empty_cache()  # release LoRA optimizer state before the next concept

    accelerator.end_training()
