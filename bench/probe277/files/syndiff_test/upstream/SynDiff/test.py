"""Synthesise the target contrast for the test split with a trained SynDiff
diffusive generator and report PSNR / SSIM.

    python test.py --image_size 256 --exp exp_syndiff --num_channels 2 --num_channels_dae 64 \
        --ch_mult 1 1 2 2 4 4 --num_timesteps 4 --num_res_blocks 2 --batch_size 1 --embedding_type positional \
        --z_emb_dim 256 --contrast1 T1 --contrast2 T2 --which_epoch 50 --gpu_chose 0 \
        --input_path ../datasets/IXI --output_path ../results
"""
import argparse
import os

import numpy as np
import torch
import torchvision
from skimage.metrics import peak_signal_noise_ratio as psnr
from skimage.metrics import structural_similarity as ssim

from backbones.ncsnpp_generator_adagn import NCSNpp
from dataset import CreateDatasetSynthesis
from train import Posterior_Coefficients, get_time_schedule, sample_posterior


def load_checkpoint(checkpoint_dir, netG, name_of_network, epoch, device='cuda:0'):
    checkpoint_file = checkpoint_dir.format(name_of_network, epoch)

    checkpoint = torch.load(checkpoint_file, map_location=device)
    ckpt = checkpoint

    for key in list(ckpt.keys()):
        ckpt[key[7:]] = ckpt.pop(key)
    netG.load_state_dict(ckpt)
    netG.eval()


def sample_from_model(coefficients, generator, n_time, x_init, T, opt):
    x = x_init[:, [0], :]
    source = x_init[:, [1], :]
    with torch.no_grad():
        for i in reversed(range(n_time)):
            t = torch.full((x.size(0),), i, dtype=torch.int64).to(x.device)

            t_time = t
            latent_z = torch.randn(x.size(0), opt.nz, device=x.device)
            x_0 = generator(torch.cat((x, source), axis=1), t_time, latent_z)
            x_new = sample_posterior(coefficients, x_0[:, [0], :], x, t)
            x = x_new.detach()

    return x


def psnr_ssim_volume(fake, real):
    """per-slice PSNR/SSIM on [0,1]-normalised magnitude images"""
    p, s = [], []
    for f, r in zip(fake, real):
        f = (f - f.min()) / (f.max() - f.min() + 1e-8)
        r = (r - r.min()) / (r.max() - r.min() + 1e-8)
        p.append(psnr(r, f, data_range=1.0))
        s.append(ssim(r, f, data_range=1.0))
    return np.array(p), np.array(s)


# %%
def sample_and_test(args):
    torch.manual_seed(42)
    torch.cuda.set_device(args.gpu_chose)
    device = torch.device('cuda:{}'.format(args.gpu_chose))
    epoch_chosen = args.which_epoch

    # loading dataset
    phase = 'test'
    dataset = CreateDatasetSynthesis(phase=phase, input_path=args.input_path,
                                     contrast1=args.contrast1, contrast2=args.contrast2)
    data_loader = torch.utils.data.DataLoader(dataset,
                                              batch_size=args.batch_size,
                                              shuffle=False,
                                              num_workers=4)

    # Initializing and loading network
    gen_diffusive_1 = NCSNpp(args).to(device)
    gen_diffusive_2 = NCSNpp(args).to(device)

    exp = args.exp
    output_dir = args.output_path
    exp_path = os.path.join(output_dir, exp)

    checkpoint_file = exp_path + "/{}_{}.pth"
    load_checkpoint(checkpoint_file, gen_diffusive_1, 'gen_diffusive_1', epoch=str(epoch_chosen), device=device)
    load_checkpoint(checkpoint_file, gen_diffusive_2, 'gen_diffusive_2', epoch=str(epoch_chosen), device=device)

    T = get_time_schedule(args, device)
    pos_coeff = Posterior_Coefficients(args, device)

    save_dir = exp_path + "/generated_samples/epoch_{}".format(epoch_chosen)
    if not os.path.exists(save_dir):
        os.makedirs(save_dir)

    fake_1to2, real_2, fake_2to1, real_1 = [], [], [], []
    for iteration, (x, y) in enumerate(data_loader):
        real_data = x.cuda()
        source_data = y.cuda()

        # contrast1 -> contrast2
        x1_t = torch.cat((torch.randn_like(real_data), source_data), axis=1)
        fake_sample1 = sample_from_model(pos_coeff, gen_diffusive_1, args.num_timesteps, x1_t, T, args)
        # contrast2 -> contrast1
        x2_t = torch.cat((torch.randn_like(source_data), real_data), axis=1)
        fake_sample2 = sample_from_model(pos_coeff, gen_diffusive_2, args.num_timesteps, x2_t, T, args)

        fake_sample1 = (fake_sample1 + 1) / 2
        fake_sample2 = (fake_sample2 + 1) / 2
        real_a = (real_data + 1) / 2
        real_b = (source_data + 1) / 2

        fake_1to2.append(fake_sample2.squeeze().cpu().numpy())
        real_2.append(real_b.squeeze().cpu().numpy())
        fake_2to1.append(fake_sample1.squeeze().cpu().numpy())
        real_1.append(real_a.squeeze().cpu().numpy())

        if iteration % 50 == 0:
            grid = torch.cat((real_b, fake_sample2, real_a, fake_sample1), axis=-1)
            torchvision.utils.save_image(grid, '{}/{}_samples_{}.jpg'.format(save_dir, phase, iteration), normalize=True)
            print(f'[{iteration}/{len(data_loader)}] '
                  f'peak mem {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB')

    fake_1to2, real_2 = np.stack(fake_1to2), np.stack(real_2)
    fake_2to1, real_1 = np.stack(fake_2to1), np.stack(real_1)
    np.save('{}/{}_{}_to_{}.npy'.format(save_dir, phase, args.contrast1, args.contrast2), fake_1to2)
    np.save('{}/{}_{}_to_{}.npy'.format(save_dir, phase, args.contrast2, args.contrast1), fake_2to1)

    p12, s12 = psnr_ssim_volume(fake_1to2, real_2)
    p21, s21 = psnr_ssim_volume(fake_2to1, real_1)
    print(f'{args.contrast1}->{args.contrast2}: PSNR {p12.mean():.2f}+-{p12.std():.2f}  SSIM {100 * s12.mean():.2f}')
    print(f'{args.contrast2}->{args.contrast1}: PSNR {p21.mean():.2f}+-{p21.std():.2f}  SSIM {100 * s21.mean():.2f}')


if __name__ == '__main__':
    parser = argparse.ArgumentParser('syndiff parameters')
    parser.add_argument('--seed', type=int, default=1024, help='seed used for initialization')
    parser.add_argument('--compute_fid', action='store_true', default=False, help='whether or not compute FID')
    parser.add_argument('--epoch_id', type=int, default=1000)
    parser.add_argument('--num_channels', type=int, default=3, help='channel of image')
    parser.add_argument('--centered', action='store_false', default=True, help='-1,1 scale')
    parser.add_argument('--use_geometric', action='store_true', default=False)
    parser.add_argument('--beta_min', type=float, default=0.1, help='beta_min for diffusion')
    parser.add_argument('--beta_max', type=float, default=20., help='beta_max for diffusion')
    parser.add_argument('--num_channels_dae', type=int, default=128, help='number of initial channels in denosing model')
    parser.add_argument('--n_mlp', type=int, default=3, help='number of mlp layers for z')
    parser.add_argument('--ch_mult', nargs='+', type=int, help='channel multiplier')
    parser.add_argument('--num_res_blocks', type=int, default=2, help='number of resnet blocks per scale')
    parser.add_argument('--attn_resolutions', default=(16,), help='resolution of applying attention')
    parser.add_argument('--dropout', type=float, default=0., help='drop-out rate')
    parser.add_argument('--resamp_with_conv', action='store_false', default=True, help='always up/down sampling with conv')
    parser.add_argument('--conditional', action='store_false', default=True, help='noise conditional')
    parser.add_argument('--fir', action='store_false', default=True, help='FIR')
    parser.add_argument('--fir_kernel', default=[1, 3, 3, 1], help='FIR kernel')
    parser.add_argument('--skip_rescale', action='store_false', default=True, help='skip rescale')
    parser.add_argument('--resblock_type', default='biggan', help='tyle of resnet block, choice in biggan and ddpm')
    parser.add_argument('--progressive', type=str, default='none', choices=['none', 'output_skip', 'residual'])
    parser.add_argument('--progressive_input', type=str, default='residual', choices=['none', 'input_skip', 'residual'])
    parser.add_argument('--progressive_combine', type=str, default='sum', choices=['sum', 'cat'])
    parser.add_argument('--embedding_type', type=str, default='positional', choices=['positional', 'fourier'])
    parser.add_argument('--fourier_scale', type=float, default=16., help='scale of fourier transform')
    parser.add_argument('--not_use_tanh', action='store_true', default=False)

    # geenrator and training
    parser.add_argument('--exp', default='ixi_synth', help='name of experiment')
    parser.add_argument('--input_path', help='path to input data')
    parser.add_argument('--output_path', help='path to output saves')
    parser.add_argument('--nz', type=int, default=100)
    parser.add_argument('--num_timesteps', type=int, default=4)
    parser.add_argument('--z_emb_dim', type=int, default=256)
    parser.add_argument('--t_emb_dim', type=int, default=256)
    parser.add_argument('--batch_size', type=int, default=1, help='sample generating batch size')
    parser.add_argument('--ngf', type=int, default=64)
    parser.add_argument('--image_size', type=int, default=256, help='size of image')
    parser.add_argument('--contrast1', type=str, default='T1', help='contrast selection for model')
    parser.add_argument('--contrast2', type=str, default='T2', help='contrast selection for model')
    parser.add_argument('--which_epoch', type=int, default=50)
    parser.add_argument('--gpu_chose', type=int, default=0)
    parser.add_argument('--source', type=str, default='T2', help='source contrast')
    args = parser.parse_args()

    sample_and_test(args)
