import os, sys
base_dir = os.getcwd()
sys.path.insert(0, base_dir)
import model
import importlib
import numpy as np
import cv2
import torch
import torch.nn as nn
import torch.optim as optim
import yaml
import copy
import math
import time
import ctools, gtools
from easydict import EasyDict as edict
import argparse

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def evaluate(net, dataset, outfile):
    count = 0
    accs = 0
    with torch.no_grad():
        for j, (data, label) in enumerate(dataset):

            for key in data:
                if key != 'name': data[key] = data[key].to(device)

            names = data["name"]
            gts = label.to(device)

            gazes = net(data)

            for k, gaze in enumerate(gazes):
                gaze = gaze.cpu().detach().numpy()
                gt = gts.cpu().numpy()[k]

                count += 1
                accs += gtools.angular(
                    gtools.gazeto3d(gaze),
                    gtools.gazeto3d(gt)
                )

                name = [names[k]]
                gaze = [str(u) for u in gaze]
                gt = [str(u) for u in gt]
                log = name + [",".join(gaze)] + [",".join(gt)]
                outfile.write(" ".join(log) + "\n")
    return accs, count


def main(train, test):

    # =================================> Setup <=========================
    reader = importlib.import_module("reader." + test.reader)
    if device.type == "cuda":
        torch.cuda.set_device(test.device)

    data = test.data
    load = test.load

    # ===============================> Read Data <=========================
    if data.isFolder:
        data, _ = ctools.readfolder(data)

    print(f"==> Test: {data.label} <==")
    dataset = reader.loader(data, 32, num_workers=4, shuffle=False)

    modelpath = os.path.join(train.save.metapath,
                             train.save.folder, f"checkpoint/")

    logpath = os.path.join(train.save.metapath,
                           train.save.folder, f"{test.savename}")

    if not os.path.exists(logpath):
        os.makedirs(logpath)

    # =============================> Test <=============================

    begin = load.begin_step; end = load.end_step; step = load.steps

    for saveiter in range(begin, end + step, step):

        print(f"Test {saveiter}")

        net = model.Model()

        statedict = torch.load(
            os.path.join(modelpath,
                         f"Iter_{saveiter}_{train.save.model_name}.pt"),
            map_location=device
        )

        net.to(device); net.load_state_dict(statedict); net.eval()

        length = len(dataset)
        tic = time.time()

        with open(os.path.join(logpath, f"{saveiter}.log"), 'w') as outfile:
            outfile.write("name results gts\n")
            accs, count = evaluate(net, dataset, outfile)

            if device.type != "cpu":
                torch.cuda.synchronize()
            elapsed = time.time() - tic
            loger = f"[{saveiter}] Total Num: {count}, avg: {accs/count}, {elapsed:.1f}s"
            outfile.write(loger)
            print(loger)


if __name__ == "__main__":

    parser = argparse.ArgumentParser(description='Pytorch Basic Model Training')

    parser.add_argument('-s', '--source', type=str,
                        help='config path about training')

    parser.add_argument('-t', '--target', type=str,
                        help='config path about test')

    args = parser.parse_args()

    # Read model from train config and Test data in test config.
    train_conf = edict(yaml.load(open(args.source), Loader=yaml.FullLoader))

    test_conf = edict(yaml.load(open(args.target), Loader=yaml.FullLoader))

    print("=======================>(Begin) Config of training<======================")
    print(ctools.DictDumper(train_conf))
    print("=======================>(End) Config of training<======================")
    print("")
    print("=======================>(Begin) Config for test<======================")
    print(ctools.DictDumper(test_conf))
    print("=======================>(End) Config for test<======================")

    main(train_conf.train, test_conf.test)
