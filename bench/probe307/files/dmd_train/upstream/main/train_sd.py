import matplotlib
matplotlib.use('Agg')
from main.utils import prepare_images_for_saving, draw_valued_array, cycle, draw_probability_histogram
from accelerate.utils import ProjectConfiguration, InitProcessGroupKwargs
from diffusers.optimization import get_scheduler
from main.utils import SDTextDataset
from main.sd_unified_model import SDUniModel
from accelerate.utils import set_seed
from accelerate import Accelerator
from diffusers import AutoencoderKL
from datetime import timedelta
import argparse
import shutil
import wandb
import torch
import time
import os


class Trainer:
    def __init__(self, args):

        self.args = args

        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True

        accelerator_project_config = ProjectConfiguration(logging_dir=args.log_path)
        # long timeout: rank 0 runs COCO eval while the others wait at the barrier
        process_group_kwargs = InitProcessGroupKwargs(backend="nccl", timeout=timedelta(seconds=5400))

        accelerator = Accelerator(
            gradient_accumulation_steps=1,  # no accumulation
            mixed_precision="bf16" if args.use_fp16 else "no",
            log_with="wandb",
            project_config=accelerator_project_config,
            kwargs_handlers=[process_group_kwargs],
        )
        set_seed(args.seed + accelerator.process_index)

        print(accelerator.state)

        if accelerator.is_main_process:
            output_path = os.path.join(args.output_path, f"time_{int(time.time())}_seed{args.seed}")
            os.makedirs(output_path, exist_ok=False)

            self.cache_dir = os.path.join(args.cache_dir, f"time_{int(time.time())}_seed{args.seed}")
            os.makedirs(self.cache_dir, exist_ok=False)

            self.output_path = output_path

            os.makedirs(args.log_path, exist_ok=True)

            run = wandb.init(config=args, dir=args.log_path, **{"mode": "online", "entity": args.wandb_entity, "project": args.wandb_project})
            wandb.run.log_code(".")
            wandb.run.name = args.wandb_name
            print(f"run dir: {run.dir}")
            self.wandb_folder = run.dir
            os.makedirs(self.wandb_folder, exist_ok=True)

        self.model = SDUniModel(args, accelerator)
        self.max_grad_norm = args.max_grad_norm
        self.denoising = args.denoising
        self.step = 0

        if args.ckpt_only_path is not None:
            if accelerator.is_main_process:
                print(f"loading ckpt only from {args.ckpt_only_path}")
            generator_path = os.path.join(args.ckpt_only_path, "pytorch_model.bin")
            guidance_path = os.path.join(args.ckpt_only_path, "pytorch_model_1.bin")
            print(self.model.feedforward_model.load_state_dict(torch.load(generator_path, map_location="cpu"), strict=False))
            print(self.model.guidance_model.load_state_dict(torch.load(guidance_path, map_location="cpu"), strict=False))

            self.step = int(args.ckpt_only_path.replace("/", "").split("_")[-1])

        if args.generator_ckpt_path is not None:
            if accelerator.is_main_process:
                print(f"loading generator ckpt from {args.generator_ckpt_path}")
            print(self.model.feedforward_model.load_state_dict(torch.load(args.generator_ckpt_path, map_location="cpu"), strict=True))

        self.optimizer_generator = torch.optim.AdamW(
            [param for param in self.model.feedforward_model.parameters() if param.requires_grad],
            lr=args.generator_lr,
            betas=(0.9, 0.999),  # pytorch's default
            weight_decay=0.01  # pytorch's default
        )
        self.optimizer_guidance = torch.optim.AdamW(
            [param for param in self.model.guidance_model.parameters() if param.requires_grad],
            lr=args.guidance_lr,
            betas=(0.9, 0.999),  # pytorch's default
            weight_decay=0.01  # pytorch's default
        )

        # actually this scheduler is not very useful (it warms up from 0 to max_lr in 500 / num_gpu steps), but we keep it to be consistent with the previous DMD2 runs
        self.scheduler_generator = get_scheduler(
            "constant_with_warmup",
            optimizer=self.optimizer_generator,
            num_warmup_steps=args.warmup_step,
            num_training_steps=args.train_iters
        )
        self.scheduler_guidance = get_scheduler(
            "constant_with_warmup",
            optimizer=self.optimizer_guidance,
            num_warmup_steps=args.warmup_step,
            num_training_steps=args.train_iters
        )

        # the self.model is not wrapped in ddp, only its two subnetworks are wrapped
        (
            self.model.feedforward_model, self.model.guidance_model, self.optimizer_generator,
            self.optimizer_guidance, self.scheduler_generator, self.scheduler_guidance
        ) = accelerator.prepare(
            self.model.feedforward_model, self.model.guidance_model, self.optimizer_generator,
            self.optimizer_guidance, self.scheduler_generator, self.scheduler_guidance
        )

        dataset = SDTextDataset(args.train_prompt_path, tokenizer_one=self.model.tokenizer, is_sdxl=args.sdxl)

        dataloader = torch.utils.data.DataLoader(
            dataset, num_workers=args.num_workers, batch_size=args.batch_size, shuffle=True, drop_last=True
        )
        dataloader = accelerator.prepare(dataloader)
        self.dataloader = cycle(dataloader)

        # visualisation-only VAE, kept in half precision to save memory on the logging rank
        self.vae = AutoencoderKL.from_pretrained(
            args.model_id, subfolder="vae"
        ).to(accelerator.device, dtype=torch.bfloat16 if args.use_fp16 else torch.float32)
        self.vae.requires_grad_(False)

        self.accelerator = accelerator
        self.train_iters = args.train_iters
        self.log_iters = args.log_iters
        self.wandb_iters = args.wandb_iters
        self.grid_size = args.grid_size
        self.log_loss = args.log_loss
        self.dfake_gen_update_ratio = args.dfake_gen_update_ratio
        self.cls_on_clean_image = args.cls_on_clean_image
        self.gen_cls_loss = args.gen_cls_loss
        self.no_save = args.no_save
        self.previous_time = None
        self.no_wandb = args.no_wandb
        self.max_checkpoint = args.max_checkpoint

    def load(self, checkpoint_path):
        # Please note that, after loading the checkpoints, all random seed, learning rate, etc.. will be reset to align with the checkpoint.
        self.step = int(checkpoint_path.replace("/", "").split("_")[-1])
        print("loading a previous checkpoints including optimizer and random seed from step {}".format(self.step))
        self.accelerator.load_state(checkpoint_path, strict=False)

    def save(self):
        # training states
        output_path = os.path.join(self.output_path, f"checkpoint_model_{self.step:06d}")
        print(f"start saving checkpoint to {output_path}")
        self.accelerator.save_state(output_path)

        # remove previous checkpoints
        for folder in os.listdir(self.output_path):
            if folder.startswith("checkpoint_model") and folder != f"checkpoint_model_{self.step:06d}":
                shutil.rmtree(os.path.join(self.output_path, folder))

        print("done saving")
        torch.cuda.empty_cache()

    @torch.no_grad()
    def decode_for_logging(self, latents):
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16, enabled=self.args.use_fp16):
            images = self.vae.decode(latents[: self.grid_size**2] / 0.18215).sample
        return prepare_images_for_saving(images.float(), resolution=self.args.resolution, grid_size=self.grid_size)

    def train_one_step(self):
        self.model.train()

        accelerator = self.accelerator

        text_embedding, pooled_text_embedding, uncond_embedding, uncond_pooled_text_embedding, unet_added_conditions, uncond_unet_added_conditions = \
            self.model.prepare_text_embeddings(next(self.dataloader))

        COMPUTE_GENERATOR_GRADIENT = self.step % self.dfake_gen_update_ratio == 0

        # generate images and optionaly compute the generator gradient
        generator_loss_dict, generator_log_dict = self.model(
            text_embedding, uncond_embedding,
            compute_generator_gradient=COMPUTE_GENERATOR_GRADIENT,
            generator_turn=True,
            guidance_turn=False,
            unet_added_conditions=unet_added_conditions,
            uncond_unet_added_conditions=uncond_unet_added_conditions
        )

        # first update the generator if the current step is a multiple of dfake_gen_update_ratio
        generator_loss = 0.0

        if COMPUTE_GENERATOR_GRADIENT:
            generator_loss += generator_loss_dict["loss_dm"] * self.args.dm_loss_weight

            if self.cls_on_clean_image and self.gen_cls_loss:
                generator_loss += generator_loss_dict["gen_cls_loss"] * self.args.gen_cls_loss_weight

            self.accelerator.backward(generator_loss)
            generator_grad_norm = accelerator.clip_grad_norm_(self.model.feedforward_model.parameters(), self.max_grad_norm)
            self.optimizer_generator.step()

            # if we also compute gan loss, the classifier may also receive gradient
            # zero out guidance model's gradient avoids undesired gradient accumulation
            self.optimizer_generator.zero_grad()
            self.optimizer_guidance.zero_grad()

        self.scheduler_generator.step()

        # update the guidance model (dfake and classifier)
        guidance_loss_dict, guidance_log_dict = self.model(
            text_embedding, uncond_embedding,
            compute_generator_gradient=False,
            generator_turn=False,
            guidance_turn=True,
            guidance_data_dict=generator_log_dict['guidance_data_dict']
        )

        guidance_loss = 0
        guidance_loss += guidance_loss_dict["loss_fake_mean"]

        if self.cls_on_clean_image:
            guidance_loss += guidance_loss_dict["guidance_cls_loss"] * self.args.guidance_cls_loss_weight

        self.accelerator.backward(guidance_loss)
        guidance_grad_norm = accelerator.clip_grad_norm_(self.model.guidance_model.parameters(), self.max_grad_norm)
        self.optimizer_guidance.step()
        self.optimizer_guidance.zero_grad()
        self.optimizer_generator.zero_grad()  # zero out the generator's gradient as well
        self.scheduler_guidance.step()

        # combine the two dictionaries
        loss_dict = {**generator_loss_dict, **guidance_loss_dict}
        log_dict = {**generator_log_dict, **guidance_log_dict}

        if self.step % self.wandb_iters == 0:
            log_dict['generated_image'] = accelerator.gather(log_dict['generated_image'])
            log_dict['dmtrain_grad'] = accelerator.gather(log_dict['dmtrain_grad'])
            log_dict['dmtrain_gradient_norm'] = accelerator.gather(torch.tensor(log_dict['dmtrain_gradient_norm']).cuda()).mean().item()

        if accelerator.is_main_process and self.log_loss and (not self.no_wandb):
            wandb_loss_dict = {
                "loss_dm": loss_dict['loss_dm'].item(),
                "loss_fake_mean": loss_dict['loss_fake_mean'].item(),
                "generator_grad_norm": generator_grad_norm.item() if COMPUTE_GENERATOR_GRADIENT else 0.0,
                "guidance_grad_norm": guidance_grad_norm.item(),
                "max_memory_allocated_gb": torch.cuda.max_memory_allocated() / 1024**3,
            }
            wandb.log(wandb_loss_dict, step=self.step)

        if accelerator.is_main_process and self.step % self.wandb_iters == 0 and (not self.no_wandb):
            with torch.no_grad():
                generated_image_grid = self.decode_for_logging(log_dict['generated_image'])
                data_dict = {
                    "generated_image": wandb.Image(generated_image_grid),
                    "dmtrain_gradient_norm": log_dict['dmtrain_gradient_norm'],
                }
                if self.cls_on_clean_image:
                    data_dict['pred_realism_on_fake'] = wandb.Image(
                        draw_probability_histogram(log_dict['pred_realism_on_fake'].cpu().numpy())
                    )
                wandb.log(data_dict, step=self.step)

        accelerator.wait_for_everyone()

    def train(self):
        for index in range(self.step, self.train_iters):
            self.train_one_step()
            if (not self.no_save) and self.step % self.log_iters == 0:
                if self.accelerator.is_main_process:
                    self.save()
                self.accelerator.wait_for_everyone()

            if self.accelerator.is_main_process:
                current_time = time.time()
                if self.previous_time is None:
                    self.previous_time = current_time
                else:
                    if not self.no_wandb:
                        wandb.log({"per iteration time": current_time - self.previous_time}, step=self.step)
                    self.previous_time = current_time

            self.step += 1


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model_id", type=str, default="runwayml/stable-diffusion-v1-5")
    parser.add_argument("--output_path", type=str, default="/mnt/localssd/test_stable_diffusion_coco")
    parser.add_argument("--log_path", type=str, default="/mnt/localssd/log_stable_diffusion_coco")
    parser.add_argument("--cache_dir", type=str, default="/mnt/localssd/cache")
    parser.add_argument("--train_iters", type=int, default=1000000)
    parser.add_argument("--log_iters", type=int, default=100)
    parser.add_argument("--wandb_iters", type=int, default=100)
    parser.add_argument("--seed", type=int, default=10)
    parser.add_argument("--resolution", type=int, default=512)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--num_workers", type=int, default=4)
    parser.add_argument("--grid_size", type=int, default=2)
    parser.add_argument("--generator_lr", type=float, default=1e-5)
    parser.add_argument("--guidance_lr", type=float, default=1e-5)
    parser.add_argument("--warmup_step", type=int, default=500)
    parser.add_argument("--max_grad_norm", type=float, default=10.0)
    parser.add_argument("--dfake_gen_update_ratio", type=int, default=1)
    parser.add_argument("--dm_loss_weight", type=float, default=1.0)
    parser.add_argument("--gen_cls_loss_weight", type=float, default=0)
    parser.add_argument("--guidance_cls_loss_weight", type=float, default=1.0)
    parser.add_argument("--use_fp16", action="store_true")
    parser.add_argument("--sdxl", action="store_true")
    parser.add_argument("--cls_on_clean_image", action="store_true")
    parser.add_argument("--gen_cls_loss", action="store_true")
    parser.add_argument("--denoising", action="store_true")
    parser.add_argument("--log_loss", action="store_true")
    parser.add_argument("--no_save", action="store_true")
    parser.add_argument("--no_wandb", action="store_true")
    parser.add_argument("--max_checkpoint", type=int, default=150)
    parser.add_argument("--train_prompt_path", type=str)
    parser.add_argument("--ckpt_only_path", type=str, default=None)
    parser.add_argument("--generator_ckpt_path", type=str, default=None)
    parser.add_argument("--wandb_entity", type=str)
    parser.add_argument("--wandb_project", type=str)
    parser.add_argument("--wandb_name", type=str)
    parser.add_argument("--initialie_generator", action="store_true")
    parser.add_argument("--latent_resolution", type=int, default=64)
    parser.add_argument("--real_image_path", type=str)
    parser.add_argument("--real_guidance_scale", type=float, default=6.0)
    parser.add_argument("--fake_guidance_scale", type=float, default=1.0)
    parser.add_argument("--min_step_percent", type=float, default=0.02)
    parser.add_argument("--max_step_percent", type=float, default=0.98)
    parser.add_argument("--num_train_timesteps", type=int, default=1000)
    parser.add_argument("--diffusion_gan", action="store_true")
    parser.add_argument("--diffusion_gan_max_timestep", type=int, default=0)
    parser.add_argument("--num_denoising_step", type=int, default=4)
    parser.add_argument("--denoising_timestep", type=int, default=1000)
    parser.add_argument("--backward_simulation", action="store_true")
    parser.add_argument("--gan_alone", action="store_true")
    parser.add_argument("--gradient_checkpointing", action="store_true")
    parser.add_argument("--fsdp", action="store_true", help="kept for launcher compatibility; this branch trains with DDP")
    args = parser.parse_args()
    return args


if __name__ == "__main__":
    args = parse_args()

    trainer = Trainer(args)

    trainer.train()
