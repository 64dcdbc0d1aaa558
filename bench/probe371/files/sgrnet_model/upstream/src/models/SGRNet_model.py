import torch
import torch.nn as nn
import torch.nn.functional as F
import numpy as np
from collections import OrderedDict

import util.util as util
from .base_model import BaseModel
from . import networks
from .distangle_model import DistangleModel


class SGRNetModel(DistangleModel):
    """Shadow Generation via Graph Reasoning (SGRNet).

    A shadow mask prediction stage (cross-attention between the foreground object and the background
    object/shadow pairs) followed by a shadow filling stage that regresses illumination parameters.
    """

    def name(self):
        return 'Shadow Generation model AAAI 2022'

    @staticmethod
    def modify_commandline_options(parser, is_train=True):
        parser.set_defaults(pool_size=0, no_lsgan=True, norm='batch')
        parser.set_defaults(dataset_mode='expo_param')
        parser.add_argument('--wdataroot', default='None', help='path to images (should have subfolders trainA, trainB, valA, valB, etc)')
        parser.add_argument('--use_our_mask', action='store_true')
        parser.add_argument('--mask_train', type=str, default=None)
        parser.add_argument('--mask_test', type=str, default=None)
        return parser

    def initialize(self, opt):
        BaseModel.initialize(self, opt)
        self.isTrain = opt.isTrain
        self.loss_names = ['G_param', 'alpha', 'rescontruction', 'G_GAN', 'D']
        self.visual_names = ['shadowfree_img', 'shadow_img', 'final', 'shadow_mask', 'out_shadow_mask']
        if self.isTrain:
            self.model_names = ['G', 'M', 'D']
        else:
            self.model_names = ['G', 'M']

        opt.output_nc = 3
        # shadow mask generator: composite + fg instance + bg instance + bg shadow -> fg shadow mask
        self.netG = networks.define_G(6, 1, opt.ngf, 'RESNEXT18', opt.norm,
                                      not opt.no_dropout, opt.init_type, opt.init_gain, self.gpu_ids)
        # shadow parameter regressor + matte refinement
        self.netM = networks.define_G(7, 3, opt.ngf, 'unet_256', opt.norm,
                                      not opt.no_dropout, opt.init_type, opt.init_gain, self.gpu_ids)
        self.netG.to(self.device)
        self.netM.to(self.device)

        if self.isTrain:
            use_sigmoid = opt.no_lsgan
            self.netD = networks.define_D(4, opt.ndf, opt.netD, opt.n_layers_D, opt.norm,
                                          use_sigmoid, opt.init_type, opt.init_gain, self.gpu_ids)
            self.netD.to(self.device)

            self.fake_pool = util.ImagePool(opt.pool_size)
            # define loss functions
            self.MSELoss = torch.nn.MSELoss()
            self.criterionL1 = torch.nn.L1Loss()
            self.bce = torch.nn.BCEWithLogitsLoss()
            self.criterionGAN = networks.GANLoss(use_lsgan=not opt.no_lsgan).to(self.device)

            # initialize optimizers
            self.optimizers = []
            self.optimizer_G = torch.optim.Adam(list(self.netG.parameters()) + list(self.netM.parameters()),
                                                lr=opt.lr, betas=(opt.beta1, 0.999), weight_decay=1e-5)
            self.optimizer_D = torch.optim.Adam(self.netD.parameters(),
                                                lr=opt.lr_D, betas=(opt.beta1, 0.999), weight_decay=1e-5)
            self.optimizers.append(self.optimizer_G)
            self.optimizers.append(self.optimizer_D)

    def set_input(self, input):
        self.input_img = input['A'].to(self.device)
        self.shadow_mask = input['B'].to(self.device)
        self.shadow_param = input['param'].to(self.device).type(torch.float)
        self.shadow_mask = (self.shadow_mask > 0.9).type(torch.float) * 2 - 1
        self.nim = self.input_img.shape[1]
        self.shadowfree_img = input['A'].to(self.device)
        self.shadow_img = input['C'].to(self.device)
        self.instance_mask = input['instancemask'].to(self.device)
        self.bg_instance = input['bg_instance'].to(self.device)
        self.bg_shadow = input['bg_shadow'].to(self.device)
        self.shadow_mask_3d = (self.shadow_mask > 0).type(torch.float).expand(self.input_img.shape)

    def forward(self):
        # compute output of generator 1: the foreground shadow mask
        inputG = torch.cat([self.shadowfree_img, self.instance_mask, self.bg_instance, self.bg_shadow], 1)
        self.out_shadow_mask = self.netG(inputG)
        self.out_shadow_mask_prob = torch.sigmoid(self.out_shadow_mask)

        # shadow parameters (w, b per channel) from the composite and predicted mask
        inputM = torch.cat([self.shadowfree_img, self.out_shadow_mask_prob * 2 - 1, self.instance_mask,
                            self.bg_instance, self.bg_shadow], 1)[:, :7]
        self.shadow_param_pred = torch.mean(self.netM(inputM), dim=(2, 3))

        n = self.shadow_param_pred.shape[0]
        w = self.shadow_param_pred[:, [0, 2, 4]] if self.shadow_param_pred.shape[1] >= 6 else self.shadow_param_pred
        b = self.shadow_param_pred[:, [1, 3, 5]] if self.shadow_param_pred.shape[1] >= 6 else torch.zeros_like(w)
        w = w.view(n, 3, 1, 1)
        b = b.view(n, 3, 1, 1)

        # darken the composite with the predicted illumination model
        self.lit = (self.shadowfree_img + 1) / 2
        self.lit = self.lit * w + b
        self.lit = self.lit * 2 - 1

        alpha = self.out_shadow_mask_prob.expand_as(self.lit)
        self.final = self.lit * alpha + self.shadowfree_img * (1 - alpha)

    def backward_D(self):
        fake_AB = torch.cat((self.final, self.instance_mask), 1)
        pred_fake = self.netD(fake_AB.detach())
        real_AB = torch.cat((self.shadow_img, self.instance_mask), 1)
        pred_real = self.netD(real_AB)
        label_real = torch.cuda.FloatTensor(pred_real.size()).fill_(1.0)
        label_fake = torch.cuda.FloatTensor(pred_fake.size()).fill_(0.0)
        self.loss_D_fake = self.MSELoss(pred_fake, label_fake)
        self.loss_D_real = self.MSELoss(pred_real, label_real)
        self.loss_D = (self.loss_D_fake + self.loss_D_real) * 0.5
        self.loss_D.backward()

    def backward_G(self):
        fake_AB = torch.cat((self.final, self.instance_mask), 1)
        pred_fake = self.netD(fake_AB)
        self.loss_G_GAN = self.MSELoss(pred_fake, torch.ones_like(pred_fake)) * self.opt.lambda_GAN

        self.loss_alpha = self.bce(self.out_shadow_mask, (self.shadow_mask > 0).type(torch.float)) * self.opt.lambda_M1
        self.loss_rescontruction = self.criterionL1(self.final, self.shadow_img) * self.opt.lambda_I1
        if self.shadow_param.shape[1] == self.shadow_param_pred.shape[1]:
            self.loss_G_param = self.MSELoss(self.shadow_param_pred, self.shadow_param) * self.opt.lambda_P1
        else:
            self.loss_G_param = torch.zeros(1).cuda()

        self.loss = self.loss_alpha + self.loss_rescontruction + self.loss_G_param + self.loss_G_GAN
        self.loss.backward()

    def get_prediction(self, input):
        self.set_input(input)
        with torch.no_grad():
            self.forward()
        RES = dict()
        RES['final'] = util.tensor2im(self.final, scale=0)
        RES['shadow_mask'] = util.tensor2im(self.out_shadow_mask_prob * 2 - 1, scale=0)
        return RES

    def optimize_parameters(self):
        self.forward()
        self.set_requires_grad(self.netD, True)
        self.optimizer_D.zero_grad()
        self.backward_D()
        self.optimizer_D.step()

        self.set_requires_grad(self.netD, False)
        self.optimizer_G.zero_grad()
        self.backward_G()
        self.optimizer_G.step()

    def get_current_visuals(self):
        t = self.input_img.shape[0]
        visual_ret = OrderedDict()
        for name in self.visual_names:
            if isinstance(name, str):
                visual_ret[name] = getattr(self, name)[:t]
        visual_ret['out_shadow_mask'] = self.out_shadow_mask_prob * 2 - 1
        return visual_ret
