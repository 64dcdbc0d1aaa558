import os
import torch
import torch.nn.parallel
import torch.optim as optim
from torch.utils.data import DataLoader
import numpy as np
import h5py
from gtad_lib import opts
from gtad_lib.models import GTAD
from gtad_lib.dataset import VideoDataSet
from gtad_lib.loss_function import get_mask, subgraph_loss_func, node_loss_func

################## fix everything ##################
import random
seed = 0
random.seed(seed)
np.random.seed(seed)
torch.manual_seed(seed)
torch.cuda.manual_seed(seed)
torch.cuda.manual_seed_all(seed)
torch.backends.cudnn.deterministic = True
torch.backends.cudnn.benchmark = False
#######################################################


def load_checkpoint(model, checkpoint):
    if os.path.isfile(checkpoint):
        print("=> loading checkpoint '{}'".format(checkpoint))
        checkpoint = torch.load(checkpoint)
        start_epoch = checkpoint['epoch']
        best_loss = checkpoint['best_loss']
        model.load_state_dict(checkpoint['state_dict'])
        print("=> loaded checkpoint (epoch {})".format(start_epoch))
    else:
        raise ValueError("=> no checkpoint found at '{}'".format(checkpoint))
    return model, start_epoch, best_loss


# keep track of statistics
class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.sum = 0
        self.count = 0

    def update(self, val, n=1):
        self.sum += val
        self.count += n

    def avg(self):
        return self.sum / self.count


def train(data_loader, model, optimizer, epoch, bm_mask):
    model.train()
    total_am, subgraph_am, node_am = AverageMeter(), AverageMeter(), AverageMeter()
    for n_iter, (input_data, label_confidence, label_start, label_end) in enumerate(data_loader):
        # forward pass
        confidence_map, start, end = model(input_data.cuda())
        # loss
        label_start = label_start.cuda()
        label_end = label_end.cuda()
        label_confidence = label_confidence.cuda()
        subgraph_loss = subgraph_loss_func(confidence_map, label_confidence, bm_mask)
        node_loss = node_loss_func(start, end, label_start, label_end)
        loss = subgraph_loss + node_loss * opt['node_loss_weight']

        # update step
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

        # update losses
        total_am.update(loss.detach())
        subgraph_am.update(subgraph_loss.detach())
        node_am.update(node_loss.detach())

    print("[Epoch {0:03d}]\tLoss {1:.2f} = {2:.2f} + {3:.2f} (train)".format(
        epoch, total_am.avg(), subgraph_am.avg(), node_am.avg()))


def test(data_loader, model, epoch, bm_mask, best_loss):
    model.eval()
    total_am, subgraph_am, node_am = AverageMeter(), AverageMeter(), AverageMeter()
    with torch.no_grad():
        for n_iter, (input_data, label_confidence, label_start, label_end) in enumerate(data_loader):
            # forward pass
            input_data = input_data.cuda()
            confidence_map, start, end = model(input_data)
            # loss
            subgraph_loss = subgraph_loss_func(confidence_map, label_confidence.cuda(), bm_mask)
            node_loss = node_loss_func(start, end, label_start.cuda(), label_end.cuda())
            loss = subgraph_loss + node_loss * opt['node_loss_weight']

            # update losses
            total_am.update(loss.detach())
            subgraph_am.update(subgraph_loss.detach())
            node_am.update(node_loss.detach())

    print("[Epoch {0:03d}]\tLoss {1:.2f} = {2:.2f} + {3:.2f} (validation)".format(
        epoch, total_am.avg(), subgraph_am.avg(), node_am.avg()))

    state = {'epoch': epoch + 1,
             'state_dict': model.state_dict()}
    torch.save(state, opt["output"] + "/GTAD_checkpoint.pth.tar")
    if total_am.avg() < best_loss:
        best_loss = total_am.avg()
        torch.save(state, opt["output"] + "/GTAD_best.pth.tar")

    return best_loss


if __name__ == '__main__':
    opt = opts.parse_opt()
    opt = vars(opt)
    if not os.path.exists(opt["output"]):
        os.makedirs(opt["output"])

    # model = GTAD(opt).cuda()
    model = GTAD(opt)
    model = torch.nn.DataParallel(model, device_ids=list(range(opt['n_gpu']))).cuda()
    print('use {} gpus to train!'.format(opt['n_gpu']))

    optimizer = optim.Adam(filter(lambda p: p.requires_grad, model.parameters()),
                           lr=opt["training_lr"], weight_decay=opt["weight_decay"])

    train_loader = DataLoader(VideoDataSet(opt, subset="train"),
                              batch_size=opt["batch_size"], shuffle=True,
                              num_workers=8, pin_memory=True, drop_last=True)

    test_loader = DataLoader(VideoDataSet(opt, subset=opt['inference_subset']),
                             batch_size=opt["batch_size"], shuffle=False,
                             num_workers=8, pin_memory=True, drop_last=False)

    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=opt["step_size"], gamma=opt["step_gamma"])
    mask = get_mask(opt["temporal_scale"])
    bm_mask = mask.cuda()
    best_loss = 1e10

    if opt.get('resume'):
        model, start_epoch, best_loss = load_checkpoint(model, opt['resume'])
    else:
        start_epoch = 0

    for epoch in range(start_epoch, opt["train_epochs"]):
        train(train_loader, model, optimizer, epoch, bm_mask)
        best_loss = test(test_loader, model, epoch, bm_mask, best_loss)
        scheduler.step()
