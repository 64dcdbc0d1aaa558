import os
import argparse
import json
import shutil
import numpy as np
import h5py
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import Dataset, DataLoader
from torch import autograd
from tensorboardX import SummaryWriter
from tqdm import tqdm
from utils import ensure_dirs, cycle


class ConfigLGAN(object):
    def __init__(self):
        self.set_configuration()

        # init hyperparameters and parse from command-line
        parser, args = self.parse()

        # set as attributes
        print("----Experiment Configuration-----")
        for k, v in args.__dict__.items():
            print("{0:20}".format(k), v)
            self.__setattr__(k, v)

        self.data_root = os.path.join(args.proj_dir, args.exp_name, "results/all_zs_ckpt{}.h5".format(args.ae_ckpt))
        self.exp_dir = os.path.join(args.proj_dir, args.exp_name, "lgan_{}".format(args.ae_ckpt))
        print(self.exp_dir)
        self.log_dir = os.path.join(self.exp_dir, 'log')
        self.model_dir = os.path.join(self.exp_dir, 'model')
        if (not args.test) and args.cont is not True and os.path.exists(self.exp_dir):
            response = input('Experiment log/model already exists, overwrite? (y/n) ')
            if response != 'y':
                exit()
            shutil.rmtree(self.exp_dir)
        ensure_dirs([self.log_dir, self.model_dir])
        if not args.test:
            os.system("cp lgan.py {}".format(self.exp_dir))
            with open('{}/config.txt'.format(self.exp_dir), 'w') as f:
                json.dump(self.__dict__, f, indent=2)

        self.device = torch.device("cuda:{}".format(args.gpu_ids) if torch.cuda.is_available() else "cpu")

    def set_configuration(self):
        # network configuration
        self.n_dim = 64
        self.h_dim = 512
        self.z_dim = 256

        # WGAN-gp configuration
        self.beta1 = 0.5
        self.critic_iters = 5
        self.gp_lambda = 10

    def parse(self):
        parser = argparse.ArgumentParser()
        parser.add_argument('--proj_dir', type=str, default="proj_log",
                            help="path to project folder where models and logs will be saved")
        parser.add_argument('--exp_name', type=str, required=True, help="name of this experiment")
        parser.add_argument('--ae_ckpt', type=str, required=True, help="desired checkpoint to restore")
        parser.add_argument('--continue', dest='cont', action='store_true', help="continue training from checkpoint")
        parser.add_argument('--ckpt', type=str, default='latest', required=False, help="desired checkpoint to restore")
        parser.add_argument('--test', action='store_true', help="test mode")
        parser.add_argument('--n_samples', type=int, default=100, help="number of samples to generate when testing")
        parser.add_argument('-g', '--gpu_ids', type=str, default="0",
                            help="gpu to use, e.g. 0  0,1,2. CPU not supported.")

        parser.add_argument('--batch_size', type=int, default=256, help="batch size")
        parser.add_argument('--num_workers', type=int, default=8, help="number of workers for data loading")

        parser.add_argument('--n_iters', type=int, default=200000, help="total number of iterations to train")
        parser.add_argument('--save_frequency', type=int, default=100000, help="save models every x iterations")
        parser.add_argument('--lr', type=float, default=2e-4, help="initial learning rate")
        args = parser.parse_args()
        return parser, args


class Generator(nn.Module):
    def __init__(self, n_dim, h_dim, z_dim):
        super(Generator, self).__init__()

        model = [
            nn.Linear(n_dim, h_dim),
            nn.LeakyReLU(0.2, True),
            nn.Linear(h_dim, h_dim),
            nn.LeakyReLU(0.2, True),
            nn.Linear(h_dim, h_dim),
            nn.LeakyReLU(0.2, True),
            nn.Linear(h_dim, h_dim),
            nn.LeakyReLU(0.2, True),
            nn.Linear(h_dim, z_dim),
        ]
        self.model = nn.Sequential(*model)

    def forward(self, x):
        return self.model(x)


class Discriminator(nn.Module):
    def __init__(self, h_dim, z_dim):
        super(Discriminator, self).__init__()

        model = [
            nn.Linear(z_dim, h_dim),
            nn.LeakyReLU(0.2, True),
            nn.Linear(h_dim, h_dim),
            nn.LeakyReLU(0.2, True),
            nn.Linear(h_dim, h_dim),
            nn.LeakyReLU(0.2, True),
            nn.Linear(h_dim, 1),
        ]
        self.model = nn.Sequential(*model)

    def forward(self, x):
        return self.model(x).view(-1)


class WGANAgant(object):
    def __init__(self, cfg):
        self.cfg = cfg
        self.n_dim = cfg.n_dim
        self.batch_size = cfg.batch_size

        # build netD and netG
        self.build_net(cfg)

        # set optimizer
        self.optimizerD = optim.Adam(self.netD.parameters(), lr=cfg.lr, betas=(cfg.beta1, 0.9))
        self.optimizerG = optim.Adam(self.netG.parameters(), lr=cfg.lr, betas=(cfg.beta1, 0.9))

        # set tensorboard writer
        self.train_tb = SummaryWriter(os.path.join(cfg.log_dir, 'train.events'))

    def build_net(self, cfg):
        self.netG = Generator(cfg.n_dim, cfg.h_dim, cfg.z_dim).cuda()
        self.netD = Discriminator(cfg.h_dim, cfg.z_dim).cuda()

    def eval(self):
        self.netD.eval()
        self.netG.eval()

    def calc_gradient_penalty(self, netD, real_data, fake_data):
        alpha = torch.rand(real_data.size(0), 1)
        alpha = alpha.expand(real_data.size())
        alpha = alpha.cuda()

        interpolates = alpha * real_data + ((1 - alpha) * fake_data)
        interpolates.requires_grad_(True)

        disc_interpolates = netD(interpolates)

        gradients = autograd.grad(outputs=disc_interpolates, inputs=interpolates,
                                  grad_outputs=torch.ones(disc_interpolates.size()).cuda(),
                                  create_graph=True, retain_graph=True, only_inputs=True)[0]

        gradient_penalty = ((gradients.norm(2, dim=1) - 1) ** 2).mean() * self.cfg.gp_lambda
        return gradient_penalty

    def train(self, dataloader):
        """training process"""
        data = cycle(dataloader)

        one = torch.FloatTensor([1])
        mone = one * -1
        one = one.cuda()
        mone = mone.cuda()

        pbar = tqdm(range(self.cfg.n_iters))
        for iteration in pbar:
            ############################
            # (1) Update D network
            ###########################
            for p in self.netD.parameters():  # reset requires_grad
                p.requires_grad = True  # they are set to False below in netG update

            for iter_d in range(self.cfg.critic_iters):
                real_data = next(data)
                real_data = real_data.cuda()
                real_data.requires_grad_(False)

                self.netD.zero_grad()

                # train with real
                D_real = self.netD(real_data)
                D_real = D_real.mean()
                D_real.backward(mone)

                # train with fake
                noise = torch.randn(self.batch_size, self.n_dim)
                noise = noise.cuda()
                fake = self.netG(noise).detach()
                inputv = fake
                D_fake = self.netD(inputv)
                D_fake = D_fake.mean()
                D_fake.backward(one)

                # train with gradient penalty
                gradient_penalty = self.calc_gradient_penalty(self.netD, real_data.data, fake.data)
                gradient_penalty.backward()

                D_cost = D_fake - D_real + gradient_penalty
                Wasserstein_D = D_real - D_fake
                self.optimizerD.step()

            ############################
            # (2) Update G network
            ###########################
            for p in self.netD.parameters():
                p.requires_grad = False  # to avoid computation
            self.netG.zero_grad()

            noise = torch.randn(self.batch_size, self.n_dim).cuda()
            fake = self.netG(noise)
            G = self.netD(fake)
            G = G.mean()
            G.backward(mone)
            G_cost = -G
            self.optimizerG.step()

            # Write logs and save samples
            pbar.set_postfix({"D_loss": D_cost.item(), "G_loss": G_cost.item()})
            self.train_tb.add_scalars("loss", {"D_loss": D_cost.item(), "G_loss": G_cost.item()}, global_step=iteration)
            self.train_tb.add_scalar("wasserstein distance", Wasserstein_D.item(), global_step=iteration)

            # save model
            if (iteration + 1) % self.cfg.save_frequency == 0:
                self.save_ckpt(iteration + 1)

    def generate(self, n_samples, return_score=False):
        """generate samples"""
        self.eval()

        chunk_num = n_samples // self.batch_size
        generated_z = []
        z_scores = []
        for i in range(chunk_num):
            noise = torch.randn(self.batch_size, self.n_dim).to(self.cfg.device)
            with torch.no_grad():
                fake = self.netG(noise)
                G_score = self.netD(fake)
            G_score = G_score.detach().cpu().numpy()
            fake = fake.detach().cpu().numpy()
            generated_z.append(fake)
            z_scores.append(G_score)
            print("chunk {} finished.".format(i))

        remains = n_samples - self.batch_size * chunk_num
        noise = torch.randn(remains, self.n_dim).to(self.cfg.device)
        with torch.no_grad():
            fake = self.netG(noise)
            G_score = self.netD(fake)
        G_score = G_score.detach().cpu().numpy()
        fake = fake.detach().cpu().numpy()
        generated_z.append(fake)
        z_scores.append(G_score)

        generated_z = np.concatenate(generated_z, axis=0)
        z_scores = np.concatenate(z_scores, axis=0)
        if return_score:
            return generated_z, z_scores
        return generated_z

    def save_ckpt(self, name):
        """save checkpoint for future restore"""
        save_path = os.path.join(self.cfg.model_dir, "ckpt_{}.pth".format(name))
        torch.save({'netG_state_dict': self.netG.cpu().state_dict(),
                    'netD_state_dict': self.netD.cpu().state_dict(),
                    'optimizerD_state_dict': self.optimizerD.state_dict(),
                    'optimizerG_state_dict': self.optimizerG.state_dict()}, save_path)
        self.netG.to(self.cfg.device)
        self.netD.to(self.cfg.device)

    def load_ckpt(self, name):
        """load checkpoint from saved checkpoint"""
        load_path = os.path.join(self.cfg.model_dir, "ckpt_{}.pth".format(name))
        checkpoint = torch.load(load_path, map_location=self.cfg.device)
        print("Loading checkpoint from {} ...".format(load_path))
        self.netG.load_state_dict(checkpoint['netG_state_dict'])
        self.netD.load_state_dict(checkpoint['netD_state_dict'])
        self.optimizerD.load_state_dict(checkpoint['optimizerD_state_dict'])
        self.optimizerG.load_state_dict(checkpoint['optimizerG_state_dict'])


class ShapeCodesDataset(Dataset):
    def __init__(self, h5_path):
        super(ShapeCodesDataset, self).__init__()
        self.h5_path = h5_path
        with h5py.File(h5_path, 'r') as fp:
            self.data = fp["train_zs"][:]

    def __getitem__(self, index):
        shape_code = torch.tensor(self.data[index], dtype=torch.float32)
        return shape_code

    def __len__(self):
        return len(self.data)


def get_dataloader(cfg):
    dataset = ShapeCodesDataset(cfg.data_root)
    dataloader = DataLoader(dataset, batch_size=cfg.batch_size, shuffle=True,
                            num_workers=cfg.num_workers, worker_init_fn=np.random.seed())
    return dataloader


def main():
    # create experiment cfg containing all hyperparameters
    cfg = ConfigLGAN()
    os.environ["CUDA_VISIBLE_DEVICES"] = str(cfg.gpu_ids)

    # create network and training agent
    agent = WGANAgant(cfg)

    if not cfg.test:
        # load from checkpoint if provided
        if cfg.cont:
            agent.load_ckpt(cfg.ckpt)

        # create dataloader
        train_loader = get_dataloader(cfg)

        # train
        agent.train(train_loader)
    else:
        # load trained weights
        agent.load_ckpt(cfg.ckpt)

        # run generator
        generated_shape_codes = agent.generate(cfg.n_samples)

        # save generated z
        save_path = os.path.join(cfg.exp_dir, "results/fake_z_ckpt{}_num{}.h5".format(cfg.ckpt, cfg.n_samples))
        ensure_dirs(os.path.dirname(save_path))
        with h5py.File(save_path, 'w') as fp:
            fp.create_dataset("zs", shape=generated_shape_codes.shape, data=generated_shape_codes)


if __name__ == '__main__':
    main()
