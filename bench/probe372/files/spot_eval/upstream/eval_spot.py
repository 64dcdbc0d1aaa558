''' Evaluate a trained SPOT model (mBO_i, mBO_c, mIoU, FG-ARI) on a single GPU.
'''
import argparse
import os.path

import torch
from torch.utils.data import DataLoader
from tqdm import tqdm

from spot import SPOT
from datasets import PascalVOC, COCO2017
from ocl_metrics import UnsupervisedMaskIoUMetric, ARIMetric
from utils_spot import load_pretrained_encoder, bool_flag
import models_vit

parser = argparse.ArgumentParser('SPOT evaluation')
parser.add_argument('--checkpoint_path', required=True)
parser.add_argument('--dataset', default='coco')
parser.add_argument('--data_path', type=str, required=True)
parser.add_argument('--val_image_size', type=int, default=224)
parser.add_argument('--val_mask_size', type=int, default=320)
parser.add_argument('--eval_batch_size', type=int, default=32)
parser.add_argument('--num_workers', type=int, default=8)
parser.add_argument('--which_encoder', type=str, default='dino_vitb16')
parser.add_argument('--num_slots', type=int, default=7)
parser.add_argument('--slot_size', type=int, default=256)
parser.add_argument('--mlp_hidden_size', type=int, default=1024)
parser.add_argument('--num_iterations', type=int, default=3)
parser.add_argument('--dec_type', type=str, default='transformer')
parser.add_argument('--num_dec_blocks', type=int, default=4)
parser.add_argument('--d_model', type=int, default=768)
parser.add_argument('--num_heads', type=int, default=6)
parser.add_argument('--dropout', type=float, default=0.0)
parser.add_argument('--cappa', type=float, default=-1)
parser.add_argument('--mlp_dec_hidden', type=int, default=2048)
parser.add_argument('--use_slot_proj', type=bool_flag, default=True)
parser.add_argument('--finetune_blocks_after', type=int, default=100)
parser.add_argument('--encoder_final_norm', type=bool_flag, default=False)
parser.add_argument('--use_second_encoder', type=bool_flag, default=False)
parser.add_argument('--num_cross_heads', type=int, default=None)
parser.add_argument('--pos_channels', type=int, default=4)
parser.add_argument('--img_channels', type=int, default=3)
parser.add_argument('--gpu', type=int, default=0)
parser.add_argument('--benchmark', action='store_true', help='report images/s')
args = parser.parse_args()

torch.cuda.set_device(args.gpu)
device = torch.device('cuda', args.gpu)

if args.dataset == 'voc':
    val_dataset = PascalVOC(root=args.data_path, split='val', image_size=args.val_image_size, mask_size=args.val_mask_size)
else:
    val_dataset = COCO2017(root=args.data_path, split='val', image_size=args.val_image_size, mask_size=args.val_mask_size)
val_loader = DataLoader(val_dataset, batch_size=args.eval_batch_size, shuffle=False,
                        num_workers=args.num_workers, drop_last=False)

if args.which_encoder == 'dino_vitb16':
    args.max_tokens = int((args.val_image_size / 16) ** 2)
    encoder = torch.hub.load('facebookresearch/dino:main', 'dino_vitb16')
elif args.which_encoder == 'dinov2_vitb14_reg':
    args.max_tokens = int((args.val_image_size / 14) ** 2)
    encoder = torch.hub.load('facebookresearch/dinov2', 'dinov2_vitb14_reg')
else:
    raise ValueError(f'Unknown encoder {args.which_encoder}')

model = SPOT(encoder, args, None)
checkpoint = torch.load(args.checkpoint_path, map_location='cpu')
if 'model' in checkpoint:
    checkpoint = checkpoint['model']
model.load_state_dict(checkpoint, strict=True)
model = model.to(device).eval()

mbo_c_metric = UnsupervisedMaskIoUMetric(matching="best_overlap", ignore_background=True, ignore_overlaps=True).to(device)
mbo_i_metric = UnsupervisedMaskIoUMetric(matching="best_overlap", ignore_background=True, ignore_overlaps=True).to(device)
miou_metric = UnsupervisedMaskIoUMetric(matching="hungarian", ignore_background=True, ignore_overlaps=True).to(device)
ari_metric = ARIMetric(foreground=True, ignore_overlaps=True).to(device)

start_evt = torch.cuda.Event(enable_timing=True)
end_evt = torch.cuda.Event(enable_timing=True)
total_ms, n_images = 0., 0

with torch.no_grad():
    for image, true_mask_i, true_mask_c, mask_ignore in tqdm(val_loader):
        image = image.to(device)
        true_mask_i = true_mask_i.to(device)
        true_mask_c = true_mask_c.to(device)
        mask_ignore = mask_ignore.to(device)

        start_evt.record()
        mse, default_slots_attns, dec_slots_attns, _, _, _ = model(image)
        end_evt.record()
        torch.cuda.synchronize()
        total_ms += start_evt.elapsed_time(end_evt)
        n_images += image.shape[0]

        dec_attns = torch.nn.functional.interpolate(dec_slots_attns, size=args.val_mask_size, mode='bilinear')
        pred_dec_mask = dec_attns.unsqueeze(2).argmax(1).squeeze(1)

        true_mask_i_oh = torch.nn.functional.one_hot(true_mask_i).to(torch.float32).permute(0, 3, 1, 2)
        true_mask_c_oh = torch.nn.functional.one_hot(true_mask_c).to(torch.float32).permute(0, 3, 1, 2)
        pred_dec_oh = torch.nn.functional.one_hot(pred_dec_mask, args.num_slots).to(torch.float32).permute(0, 3, 1, 2)

        mbo_i_metric.update(pred_dec_oh, true_mask_i_oh, mask_ignore)
        mbo_c_metric.update(pred_dec_oh, true_mask_c_oh, mask_ignore)
        miou_metric.update(pred_dec_oh, true_mask_i_oh, mask_ignore)
        ari_metric.update(pred_dec_oh, true_mask_i_oh, mask_ignore)

print('FG-ARI: {:.2f}'.format(100 * ari_metric.compute()))
print('mBO_i: {:.2f}'.format(100 * mbo_i_metric.compute()))
print('mBO_c: {:.2f}'.format(100 * mbo_c_metric.compute()))
print('mIoU: {:.2f}'.format(100 * miou_metric.compute()))
if args.benchmark:
    print('Throughput: {:.1f} images/s on {}'.format(
        1000. * n_images / total_ms, torch.cuda.get_device_name(args.gpu)))
