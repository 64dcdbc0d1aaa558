import argparse
import torch
import torch.utils.data
import sys
import os
sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from eth_ucy.dataset_eth import ETHDataset
from eth_ucy.model_t import EqMotion
from torch import nn, optim
import json
import time
import random
import numpy as np

parser = argparse.ArgumentParser(description='EqMotion ETH/UCY')
parser.add_argument('--exp_name', type=str, default='exp_1', metavar='N', help='experiment_name')
parser.add_argument('--batch_size', type=int, default=100, metavar='N',
                    help='input batch size for training (default: 128)')
parser.add_argument('--epochs', type=int, default=100, metavar='N',
                    help='number of epochs to train (default: 10)')
parser.add_argument('--no-cuda', action='store_true', default=False,
                    help='disables CUDA training')
parser.add_argument('--gpus', type=str, default='0',
                    help='comma separated list of GPU ids, e.g. "0,1"')
parser.add_argument('--seed', type=int, default=-1, metavar='S',
                    help='random seed (default: 1)')
parser.add_argument('--log_interval', type=int, default=1, metavar='N',
                    help='how many batches to wait before logging training status')
parser.add_argument('--test_interval', type=int, default=1, metavar='N',
                    help='how many epochs to wait before logging test')
parser.add_argument('--outf', type=str, default='eth_ucy/logs', metavar='N',
                    help='folder to output vae')
parser.add_argument('--lr', type=float, default=5e-4, metavar='N',
                    help='learning rate')
parser.add_argument('--epoch_decay', type=int, default=2, metavar='N',
                    help='number of epochs for the lr decay')
parser.add_argument('--lr_gamma', type=float, default=0.8, metavar='N',
                    help='the lr decay ratio')
parser.add_argument('--nf', type=int, default=64, metavar='N',
                    help='learning rate')
parser.add_argument('--n_layers', type=int, default=4, metavar='N',
                    help='number of layers for the autoencoder')
parser.add_argument('--channels', type=int, default=64, metavar='N',
                    help='number of channels')
parser.add_argument('--max_training_samples', type=int, default=3000, metavar='N',
                    help='maximum amount of training samples')
parser.add_argument('--weight_decay', type=float, default=1e-12, metavar='N',
                    help='timing experiment')
parser.add_argument('--norm_diff', type=eval, default=False, metavar='N',
                    help='normalize_diff')
parser.add_argument('--tanh', type=eval, default=False, metavar='N',
                    help='use tanh')
parser.add_argument('--subset', type=str, default='eth', metavar='N',
                    help='Name of the subset.')
parser.add_argument('--model_save_dir', type=str, default='eth_ucy/saved_models', metavar='N',
                    help='dir to save model')
parser.add_argument('--scale', type=float, default=1, metavar='N',
                    help='dataset scale')
parser.add_argument("--apply_decay", action='store_true')
parser.add_argument("--res_pred", action='store_true')
parser.add_argument("--supervise_all", action='store_true')
parser.add_argument('--model_name', type=str, default='eth_ckpt_best', metavar='N',
                    help='name of the checkpoint to load in --test mode')
parser.add_argument("--test", action='store_true')
parser.add_argument("--vis", action='store_true')

time_exp_dic = {'time': 0, 'counter': 0}

args = parser.parse_args()
os.environ['CUDA_VISIBLE_DEVICES'] = args.gpus
args.cuda = not args.no_cuda and torch.cuda.is_available()

device = torch.device("cuda" if args.cuda else "cpu")
loss_mse = nn.MSELoss()

print(args)
try:
    os.makedirs(args.outf)
except OSError:
    pass

try:
    os.makedirs(args.outf + "/" + args.exp_name)
except OSError:
    pass


def lr_decay(optimizer, lr_now, gamma):
    lr = lr_now * gamma
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    return lr


def setup_seed(seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    np.random.seed(seed)
    random.seed(seed)
    torch.backends.cudnn.deterministic = True


def main():
    if args.seed >= 0:
        seed = args.seed
        setup_seed(seed)
    else:
        seed = random.randint(0, 1000)
        setup_seed(seed)
    print('The seed is :', seed)

    past_length = 8
    future_length = 12

    dataset_train = ETHDataset(args.subset, past_length, future_length, training=True, scale=args.scale)
    loader_train = torch.utils.data.DataLoader(dataset_train, batch_size=args.batch_size, shuffle=True,
                                               drop_last=False, num_workers=8, pin_memory=args.cuda)

    dataset_test = ETHDataset(args.subset, past_length, future_length, training=False, scale=args.scale)
    loader_test = torch.utils.data.DataLoader(dataset_test, batch_size=args.batch_size, shuffle=False,
                                              drop_last=False, num_workers=8)

    model = EqMotion(in_node_nf=past_length, in_edge_nf=2, hidden_nf=args.nf, in_channel=past_length,
                     hid_channel=args.channels, out_channel=future_length, device=device,
                     n_layers=args.n_layers, recurrent=True, norm_diff=args.norm_diff, tanh=args.tanh)

    if args.cuda and torch.cuda.device_count() > 1:
        print('Using', torch.cuda.device_count(), 'GPUs')
        model = nn.DataParallel(model)

    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    if args.test:
        model_path = args.model_save_dir + '/' + args.model_name + '.pth.tar'
        print('Loading model from:', model_path)
        model_ckpt = torch.load(model_path)
        model.load_state_dict(model_ckpt['state_dict'], strict=False)
        test_loss, ade = test(model, optimizer, 0, loader_test, backprop=False)
        print('ade:', ade, 'fde:', test_loss)
        return

    results = {'epochs': [], 'losess': []}
    best_val_loss = 1e8
    best_test_loss = 1e8
    best_ade = 1e8
    best_epoch = 0
    lr_now = args.lr
    for epoch in range(0, args.epochs):
        if args.apply_decay:
            if epoch % args.epoch_decay == 0 and epoch > 0:
                lr_now = lr_decay(optimizer, lr_now, args.lr_gamma)
        train(model, optimizer, epoch, loader_train)
        if epoch % args.test_interval == 0:
            test_loss, ade = test(model, optimizer, epoch, loader_test, backprop=False)
            results['epochs'].append(epoch)
            results['losess'].append(test_loss)
            if test_loss < best_test_loss:
                best_test_loss = test_loss
                best_ade = ade
                best_epoch = epoch
                state = {'epoch': epoch, 'state_dict': model.state_dict()}
                file_path = os.path.join(args.model_save_dir, str(args.subset) + '_ckpt_best.pth.tar')
                torch.save(state, file_path)
            print("Best Test Loss: %.5f \t Best ade: %.5f \t Best epoch %d" % (best_test_loss, best_ade, best_epoch))
            print('The seed is :', seed)

        json_object = json.dumps(results, indent=4)
        with open(args.outf + "/" + args.exp_name + "/losess.json", "w") as outfile:
            outfile.write(json_object)
    return best_val_loss, best_test_loss, best_epoch


constant = 1


def train(model, optimizer, epoch, loader, backprop=True):
    if backprop:
        model.train()
    else:
        model.eval()

    res = {'epoch': epoch, 'loss': 0, 'counter': 0}

    for batch_idx, data in enumerate(loader):
        if data is not None:
            loc, loc_end, num_valid = data
            loc = loc.cuda(non_blocking=True)
            loc_end = loc_end.cuda(non_blocking=True)
            num_valid = num_valid.cuda(non_blocking=True)
            num_valid = num_valid.type(torch.int)

            vel = torch.zeros_like(loc)
            vel[:, :, 1:] = loc[:, :, 1:] - loc[:, :, :-1]
            vel[:, :, 0] = vel[:, :, 1]

            batch_size, agent_num, length, _ = loc.size()

            optimizer.zero_grad()

            vel = vel * constant
            nodes = torch.sqrt(torch.sum(vel ** 2, dim=-1)).detach()
            loc_pred, category = model(nodes, loc.detach(), vel, num_valid)

            if args.supervise_all:
                mask = get_valid_mask2(num_valid, agent_num)
                mask = mask.unsqueeze(2).unsqueeze(3).repeat(1, 1, loc_pred.shape[2], loc_pred.shape[3])
                loss = torch.mean(torch.norm(loc_pred * mask - loc_end * mask, dim=-1))
            else:
                loss = torch.mean(torch.norm(loc_pred[:, 0] - loc_end[:, 0], dim=-1))

            if backprop:
                loss.backward()
                optimizer.step()
            res['loss'] += loss.item() * batch_size
            res['counter'] += batch_size

    if not backprop:
        prefix = "==> "
    else:
        prefix = ""
    print('%s epoch %d avg loss: %.5f' % (prefix + loader.dataset.partition, epoch, res['loss'] / res['counter']))

    return res['loss'] / res['counter']


def get_valid_mask2(num_valid, agent_num):
    batch_size = num_valid.shape[0]
    valid_mask = torch.zeros((batch_size, agent_num))
    for i in range(batch_size):
        valid_mask[i, :num_valid[i]] = 1
    return valid_mask.to(num_valid.device)


def test(model, optimizer, epoch, loader, backprop=True):
    if backprop:
        model.train()
    else:
        model.eval()

    validate_reasoning = False
    if validate_reasoning:
        acc_list = [0] * args.n_layers
    res = {'epoch': epoch, 'loss': 0, 'counter': 0, 'ade': 0}

    with torch.no_grad():
        for batch_idx, data in enumerate(loader):
            if data is not None:
                loc, loc_end, num_valid = data
                loc = loc.cuda()
                loc_end = loc_end.cuda()
                num_valid = num_valid.cuda()
                num_valid = num_valid.type(torch.int)

                vel = torch.zeros_like(loc)
                vel[:, :, 1:] = loc[:, :, 1:] - loc[:, :, :-1]
                vel[:, :, 0] = vel[:, :, 1]

                batch_size, agent_num, length, _ = loc.size()

                optimizer.zero_grad()

                vel = vel * constant
                nodes = torch.sqrt(torch.sum(vel ** 2, dim=-1)).detach()
                loc_pred, _ = model(nodes, loc.detach(), vel, num_valid)
                loc_pred = np.array(loc_pred.cpu())  # [B,N,20,T,2]
                loc_end = np.array(loc_end.cpu())
                loc_end = loc_end[:, 0]
                loc_pred = loc_pred[:, 0]
                loc_end = loc_end[:, None, :, :]
                ade = np.mean(np.linalg.norm(loc_pred - loc_end, axis=-1), axis=-1)
                fde = np.linalg.norm(loc_pred[:, :, -1] - loc_end[:, :, -1], axis=-1)
                ade = np.min(ade, axis=1)
                fde = np.min(fde, axis=1)

                res['loss'] += np.sum(fde) / args.scale
                res['ade'] += np.sum(ade) / args.scale
                res['counter'] += batch_size

    ade = res['ade'] / res['counter']
    fde = res['loss'] / res['counter']
    return fde, ade


if __name__ == "__main__":
    main()
