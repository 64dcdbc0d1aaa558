import argparse, os
import torch
import numpy as np
from omegaconf import OmegaConf
from PIL import Image
from einops import rearrange
from pytorch_lightning import seed_everything
from contextlib import nullcontext
from torch import autocast
import copy
import yaml

from ldm.models.diffusion.ddim import DDIMSampler
from ldm.util import instantiate_from_config
from run_features_extraction import load_model_from_config


def load_experiments_features(feature_maps_paths, block, feature_type, t):
    feature_maps = []
    for i, feature_maps_path in enumerate(feature_maps_paths):
        if "attn" in feature_type:
            feature_map = torch.load(os.path.join(feature_maps_path, f"{block}_{feature_type}_time_{t}.pt"))[8:]
            feature_maps.append(feature_map)
        else:
            feature_map = \
                torch.load(os.path.join(feature_maps_path, f"{block}_{feature_type}_time_{t}.pt"))[1]
            feature_map = feature_map.unsqueeze(0)
            feature_maps.append(feature_map)

    return feature_maps


def load_target_features(source_experiment_attn_output_feature_maps_paths, source_experiment_out_layers_output_feature_maps_paths,
                         source_experiment_qkv_feature_maps_paths, t, feature_injection_blocks_config):
    self_attn_output_block_indices = list(map(lambda x: int(x), feature_injection_blocks_config['self_attn_output_block_indices']))
    out_layers_output_block_indices = list(map(lambda x: int(x), feature_injection_blocks_config['out_layers_output_block_indices']))
    output_block_self_attn_map_injection_thresholds = feature_injection_blocks_config['output_block_self_attn_map_injection_thresholds']
    feature_injection_thresholds = feature_injection_blocks_config['feature_injection_thresholds']
    target_features = []

    source_experiment_output_features_paths = source_experiment_out_layers_output_feature_maps_paths
    source_experiment_qkv_features_paths = source_experiment_qkv_feature_maps_paths

    output_features = {}

    for output_block_idx in range(12):
        if output_block_idx in out_layers_output_block_indices and t in feature_injection_thresholds[output_block_idx]:
            output_features[f'output_block_{output_block_idx}_out_layers'] = load_experiments_features(
                source_experiment_output_features_paths, f"output_block_{output_block_idx}", "out_layers_features", t)[0]
        if output_block_idx in self_attn_output_block_indices and t in output_block_self_attn_map_injection_thresholds[output_block_idx]:
            output_features[f'output_block_{output_block_idx}_self_attn_q'] = load_experiments_features(
                source_experiment_qkv_features_paths, f"output_block_{output_block_idx}", "self_attn_q", t)[0]
            output_features[f'output_block_{output_block_idx}_self_attn_k'] = load_experiments_features(
                source_experiment_qkv_features_paths, f"output_block_{output_block_idx}", "self_attn_k", t)[0]

    target_features.append(output_features)

    return target_features


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--config', default="configs/pnp/pnp-real.yaml")
    parser.add_argument('--ddim_eta', type=float, default=0.0)
    parser.add_argument('--H', type=int, default=512)
    parser.add_argument('--W', type=int, default=512)
    parser.add_argument('--C', type=int, default=4)
    parser.add_argument('--f', type=int, default=8)
    parser.add_argument('--model_config', type=str, default='configs/stable-diffusion/v1-inference.yaml')
    parser.add_argument('--ckpt', type=str, default='models/ldm/stable-diffusion-v1/model.ckpt')
    parser.add_argument('--precision', type=str, choices=['full', 'autocast'], default='autocast')
    parser.add_argument('--gpu', type=int, default=0, help='GPU id to run on')
    opt = parser.parse_args()
    exp_config = OmegaConf.load(opt.config)

    exp_path_root_config = OmegaConf.load("./configs/pnp/setup.yaml")
    exp_path_root = exp_path_root_config.config.exp_path_root

    # read seed from args.yaml of source experiment
    with open(os.path.join(exp_path_root, exp_config.source_experiment_name, "args.yaml"), "r") as f:
        args = yaml.safe_load(f)
        seed = args["seed"]

    # set seed
    seed_everything(seed)
    possible_ddim_steps = args["save_feature_timesteps"]
    assert exp_config.num_ddim_sampling_steps in possible_ddim_steps or exp_config.num_ddim_sampling_steps is None, f"possible sampling steps for this experiment are: {possible_ddim_steps}; for {exp_config.num_ddim_sampling_steps} steps, run 'run_features_extraction.py' with save_feature_timesteps = {exp_config.num_ddim_sampling_steps}"
    ddim_steps = exp_config.num_ddim_sampling_steps if exp_config.num_ddim_sampling_steps is not None else possible_ddim_steps[-1]

    model_config = OmegaConf.load(f"{opt.model_config}")
    model = load_model_from_config(model_config, f"{opt.ckpt}")

    os.environ["CUDA_VISIBLE_DEVICES"] = str(opt.gpu)
    device = torch.device(f"cuda:{opt.gpu}") if torch.cuda.is_available() else torch.device("cpu")
    model = model.to(device)
    sampler = DDIMSampler(model)
    sampler.make_schedule(ddim_num_steps=ddim_steps, ddim_eta=opt.ddim_eta, verbose=False)

    seed = torch.initial_seed()
    opt.seed = seed

    translation_folders = [p.replace(' ', '_') for p in exp_config.prompts]
    outpaths = [os.path.join(f"{exp_path_root}/{exp_config.source_experiment_name}/translations", f"{exp_config.scale}_{translation_folder}") for translation_folder in translation_folders]
    out_label = f"INJECTION_T_{exp_config.feature_injection_threshold}_STEPS_{ddim_steps}"
    out_label += f"_NP-ALPHA_{exp_config.negative_prompt_alpha}_SCHEDULE_{exp_config.negative_prompt_schedule}_NP_{exp_config.negative_prompt.replace(' ', '_')}"

    predicted_samples_paths = [os.path.join(outpath, f"predicted_samples_{out_label}") for outpath in outpaths]
    for i in range(len(outpaths)):
        os.makedirs(outpaths[i], exist_ok=True)
        os.makedirs(predicted_samples_paths[i], exist_ok=True)
        # save args in experiment dir
        with open(os.path.join(outpaths[i], "args.yaml"), "w") as f:
            OmegaConf.save(exp_config, f)

    def save_sampled_img(x, i, save_paths):
        for im in range(x.shape[0]):
            x_samples_ddim = model.decode_first_stage(x[im].unsqueeze(0))
            x_samples_ddim = torch.clamp((x_samples_ddim + 1.0) / 2.0, min=0.0, max=1.0)
            x_samples_ddim = x_samples_ddim.cpu().permute(0, 2, 3, 1).numpy()
            x_image_torch = torch.from_numpy(x_samples_ddim).permute(0, 3, 1, 2)
            x_sample = x_image_torch[0]

            x_sample = 255. * rearrange(x_sample.cpu().numpy(), 'c h w -> h w c')
            img = Image.fromarray(x_sample.astype(np.uint8))
            img.save(os.path.join(save_paths[im], f"{i}.png"))

    def ddim_sampler_callback(pred_x0, xt, i):
        save_sampled_img(pred_x0, i, predicted_samples_paths)

    start_code_path = f"{exp_path_root}/{exp_config.source_experiment_name}/z_enc.pt"
    start_code = torch.load(start_code_path).cuda() if os.path.exists(start_code_path) else None
    if start_code is not None:
        start_code = start_code.repeat(len(exp_config.prompts), 1, 1, 1)

    # features of the source experiment are injected into the translation for the first
    # `feature_injection_threshold` sampling steps
    feature_maps_path = os.path.join(exp_path_root, exp_config.source_experiment_name, "feature_maps")
    time_range = np.flip(sampler.ddim_timesteps)
    injection_t = int(ddim_steps * exp_config.feature_injection_threshold)
    injected_timesteps = [int(t) for t in time_range[:injection_t]]
    attn_timesteps = [int(t) for t in time_range[:int(ddim_steps * exp_config.self_attn_injection_threshold)]]
    feature_injection_blocks_config = {
        'self_attn_output_block_indices': list(range(4, 12)),
        'out_layers_output_block_indices': [4],
        'output_block_self_attn_map_injection_thresholds': [attn_timesteps] * 12,
        'feature_injection_thresholds': [injected_timesteps] * 12,
    }
    injected_features = []
    for t in time_range:
        injected_features.append(load_target_features([feature_maps_path], [feature_maps_path], [feature_maps_path],
                                                      int(t), feature_injection_blocks_config)[0])

    precision_scope = autocast if opt.precision == "autocast" else nullcontext
    unconditional_prompt = ""
    with torch.no_grad():
        with precision_scope("cuda"):
            with model.ema_scope():
                uc = None
                nc = None
                if exp_config.scale != 1.0:
                    uc = model.get_learned_conditioning(len(exp_config.prompts) * [unconditional_prompt])
                    nc = model.get_learned_conditioning(len(exp_config.prompts) * [exp_config.negative_prompt])
                if not isinstance(exp_config.prompts, list):
                    prompts = list(exp_config.prompts)
                else:
                    prompts = exp_config.prompts
                c = model.get_learned_conditioning(prompts)
                shape = [opt.C, opt.H // opt.f, opt.W // opt.f]
                samples_ddim, _ = sampler.sample(S=ddim_steps,
                                                 conditioning=c,
                                                 negative_conditioning=nc,
                                                 batch_size=len(prompts),
                                                 shape=shape,
                                                 verbose=False,
                                                 unconditional_guidance_scale=exp_config.scale,
                                                 unconditional_conditioning=uc,
                                                 eta=opt.ddim_eta,
                                                 x_T=start_code,
                                                 img_callback=ddim_sampler_callback,
                                                 injected_features=injected_features,
                                                 negative_prompt_alpha=exp_config.negative_prompt_alpha,
                                                 negative_prompt_schedule=exp_config.negative_prompt_schedule,
                                                 )

                x_samples_ddim = model.decode_first_stage(samples_ddim)
                x_samples_ddim = torch.clamp((x_samples_ddim + 1.0) / 2.0, min=0.0, max=1.0)
                x_samples_ddim = x_samples_ddim.cpu().permute(0, 2, 3, 1).numpy()
                x_image_torch = torch.from_numpy(x_samples_ddim).permute(0, 3, 1, 2)
                sample_idx = 0
                for k, x_sample in enumerate(x_image_torch):
                    x_sample = 255. * rearrange(x_sample.cpu().numpy(), 'c h w -> h w c')
                    img = Image.fromarray(x_sample.astype(np.uint8))
                    img.save(os.path.join(outpaths[k], f"{out_label}_sample_{sample_idx}.png"))
                    sample_idx += 1

    print(f"PnP results saved in: {'; '.join(outpaths)}")


if __name__ == "__main__":
    main()
