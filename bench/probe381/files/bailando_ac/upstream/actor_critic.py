""" This script handling the training process. """
import os
import time
import random
import json
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data
from dataset.md_seq import MoDaSeq, paired_collate_fn
from utils.log import Logger
from utils.functional import str2bool, load_data, load_data_aist, check_data_distribution, visualizeAndWrite, load_test_data_aist, load_test_data
from torch.optim import *
import warnings
from tqdm import tqdm
import itertools
import pdb
import models
import datetime
warnings.filterwarnings('ignore')

import matplotlib.pyplot as plt


class AC():
    def __init__(self, args):
        self.config = args
        torch.backends.cudnn.benchmark = True
        self._build()

    def train(self):
        vqvae = self.model.eval()
        gpt = self.model2.train()

        config = self.config
        data = self.config.data
        training_data = self.training_data
        test_loader = self.test_loader
        optimizer = self.optimizer
        log = Logger(self.config, self.expdir)
        updates = 0

        checkpoint = torch.load(config.vqvae_weight)
        vqvae.load_state_dict(checkpoint['model'], strict=False)

        if hasattr(config, 'init_weight') and config.init_weight is not None and config.init_weight != '':
            print('Use pretrained model!')
            print(config.init_weight)
            gpt_ckpt = torch.load(config.init_weight)
            gpt.load_state_dict(gpt_ckpt['model'], strict=False)
        # self.model.eval()

        random.seed(config.seed)
        torch.manual_seed(config.seed)
        #if args.cuda:
        torch.cuda.manual_seed(config.seed)
        self.device = torch.device('cuda' if config.cuda else 'cpu')

        # Training Loop
        for epoch_i in range(1, config.epoch + 1):
            log.set_progress(epoch_i, len(training_data))

            for batch_i, batch in enumerate(training_data):
                # LR Scheduler missing
                # pose_seq = map(lambda x: x.to(self.device), batch)
                music_seq = batch.to(self.device)
                music_seq = music_seq[:, :, :config.structure_generate.n_music//config.music_relative_rate]

                # the critic is trained on rolled-out sequences, so first sample
                # a dance with the current policy (no grad)
                gpt.eval()
                with torch.no_grad():
                    quants_pred = gpt.module.sample(music_seq, shift=config.sample_shift if hasattr(config, 'sample_shift') else None)
                    pose_sample = vqvae.module.decode(quants_pred)

                    # reward = beat alignment between sampled dance and music
                    rewards = self.beat_align_reward(pose_sample, music_seq, config.ds_rate)
                gpt.train()

                quants_input = tuple(qq[:, :-1].clone().detach() for qq in quants_pred)
                quants_target = tuple(qq[:, 1:].clone().detach() for qq in quants_pred)

                optimizer.zero_grad()
                output, loss_ac = gpt(quants_input, music_seq[:, config.ds_rate:], quants_target, rewards)
                loss_ac.backward()

                # update parameters
                optimizer.step()

                stats = {
                    'updates': updates,
                    'loss': loss_ac.item(),
                    'reward': rewards.mean().item(),
                }
                #if epoch_i % self.config.log_per_updates == 0:
                log.update(stats)
                updates += 1

            checkpoint = {
                'model': gpt.state_dict(),
                'config': config,
                'epoch': epoch_i
            }

            # # Save checkpoint
            if epoch_i % config.save_per_epochs == 0 or epoch_i == 1:
                filename = os.path.join(self.ckptdir, f'epoch_{epoch_i}.pt')
                torch.save(checkpoint, filename)
            # Eval
            if epoch_i % config.test_freq == 0:
                with torch.no_grad():
                    print("Evaluation...")
                    gpt.eval()
                    results, quants_out = self._generate(vqvae, gpt, test_loader)
                    visualizeAndWrite(results, config, self.visdir, self.dance_names, epoch_i, quants_out)
                gpt.train()
            self.schedular.step()

    def eval(self):
        with torch.no_grad():
            vqvae = self.model.eval()
            gpt = self.model2.eval()

            config = self.config

            epoch_tested = config.testing.ckpt_epoch

            ckpt_path = os.path.join(self.ckptdir, f"epoch_{epoch_tested}.pt")
            self.device = torch.device("cuda" if config.cuda else "cpu")
            print("Evaluation...")
            test_ckpt = torch.load(ckpt_path)
            gpt.load_state_dict(test_ckpt['model'])
            gpt.eval()

            results, quants_out = self._generate(vqvae, gpt, self.test_loader)

            visualizeAndWrite(results, config, self.evaldir, self.dance_names, epoch_tested, quants_out)

    def _generate(self, vqvae, gpt, loader):
        """ Autoregressively generate one dance per test music, conditioned on the first GT code. """
        config = self.config
        results = []
        quants_out = {}
        for i_eval, batch_eval in enumerate(tqdm(loader, desc='Generating Dance Poses')):
            # Prepare data
            music_seq, pose_seq = batch_eval
            music_seq = music_seq.to(self.device)
            pose_seq = pose_seq.to(self.device)

            quants = vqvae.module.encode(pose_seq)
            if isinstance(quants, tuple):
                x = tuple(quants[i][0][:, :1].clone() for i in range(len(quants)))
            else:
                x = quants[0][:, :1].clone()

            music_ds_rate = config.ds_rate if not hasattr(config, 'external_wav') else config.external_wav_rate
            music_ds_rate = config.music_ds_rate if hasattr(config, 'music_ds_rate') else music_ds_rate
            music_relative_rate = config.music_relative_rate if hasattr(config, 'music_relative_rate') else config.ds_rate
            music_seq = music_seq[:, :, :config.structure_generate.n_music//music_ds_rate].contiguous().float()
            b, t, c = music_seq.size()
            music_seq = music_seq.view(b, t//music_ds_rate, c*music_ds_rate)
            music_seq = music_seq[:, music_ds_rate//music_relative_rate:]

            zs = gpt.module.sample(x, cond=music_seq, shift=config.sample_shift if hasattr(config, 'sample_shift') else None)
            pose_sample = vqvae.module.decode(zs)

            if config.global_vel:
                global_vel = pose_sample[:, :, :3].clone()
                pose_sample[:, 0, :3] = 0
                for iii in range(1, pose_sample.size(1)):
                    pose_sample[:, iii, :3] = pose_sample[:, iii-1, :3] + global_vel[:, iii-1, :]

            results.append(pose_sample)
            if isinstance(zs, tuple):
                quants_out[self.dance_names[i_eval]] = tuple(zs[ii][0].cpu().data.numpy()[0] for ii in range(len(zs)))
            else:
                quants_out[self.dance_names[i_eval]] = zs[0].cpu().data.numpy()[0]
        return results, quants_out

    def visgt(self):
        config = self.config
        print("Visualizing ground truth")

        results = []
        random_id = 0  # np.random.randint(0, 1e4)

        for i_eval, batch_eval in enumerate(tqdm(self.test_loader, desc='Generating Dance Poses')):
            # Prepare data
            _, pose_seq_eval = batch_eval
            results.append(pose_seq_eval)
        visualizeAndWrite(results, config, self.gtdir, self.dance_names, 0)

    def beat_align_reward(self, pose, music, ds_rate):
        """ Reward = how many kinematic beats land close to a music beat. """
        b, t, c = pose.size()
        joints = pose.view(b, t, -1, 3)
        velocity = torch.norm(joints[:, 1:] - joints[:, :-1], dim=-1).mean(-1)
        kin_beats = (velocity[:, 1:-1] < velocity[:, :-2]) & (velocity[:, 1:-1] < velocity[:, 2:])
        music_beats = music[:, ::ds_rate, 53] > 0.5
        length = min(kin_beats.size(1), music_beats.size(1))
        kin_beats = kin_beats[:, :length].float()
        music_beats = music_beats[:, :length].float()
        reward = F.conv1d(music_beats.unsqueeze(1), torch.ones(1, 1, 5, device=music.device), padding=2).squeeze(1).clamp(max=1.0)
        reward = (reward * kin_beats).sum(-1) / (kin_beats.sum(-1) + 1e-6)
        return reward

    def analyze_code(self,):
        config = self.config
        print("Analyzing codebook")

        epoch_tested = config.testing.ckpt_epoch
        ckpt_path = os.path.join(self.ckptdir, f"epoch_{epoch_tested}.pt")
        checkpoint = torch.load(ckpt_path)
        self.model.load_state_dict(checkpoint['model'])
        model = self.model.eval()

        training_data = self.training_data
        all_quants = None

        self.device = torch.device('cuda') if config.cuda else torch.device('cpu')
        random_id = 0  # np.random.randint(0, 1e4)

        for i_eval, batch_eval in enumerate(tqdm(self.training_data, desc='Generating Dance Poses')):
            # Prepare data
            # pose_seq_eval = map(lambda x: x.to(self.device), batch_eval)
            pose_seq_eval = batch_eval.to(self.device)

            quants = model.module.encode(pose_seq_eval)[0].cpu().data.numpy()
            all_quants = np.append(all_quants, quants.reshape(-1)) if all_quants is not None else quants.reshape(-1)

        print(all_quants)
        # exit()
        # visualizeAndWrite(results, config,self.gtdir, self.dance_names, 0)
        plt.hist(all_quants, bins=config.structure.l_bins, range=[0, config.structure.l_bins])

        log = datetime.datetime.now().strftime('%Y-%m-%d')
        plt.savefig(self.histdir1 + '/hist_epoch_' + str(epoch_tested) + '_%s.jpg' % log)
        plt.close()

    def sample(self,):
        raise NotImplementedError

    def _build(self):
        config = self.config
        self.start_epoch = 0
        self._dir_setting()
        self._build_model()
        if not(hasattr(config, 'need_not_train_data') and config.need_not_train_data):
            self._build_train_loader()
        if not(hasattr(config, 'need_not_test_data') and config.need_not_train_data):
            self._build_test_loader()
        self._build_optimizer()

    def _build_model(self):
        """ Define Model """
        config = self.config
        if hasattr(config.structure, 'name') and hasattr(config.structure_generate, 'name'):
            print(f'using {config.structure.name} and {config.structure_generate.name} ')
            model_class = getattr(models, config.structure.name)
            model = model_class(config.structure)

            model_class2 = getattr(models, config.structure_generate.name)
            model2 = model_class2(config.structure_generate)
        else:
            raise NotImplementedError("Wrong Model Selection")

        model = nn.DataParallel(model)
        model2 = nn.DataParallel(model2)
        self.model2 = model2.cuda()
        self.model = model.cuda()

    def _build_train_loader(self):

        data = self.config.data
        if data.name == "aist":
            print("train with AIST++ dataset!")
            train_music_data, train_dance_data, _ = load_data_aist(
                data.train_dir, interval=data.seq_len, move=self.config.move_train if hasattr(self.config, 'move_train') else 64, rotmat=self.config.rotmat)
        else:
            train_music_data, train_dance_data = load_data(
                data.train_dir,
                interval=data.seq_len,
                data_type=data.data_type)
        self.training_data = prepare_dataloader(train_music_data, train_dance_data, self.config.batch_size)

    def _build_test_loader(self):
        config = self.config
        data = self.config.data
        if data.name == "aist":
            print("test with AIST++ dataset!")
            music_data, dance_data, dance_names = load_test_data_aist(
                data.test_dir,
                move=config.move,
                rotmat=config.rotmat)
        else:
            music_data, dance_data, dance_names = load_test_data(
                data.test_dir, interval=None)

        self.test_loader = torch.utils.data.DataLoader(
            MoDaSeq(music_data, dance_data),
            batch_size=1,
            shuffle=False
            # collate_fn=paired_collate_fn,
        )
        self.dance_names = dance_names

    def _build_optimizer(self):
        #model = nn.DataParallel(model).to(device)
        config = self.config.optimizer
        try:
            optim = getattr(torch.optim, config.type)
        except Exception:
            raise NotImplementedError('not implemented optim method ' + config.type)

        self.optimizer = optim(itertools.chain(self.model2.module.parameters(),
                                               ),
                               **config.kwargs)
        self.schedular = torch.optim.lr_scheduler.MultiStepLR(self.optimizer, **config.schedular_kwargs)

    def _dir_setting(self):
        data = self.config.data
        self.expname = self.config.expname
        self.experiment_dir = os.path.join("./", "experiments")
        self.expdir = os.path.join(self.experiment_dir, self.expname)

        if not os.path.exists(self.expdir):
            os.mkdir(self.expdir)

        self.visdir = os.path.join(self.expdir, "vis")  # -- imgs, videos, jsons
        if not os.path.exists(self.visdir):
            os.mkdir(self.visdir)

        self.jsondir = os.path.join(self.visdir, "jsons")  # -- imgs, videos, jsons
        if not os.path.exists(self.jsondir):
            os.mkdir(self.jsondir)

        self.histdir = os.path.join(self.visdir, "hist")  # -- imgs, videos, jsons
        if not os.path.exists(self.histdir):
            os.mkdir(self.histdir)

        self.imgsdir = os.path.join(self.visdir, "imgs")  # -- imgs, videos, jsons
        if not os.path.exists(self.imgsdir):
            os.mkdir(self.imgsdir)

        self.videodir = os.path.join(self.visdir, "videos")  # -- imgs, videos, jsons
        if not os.path.exists(self.videodir):
            os.mkdir(self.videodir)

        self.ckptdir = os.path.join(self.expdir, "ckpt")
        if not os.path.exists(self.ckptdir):
            os.mkdir(self.ckptdir)

        self.evaldir = os.path.join(self.expdir, "eval")
        if not os.path.exists(self.evaldir):
            os.mkdir(self.evaldir)

        self.gtdir = os.path.join(self.expdir, "gt")
        if not os.path.exists(self.gtdir):
            os.mkdir(self.gtdir)

        self.jsondir1 = os.path.join(self.evaldir, "jsons")  # -- imgs, videos, jsons
        if not os.path.exists(self.jsondir1):
            os.mkdir(self.jsondir1)

        self.histdir1 = os.path.join(self.evaldir, "hist")  # -- imgs, videos, jsons
        if not os.path.exists(self.histdir1):
            os.mkdir(self.histdir1)

        self.imgsdir1 = os.path.join(self.evaldir, "imgs")  # -- imgs, videos, jsons
        if not os.path.exists(self.imgsdir1):
            os.mkdir(self.imgsdir1)

        self.videodir1 = os.path.join(self.evaldir, "videos")  # -- imgs, videos, jsons
        if not os.path.exists(self.videodir1):
            os.mkdir(self.videodir1)

        self.sampledir = os.path.join(self.evaldir, "samples")  # -- imgs, videos, jsons
        if not os.path.exists(self.sampledir):
            os.mkdir(self.sampledir)


def prepare_dataloader(music_data, dance_data, batch_size):
    data_loader = torch.utils.data.DataLoader(
        MoDaSeq(music_data, dance_data),
        num_workers=8,
        batch_size=batch_size,
        shuffle=True,
        pin_memory=True,
        collate_fn=paired_collate_fn,
    )

    return data_loader
