#Reconstruction loss for unwarping: warp the albedo with the predicted and the
#ground-truth backward maps and compare the two unwarped images.
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
import numpy as np
import pytorch_ssim


class Unwarploss(torch.nn.Module):
    def __init__(self):
        super(Unwarploss, self).__init__()
        # self.xmx, self.xmn, self.ymx, self.ymn = 166.28639310649825, -3.792634897181367, 189.04606710275974, -18.982843029373125
        # self.xmx, self.xmn, self.ymx, self.ymn = 434.8578833991327, 14.898654260467202, 435.0363953546216, 14.515746051497239
        # self.xmx, self.xmn, self.ymx, self.ymn = 434.9877152856324, 14.921201106905258, 435.0486066890073, 14.515423165624173
        self.xmx, self.xmn, self.ymx, self.ymn = 1.0, 0.0, 1.0, 0.0
        self.ssim_loss = pytorch_ssim.SSIM(window_size=11)

    def forward(self, inp, pred, label):
        #image [n,c,h,w], target_nhwc [n,h,w,c], labels [n,h,w,c]
        n,c,h,w=inp.shape       #this has 6 channels if image is passed
        # print (h,w)
        inp=inp.detach().cpu().numpy()
        inp_img=inp[:,:3,:,:] #img in bgr

        # denormalize pred
        pred=pred.double()
        label=label.double()
        pred_x = (pred[:, :, :, 0] * (self.xmx - self.xmn)) + self.xmn
        pred_y = (pred[:, :, :, 1] * (self.ymx - self.ymn)) + self.ymn
        pred = torch.stack([pred_x, pred_y], dim=-1)
        # normalize to [-1, 1] for grid_sample
        pred=(pred/448.0 - 0.5)*2
        pred=pred.float()

        label_x = (label[:, :, :, 0] * (self.xmx - self.xmn)) + self.xmn
        label_y = (label[:, :, :, 1] * (self.ymx - self.ymn)) + self.ymn
        label = torch.stack([label_x, label_y], dim=-1)
        label=(label/448.0 - 0.5)*2
        label=label.float()

        inp_img=torch.from_numpy(inp_img).float().cuda()

        outputs_pred=F.grid_sample(inp_img,pred,align_corners=True)
        outputs_label=F.grid_sample(inp_img,label,align_corners=True)

        mask = (outputs_label.sum(dim=1, keepdim=True) > 0).type(torch.cuda.FloatTensor)
        outputs_pred = outputs_pred * mask

        loss_fn = nn.MSELoss()
        ssim_val = 1 - self.ssim_loss(outputs_pred, outputs_label)
        loss = loss_fn(outputs_pred, outputs_label)

        return loss, ssim_val, outputs_label, outputs_pred
