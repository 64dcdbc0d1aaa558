import os
import sys
import time
import pickle
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

from network import mmWaveModel, init_hidden
from smpl_utils import vertex_error, joint_error

os.environ['CUDA_VISIBLE_DEVICES'] = '0'
device = torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')
torch.backends.cudnn.benchmark = True


def parse_args():
    parser = argparse.ArgumentParser(description='mmMesh: mmWave radar -> SMPL mesh')
    parser.add_argument('--data', default='./data/mmmesh_pc.pkl', help='pickled radar point clouds + SMPL params')
    parser.add_argument('--smpl_dir', default='./smpl_models')
    parser.add_argument('--seq_len', type=int, default=64)
    parser.add_argument('--num_points', type=int, default=64)
    parser.add_argument('--batch_size', type=int, default=32)
    parser.add_argument('--epochs', type=int, default=200)
    parser.add_argument('--lr', type=float, default=1e-3)
    parser.add_argument('--save_dir', default='./ckpt')
    parser.add_argument('--resume', default='')
    parser.add_argument('--eval_only', action='store_true')
    return parser.parse_args()


class SeqData(object):
    """Sliding windows of radar frames. Each frame is padded/sampled to num_points."""

    def __init__(self, path, seq_len, num_points, train=True, split=0.8):
        with open(path, 'rb') as f:
            d = pickle.load(f)
        self.pc = d['pc']            # list of (N_i, 6) arrays, one per frame
        self.pose = d['pose']        # (T, 24, 6)
        self.betas = d['betas']      # (T, 10)
        self.trans = d['trans']      # (T, 3)
        self.gender = d['gender']    # (T,)
        self.verts = d['verts']      # (T, 6890, 3)
        self.joints = d['joints']    # (T, 24, 3)
        T = len(self.pc)
        cut = int(T * split)
        self.range = (0, cut) if train else (cut, T)
        self.seq_len = seq_len
        self.num_points = num_points

    def _frame(self, i):
        p = self.pc[i]
        n = p.shape[0]
        if n >= self.num_points:
            idx = np.random.choice(n, self.num_points, replace=False)
        else:
            idx = np.concatenate([np.arange(n), np.random.choice(n, self.num_points - n, replace=True)])
        return p[idx]

    def batches(self, batch_size, shuffle=True):
        lo, hi = self.range
        starts = np.arange(lo, hi - self.seq_len)
        if shuffle:
            np.random.shuffle(starts)
        for b in range(0, len(starts) - batch_size + 1, batch_size):
            s = starts[b:b + batch_size]
            pc = np.stack([[self._frame(i) for i in range(t, t + self.seq_len)] for t in s])
            sl = [slice(t, t + self.seq_len) for t in s]
            yield dict(
                pc=torch.from_numpy(pc).float(),
                pose=torch.from_numpy(np.stack([self.pose[x] for x in sl])).float(),
                betas=torch.from_numpy(np.stack([self.betas[x] for x in sl])).float(),
                trans=torch.from_numpy(np.stack([self.trans[x] for x in sl])).float(),
                gender=torch.from_numpy(np.stack([self.gender[x] for x in sl])).float(),
                verts=torch.from_numpy(np.stack([self.verts[x] for x in sl])).float(),
                joints=torch.from_numpy(np.stack([self.joints[x] for x in sl])).float(),
            )


def compute_loss(out, gt, w):
    l_pose = nn.functional.l1_loss(out['pose'], gt['pose'].view(*out['pose'].shape))
    l_shape = nn.functional.l1_loss(out['betas'], gt['betas'])
    l_trans = nn.functional.l1_loss(out['trans'], gt['trans'])
    l_gender = nn.functional.binary_cross_entropy(out['gender'].squeeze(-1), gt['gender'])
    l_verts = nn.functional.l1_loss(out['verts'], gt['verts'])
    l_joints = nn.functional.l1_loss(out['joints'], gt['joints'])
    total = (w['pose'] * l_pose + w['shape'] * l_shape + w['trans'] * l_trans +
             w['gender'] * l_gender + w['verts'] * l_verts + w['joints'] * l_joints)
    return total, dict(pose=l_pose.item(), shape=l_shape.item(), trans=l_trans.item(),
                       gender=l_gender.item(), verts=l_verts.item(), joints=l_joints.item())


def to_gpu(batch):
    return {k: v.cuda(non_blocking=True) for k, v in batch.items()}


def evaluate(model, data, args):
    model.eval()
    v_err, j_err, n = 0.0, 0.0, 0
    with torch.no_grad():
        for batch in data.batches(args.batch_size, shuffle=False):
            batch = to_gpu(batch)
            h0 = init_hidden(args.batch_size)
            out = model(batch['pc'], h0)
            v_err += vertex_error(out['verts'], batch['verts']).item()
            j_err += joint_error(out['joints'], batch['joints']).item()
            n += 1
    model.train()
    return v_err / max(n, 1), j_err / max(n, 1)


def main():
    args = parse_args()
    os.makedirs(args.save_dir, exist_ok=True)
    print('device:', device, torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')

    train_data = SeqData(args.data, args.seq_len, args.num_points, train=True)
    test_data = SeqData(args.data, args.seq_len, args.num_points, train=False)

    model = mmWaveModel(args.smpl_dir).to(device)
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-5)
    scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=50, gamma=0.5)
    w = dict(pose=1.0, shape=0.1, trans=1.0, gender=0.1, verts=0.5, joints=0.5)

    start_epoch = 0
    if args.resume:
        ckpt = torch.load(args.resume, map_location='cuda:0')
        model.load_state_dict(ckpt['model'])
        optimizer.load_state_dict(ckpt['optimizer'])
        start_epoch = ckpt['epoch'] + 1
        print('resumed from %s (epoch %d)' % (args.resume, ckpt['epoch']))

    if args.eval_only:
        v, j = evaluate(model, test_data, args)
        print('vertex error %.2f cm, joint error %.2f cm' % (v, j))
        return

    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    best = 1e9
    for epoch in range(start_epoch, args.epochs):
        start.record()
        it = 0
        for batch in train_data.batches(args.batch_size):
            batch = to_gpu(batch)
            h0 = init_hidden(args.batch_size)
            out = model(batch['pc'], h0)
            loss, parts = compute_loss(out, batch, w)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
            if it % 50 == 0:
                print('epoch %d it %d loss %.4f %s' % (epoch, it, loss.item(),
                      ' '.join('%s=%.3f' % kv for kv in parts.items())))
            it += 1
        scheduler.step()
        end.record()
        torch.cuda.synchronize()
        print('epoch %d took %.1f s, max mem %.0f MB' % (
            epoch, start.elapsed_time(end) / 1000.0, torch.cuda.max_memory_allocated() / 1024 ** 2))

        v, j = evaluate(model, test_data, args)
        print('[test] epoch %d vertex %.2f cm joint %.2f cm' % (epoch, v, j))
        state = dict(model=model.state_dict(), optimizer=optimizer.state_dict(), epoch=epoch)
        torch.save(state, os.path.join(args.save_dir, 'last.pth'))
        if v < best:
            best = v
            torch.save(state, os.path.join(args.save_dir, 'best.pth'))
        torch.cuda.empty_cache()


if __name__ == '__main__':
    main()
