# Enable import from parent package
import sys
import os
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch
import numpy as np
import imageio
import configargparse
from tqdm import tqdm
import dataio
import modules
import utils
import forward_models

device = torch.device('cuda')

p = configargparse.ArgumentParser()
p.add_argument('--config', type=str, default='', help='path to config file of a trained model')
p.add_argument('--checkpoint', type=str, required=True, help='model checkpoint (.pth)')
p.add_argument('--dataset_path', type=str, default='../data/nerf_synthetic/lego/')
p.add_argument('--out_dir', type=str, default='./renders')
p.add_argument('--img_size', type=int, default=512)
p.add_argument('--samples_per_ray', type=int, default=512)
p.add_argument('--chunk_size', type=int, default=4096)
p.add_argument('--split', type=str, default='test', choices=['train', 'val', 'test'])
p.add_argument('--num_views', type=int, default=200)
p.add_argument('--output_scales', type=int, nargs='+', default=[0, 1, 2])
p.add_argument('--save_video', action='store_true', default=False)
p.add_argument('--time_render', action='store_true', default=False,
               help='report per-frame GPU render time')
opt = p.parse_args()


def load_model(ckpt_path, img_size):
    ckpt = torch.load(ckpt_path, map_location='cuda:0')
    train_opt = ckpt.get('opt', {})
    model = modules.MultiscaleCoordinateNet(out_features=4,
                                            hidden_features=train_opt.get('hidden_features', 128),
                                            num_hidden_layers=train_opt.get('hidden_layers', 4),
                                            in_features=6,
                                            frequency=(img_size, img_size, img_size, 4, 4, 4),
                                            output_layers=(1, 2, 4))
    state_dict = ckpt['model_state_dict']
    # checkpoints written by DistributedDataParallel carry a 'module.' prefix
    state_dict = {k.replace('module.', '', 1): v for k, v in state_dict.items()}
    model.load_state_dict(state_dict)
    model.to(device)
    model.eval()
    return model


def render_view(model, ray_origins, ray_directions, t_vals, scale_idx):
    # ray_origins, ray_directions: (H*W, 3); t_vals: (S,)
    num_rays = ray_origins.shape[0]
    samples = ray_origins[:, None, :] + t_vals[None, :, None] * ray_directions[:, None, :]
    view_dirs = ray_directions[:, None, :].expand(-1, t_vals.shape[0], -1)
    coords = torch.cat((samples, view_dirs), dim=-1).reshape(1, -1, 6)

    out = utils.process_batch_in_chunks({'coords': coords}, model, max_chunk_size=opt.chunk_size)
    rgb = out['model_out']['rgb'][scale_idx].reshape(num_rays, -1, 3)
    sigma = out['model_out']['sigma'][scale_idx].reshape(num_rays, -1, 1)

    rgb_map, depth_map, acc_map = forward_models.volume_integral(
        z_vals=t_vals[None, :, None].expand(num_rays, -1, 1).cpu(),
        sigmas=sigma, radiances=rgb, white_bkgd=True)
    return rgb_map, depth_map, acc_map


def main():
    utils.cond_mkdir(opt.out_dir)
    model = load_model(opt.checkpoint, opt.img_size)

    dataset = dataio.NerfBlenderDataset(opt.dataset_path, splits=[opt.split], mode='test',
                                        resize_to=2 * (opt.img_size,), multiscale=False)
    H, W = dataset.get_img_shape()[:2]
    camera_params = dataset.get_camera_params()
    near, far = camera_params['near'], camera_params['far']
    t_vals = torch.linspace(near, far, opt.samples_per_ray, device=device)

    if opt.time_render:
        start_evt = torch.cuda.Event(enable_timing=True)
        end_evt = torch.cuda.Event(enable_timing=True)
        frame_times = []

    psnrs = {s: [] for s in opt.output_scales}
    frames = {s: [] for s in opt.output_scales}
    for idx in tqdm(range(min(opt.num_views, len(dataset)))):
        view = dataset[idx]
        ray_origins, ray_directions = dataio.get_rays(H, W, camera_params['focal'], view['cam2world'])
        ray_origins = ray_origins.reshape(-1, 3).to(device)
        ray_directions = ray_directions.reshape(-1, 3).to(device)
        gt = view['img'].reshape(H, W, 3)

        with torch.no_grad():
            for s in opt.output_scales:
                if opt.time_render:
                    start_evt.record()
                rgb_map, depth_map, acc_map = render_view(model, ray_origins, ray_directions, t_vals, s)
                if opt.time_render:
                    end_evt.record()
                    torch.cuda.synchronize()
                    frame_times.append(start_evt.elapsed_time(end_evt))

                pred = rgb_map.reshape(H, W, 3).clamp(0, 1)
                psnrs[s].append(utils.get_psnr(pred, gt).item())
                img = (pred.numpy() * 255).astype(np.uint8)
                frames[s].append(img)
                imageio.imwrite(os.path.join(opt.out_dir, f'scale{s}_{idx:03d}.png'), img)

    for s in opt.output_scales:
        print(f'scale {s}: mean PSNR {np.mean(psnrs[s]):.2f} dB over {len(psnrs[s])} views')
        if opt.save_video:
            imageio.mimwrite(os.path.join(opt.out_dir, f'scale{s}.mp4'), frames[s], fps=30, quality=8)

    if opt.time_render:
        print(f'average render time per scale: {np.mean(frame_times):.1f} ms '
              f'(peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB)')


if __name__ == '__main__':
    main()
