# -*- coding: utf-8 -*-
# Author: ximing
# Description: VectorFusion - text-to-SVG by abstracting pixel-based diffusion models
# License: MPL 2.0

import shutil
from typing import Union, AnyStr, List, Tuple

from omegaconf import OmegaConf
import numpy as np
from PIL import Image
import torch
import torch.nn.functional as F
from torch.cuda.amp import custom_bwd, custom_fwd
from torchvision import transforms
from torchvision.datasets.folder import is_image_file
from tqdm.auto import tqdm
from diffusers import StableDiffusionPipeline, DDIMScheduler

from pytorch_svgrender.libs.engine import ModelState
from pytorch_svgrender.painter.vectorfusion import Painter, PainterOptimizer
from pytorch_svgrender.painter.vectorfusion import channel_saturation_penalty_loss as pixel_penalty_loss
from pytorch_svgrender.painter.live import xing_loss_fn
from pytorch_svgrender.plt import plot_img, plot_couple, view_images
from pytorch_svgrender.token2attn.ptp_utils import view_images
from pytorch_svgrender.diffusers_warp import init_StableDiffusion_pipeline, model2res
from pytorch_svgrender.libs.metric.clip_score import CLIPScoreWrapper


class SpecifyGradient(torch.autograd.Function):

    @staticmethod
    @custom_fwd
    def forward(ctx, input_tensor, gt_grad):
        ctx.save_for_backward(gt_grad)
        # we return a dummy value 1, which will be scaled by amp's scaler so we get the scale in backward.
        return torch.ones([1], device=input_tensor.device, dtype=input_tensor.dtype)

    @staticmethod
    @custom_bwd
    def backward(ctx, grad_scale):
        gt_grad, = ctx.saved_tensors
        gt_grad = gt_grad * grad_scale
        return gt_grad, None


class LSDSPipeline(StableDiffusionPipeline):
    r"""
    Pipeline for text-to-image generation using Stable Diffusion,
    and latent score distillation sampling (LSDS) for the SVG fine-tuning stage.
    """

    def x_augment(self, x: torch.Tensor, img_size: int = 512):
        augment_compose = transforms.Compose([
            transforms.RandomPerspective(distortion_scale=0.5, p=0.7),
            transforms.RandomCrop(size=(img_size, img_size), pad_if_needed=True, padding_mode='reflect')
        ])
        return augment_compose(x)

    def encode_(self, images):
        images = (2 * images - 1).clamp(-1.0, 1.0)  # images: [B, 3, H, W]

        # encode images
        latents = self.vae.encode(images).latent_dist.sample()
        latents = self.vae.config.scaling_factor * latents

        # scale the initial noise by the standard deviation required by the scheduler
        latents = latents * self.scheduler.init_noise_sigma

        return latents

    def score_distillation_sampling(self,
                                    pred_rgb: torch.Tensor,
                                    im_size: int,
                                    prompt: Union[List, str],
                                    negative_prompt: Union[List, str] = None,
                                    guidance_scale: float = 100,
                                    as_latent: bool = False,
                                    grad_scale: float = 1,
                                    t_range: Union[List[float], Tuple[float]] = (0.05, 0.95)):
        num_train_timesteps = self.scheduler.config.num_train_timesteps
        min_step = int(num_train_timesteps * t_range[0])
        max_step = int(num_train_timesteps * t_range[1])
        alphas = self.scheduler.alphas_cumprod.to(self.device)  # for convenience

        # input augmentation
        pred_rgb_a = self.x_augment(pred_rgb, im_size)

        # the input is only the latent
        if as_latent:
            latents = F.interpolate(pred_rgb_a, (64, 64), mode='bilinear', align_corners=False) * 2 - 1
        else:
            # encode image into latents with vae, requires grad!
            latents = self.encode_(pred_rgb_a)

        #  Encode input prompt
        num_images_per_prompt = 1  # the number of images to generate per prompt
        do_classifier_free_guidance = guidance_scale > 1.0
        text_embeddings = self._encode_prompt(
            prompt, self.device, num_images_per_prompt, do_classifier_free_guidance,
            negative_prompt=negative_prompt,
        )

        # timestep ~ U(0.05, 0.95) to avoid very high/low noise level
        t = torch.randint(min_step, max_step + 1, [1], dtype=torch.long, device=self.device)

        # predict the noise residual with unet, stop gradient
        with torch.no_grad():
            # add noise
            noise = torch.randn_like(latents)
            latents_noisy = self.scheduler.add_noise(latents, noise, t)
            # pred noise
            latent_model_input = torch.cat([latents_noisy] * 2) if do_classifier_free_guidance else latents_noisy
            noise_pred = self.unet(latent_model_input, t, encoder_hidden_states=text_embeddings).sample

        # perform guidance (high scale from paper!)
        if do_classifier_free_guidance:
            noise_pred_uncond, noise_pred_text = noise_pred.chunk(2)
            noise_pred = noise_pred_uncond + guidance_scale * (noise_pred_text - noise_pred_uncond)

        # w(t), sigma_t^2
        w = (1 - alphas[t])
        grad = grad_scale * w * (noise_pred - noise)
        grad = torch.nan_to_num(grad)

        # since we omitted an item in grad, we need to use the custom function to specify the gradient
        loss = SpecifyGradient.apply(latents, grad)

        return loss, grad.mean()


class VectorFusionPipeline(ModelState):

    def __init__(self, args):
        assert args.x.style in ["iconography", "pixelart", "low-poly", "sketch"]
        logdir_ = f"sd{args.seed}-im{args.x.image_size}" \
                  f"-{args.x.style}-P{args.x.num_paths}" \
                  f"{'-RePath' if args.x.path_reinit.use else ''}"
        super().__init__(args, log_path_suffix=logdir_)

        # create log dir
        self.png_logs_dir = self.result_path / "png_logs"
        self.svg_logs_dir = self.result_path / "svg_logs"
        self.ft_png_logs_dir = self.result_path / "ft_png_logs"
        self.ft_svg_logs_dir = self.result_path / "ft_svg_logs"
        self.sd_sample_dir = self.result_path / 'sd_samples'
        self.reinit_dir = self.result_path / "reinit_logs"
        if self.accelerator.is_main_process:
            self.png_logs_dir.mkdir(parents=True, exist_ok=True)
            self.svg_logs_dir.mkdir(parents=True, exist_ok=True)
            self.ft_png_logs_dir.mkdir(parents=True, exist_ok=True)
            self.ft_svg_logs_dir.mkdir(parents=True, exist_ok=True)
            self.sd_sample_dir.mkdir(parents=True, exist_ok=True)
            self.reinit_dir.mkdir(parents=True, exist_ok=True)

        self.select_fpth = self.result_path / 'select_sample.png'

        # make video log
        self.make_video = self.args.mv
        if self.make_video:
            self.frame_idx = 0
            self.frame_log_dir = self.result_path / "frame_logs"
            self.frame_log_dir.mkdir(parents=True, exist_ok=True)

        custom_pipeline = LSDSPipeline
        custom_scheduler = DDIMScheduler

        self.diffusion = init_StableDiffusion_pipeline(
            self.x_cfg.model_id,
            custom_pipeline=custom_pipeline,
            custom_scheduler=custom_scheduler,
            device=self.device,
            torch_dtype=torch.float16 if self.x_cfg.fp16 else torch.float32,
            local_files_only=not args.diffuser.download,
            force_download=args.diffuser.force_download,
            resume_download=args.diffuser.resume_download,
            ldm_speed_up=self.x_cfg.ldm_speed_up,
            enable_xformers=self.x_cfg.enable_xformers,
            gradient_checkpoint=self.x_cfg.gradient_checkpoint,
            cpu_offload=self.x_cfg.get("cpu_offload", False),
        )

        self.g_device = torch.Generator(device=self.device).manual_seed(args.seed)

        # init clip model and clip score wrapper
        self.cargs = self.x_cfg.clip
        self.clip_score_fn = CLIPScoreWrapper(self.cargs.model_name,
                                              device=self.device,
                                              visual_score=True,
                                              feats_loss_type=self.cargs.feats_loss_type,
                                              feats_loss_weights=self.cargs.feats_loss_weights,
                                              fc_loss_weight=self.cargs.fc_loss_weight)

    def load_render(self, target_img, path_svg=None):
        renderer = Painter(self.args.diffvg,
                           self.x_cfg.style,
                           self.x_cfg.num_segments,
                           self.x_cfg.segment_init,
                           self.x_cfg.radius,
                           self.x_cfg.image_size,
                           self.x_cfg.grid,
                           self.x_cfg.trainable_bg,
                           self.x_cfg.width,
                           path_svg=path_svg,
                           device=self.device)

        # if load a svg file, then rasterize it
        save_path = self.result_path / 'target_render_init.png'
        if path_svg is not None:
            renderer.canvas_width, renderer.canvas_height, renderer.shapes, renderer.shape_groups = \
                renderer.load_svg(path_svg)
            target_img = renderer.render_image()
            torch.save(target_img, save_path)
        else:
            target_img = target_img.to(self.device)

        renderer.component_wise_path_init(target_img, pred=None, init_type=self.x_cfg.coord_init)
        return renderer

    @torch.no_grad()
    def rejection_sampling(self, img_caption: Union[AnyStr, List], diffusion_samples: List):
        clip_feature_fn = self.clip_score_fn.clip_model.encode_text

        text_input = self.clip_score_fn.tokenize(img_caption).to(self.device)
        text_features = clip_feature_fn(text_input)
        text_features = text_features / text_features.norm(dim=-1, keepdim=True)

        clip_images = torch.cat([self.clip_score_fn.normalize(image) for image in diffusion_samples])
        image_features = self.clip_score_fn.clip_model.encode_image(clip_images)
        image_features = image_features / image_features.norm(dim=-1, keepdim=True)

        # clip score
        similarity_scores = (text_features @ image_features.T).squeeze(0)

        selected_image_index = similarity_scores.argmax().item()
        selected_image = diffusion_samples[selected_image_index]
        return selected_image

    def diffusion_sampling(self, text_prompt: AnyStr):
        """sampling K images"""
        diffusion_samples = []
        for i in range(self.x_cfg.K):
            height = width = model2res(self.x_cfg.model_id)
            outputs = self.diffusion(prompt=[text_prompt],
                                     negative_prompt=self.args.neg_prompt,
                                     height=height,
                                     width=width,
                                     num_images_per_prompt=1,
                                     num_inference_steps=self.x_cfg.num_inference_steps,
                                     guidance_scale=self.x_cfg.guidance_scale,
                                     generator=self.g_device)
            outputs_np = [np.array(img) for img in outputs.images]
            view_images(outputs_np, save_image=True, fp=self.sd_sample_dir / f'samples_{i}.png')
            diffusion_samples.extend(outputs.images)

        self.print(f"num_generated_samples: {len(diffusion_samples)}, shape: {outputs_np[0].shape}")

        return diffusion_samples

    def painterly_rendering(self, text_prompt: AnyStr):
        # log prompts
        self.print(f"prompt: {text_prompt}")
        self.print(f"negative_prompt: {self.args.neg_prompt}\n")

        # 1. sample K images and select the best one by CLIP score
        if self.x_cfg.skip_sampling:
            shutil.copy(self.x_cfg.target_path, self.select_fpth)
        else:
            diffusion_samples = self.diffusion_sampling(text_prompt)
            select_target = self.rejection_sampling(text_prompt, diffusion_samples)
            select_target.save(self.select_fpth)

        # the sampling stage is done, release what we can before LIVE fitting
        torch.cuda.empty_cache()

        target_img = Image.open(self.select_fpth).convert("RGB")
        target_img = transforms.ToTensor()(target_img).unsqueeze(0)  # [1, 3, H, W]

        # 2. LIVE-style layer-wise fitting of the selected raster
        renderer = self.load_render(target_img)
        img = renderer.init_image(stage=0, num_paths=self.x_cfg.num_paths)
        renderer.set_parameters()
        optimizer = PainterOptimizer(renderer, self.x_cfg.style, self.x_cfg.num_iter,
                                     self.x_cfg.lr_stage_one, self.x_cfg.trainable_bg)
        optimizer.init_optimizers()

        with tqdm(initial=self.step, total=self.x_cfg.num_iter,
                  disable=not self.accelerator.is_main_process) as pbar:
            while self.step < self.x_cfg.num_iter:
                raster_img = renderer.get_image(step=self.step)
                loss = F.mse_loss(raster_img, target_img.to(self.device))
                if self.x_cfg.style == 'iconography' and self.x_cfg.use_xing:
                    loss = loss + self.x_cfg.xing_weight * xing_loss_fn(renderer.get_point_parameters())

                optimizer.zero_grad_()
                loss.backward()
                optimizer.step_()
                optimizer.update_lr()

                if self.step % self.args.save_step == 0 and self.accelerator.is_main_process:
                    plot_img(raster_img, self.png_logs_dir, fname=f"iter{self.step}")
                    renderer.save_svg(self.svg_logs_dir / f"svg_iter{self.step}.svg")

                self.step += 1
                pbar.set_description(f"L_live: {loss.item():.4f}")
                pbar.update(1)

        # 3. fine-tune the SVG with LSDS
        self.step = 0
        optimizer = PainterOptimizer(renderer, self.x_cfg.style, self.x_cfg.sds.num_iter,
                                     self.x_cfg.lr_stage_two, self.x_cfg.trainable_bg)
        optimizer.init_optimizers()
        with tqdm(initial=self.step, total=self.x_cfg.sds.num_iter,
                  disable=not self.accelerator.is_main_process) as pbar:
            while self.step < self.x_cfg.sds.num_iter:
                raster_img = renderer.get_image(step=self.step)
                L_sds, grad = self.diffusion.score_distillation_sampling(
                    raster_img,
                    im_size=self.x_cfg.sds.im_size,
                    prompt=[text_prompt],
                    negative_prompt=self.args.neg_prompt,
                    guidance_scale=self.x_cfg.sds.guidance_scale,
                    grad_scale=self.x_cfg.sds.grad_scale,
                    t_range=list(self.x_cfg.sds.t_range),
                )
                loss = L_sds
                if self.x_cfg.style == 'pixelart':
                    loss = loss + pixel_penalty_loss(raster_img) * self.x_cfg.penalty_weight

                optimizer.zero_grad_()
                loss.backward()
                optimizer.step_()

                if self.step % self.args.save_step == 0 and self.accelerator.is_main_process:
                    plot_img(raster_img, self.ft_png_logs_dir, fname=f"iter{self.step}")
                    renderer.save_svg(self.ft_svg_logs_dir / f"svg_iter{self.step}.svg")

                self.step += 1
                pbar.set_description(f"L_sds: {L_sds.item():.4f}, grad: {grad.item():.4f}")
                pbar.update(1)

        renderer.save_svg(self.result_path / "finetune_final.svg")
        self.report_memory("vectorfusion")
        self.close(msg="painterly rendering complete.")
