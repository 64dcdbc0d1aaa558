"""
Train the PolyGen vertex model and face model (PyTorch port of
deepmind-research/polygen).

    python train.py --config configs/polygen_shapenet.yaml --model vertex --gpu_ids 0,1

The two models are trained independently; the face model is conditioned on
ground-truth vertices (teacher forcing), exactly like the original TF code.
"""

import argparse
import os
import time
import logging

import numpy as np
import yaml
import torch
import torch.nn as nn
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

from polygen.modules import VertexModel, FaceModel
from polygen.data_utils import PolygenDataset, collate_vertex_model_batch, collate_face_model_batch

logger = logging.getLogger('polygen')
logging.basicConfig(format='%(asctime)s %(levelname)s %(message)s', level=logging.INFO)


def get_args():
    parser = argparse.ArgumentParser(description='PolyGen training')
    parser.add_argument('--config', type=str, default='configs/polygen_shapenet.yaml')
    parser.add_argument('--model', type=str, choices=['vertex', 'face'], default='vertex')
    parser.add_argument('--gpu_ids', type=str, default='0', help='comma separated list, e.g. 0,1,2,3')
    parser.add_argument('--resume', type=str, default='')
    parser.add_argument('--amp', action='store_true', help='mixed precision training')
    parser.add_argument('--log_dir', type=str, default='runs/polygen')
    parser.add_argument('--seed', type=int, default=1234)
    return parser.parse_args()


args = get_args()
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu_ids
gpu_ids = list(range(len(args.gpu_ids.split(','))))

with open(args.config) as f:
    cfg = yaml.safe_load(f)

torch.manual_seed(args.seed)
np.random.seed(args.seed)
torch.backends.cudnn.benchmark = True


def build_model(cfg, kind):
    if kind == 'vertex':
        model = VertexModel(
            decoder_config=cfg['vertex_decoder'],
            quantization_bits=cfg['quantization_bits'],
            class_conditional=cfg['class_conditional'],
            num_classes=cfg['num_classes'],
            max_num_input_verts=cfg['max_num_input_verts'],
            use_discrete_embeddings=True,
        )
    else:
        model = FaceModel(
            encoder_config=cfg['face_encoder'],
            decoder_config=cfg['face_decoder'],
            class_conditional=False,
            max_seq_length=cfg['max_num_face_indices'],
            quantization_bits=cfg['quantization_bits'],
            max_num_input_verts=cfg['max_num_input_verts'],
            decoder_cross_attention=True,
            use_discrete_vertex_embeddings=True,
        )
    return model


def to_cuda(batch):
    return {k: (v.cuda(non_blocking=True) if torch.is_tensor(v) else v) for k, v in batch.items()}


def save_checkpoint(path, model, optimizer, scaler, step):
    state = model.module.state_dict() if isinstance(model, nn.DataParallel) else model.state_dict()
    torch.save({'model': state, 'optimizer': optimizer.state_dict(),
                'scaler': scaler.state_dict(), 'step': step}, path)
    logger.info('saved checkpoint to %s', path)


def main():
    os.makedirs(args.log_dir, exist_ok=True)
    writer = SummaryWriter(args.log_dir)

    dataset = PolygenDataset(
        cfg['data_dir'], split='train',
        quantization_bits=cfg['quantization_bits'],
        max_num_verts=cfg['max_num_input_verts'],
        max_num_face_indices=cfg['max_num_face_indices'],
        augment=cfg.get('augment', True),
    )
    collate_fn = collate_vertex_model_batch if args.model == 'vertex' else collate_face_model_batch
    loader = DataLoader(
        dataset, batch_size=cfg['batch_size'], shuffle=True,
        num_workers=cfg['num_workers'], pin_memory=True, drop_last=True,
        collate_fn=collate_fn,
    )

    model = build_model(cfg, args.model).cuda()
    n_params = sum(p.numel() for p in model.parameters())
    logger.info('%s model with %.2fM parameters', args.model, n_params / 1e6)

    optimizer = torch.optim.Adam(model.parameters(), lr=cfg['learning_rate'])
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / cfg['warmup_steps']))
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    step = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location=lambda storage, loc: storage.cuda())
        model.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        scaler.load_state_dict(ckpt['scaler'])
        step = ckpt['step']
        logger.info('resumed from %s at step %d', args.resume, step)

    if len(gpu_ids) > 1:
        logger.info('using %d GPUs with DataParallel', len(gpu_ids))
        model = nn.DataParallel(model, device_ids=gpu_ids)

    model.train()
    t_last = time.time()
    while step < cfg['training_steps']:
        for batch in loader:
            batch = to_cuda(batch)
            with torch.cuda.amp.autocast(enabled=args.amp):
                dist = model(batch)
                if args.model == 'vertex':
                    target, mask = batch['vertices_flat'], batch['vertices_flat_mask']
                else:
                    target, mask = batch['faces'], batch['faces_mask']
                log_prob = dist.log_prob(target) * mask
                loss = -log_prob.sum() / mask.sum()

            optimizer.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg['grad_clip'])
            scaler.step(optimizer)
            scaler.update()
            scheduler.step()
            step += 1

            if step % cfg['log_every'] == 0:
                torch.cuda.synchronize()
                dt = (time.time() - t_last) / cfg['log_every']
                t_last = time.time()
                mem = torch.cuda.memory_allocated() / 2 ** 20
                logger.info('step %d loss %.4f (%.3fs/it, %.0f MiB on GPU)', step, loss.item(), dt, mem)
                writer.add_scalar('train/loss', loss.item(), step)
                writer.add_scalar('train/lr', scheduler.get_last_lr()[0], step)

            if step % cfg['save_every'] == 0:
                save_checkpoint(os.path.join(args.log_dir, f'{args.model}_{step:07d}.pt'),
                                model, optimizer, scaler, step)
            if step >= cfg['training_steps']:
                break

    save_checkpoint(os.path.join(args.log_dir, f'{args.model}_final.pt'), model, optimizer, scaler, step)
    writer.close()


if __name__ == '__main__':
    main()
