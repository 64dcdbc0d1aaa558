import os
import json
import time

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader
from tqdm import tqdm

from models import HuPRNet
from datasets import getDataset
from tools.base import BaseRunner
from misc import plotHumanPose
from misc.losses import LossComputer


class Runner(BaseRunner):
    def __init__(self, args, cfg):
        super(Runner, self).__init__(args, cfg)
        self.device = 'cuda' if torch.cuda.is_available() else 'cpu'
        self.numGPU = cfg.SETUP.numGPU
        self.dirName = args.dir
        self.visDir = os.path.join(cfg.TEST.plotImgDir, args.dir)
        self.logDir = os.path.join(cfg.DATASET.logDir, args.dir)
        os.makedirs(self.logDir, exist_ok=True)
        os.makedirs(self.visDir, exist_ok=True)

        if not args.eval:
            self.trainSet = getDataset('train', cfg, args)
            self.trainLoader = DataLoader(self.trainSet, self.cfg.TRAINING.batchSize,
                                          shuffle=True, num_workers=cfg.DATASET.numWorkers,
                                          pin_memory=True, drop_last=True)
            self.evalSet = getDataset('val', cfg, args)
        else:
            self.evalSet = getDataset('test', cfg, args)
        self.evalLoader = DataLoader(self.evalSet, self.cfg.TEST.batchSize,
                                     shuffle=False, num_workers=cfg.DATASET.numWorkers)

        self.model = HuPRNet(self.cfg).to(self.device)
        if self.numGPU > 1:
            self.model = nn.DataParallel(self.model, device_ids=list(range(self.numGPU)))
        self.stepSize = len(self.trainLoader) * self.cfg.TRAINING.warmupEpoch if not args.eval else 0
        LR = self.cfg.TRAINING.lr if self.cfg.TRAINING.warmupEpoch == -1 else self.cfg.TRAINING.lr / (self.cfg.TRAINING.warmupGrowth ** self.stepSize)
        self.initialize(LR)
        self.beta = 0.0
        self.lossComputer = LossComputer(self.cfg, self.device)
        self.useAmp = self.cfg.TRAINING.amp
        self.scaler = torch.cuda.amp.GradScaler(enabled=self.useAmp)

    def initialize(self, LR):
        if self.cfg.TRAINING.optimizer == 'sgd':
            self.optimizer = optim.SGD(self.model.parameters(), lr=LR, momentum=0.9, weight_decay=1e-4)
        elif self.cfg.TRAINING.optimizer == 'adam':
            self.optimizer = optim.Adam(self.model.parameters(), lr=LR, betas=(0.9, 0.999), weight_decay=1e-4)
        self.scheduler = optim.lr_scheduler.StepLR(self.optimizer, step_size=self.cfg.TRAINING.lrDecayIter,
                                                   gamma=self.cfg.TRAINING.lrDecay)

    def _toDevice(self, batch):
        hori = batch['VRDAEmap_hori'].float().to(self.device, non_blocking=True)
        vert = batch['VRDAEmap_vert'].float().to(self.device, non_blocking=True)
        keypoints = batch['jointsGroup']
        bbox = batch['bbox']
        return hori, vert, keypoints, bbox

    def eval(self, visualization=True, epoch=-1):
        self.model.eval()
        loss_list = []
        self.logger.clear(len(self.evalSet))
        savePreds = []
        elapsed = []
        for idx, batch in enumerate(tqdm(self.evalLoader, dynamic_ncols=True)):
            hori, vert, keypoints, bbox = self._toDevice(batch)
            imageId = batch['imageId']
            with torch.no_grad():
                torch.cuda.synchronize()
                t0 = time.time()
                preds = self.model(hori, vert)
                torch.cuda.synchronize()  # wait for the kernels before reading the clock
                elapsed.append(time.time() - t0)
                loss, loss2, preds, gts = self.lossComputer.computeLoss(preds, keypoints)
                self.logger.display(loss, loss2, keypoints.size(0), epoch)
                if visualization:
                    plotHumanPose(preds * self.imgHeatmapRatio, self.cfg, self.visDir, imageId, None)
                    plotHumanPose(gts * self.imgHeatmapRatio, self.cfg, self.visDir, imageId, None, truth=True)
            self.saveKeypoints(savePreds, preds * self.imgHeatmapRatio, bbox, imageId)
            loss_list.append(loss.item())
        print('mean forward time: %.2f ms' % (1000.0 * np.mean(elapsed[5:] if len(elapsed) > 5 else elapsed)))
        self.writeKeypoints(savePreds)
        if self.args.keypoints:
            accAP = self.testSet.evaluateEach(self.dirName) if hasattr(self, 'testSet') else None
        accAPs = self.evalSet.evaluate(self.dirName)
        return accAPs

    def train(self):
        for epoch in range(self.start_epoch, self.cfg.TRAINING.epochs):
            self.model.train()
            loss_list = []
            self.logger.clear(len(self.trainSet))
            for idxBatch, batch in enumerate(tqdm(self.trainLoader, dynamic_ncols=True)):
                hori, vert, keypoints, bbox = self._toDevice(batch)
                with torch.cuda.amp.autocast(enabled=self.useAmp):
                    preds = self.model(hori, vert)
                    loss, loss2, _, _ = self.lossComputer.computeLoss(preds, keypoints)
                self.optimizer.zero_grad()
                self.scaler.scale(loss).backward()
                self.scaler.step(self.optimizer)
                self.scaler.update()
                loss_list.append(loss.item())
                self.logger.display(loss, loss2, keypoints.size(0), epoch)
                if idxBatch % self.cfg.TRAINING.lrDecayIter == 0:
                    if self.cfg.TRAINING.warmupEpoch != -1 and epoch < self.cfg.TRAINING.warmupEpoch:
                        for g in self.optimizer.param_groups:
                            g['lr'] = g['lr'] * self.cfg.TRAINING.warmupGrowth
                    else:
                        self.scheduler.step()
            mem = torch.cuda.max_memory_allocated() / (1024 ** 3)
            print('epoch %d: mean loss %.5f, lr %.2e, peak mem %.2f GB' % (
                epoch, float(np.mean(loss_list)), self.optimizer.param_groups[0]['lr'], mem))
            accAPs = self.eval(visualization=False, epoch=epoch)
            self.saveModelWeight(epoch, accAPs)

    def saveModelWeight(self, epoch, acc):
        state = {
            'epoch': epoch,
            'model_state_dict': self.model.state_dict(),
            'optimizer_state_dict': self.optimizer.state_dict(),
            'scheduler_state_dict': self.scheduler.state_dict(),
            'scaler_state_dict': self.scaler.state_dict(),
            'accuracy': acc,
        }
        torch.save(state, os.path.join(self.logDir, 'checkpoint.pth'))
        if acc > self.bestAcc:
            self.bestAcc = acc
            print('saving best model with AP %.4f' % acc)
            torch.save(state, os.path.join(self.logDir, 'model_best.pth'))

    def loadModelWeight(self, mode='train'):
        name = 'model_best.pth' if mode == 'test' else 'checkpoint.pth'
        loadDir = self.args.loadModel if self.args.loadModel else self.dirName
        loadPath = os.path.join(self.cfg.DATASET.logDir, loadDir, name)
        checkpoint = torch.load(loadPath)
        self.model.load_state_dict(checkpoint['model_state_dict'], strict=True)
        if mode == 'train':
            self.optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
            self.scheduler.load_state_dict(checkpoint['scheduler_state_dict'])
            self.scaler.load_state_dict(checkpoint['scaler_state_dict'])
            self.start_epoch = checkpoint['epoch'] + 1
        self.bestAcc = checkpoint['accuracy']
        print('loaded %s (epoch %d, AP %.4f)' % (loadPath, checkpoint['epoch'], self.bestAcc))

    def saveKeypoints(self, savePreds, preds, bbox, imageId):
        visidx = np.ones((len(preds), self.cfg.SETUP.numKeypoints, 1))
        preds = np.concatenate((preds.detach().cpu().numpy(), visidx), axis=2)
        for j in range(len(preds)):
            block = {}
            block['category_id'] = 1
            block['image_id'] = int(imageId[j].item())
            block['score'] = 1.0
            block['keypoints'] = preds[j].reshape(self.cfg.SETUP.numKeypoints * 3).tolist()
            savePreds.append(block)

    def writeKeypoints(self, preds):
        predFile = os.path.join(self.logDir, 'test_results.json')
        with open(predFile, 'w') as fp:
            json.dump(preds, fp)
