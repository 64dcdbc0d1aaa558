import sys
sys.path.append('../code')
import argparse
import os

import GPUtil
import imageio
import numpy as np
import torch
import torch.nn.functional as F
from pyhocon import ConfigFactory
from tqdm import tqdm

import utils.general as utils
from model.sg_render import compute_envmap, render_with_sg

imageio.plugins.freeimage.download()

tonemap_img = lambda x: torch.pow(x, 1./2.2)
clip_img = lambda x: torch.clamp(x, min=0., max=1.)


def load_envmap_sg(envmap_path, num_lgt_sgs=128):
    """Fit-free relighting: the SG lobes of the new environment were pre-fitted offline (see envmap_fitting.py)."""
    lgtSGs = np.load(envmap_path)
    lgtSGs = torch.from_numpy(lgtSGs).float().cuda()
    assert lgtSGs.shape[0] == num_lgt_sgs, 'expected {} SG lobes, got {}'.format(num_lgt_sgs, lgtSGs.shape[0])
    return lgtSGs


def relight_obj(**kwargs):
    torch.set_default_dtype(torch.float32)
    conf = ConfigFactory.parse_file(kwargs['conf'])
    exps_folder_name = kwargs['exps_folder_name']
    evals_folder_name = kwargs['evals_folder_name']

    expname = 'Mat-' + kwargs['expname']
    expdir = os.path.join('../', exps_folder_name, expname)
    if kwargs['timestamp'] == 'latest':
        timestamps = os.listdir(expdir)
        timestamp = sorted(timestamps)[-1]
    else:
        timestamp = kwargs['timestamp']

    relitdir = os.path.join('../', evals_folder_name, expname, os.path.basename(kwargs['envmap_path']).split('.')[0])
    utils.mkdir_ifnotexists(os.path.join('../', evals_folder_name))
    utils.mkdir_ifnotexists(os.path.join('../', evals_folder_name, expname))
    utils.mkdir_ifnotexists(relitdir)

    model = utils.get_class(conf.get_string('train.model_class'))(conf=conf.get_config('model'))
    if torch.cuda.is_available():
        model.cuda()

    eval_dataset = utils.get_class(conf.get_string('train.dataset_class'))(
        kwargs['data_split_dir'], kwargs['frame_skip'], split='test')
    eval_dataloader = torch.utils.data.DataLoader(eval_dataset,
                                                  batch_size=1,
                                                  shuffle=False,
                                                  collate_fn=eval_dataset.collate_fn)
    total_pixels = eval_dataset.total_pixels
    img_res = eval_dataset.img_res

    old_checkpnts_dir = os.path.join(expdir, timestamp, 'checkpoints')
    ckpt_path = os.path.join(old_checkpnts_dir, 'ModelParameters', str(kwargs['checkpoint']) + ".pth")
    saved_model_state = torch.load(ckpt_path)
    model.load_state_dict(saved_model_state["model_state_dict"])
    print('Loaded checkpoint: ', ckpt_path)

    # swap in the new environment
    lgtSGs = load_envmap_sg(kwargs['envmap_path'])
    envmap = compute_envmap(lgtSGs=lgtSGs, H=256, W=512, upper_hemi=False)
    envmap = envmap.cpu().numpy()
    imageio.imwrite(os.path.join(relitdir, 'envmap.exr'), envmap)
    model.envmap_material_network.lgtSGs.data = lgtSGs

    model.eval()
    with torch.no_grad():
        for data_index, (indices, model_input, ground_truth) in enumerate(tqdm(eval_dataloader)):
            if data_index % kwargs['skip'] != 0:
                continue

            model_input["intrinsics"] = model_input["intrinsics"].cuda()
            model_input["uv"] = model_input["uv"].cuda()
            model_input["object_mask"] = model_input["object_mask"].cuda()
            model_input['pose'] = model_input['pose'].cuda()

            split = utils.split_input(model_input, total_pixels)
            res = []
            for s in split:
                out = model(s, trainstage='Material')
                res.append({
                    'normals': out['normals'].detach(),
                    'network_object_mask': out['network_object_mask'].detach(),
                    'object_mask': out['object_mask'].detach(),
                    'sg_rgb': out['sg_rgb'].detach(),
                    'sg_diffuse_albedo': out['sg_diffuse_albedo'].detach(),
                    'sg_roughness': out['sg_roughness'].detach(),
                })

            batch_size = ground_truth['rgb'].shape[0]
            model_outputs = utils.merge_output(res, total_pixels, batch_size)

            rgb_eval = model_outputs['sg_rgb']
            rgb_eval = rgb_eval.reshape(batch_size, total_pixels, 3)
            rgb_eval = clip_img(tonemap_img(rgb_eval))
            rgb_eval = rgb_eval.reshape(img_res[0], img_res[1], 3).cpu().numpy()
            mask = model_outputs['network_object_mask'].reshape(img_res[0], img_res[1], 1).float().cpu().numpy()
            rgb_eval = rgb_eval * mask + (1. - mask)

            imageio.imwrite(os.path.join(relitdir, 'relit_{:04d}.png'.format(data_index)),
                            (rgb_eval * 255.).astype(np.uint8))

            albedo = model_outputs['sg_diffuse_albedo'].reshape(img_res[0], img_res[1], 3)
            albedo = clip_img(tonemap_img(albedo)).cpu().numpy()
            imageio.imwrite(os.path.join(relitdir, 'albedo_{:04d}.png'.format(data_index)),
                            (albedo * 255.).astype(np.uint8))

    print('Relit images written to {}'.format(relitdir))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--conf', type=str, default='./confs_sg/default.conf')
    parser.add_argument('--data_split_dir', type=str, default='')
    parser.add_argument('--frame_skip', type=int, default=1)
    parser.add_argument('--expname', type=str, default='', help='The experiment name to be evaluated.')
    parser.add_argument('--exps_folder_name', type=str, default='exps', help='The experiments folder name.')
    parser.add_argument('--evals_folder_name', type=str, default='relits', help='The relighting output folder name.')
    parser.add_argument('--envmap_path', type=str, required=True, help='pre-fitted SG lobes (.npy)')
    parser.add_argument('--timestamp', default='latest', type=str)
    parser.add_argument('--checkpoint', default='latest', type=str)
    parser.add_argument('--skip', default=1, type=int, help='relight every n-th test view')
    parser.add_argument('--gpu', type=str, default='auto', help='GPU to use [default: GPU auto]')

    opt = parser.parse_args()

    if opt.gpu == "auto":
        deviceIDs = GPUtil.getAvailable(order='memory', limit=1, maxLoad=0.5, maxMemory=0.5, includeNan=False,
                                        excludeID=[], excludeUUID=[])
        gpu = deviceIDs[0]
    else:
        gpu = opt.gpu

    if (not gpu == 'ignore'):
        os.environ["CUDA_VISIBLE_DEVICES"] = '{0}'.format(gpu)

    relight_obj(conf=opt.conf,
                data_split_dir=opt.data_split_dir,
                frame_skip=opt.frame_skip,
                expname=opt.expname,
                exps_folder_name=opt.exps_folder_name,
                evals_folder_name=opt.evals_folder_name,
                envmap_path=opt.envmap_path,
                timestamp=opt.timestamp,
                checkpoint=opt.checkpoint,
                skip=opt.skip)
