# Texture recovery by differentiable rendering: render a textured mesh from random views with
# a reference texture, then optimise a blank texture (with mipmaps) until the renders match.
#
#   python samples/fit_texture.py --mesh data/earth.npz --res 512 --iters 20000 --outdir out/earth

import argparse
import os
import pathlib

import imageio
import numpy as np
import torch
import nvdiffrast.torch as dr

import util


def tensor(*args, **kwargs):
    return torch.tensor(*args, device='cuda', **kwargs)


def transform_pos(mtx, pos):
    t_mtx = torch.from_numpy(mtx).to(pos.device) if isinstance(mtx, np.ndarray) else mtx
    # (x,y,z) -> (x,y,z,1)
    posw = torch.cat([pos, torch.ones([pos.shape[0], 1]).to(pos.device)], axis=1)
    return torch.matmul(posw, t_mtx.t())[None, ...]


def render(glctx, mtx, pos, pos_idx, uv, uv_idx, tex, resolution, enable_mip, max_mip_level):
    pos_clip = transform_pos(mtx, pos)
    rast_out, rast_out_db = dr.rasterize(glctx, pos_clip, pos_idx, resolution=[resolution, resolution])

    if enable_mip:
        texc, texd = dr.interpolate(uv[None, ...], rast_out, uv_idx, rast_db=rast_out_db, diff_attrs='all')
        color = dr.texture(tex[None, ...], texc, texd, filter_mode='linear-mipmap-linear', max_mip_level=max_mip_level)
    else:
        texc, _ = dr.interpolate(uv[None, ...], rast_out, uv_idx)
        color = dr.texture(tex[None, ...], texc, filter_mode='linear')

    color = color * torch.clamp(rast_out[..., -1:], 0, 1)  # Mask out background.
    color = dr.antialias(color, rast_out, pos_clip, pos_idx)
    return color


def fit_texture(args):
    log_file = None
    if args.outdir:
        os.makedirs(args.outdir, exist_ok=True)
        log_file = open(os.path.join(args.outdir, 'log.txt'), 'wt')

    datadir = pathlib.Path(args.mesh)
    with np.load(datadir) as f:
        pos_idx, pos, uv_idx, uv, tex = f.values()
    tex = tex.astype(np.float32) / 255.0
    max_mip_level = 9  # Texture is a 4x3 atlas of 512x512 maps.
    print("Mesh has %d triangles and %d vertices." % (pos_idx.shape[0], pos.shape[0]))

    # Some input geometry contains vertex positions in (N, 4) (with v[:,3]==1).  Drop the last column.
    if pos.shape[1] == 4:
        pos = pos[:, 0:3]

    # Create position/triangle index tensors
    pos_idx = tensor(pos_idx.astype(np.int32))
    vtx_pos = tensor(pos.astype(np.float32))
    uv_idx = tensor(uv_idx.astype(np.int32))
    vtx_uv = tensor(uv.astype(np.float32))

    tex = torch.tensor(tex.astype(np.float32), device='cuda')
    tex_opt = torch.full(tex.shape, 0.2, device=tex.device, requires_grad=True)
    glctx = dr.RasterizeCudaContext() if args.cuda_raster else dr.RasterizeGLContext()

    ang = 0.0
    optimizer = torch.optim.Adam([tex_opt], lr=args.lr)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lr_lambda=lambda x: max(0.01, 10 ** (-x * 0.0005)))

    texloss_avg = []
    for it in range(args.iters + 1):
        # Random rotation/translation matrix for optimization.
        r_rot = util.random_rotation_translation(0.25)

        # Smooth rotation for display.
        a_rot = np.matmul(util.rotate_x(-0.4), util.rotate_y(ang))
        dist = np.random.uniform(0.0, 48.5)

        # Modelview and modelview + projection matrices.
        proj = util.projection(x=0.4, n=1.0, f=200.0)
        r_mv = np.matmul(util.translate(0, 0, -1.5 - dist), r_rot)
        r_mvp = np.matmul(proj, r_mv).astype(np.float32)
        a_mv = np.matmul(util.translate(0, 0, -3.5), a_rot)
        a_mvp = np.matmul(proj, a_mv).astype(np.float32)

        # Measure texture-space RMSE loss
        with torch.no_grad():
            texmask = torch.zeros_like(tex)
            tr = tex.shape[1] // 4
            texmask[tr + 13:2 * tr - 13, 25:-25, :] += 1.0
            texmask[25:-25, tr + 13:2 * tr - 13, :] += 1.0
            texloss = (torch.sum(texmask * (tex - tex_opt) ** 2) / torch.sum(texmask)) ** 0.5  # RMSE within masked area.
            texloss_avg.append(float(texloss))

        # Render reference and optimized frames. Always enable mipmapping for reference.
        color = render(glctx, r_mvp, vtx_pos, pos_idx, vtx_uv, uv_idx, tex, args.res, True, max_mip_level)
        color_opt = render(glctx, r_mvp, vtx_pos, pos_idx, vtx_uv, uv_idx, tex_opt, args.res, args.mip, max_mip_level)

        # Reduce the reference to correct size.
        while color.shape[1] > args.res:
            color = util.bilinear_downsample(color)

        # Compute loss and perform a training step.
        loss = torch.mean((color - color_opt) ** 2)  # L2 pixel loss.
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()

        # Print/save log.
        if args.log_interval and (it % args.log_interval == 0):
            texloss_val = np.mean(np.asarray(texloss_avg))
            texloss_avg = []
            psnr = -10.0 * np.log10(texloss_val ** 2)  # PSNR based on average RMSE.
            s = "iter=%d,loss=%f,psnr=%f" % (it, texloss_val, psnr)
            print(s)
            if log_file:
                log_file.write(s + '\n')

        # Show/save image.
        if args.outdir and args.save_interval and (it % args.save_interval == 0):
            ang = ang + 0.01
            result_image = render(glctx, a_mvp, vtx_pos, pos_idx, vtx_uv, uv_idx, tex_opt, args.res, True,
                                  max_mip_level)[0]
            img = np.clip(np.rint(result_image.detach().cpu().numpy() * 255.0), 0, 255).astype(np.uint8)
            imageio.imsave(os.path.join(args.outdir, 'img_%06d.png' % it), img[::-1])

    if log_file:
        log_file.close()


def main():
    parser = argparse.ArgumentParser(description='Texture fitting by differentiable rendering')
    parser.add_argument('--mesh', default='data/earth.npz')
    parser.add_argument('--res', type=int, default=512)
    parser.add_argument('--iters', type=int, default=20000)
    parser.add_argument('--lr', type=float, default=1e-2)
    parser.add_argument('--mip', action='store_true', default=True)
    parser.add_argument('--cuda-raster', action='store_true', default=False,
                        help='use the CUDA rasterizer instead of OpenGL')
    parser.add_argument('--log-interval', type=int, default=10)
    parser.add_argument('--save-interval', type=int, default=1000)
    parser.add_argument('--outdir', default='out/earth')
    args = parser.parse_args()
    fit_texture(args)
    print("Done.")


if __name__ == "__main__":
    main()
