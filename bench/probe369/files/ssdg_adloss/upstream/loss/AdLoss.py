import torch
import torch.nn as nn


def Real_AdLoss(discriminator_out, criterion, shape_list):
    # generate ad_label
    ad_label1_index = torch.LongTensor(shape_list[0], 1).fill_(0)
    ad_label1 = ad_label1_index
    ad_label2_index = torch.LongTensor(shape_list[1], 1).fill_(1)
    ad_label2 = ad_label2_index
    ad_label3_index = torch.LongTensor(shape_list[2], 1).fill_(2)
    ad_label3 = ad_label3_index
    ad_label = torch.cat([ad_label1, ad_label2, ad_label3], dim=0).view(-1)
    ad_label = ad_label.cuda()
    real_adloss = criterion(discriminator_out, ad_label)
    return real_adloss


def Fake_AdLoss(discriminator_out, criterion, shape_list):
    # generate ad_label (fake samples of the three source domains)
    ad_label1_index = torch.LongTensor(shape_list[0], 1).fill_(0)
    ad_label1 = ad_label1_index
    ad_label2_index = torch.LongTensor(shape_list[1], 1).fill_(1)
    ad_label2 = ad_label2_index
    ad_label3_index = torch.LongTensor(shape_list[2], 1).fill_(2)
    ad_label3 = ad_label3_index
    ad_label = torch.cat([ad_label1, ad_label2, ad_label3], dim=0).view(-1).cuda()
    fake_adloss = criterion(discriminator_out, ad_label)
    return fake_adloss


def AdLoss_Limited(discriminator_out, criterion, shape_list):
    # generate ad_label
    ad_label2_index = torch.LongTensor(shape_list[0], 1).fill_(0)
    ad_label2 = ad_label2_index
    ad_label3_index = torch.LongTensor(shape_list[1], 1).fill_(1)
    ad_label3 = ad_label3_index
    ad_label = torch.cat([ad_label2, ad_label3], dim=0).view(-1)
    ad_label = ad_label.to(discriminator_out.device)
    real_adloss = criterion(discriminator_out, ad_label)
    return real_adloss
