import argparse
import os
import random

import numpy as np
import torch
import torch.backends.cudnn as cudnn
import torch.optim as optim
from tqdm import tqdm
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

from mlp_mixer import MlpMixer
from utils import amass3d as datasets
from utils.loss_funcs import mpjpe_error
from utils.dpw3d import Datasets as Datasets3DPW
from utils.utils_mixer import delta_2_gt, mpjpe_loss


parser = argparse.ArgumentParser(description='MotionMixer on AMASS / 3DPW')
parser.add_argument('--data_dir', type=str, default='../data_amass/', help='path to the unziped AMASS/3DPW directories')
parser.add_argument('--input_n', type=int, default=10, help="number of model's input frames")
parser.add_argument('--output_n', type=int, default=25, help="number of model's output frames")
parser.add_argument('--skip_rate', type=int, default=5, choices=[1, 5], help='rate of frames to skip')
parser.add_argument('--joints_to_consider', type=int, default=18, help='number of joints (AMASS: 18)')
parser.add_argument('--num_worker', default=4, type=int, help='number of workers in the dataloader')
parser.add_argument('--root', default='./runs', type=str, help='root path for the logging')
parser.add_argument('--gpu', default='0', type=str, help='which GPU to use (CUDA_VISIBLE_DEVICES)')
parser.add_argument('--seed', default=0, type=int)

parser.add_argument('--hidden_dim', default=50, type=int)
parser.add_argument('--num_blocks', default=4, type=int)
parser.add_argument('--tokens_mlp_dim', default=20, type=int)
parser.add_argument('--channels_mlp_dim', default=50, type=int)
parser.add_argument('--regularization', default=0.1, type=float)
parser.add_argument('--activation', default='mish', type=str)
parser.add_argument('--r_se', default=8, type=int)
parser.add_argument('--delta_x', type=bool, default=True)

parser.add_argument('--n_epochs', type=int, default=50)
parser.add_argument('--batch_size', type=int, default=50)
parser.add_argument('--batch_size_test', type=int, default=256)
parser.add_argument('--lr', default=0.001, type=float)
parser.add_argument('--milestones', type=list, default=[15, 25, 35, 40])
parser.add_argument('--gamma', type=float, default=0.1)
parser.add_argument('--clip_grad', type=float, default=None)
parser.add_argument('--model_path', type=str, default='./checkpoints/amass/amass_3d_25frames_ckpt')
args = parser.parse_args()

os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

random.seed(args.seed)
np.random.seed(args.seed)
torch.manual_seed(args.seed)
torch.cuda.manual_seed(args.seed)
cudnn.benchmark = True

args.pose_dim = args.joints_to_consider * 3
device = 'cuda'


def get_log_dir(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    dirs = [x[0] for x in os.walk(out_dir)]
    log_dir = os.path.join(out_dir, 'exp%i' % (len(dirs) - 1))
    os.mkdir(log_dir)
    return log_dir


def step(model, batch, dim_used):
    sequences_train = batch[:, 0:args.input_n, dim_used].view(-1, args.input_n, args.pose_dim)
    sequences_gt = batch[:, args.input_n:args.input_n + args.output_n, dim_used].view(-1, args.output_n, args.pose_dim)

    if args.delta_x:
        sequences_all = torch.cat((sequences_train, sequences_gt), 1)
        sequences_all_delta = [sequences_all[:, 1, :] - sequences_all[:, 0, :]]
        for i in range(args.input_n + args.output_n - 1):
            sequences_all_delta.append(sequences_all[:, i + 1, :] - sequences_all[:, i, :])
        sequences_all_delta = torch.stack(sequences_all_delta).permute(1, 0, 2)
        sequences_predict = model(sequences_all_delta[:, 0:args.input_n, :])
        sequences_predict = delta_2_gt(sequences_predict, sequences_train[:, -1, :])
    else:
        sequences_predict = model(sequences_train)
    return sequences_predict, sequences_gt


def train(model):
    log_dir = get_log_dir(args.root)
    tb_writer = SummaryWriter(log_dir=log_dir)
    print('Save data of the run in: %s' % log_dir)

    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=1e-05)
    scheduler = optim.lr_scheduler.MultiStepLR(optimizer, milestones=args.milestones, gamma=args.gamma)

    dataset = datasets.Datasets(args.data_dir, args.input_n, args.output_n, args.skip_rate, split=0)
    loader_train = DataLoader(dataset, batch_size=args.batch_size, shuffle=True,
                              num_workers=args.num_worker, pin_memory=True)
    vald_dataset = datasets.Datasets(args.data_dir, args.input_n, args.output_n, args.skip_rate, split=1)
    loader_val = DataLoader(vald_dataset, batch_size=args.batch_size, shuffle=True,
                            num_workers=args.num_worker, pin_memory=True)

    joint_used = np.arange(4, 22)
    dim_used = np.concatenate([joint_used * 3, joint_used * 3 + 1, joint_used * 3 + 2])
    dim_used.sort()

    best_val = float('inf')
    for epoch in range(args.n_epochs):
        running_loss, n = 0, 0
        model.train()
        for cnt, batch in tqdm(enumerate(loader_train), total=len(loader_train)):
            batch = batch.float().cuda(non_blocking=True)
            batch_dim = batch.shape[0]
            n += batch_dim

            optimizer.zero_grad()
            sequences_predict, sequences_gt = step(model, batch, dim_used)
            loss = mpjpe_loss(sequences_predict, sequences_gt) * 1000
            loss.backward()
            if args.clip_grad is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip_grad)
            optimizer.step()
            running_loss += loss.item() * batch_dim

        tb_writer.add_scalar('loss/train', running_loss / n, epoch)

        model.eval()
        running_loss, n = 0, 0
        with torch.no_grad():
            for cnt, batch in enumerate(loader_val):
                batch = batch.cuda(non_blocking=True).float()
                batch_dim = batch.shape[0]
                n += batch_dim
                sequences_predict, sequences_gt = step(model, batch, dim_used)
                loss = mpjpe_loss(sequences_predict, sequences_gt) * 1000
                running_loss += loss.item() * batch_dim
        val_loss = running_loss / n
        tb_writer.add_scalar('loss/val', val_loss, epoch)
        print('epoch %d | val mpjpe %.2f mm | peak GPU mem %.2f GB' %
              (epoch + 1, val_loss, torch.cuda.max_memory_allocated() / 1024 ** 3))
        scheduler.step()

        if val_loss < best_val:
            best_val = val_loss
            torch.save(model.state_dict(), args.model_path)
        torch.save(model.state_dict(), os.path.join(log_dir, 'model.pt'))


def test(model, split='amass'):
    model.load_state_dict(torch.load(args.model_path))
    model.eval()

    joint_used = np.arange(4, 22)
    dim_used = np.concatenate([joint_used * 3, joint_used * 3 + 1, joint_used * 3 + 2])
    dim_used.sort()

    if split == 'amass':
        dataset = datasets.Datasets(args.data_dir, args.input_n, args.output_n, args.skip_rate, split=2)
    else:
        dataset = Datasets3DPW(args.data_dir, args.input_n, args.output_n, args.skip_rate, split=2)
    loader = DataLoader(dataset, batch_size=args.batch_size_test, shuffle=False, num_workers=0, pin_memory=True)

    running_loss, n = 0, 0
    with torch.no_grad():
        for cnt, batch in enumerate(loader):
            batch = batch.float().to(device)
            batch_dim = batch.shape[0]
            n += batch_dim
            sequences_predict, sequences_gt = step(model, batch, dim_used)
            loss = mpjpe_error(sequences_predict.view(-1, args.output_n, args.joints_to_consider, 3),
                               sequences_gt.view(-1, args.output_n, args.joints_to_consider, 3)) * 1000
            running_loss += loss.item() * batch_dim
    print('%s test mpjpe: %.2f mm' % (split, running_loss / n))
    torch.cuda.empty_cache()
    return running_loss / n


if __name__ == '__main__':
    model = MlpMixer(num_classes=args.pose_dim, num_blocks=args.num_blocks,
                     hidden_dim=args.hidden_dim, tokens_mlp_dim=args.tokens_mlp_dim,
                     channels_mlp_dim=args.channels_mlp_dim, seq_len=args.input_n,
                     pred_len=args.output_n, activation=args.activation,
                     mlp_block_type='normal', regularization=args.regularization,
                     input_size=args.pose_dim, initialization='none', r_se=args.r_se,
                     use_max_pooling=False, use_se=True).cuda()
    print('total number of parameters of the network is: ' +
          str(sum(p.numel() for p in model.parameters() if p.requires_grad)))

    train(model)
    test(model, split='amass')
    test(model, split='3dpw')
