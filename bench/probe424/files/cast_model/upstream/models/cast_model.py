import itertools

import torch
import torch.nn as nn

from .base_model import BaseModel
from . import networks
from . import net
import util.util as util


class CASTModel(BaseModel):
    """ This class implements CAST model.
    This code is inspired by DCLGAN
    """

    @staticmethod
    def modify_commandline_options(parser, is_train=True):
        """  Configures options specific for CAST model
        """
        parser.add_argument('--CAST_mode', type=str, default="CAST", choices='CAST')
        parser.add_argument('--lambda_GAN_G_A', type=float, default=0.1, help='weight for GAN loss：GAN(G(X))')
        parser.add_argument('--lambda_GAN_G_B', type=float, default=0.1, help='weight for GAN loss：GAN(G(X))')
        parser.add_argument('--lambda_GAN_D_A', type=float, default=1.0, help='weight for GAN loss：GAN(G(X))')
        parser.add_argument('--lambda_GAN_D_B', type=float, default=1.0, help='weight for GAN loss：GAN(G(X))')
        parser.add_argument('--lambda_NCE_s', type=float, default=0.05, help='weight for NCE loss: NCE(G(X), X)')
        parser.add_argument('--lambda_NCE_c', type=float, default=0.0, help='weight for NCE loss: NCE(G(X), X)')
        parser.add_argument('--lambda_NCE_D', type=float, default=1.0, help='weight for NCE loss: NCE(G(X), X)')
        parser.add_argument('--lambda_CYC', type=float, default=4.0, help='weight for l1 reconstructe loss:||Ics - Ic||')
        parser.add_argument('--nce_layers', type=str, default='0,1,2,3', help='compute NCE loss on which layers')
        parser.add_argument('--nce_includes_all_negatives_from_minibatch',
                            type=util.str2bool, nargs='?', const=True, default=False,
                            help='(used for single image translation) If True, include the negatives from the other samples of the minibatch when computing the contrastive loss. Please see models/patchnce.py for more details.')
        parser.add_argument('--nce_T', type=float, default=0.07, help='temperature for NCE loss')
        parser.add_argument('--num_patches', type=int, default=256, help='number of patches per layer')
        parser.add_argument('--flip_equivariance',
                            type=util.str2bool, nargs='?', const=True, default=False,
                            help="Enforce flip-equivariance as additional regularization. It's used by FastCUT, but not CUT")

        parser.set_defaults(pool_size=0)  # no image pooling

        opt, _ = parser.parse_known_args()

        return parser

    def __init__(self, opt):
        BaseModel.__init__(self, opt)

        # specify the training losses you want to print out.
        # The training/test scripts will call <BaseModel.get_current_losses>
        self.loss_names = ['D_A', 'G_A', 'D_B', 'G_B', 'NCE_s_A', 'NCE_s_B', 'cyc_A', 'cyc_B', 'NCE_D']
        visual_names_A = ['real_A', 'fake_B']
        visual_names_B = ['real_B', 'fake_A']
        self.nce_layers = [int(i) for i in self.opt.nce_layers.split(',')]

        if self.isTrain:
            visual_names_A.append('rec_A')
            visual_names_B.append('rec_B')

        self.visual_names = visual_names_A + visual_names_B  # combine visualizations for A and B

        if self.isTrain:
            self.model_names = ['AE_A', 'AE_B', 'Dec_A', 'Dec_B', 'D_A', 'D_B', 'P_style', 'D_NCE']
        else:  # during test time, only load G
            self.model_names = ['AE_A', 'Dec_A', 'AE_B', 'Dec_B']

        # define networks (both generator and discriminator)
        # Define generator
        vgg = net.vgg
        vgg.load_state_dict(torch.load('models/vgg_normalised.pth'))
        vgg = nn.Sequential(*list(vgg.children())[:31])
        self.netAE_A = networks.ADAIN_Encoder(vgg, self.gpu_ids)
        self.netAE_B = networks.ADAIN_Encoder(vgg, self.gpu_ids)
        self.netDec_A = networks.Decoder(self.gpu_ids)
        self.netDec_B = networks.Decoder(self.gpu_ids)
        init_net = networks.init_net
        self.netAE_A = init_net(self.netAE_A, 'normal', 0.02, self.gpu_ids)
        self.netAE_B = init_net(self.netAE_B, 'normal', 0.02, self.gpu_ids)
        self.netDec_A = init_net(self.netDec_A, 'normal', 0.02, self.gpu_ids)
        self.netDec_B = init_net(self.netDec_B, 'normal', 0.02, self.gpu_ids)

        if self.isTrain:
            style_vgg = net.vgg
            style_vgg.load_state_dict(torch.load('models/style_vgg.pth'))
            style_vgg = nn.Sequential(*list(style_vgg.children()))
            self.netD_A = networks.define_D(opt.output_nc, opt.ndf, opt.netD, opt.n_layers_D, opt.normD, opt.init_type, opt.init_gain, opt.no_antialias, self.gpu_ids, opt)
            self.netD_B = networks.define_D(opt.output_nc, opt.ndf, opt.netD, opt.n_layers_D, opt.normD, opt.init_type, opt.init_gain, opt.no_antialias, self.gpu_ids, opt)
            self.netD_NCE = networks.StyleExtractor(style_vgg, self.gpu_ids)
            self.netP_style = networks.Projector(self.gpu_ids)
            init_net(self.netD_NCE, 'normal', 0.02, self.gpu_ids)
            init_net(self.netP_style, 'normal', 0.02, self.gpu_ids)

            # define loss functions
            self.criterionGAN = networks.GANLoss(opt.gan_mode).to(self.device)
            self.criterionNCE = nn.CrossEntropyLoss().to(self.device)
            self.criterionCyc = torch.nn.L1Loss().to(self.device)
            self.optimizer_G = torch.optim.Adam(itertools.chain(self.netAE_A.parameters(), self.netDec_A.parameters(),
                                                                self.netAE_B.parameters(), self.netDec_B.parameters()),
                                                lr=opt.lr, betas=(opt.beta1, opt.beta2))
            self.optimizer_D = torch.optim.Adam(itertools.chain(self.netD_A.parameters(), self.netD_B.parameters()),
                                                lr=opt.lr, betas=(opt.beta1, opt.beta2))
            self.optimizer_D_NCE = torch.optim.Adam(itertools.chain(self.netD_NCE.parameters(), self.netP_style.parameters()),
                                                    lr=opt.lr, betas=(opt.beta1, opt.beta2))

            self.optimizers.append(self.optimizer_G)
            self.optimizers.append(self.optimizer_D)
            self.optimizers.append(self.optimizer_D_NCE)

    def data_dependent_initialize(self, data):
        """
        The feature network netF is defined in terms of the shape of the intermediate, extracted
        features of the encoder portion of netG. Because of this, the weights of netF are
        initialized at the first feedforward pass with some input images.
        Please also see PatchSampleF.create_mlp(), which is called at the first forward() call.
        """
        self.set_input(data)
        bs_per_gpu = self.real_A.size(0) // max(len(self.opt.gpu_ids), 1)
        self.real_A = self.real_A[:bs_per_gpu]
        self.real_B = self.real_B[:bs_per_gpu]
        self.forward()  # compute fake images: G(A)
        if self.opt.isTrain:
            self.backward_D_NCE()
            self.backward_D()  # calculate gradients for D
            self.backward_G()  # calculate graidents for G

    def optimize_parameters(self):
        # forward
        self.forward()

        # update D
        self.set_requires_grad([self.netD_A, self.netD_B], True)
        self.optimizer_D.zero_grad()
        self.loss_D = self.backward_D()
        self.optimizer_D.step()

        # update D_NCE
        self.set_requires_grad([self.netD_NCE, self.netP_style], True)
        self.optimizer_D_NCE.zero_grad()
        self.loss_D_NCE = self.backward_D_NCE()
        self.optimizer_D_NCE.step()

        # update G
        self.set_requires_grad([self.netD_A, self.netD_B, self.netD_NCE, self.netP_style], False)
        self.optimizer_G.zero_grad()
        self.loss_G = self.backward_G()
        self.loss_G.backward()
        self.optimizer_G.step()

    def set_input(self, input):
        """Unpack input data from the dataloader and perform necessary pre-processing steps.
        Parameters:
            input (dict): include the data itself and its metadata information.
        The option 'direction' can be used to swap domain A and domain B.
        """
        AtoB = self.opt.direction == 'AtoB'
        self.real_A = input['A' if AtoB else 'B'].to(self.device)
        self.real_B = input['B' if AtoB else 'A'].to(self.device)
        self.image_paths = input['A_paths' if AtoB else 'B_paths']

    def forward(self):
        """Run forward pass; called by both functions <optimize_parameters> and <test>."""
        self.real_A_feat = self.netAE_A(self.real_A, self.real_B)  # G_A(A)
        self.fake_B = self.netDec_B(self.real_A_feat)
        if self.isTrain:
            self.real_B_feat = self.netAE_B(self.real_B, self.real_A)  # G_A(A)
            self.fake_A = self.netDec_A(self.real_B_feat)
            self.rec_A_feat = self.netAE_A(self.fake_B, self.real_A)
            self.rec_A = self.netDec_A(self.rec_A_feat)
            self.rec_B_feat = self.netAE_B(self.fake_A, self.real_B)
            self.rec_B = self.netDec_B(self.rec_B_feat)

    def backward_D_basic(self, netD, real, fake):
        """Calculate GAN loss for the discriminator"""
        # Real
        pred_real = netD(real)
        loss_D_real = self.criterionGAN(pred_real, True)
        # Fake
        pred_fake = netD(fake.detach())
        loss_D_fake = self.criterionGAN(pred_fake, False)
        # Combined loss and calculate gradients
        loss_D = (loss_D_real + loss_D_fake) * 0.5
        return loss_D

    def backward_D_NCE(self):
        """Calculate the contrastive loss of the style projector (D_NCE)"""
        fake_B = self.fake_B.detach()
        fake_A = self.fake_A.detach()
        real_A = self.real_A
        real_B = self.real_B

        self.loss_NCE_D = self.opt.lambda_NCE_D * (
            self.calculate_NCE_loss_D(self.netD_NCE, self.netP_style, real_A, fake_B, real_B) +
            self.calculate_NCE_loss_D(self.netD_NCE, self.netP_style, real_B, fake_A, real_A))
        self.loss_NCE_D.backward()
        return self.loss_NCE_D

    def backward_D(self):
        """Calculate GAN loss for discriminator D_A and D_B"""
        self.loss_D_A = self.backward_D_basic(self.netD_A, self.real_B, self.fake_B) * self.opt.lambda_GAN_D_A
        self.loss_D_B = self.backward_D_basic(self.netD_B, self.real_A, self.fake_A) * self.opt.lambda_GAN_D_B
        self.loss_D = self.loss_D_A + self.loss_D_B
        self.loss_D.backward()
        return self.loss_D

    def backward_G(self):
        """Calculate GAN loss and style contrastive loss for the generator"""
        fakeB = self.fake_B
        fakeA = self.fake_A

        # First, G(A) should fake the discriminator
        if self.opt.lambda_GAN_G_A > 0.0:
            pred_fakeB = self.netD_A(fakeB)
            self.loss_G_A = self.criterionGAN(pred_fakeB, True).mean() * self.opt.lambda_GAN_G_A
        else:
            self.loss_G_A = 0.0
        if self.opt.lambda_GAN_G_B > 0.0:
            pred_fakeA = self.netD_B(fakeA)
            self.loss_G_B = self.criterionGAN(pred_fakeA, True).mean() * self.opt.lambda_GAN_G_B
        else:
            self.loss_G_B = 0.0

        # L1 cycle loss
        self.loss_cyc_A = self.criterionCyc(self.rec_A, self.real_A) * self.opt.lambda_CYC
        self.loss_cyc_B = self.criterionCyc(self.rec_B, self.real_B) * self.opt.lambda_CYC

        # style contrastive loss
        if self.opt.lambda_NCE_s > 0.0:
            self.loss_NCE_s_A = self.calculate_NCE_loss(self.netD_NCE, self.netP_style, self.real_A, self.fake_B, self.real_B) * self.opt.lambda_NCE_s
            self.loss_NCE_s_B = self.calculate_NCE_loss(self.netD_NCE, self.netP_style, self.real_B, self.fake_A, self.real_A) * self.opt.lambda_NCE_s
        else:
            self.loss_NCE_s_A = 0.0
            self.loss_NCE_s_B = 0.0

        self.loss_G = self.loss_G_A + self.loss_G_B + self.loss_cyc_A + self.loss_cyc_B + \
            self.loss_NCE_s_A + self.loss_NCE_s_B
        return self.loss_G

    def calculate_NCE_loss(self, encoder, projector, neg, query, pos):
        query_code = projector(encoder(query, self.nce_layers), self.nce_layers)
        pos_code = projector(encoder(pos, self.nce_layers), self.nce_layers)
        neg_code = projector(encoder(neg, self.nce_layers), self.nce_layers)
        loss = 0.0
        for q, p, n in zip(query_code, pos_code, neg_code):
            loss = loss + self.InfoNCE(q, p, n).mean()
        return loss / len(self.nce_layers)

    def calculate_NCE_loss_D(self, encoder, projector, neg, query, pos):
        query_code = projector(encoder(query.detach(), self.nce_layers), self.nce_layers)
        pos_code = projector(encoder(pos, self.nce_layers), self.nce_layers)
        neg_code = projector(encoder(neg, self.nce_layers), self.nce_layers)
        loss = 0.0
        for q, p, n in zip(query_code, pos_code, neg_code):
            loss = loss + self.InfoNCE(q, n, p).mean()
        return loss / len(self.nce_layers)

    def InfoNCE(self, query, pos, neg):
        """query/pos/neg: (B, D) l2-normalised projections; other samples in the batch act as extra negatives."""
        batch_size = query.shape[0]
        l_pos = torch.bmm(query.view(batch_size, 1, -1), pos.view(batch_size, -1, 1)).view(batch_size, 1)
        l_neg = torch.mm(query, neg.t())
        out = torch.cat((l_pos, l_neg), dim=1) / self.opt.nce_T
        labels = torch.zeros(out.size(0), dtype=torch.long).cuda()
        return self.criterionNCE(out, labels)

    def compute_visuals(self):
        """Calculate additional output images for visdom and HTML visualization"""
        with torch.no_grad():
            self.fake_B = self.netDec_B(self.netAE_A(self.real_A, self.real_B))
