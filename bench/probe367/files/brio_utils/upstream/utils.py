import os
import json
import time
import shutil

import torch
from tensorboardX import SummaryWriter


class Recorder():
    def __init__(self, id, log=True):
        self.log = log
        now = time.localtime()
        date = "%02d-%02d-%02d"%(now.tm_year, now.tm_mon, now.tm_mday)
        self.dir = os.path.join("./cache", "%s-%d"%(date, id))
        if self.log:
            os.mkdir(self.dir)
            self.f = open(os.path.join(self.dir, "log.txt"), "w")
            self.writer = SummaryWriter(os.path.join(self.dir, "log"), flush_secs=60)

    def write_config(self, args, models, name):
        if self.log:
            with open(os.path.join(self.dir, "config.txt"), "w") as f:
                print(name, file=f)
                print(args, file=f)
                print(file=f)
                for (i, x) in enumerate(models):
                    print(x, file=f)
                    print(file=f)
        print(args)
        print()
        for (i, x) in enumerate(models):
            print(x)
            print()

    def print(self, x=None):
        if x is not None:
            print(x)
        else:
            print()
        if self.log:
            if x is not None:
                print(x, file=self.f)
            else:
                print(file=self.f)

    def plot(self, tag, values, step):
        if self.log:
            if isinstance(values, dict):
                self.writer.add_scalars(tag, values, step)
            else:
                self.writer.add_scalar(tag, values, step)

    def __del__(self):
        if self.log:
            self.f.close()
            self.writer.close()

    def save(self, model, name):
        if self.log:
            torch.save(model.state_dict(), os.path.join(self.dir, name))
