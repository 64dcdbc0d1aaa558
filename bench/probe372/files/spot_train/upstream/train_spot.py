''' Based on SLATE and BOQSA libraries:
https://github.com/singhgautam/slate/blob/master/train.py
https://github.com/YuLiu-LY/BO-QSA/blob/main/trainer.py
'''

import math
import os.path
import argparse
import sys

import torch
import torchvision.utils as vutils

from torch.optim import Adam
from torch.utils.data import DataLoader
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data.distributed import DistributedSampler
from torch.utils.tensorboard import SummaryWriter

from datetime import datetime

from spot import SPOT
from datasets import PascalVOC, COCO2017, MOVi
from ocl_metrics import UnsupervisedMaskIoUMetric, ARIMetric
from utils_spot import inv_normalize, cosine_scheduler, visualize, bool_flag, load_pretrained_encoder
import utils_spot
import models_vit


def get_args_parser():
    parser = argparse.ArgumentParser('SPOT', add_help=False)

    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--batch_size', type=int, default=64)
    parser.add_argument('--num_workers', type=int, default=10)
    parser.add_argument('--image_size', type=int, default=224)
    parser.add_argument('--val_image_size', type=int, default=224)
    parser.add_argument('--val_mask_size', type=int, default=320)
    parser.add_argument('--eval_batch_size', type=int, default=32)
    parser.add_argument('--eval_viz_percent', type=float, default=0.2)

    parser.add_argument('--checkpoint_path', default='checkpoint.pt.tar', help='checkpoint to continue the training, loaded only if exists')
    parser.add_argument('--log_path', default='logs')
    parser.add_argument('--dataset', default='coco', help='coco or voc or movi')
    parser.add_argument('--data_path',  type=str, help='dataset path')

    parser.add_argument('--lr_main', type=float, default=4e-4)
    parser.add_argument('--lr_min', type=float, default=4e-7)
    parser.add_argument('--lr_warmup_steps', type=int, default=10000)

    parser.add_argument('--epochs', type=int, default=50)
    parser.add_argument('--num_iterations', type=int, default=3)
    parser.add_argument('--num_slots', type=int, default=7)
    parser.add_argument('--slot_size', type=int, default=256)
    parser.add_argument('--mlp_hidden_size', type=int, default=1024)
    parser.add_argument('--img_channels', type=int, default=3)
    parser.add_argument('--pos_channels', type=int, default=4)
    parser.add_argument('--num_cross_heads', type=int, default=None)

    parser.add_argument('--dec_type',  type=str, default='transformer', help='type of decoder transformer or mlp')
    parser.add_argument('--cappa', type=float, default=-1)
    parser.add_argument('--mlp_dec_hidden',  type=int, default=2048, help='Dimension of decoder mlp hidden layers')
    parser.add_argument('--use_slot_proj',  type=bool_flag, default=True, help='Use an extra projection before MLP decoder')

    parser.add_argument('--which_encoder',  type=str, default='dino_vitb16', help='dino_vitb16, dino_vits8, dinov2_vitb14_reg, dinov2_vits14_reg, dinov2_vitb14, dinov2_vits14, mae_vitb16')
    parser.add_argument('--finetune_blocks_after',  type=int, default=100, help='finetune the blocks from this and after (counting from 0), for vit-b values greater than 12 means keep everything frozen')
    parser.add_argument('--encoder_final_norm',  type=bool_flag, default=False)
    parser.add_argument('--pretrained_encoder_weights', type=str, default=None)
    parser.add_argument('--use_second_encoder',  type= bool_flag, default = False, help='different encoder for input and target of decoder')

    parser.add_argument('--num_dec_blocks', type=int, default=4)
    parser.add_argument('--d_model', type=int, default=768)
    parser.add_argument('--num_heads', type=int, default=6)
    parser.add_argument('--dropout', type=float, default=0.0)

    parser.add_argument('--ce_weight', type=float, default=5e-3, help='weight of the cross-entropy distilation loss')
    parser.add_argument('--use_amp', type=bool_flag, default=True, help='train with fp16 autocast + GradScaler')
    parser.add_argument('--clip', type=float, default=0.3)

    parser.add_argument('--dist_url', default="env://", type=str, help="""url used to set up
        distributed training; see https://pytorch.org/docs/stable/distributed.html""")
    parser.add_argument("--local_rank", default=0, type=int, help="Please ignore and do not set this argument.")

    return parser


def train(args):
    utils_spot.init_distributed_mode(args)
    utils_spot.fix_random_seeds(args.seed + utils_spot.get_rank())
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True

    arg_str_list = ['{}={}'.format(k, v) for k, v in vars(args).items()]
    arg_str = '__'.join(arg_str_list)
    log_dir = os.path.join(args.log_path, datetime.today().isoformat())
    if utils_spot.is_main_process():
        writer = SummaryWriter(log_dir)
        writer.add_text('hparams', arg_str)

    if args.dataset == 'voc':
        train_dataset = PascalVOC(root=args.data_path, split='trainaug', image_size=args.image_size, mask_size=args.image_size)
        val_dataset = PascalVOC(root=args.data_path, split='val', image_size=args.val_image_size, mask_size=args.val_mask_size)
    elif args.dataset == 'coco':
        train_dataset = COCO2017(root=args.data_path, split='train', image_size=args.image_size, mask_size=args.image_size)
        val_dataset = COCO2017(root=args.data_path, split='val', image_size=args.val_image_size, mask_size=args.val_mask_size)
    elif args.dataset == 'movi':
        train_dataset = MOVi(root=os.path.join(args.data_path, 'train'), split='train', image_size=args.image_size, mask_size=args.image_size, frames_per_clip=9, predefined_json_paths=None)
        val_dataset = MOVi(root=os.path.join(args.data_path, 'validation'), split='validation', image_size=args.val_image_size, mask_size=args.val_mask_size)
    else:
        raise ValueError(f'Unknown dataset {args.dataset}')

    train_sampler = DistributedSampler(train_dataset, shuffle=True)
    val_sampler = DistributedSampler(val_dataset, shuffle=False)

    train_loader = DataLoader(train_dataset, sampler=train_sampler, batch_size=args.batch_size,
                              num_workers=args.num_workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_dataset, sampler=val_sampler, batch_size=args.eval_batch_size,
                            num_workers=args.num_workers, pin_memory=True, drop_last=False)

    train_epoch_size = len(train_loader)
    val_epoch_size = len(val_loader)

    log_interval = train_epoch_size // 5

    if args.which_encoder == 'dino_vitb16':
        args.max_tokens = int((args.val_image_size / 16) ** 2)
        encoder = torch.hub.load('facebookresearch/dino:main', 'dino_vitb16')
    elif args.which_encoder == 'dino_vits8':
        args.max_tokens = int((args.val_image_size / 8) ** 2)
        encoder = torch.hub.load('facebookresearch/dino:main', 'dino_vits8')
    elif args.which_encoder == 'dinov2_vitb14_reg':
        args.max_tokens = int((args.val_image_size / 14) ** 2)
        encoder = torch.hub.load('facebookresearch/dinov2', 'dinov2_vitb14_reg')
    elif args.which_encoder == 'mae_vitb16':
        args.max_tokens = int((args.val_image_size / 16) ** 2)
        encoder = models_vit.__dict__["vit_base_patch16"](num_classes=0, global_pool=False, drop_path_rate=0)
        assert args.pretrained_encoder_weights is not None
        load_pretrained_encoder(encoder, args.pretrained_encoder_weights, prefix=None)
    else:
        raise ValueError(f'Unknown encoder {args.which_encoder}')

    encoder = encoder.eval()
    for param in encoder.parameters():
        param.requires_grad = False  # not update by gradient

    model = SPOT(encoder, args, None)

    if os.path.isfile(args.checkpoint_path):
        checkpoint = torch.load(args.checkpoint_path, map_location='cpu')
        start_epoch = checkpoint['epoch']
        best_val_loss = checkpoint['best_val_loss']
        best_val_ari = checkpoint['best_val_ari']
        best_val_ari_slot = checkpoint['best_val_ari_slot']
        best_mbo_c = checkpoint['best_mbo_c']
        best_mbo_i = checkpoint['best_mbo_i']
        best_miou = checkpoint['best_miou']
        best_mbo_c_slot = checkpoint['best_mbo_c_slot']
        best_mbo_i_slot = checkpoint['best_mbo_i_slot']
        best_miou_slot = checkpoint['best_miou_slot']
        best_epoch = checkpoint['best_epoch']
        model.load_state_dict(checkpoint['model'], strict=True)
        msg = model.load_state_dict(checkpoint['model'], strict=True)
        print(msg)
    else:
        print('No checkpoint_path found')
        checkpoint = None
        start_epoch = 0
        best_val_loss = math.inf
        best_epoch = 0
        best_val_ari = 0
        best_val_ari_slot = 0
        best_mbo_c = 0
        best_mbo_i = 0
        best_miou = 0
        best_mbo_c_slot = 0
        best_mbo_i_slot = 0
        best_miou_slot = 0

    model = model.cuda()
    model = DDP(model, device_ids=[args.gpu], find_unused_parameters=False)

    lr_schedule = cosine_scheduler(base_value=1.,
                                   final_value=args.lr_min / args.lr_main,
                                   epochs=args.epochs,
                                   niter_per_ep=len(train_loader),
                                   warmup_epochs=int(args.lr_warmup_steps / (len(train_dataset) / (args.batch_size * utils_spot.get_world_size()))),
                                   start_warmup_value=0.)

    optimizer = Adam([
        {'params': (param for name, param in model.named_parameters() if param.requires_grad), 'lr': args.lr_main},
    ])
    scaler = torch.cuda.amp.GradScaler(enabled=args.use_amp)

    if checkpoint is not None:
        optimizer.load_state_dict(checkpoint['optimizer'])
        if 'scaler' in checkpoint:
            scaler.load_state_dict(checkpoint['scaler'])

    MBO_c_metric = UnsupervisedMaskIoUMetric(matching="best_overlap", ignore_background=True, ignore_overlaps=True).cuda()
    MBO_i_metric = UnsupervisedMaskIoUMetric(matching="best_overlap", ignore_background=True, ignore_overlaps=True).cuda()
    miou_metric = UnsupervisedMaskIoUMetric(matching="hungarian", ignore_background=True, ignore_overlaps=True).cuda()
    ari_metric = ARIMetric(foreground=True, ignore_overlaps=True).cuda()

    visualize_per_epoch = int(args.epochs * args.eval_viz_percent)

    for epoch in range(start_epoch, args.epochs):

        model.train()
        train_sampler.set_epoch(epoch)

        for batch, image in enumerate(train_loader):

            image = image.cuda(non_blocking=True)

            global_step = epoch * train_epoch_size + batch

            optimizer.param_groups[0]['lr'] = lr_schedule[global_step] * args.lr_main
            lr_value = optimizer.param_groups[0]['lr']

            optimizer.zero_grad()

            with torch.autocast(device_type='cuda', dtype=torch.float16, enabled=args.use_amp):
                mse, _, _, _, _, _ = model(image)

            loss = mse

            scaler.scale(loss).backward()
            if args.clip > 0:
                scaler.unscale_(optimizer)
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip, 'inf')
            scaler.step(optimizer)
            scaler.update()

            with torch.no_grad():
                if batch % log_interval == 0 and utils_spot.is_main_process():
                    print('Train Epoch: {:3} [{:5}/{:5}] \t lr = {:5} \t MSE: {:F}'.format(
                          epoch+1, batch, train_epoch_size, lr_value, mse.item()))

                    writer.add_scalar('TRAIN/mse', mse.item(), global_step)
                    writer.add_scalar('TRAIN/lr_main', lr_value, global_step)

        with torch.no_grad():
            model.eval()

            val_mse = 0.
            counter = 0

            for batch, (image, true_mask_i, true_mask_c, mask_ignore) in enumerate(val_loader):
                image = image.cuda()
                true_mask_i = true_mask_i.cuda(non_blocking=True)
                true_mask_c = true_mask_c.cuda(non_blocking=True)
                mask_ignore = mask_ignore.cuda(non_blocking=True)

                batch_size = image.shape[0]
                counter += batch_size

                with torch.cuda.amp.autocast(enabled=args.use_amp):
                    mse, default_slots_attns, dec_slots_attns, _, _, _ = model(image)

                # DINOSAUR uses as attention masks the attenton maps of the decoder
                # over the slots, which bilinearly resizes to match the image resolution
                # dec_slots_attns shape: [B, num_slots, H_enc, W_enc]
                default_attns = torch.nn.functional.interpolate(default_slots_attns.float(), size=args.val_mask_size, mode='bilinear')
                dec_attns = torch.nn.functional.interpolate(dec_slots_attns.float(), size=args.val_mask_size, mode='bilinear')
                # dec_attns shape [B, num_slots, H, W]
                default_attns = default_attns.unsqueeze(2)
                dec_attns = dec_attns.unsqueeze(2)  # shape [B, num_slots, 1, H, W]

                pred_default_mask = default_attns.argmax(1).squeeze(1)
                pred_dec_mask = dec_attns.argmax(1).squeeze(1)

                val_mse += mse.item()

                # Compute ARI, MBO_i and MBO_c, miou scores for both slot attention and decoder
                true_mask_i_reshaped = torch.nn.functional.one_hot(true_mask_i).to(torch.float32).permute(0, 3, 1, 2)
                true_mask_c_reshaped = torch.nn.functional.one_hot(true_mask_c).to(torch.float32).permute(0, 3, 1, 2)
                pred_dec_mask_reshaped = torch.nn.functional.one_hot(pred_dec_mask).to(torch.float32).permute(0, 3, 1, 2)
                pred_default_mask_reshaped = torch.nn.functional.one_hot(pred_default_mask).to(torch.float32).permute(0, 3, 1, 2)

                MBO_i_metric.update(pred_dec_mask_reshaped, true_mask_i_reshaped, mask_ignore)
                MBO_c_metric.update(pred_dec_mask_reshaped, true_mask_c_reshaped, mask_ignore)
                miou_metric.update(pred_dec_mask_reshaped, true_mask_i_reshaped, mask_ignore)
                ari_metric.update(pred_dec_mask_reshaped, true_mask_i_reshaped, mask_ignore)

            val_mse /= (val_epoch_size)
            ari = 100 * ari_metric.compute()
            mbo_c = 100 * MBO_c_metric.compute()
            mbo_i = 100 * MBO_i_metric.compute()
            miou = 100 * miou_metric.compute()
            val_loss = val_mse
            ari_metric.reset()
            MBO_c_metric.reset()
            MBO_i_metric.reset()
            miou_metric.reset()

            if utils_spot.is_main_process():
                writer.add_scalar('VAL/mse', val_mse, epoch+1)
                writer.add_scalar('VAL/ari (slots)', ari, epoch+1)
                writer.add_scalar('VAL/mbo_c', mbo_c, epoch+1)
                writer.add_scalar('VAL/mbo_i', mbo_i, epoch+1)
                writer.add_scalar('VAL/miou', miou, epoch+1)

                print(args.log_path)
                print('====> Epoch: {:3} \t Loss = {:F}'.format(epoch+1, val_loss))
                print('====> \t ari = {:F} \t mbo_c = {:F} \t mbo_i = {:F} \t miou = {:F}'.format(ari, mbo_c, mbo_i, miou))

                if ari > best_val_ari:
                    best_val_ari = ari
                if mbo_c > best_mbo_c:
                    best_mbo_c = mbo_c
                if mbo_i > best_mbo_i:
                    best_mbo_i = mbo_i
                if miou > best_miou:
                    best_miou = miou

                if val_loss < best_val_loss:
                    best_val_loss = val_loss
                    best_epoch = epoch + 1

                    torch.save(model.module.state_dict(), os.path.join(log_dir, 'best_model.pt'))

                if epoch % visualize_per_epoch == 0 or epoch == args.epochs - 1:
                    image = inv_normalize(image)
                    image = torch.nn.functional.interpolate(image, size=args.val_mask_size, mode='bilinear')
                    rgb_default_attns = image.unsqueeze(1) * default_attns + 1. - default_attns
                    rgb_dec_attns = image.unsqueeze(1) * dec_attns + 1. - dec_attns

                    vis_recon = visualize(image, true_mask_c, pred_dec_mask, rgb_dec_attns, pred_default_mask, rgb_default_attns, N=32)
                    grid = vutils.make_grid(vis_recon, nrow=2 * args.num_slots + 4, pad_value=0.2)[:, 2:-2, 2:-2]
                    grid = torch.nn.functional.interpolate(grid.unsqueeze(1), scale_factor=0.15, mode='bilinear').squeeze()  # Lower resolution
                    writer.add_image('VAL_recon/epoch={:03}'.format(epoch+1), grid)

                writer.add_scalar('VAL/best_loss', best_val_loss, epoch+1)

                checkpoint = {
                    'epoch': epoch + 1,
                    'best_val_loss': best_val_loss,
                    'best_val_ari': best_val_ari,
                    'best_val_ari_slot': best_val_ari_slot,
                    'best_mbo_c': best_mbo_c,
                    'best_mbo_i': best_mbo_i,
                    'best_miou': best_miou,
                    'best_mbo_c_slot': best_mbo_c_slot,
                    'best_mbo_i_slot': best_mbo_i_slot,
                    'best_miou_slot': best_miou_slot,
                    'best_epoch': best_epoch,
                    'model': model.module.state_dict(),
                    'optimizer': optimizer.state_dict(),
                    'scaler': scaler.state_dict(),
                }

                torch.save(checkpoint, os.path.join(log_dir, 'checkpoint.pt.tar'))

                print('====> Best Loss = {:F} @ Epoch {}'.format(best_val_loss, best_epoch))

    if utils_spot.is_main_process():
        writer.close()


if __name__ == '__main__':
    parser = argparse.ArgumentParser('SPOT', parents=[get_args_parser()])
    args = parser.parse_args()
    train(args)
