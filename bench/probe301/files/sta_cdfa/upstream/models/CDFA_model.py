import torch
import itertools
from .base_model import BaseModel
from . import backbone
import torch.nn.functional as F
from . import loss


class CDFAModel(BaseModel):
    """
    change detection module:
    feature extractor+ spatial-temporal-self-attention
    contrastive loss
    """
    @staticmethod
    def modify_commandline_options(parser, is_train=True):
        return parser

    def __init__(self, opt):

        BaseModel.__init__(self, opt)
        # specify the training losses you want to print out. The training/test scripts will call <BaseModel.get_current_losses>
        self.loss_names = ['f']
        # specify the images you want to save/display. The training/test scripts will call <BaseModel.get_current_visuals>
        self.visual_names = ['A', 'B', 'L', 'pred_L_show']  # visualizations for A and B
        self.visual_features = ['feat_A', 'feat_B']
        # specify the models you want to save to the disk. The training/test scripts will call <BaseModel.save_networks> and <BaseModel.load_networks>.
        if self.isTrain:
            self.model_names = ['F', 'A']
        else:  # during test time, only load Gs
            self.model_names = ['F', 'A']
        self.istest = opt.istest
        # define networks (both Generators and discriminators)
        self.n_class = 2
        self.ds = 1
        self.netF = backbone.define_F(in_c=3, f_c=opt.f_c, type=opt.arch).to(self.device)

        self.netA = backbone.CDSA(in_c=opt.f_c, ds=opt.ds, mode=opt.SA_mode).to(self.device)

        if self.isTrain:
            # define loss functions
            self.criterionF = loss.BCL()

            # initialize optimizers; schedulers will be automatically created by function <BaseModel.setup>.
            self.optimizer_G = torch.optim.Adam(itertools.chain(
                self.netF.parameters(),
            ), lr=opt.lr*opt.lr_decay, betas=(opt.beta1, 0.999))
            self.optimizer_A = torch.optim.Adam(self.netA.parameters(), lr=opt.lr * 1, betas=(opt.beta1, 0.999))
            self.optimizers.append(self.optimizer_G)
            self.optimizers.append(self.optimizer_A)

        # the old CUDA-only tensor type, still used by the pixel-count statistics below
        self.Tensor = torch.cuda.FloatTensor if self.gpu_ids else torch.FloatTensor

    def set_input(self, input):
        self.A = input['A'].to(self.device)
        self.B = input['B'].to(self.device)
        if self.istest is False:
            if 'L' in input.keys():
                self.L = input['L'].to(self.device).long()

        self.image_paths = input['A_paths']
        if self.isTrain:
            self.L_s = self.L.float()
            self.L_s = F.interpolate(self.L_s, size=torch.Size([self.A.shape[2]//self.ds, self.A.shape[3]//self.ds]), mode='nearest')
            self.L_s[self.L_s == 1] = -1  # change
            self.L_s[self.L_s == 0] = 1  # no change

    def test(self, val=False):
        with torch.no_grad():
            self.forward()
            self.compute_visuals()
            if val:  # 返回score
                from util.metrics import RunningMetrics
                metrics = RunningMetrics(self.n_class)
                pred = self.pred_L.long()

                metrics.update(self.L.detach().cpu().numpy(), pred.detach().cpu().numpy())
                scores = metrics.get_cm()
                return scores

    def forward(self):
        """Run forward pass; called by both functions <optimize_parameters> and <test>."""
        self.feat_A = self.netF(self.A)  # f(A)
        self.feat_B = self.netF(self.B)   # f(B)

        self.feat_A, self.feat_B = self.netA(self.feat_A, self.feat_B)

        self.dist = F.pairwise_distance(self.feat_A, self.feat_B, keepdim=True)  # 特征距离

        self.dist = F.interpolate(self.dist, size=self.A.shape[2:], mode='bilinear', align_corners=True)

        self.pred_L = (self.dist > 1).float()
        # self.pred_L = F.interpolate(self.pred_L, size=self.A.shape[2:], mode='nearest')
        self.pred_L_show = self.pred_L.long()

        return self.pred_L

    def change_ratio(self):
        """Fraction of pixels predicted as changed, per image (used for the HTML summary page)."""
        counts = self.Tensor(self.pred_L.size(0)).fill_(0)
        for i in range(self.pred_L.size(0)):
            counts[i] = self.pred_L[i].sum()
        return counts / float(self.pred_L[0].numel())

    def compute_visuals(self):
        """Rescale the inputs back to [0, 1] for the HTML page (inputs are normalised to [-1, 1])."""
        self.A_show = (self.A + 1) / 2.0
        self.B_show = (self.B + 1) / 2.0
        if hasattr(self, 'L'):
            self.L_show = self.L.float()

    def get_current_features(self):
        """Return the bitemporal feature maps (after attention) for t-SNE / PCA plots."""
        feats = {}
        for name in self.visual_features:
            if hasattr(self, name):
                feats[name] = getattr(self, name).detach().cpu()
        return feats

    def backward(self):
        """Calculate the loss for generators F and A"""
        # print(self.weight)
        self.loss_f = self.criterionF(self.dist, self.L_s)

        self.loss = self.loss_f
        # print(self.loss)
        self.loss.backward()

    def optimize_parameters(self):
        """Calculate losses, gradients, and update network weights; called in every training iteration"""
        self.forward()
        self.optimizer_G.zero_grad()
        self.optimizer_A.zero_grad()
        self.backward()
        self.optimizer_G.step()
        self.optimizer_A.step()
