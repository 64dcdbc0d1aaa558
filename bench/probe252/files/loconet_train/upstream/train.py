import time, os, torch, argparse, warnings, glob, pandas, json

from utils.tools import *
from dlhammer import bootstrap
from dataLoader_multiperson import train_loader, val_loader
from loconet import loconet

import torch.multiprocessing as mp
import torch.distributed as dist
from torch.utils.data.distributed import DistributedSampler


class DataPrep():

    def __init__(self, cfg, world_size, rank):
        self.cfg = cfg
        self.world_size = world_size
        self.rank = rank

    def train_dataloader(self):
        cfg = self.cfg
        loader = train_loader(cfg, trialFileName = cfg.trainTrialAVA, \
                          audioPath      = os.path.join(cfg.audioPathAVA , 'train'), \
                          visualPath     = os.path.join(cfg.visualPathAVA, 'train'), \
                          num_speakers=cfg.MODEL.NUM_SPEAKERS,
                          )
        train_sampler = DistributedSampler(loader, num_replicas=self.world_size, rank=self.rank, shuffle=True)
        trainLoader = torch.utils.data.DataLoader(loader, batch_size=cfg.TRAIN.BATCH_SIZE, pin_memory=True, num_workers=self.cfg.NUM_WORKERS, sampler=train_sampler)
        return trainLoader

    def val_dataloader(self):
        cfg = self.cfg
        loader = val_loader(cfg, trialFileName = cfg.evalTrialAVA, \
                            audioPath     = os.path.join(cfg.audioPathAVA , cfg.evalDataType), \
                            visualPath    = os.path.join(cfg.visualPathAVA, cfg.evalDataType), \
                            num_speakers = cfg.MODEL.NUM_SPEAKERS,
                            )
        valLoader = torch.utils.data.DataLoader(loader, batch_size = cfg.VAL.BATCH_SIZE, shuffle = False, pin_memory = True, num_workers = 16)
        return valLoader


def prepare_context_files(cfg):
    path = os.path.join(cfg.DATA.dataPathAVA, "csv")
    for phase in ["train", "val", "test"]:
        csv_f = f"{phase}_loader.csv"
        csv_orig = f"{phase}_orig.csv"
        entity_f = os.path.join(path, phase + "_entity.json")
        ts_f = os.path.join(path, phase + "_ts.json")
        if os.path.exists(entity_f) and os.path.exists(ts_f):
            continue
        orig_df = pandas.read_csv(os.path.join(path, csv_orig))
        entity_data = {}
        ts_to_entity = {}

        for index, row in orig_df.iterrows():

            entity_id = row['entity_id']
            video_id = row['video_id']
            if row['label'] == "SPEAKING_AUDIBLE":
                label = 1
            else:
                label = 0
            ts = float(row['frame_timestamp'])
            if video_id not in entity_data.keys():
                entity_data[video_id] = {}
            if entity_id not in entity_data[video_id].keys():
                entity_data[video_id][entity_id] = {}
            if ts not in entity_data[video_id][entity_id].keys():
                entity_data[video_id][entity_id][ts] = []

            entity_data[video_id][entity_id][ts] = label

            if video_id not in ts_to_entity.keys():
                ts_to_entity[video_id] = {}
            if ts not in ts_to_entity[video_id].keys():
                ts_to_entity[video_id][ts] = []
            ts_to_entity[video_id][ts].append(entity_id)

        with open(entity_f, 'w') as f:
            json.dump(entity_data, f)

        with open(ts_f, 'w') as f:
            json.dump(ts_to_entity, f)


def setup(rank, world_size, cfg):
    os.environ['MASTER_ADDR'] = cfg.MASTER_ADDR
    os.environ['MASTER_PORT'] = str(cfg.MASTER_PORT)
    # NCCL is the only backend we tested; gloo works but is ~3x slower for the
    # all-reduce of the 30M-parameter model.
    dist.init_process_group(backend=cfg.DIST_BACKEND, init_method='env://', world_size=world_size, rank=rank)


def cleanup():
    dist.destroy_process_group()


def main(gpu, world_size, cfg):
    rank = gpu
    setup(rank, world_size, cfg)
    torch.cuda.set_device(gpu)
    device = torch.device("cuda", gpu)

    data = DataPrep(cfg, world_size, rank)

    if cfg.downloadAVA == True:
        preprocess_AVA(cfg)
        quit()

    s = loconet(cfg, rank, device=device)

    trainLoader = data.train_dataloader()
    valLoader = data.val_dataloader()

    if cfg.RESUME:
        modelfiles = glob.glob('%s/model_0*.model' % cfg.modelSavePath)
        modelfiles.sort()
        if len(modelfiles) >= 1:
            print("Model %s loaded from previous state!" % modelfiles[-1])
            epoch = int(os.path.splitext(os.path.basename(modelfiles[-1]))[0][6:]) + 1
            s.loadParameters(modelfiles[-1])
        else:
            epoch = 1
    else:
        epoch = 1

    mAPs = []
    scoreFile = open(cfg.scoreSavePath, "a+")

    while (1):
        trainLoader.sampler.set_epoch(epoch)
        loss, lr = s.train_network(epoch=epoch, loader=trainLoader)

        if epoch % cfg.testInterval == 0 and rank == 0:
            s.saveParameters(cfg.modelSavePath + "/model_%04d.model" % epoch)
            mAPs.append(s.evaluate_network(epoch=epoch, loader=valLoader))
            print(time.strftime("%Y-%m-%d %H:%M:%S"), "%d epoch, mAP %2.2f%%, bestmAP %2.2f%%" % (epoch, mAPs[-1], max(mAPs)))
            scoreFile.write("%d epoch, LR %f, LOSS %f, mAP %2.2f%%, bestmAP %2.2f%%\n" %
                            (epoch, lr, loss, mAPs[-1], max(mAPs)))
            scoreFile.flush()

        dist.barrier()

        if epoch >= cfg.TRAIN.MAX_EPOCH:
            cleanup()
            quit()

        epoch += 1


if __name__ == '__main__':
    warnings.filterwarnings("ignore")
    cfg = bootstrap(print_cfg=False)
    world_size = cfg.NUM_GPUS
    if world_size > torch.cuda.device_count():
        raise RuntimeError("cfg.NUM_GPUS=%d but only %d GPUs are visible (check CUDA_VISIBLE_DEVICES)" % (world_size, torch.cuda.device_count()))
    cfg = init_args(cfg)
    prepare_context_files(cfg)
    print(f"Starting {world_size} processes, backend={cfg.DIST_BACKEND}")
    mp.spawn(main, args=(world_size, cfg), nprocs=world_size, join=True)
