
import __future__

import numpy as np
import warnings
warnings.filterwarnings("ignore", category=DeprecationWarning)

import torch
import torch.nn as nn
import torch.nn.functional as F


class ContextAwareModel(nn.Module):
    def __init__(self, weights=None, input_size=512, num_classes=3, chunk_size=240, dim_capsule=16,
                 receptive_field=80, num_detections=5, framerate=2):
        """
        INPUT: a Tensor of the form (batch_size,1,chunk_size,input_size)
        OUTPUTS:    1. The segmentation of the form (batch_size,chunk_size,num_classes)
                    2. The action spotting of the form (batch_size,num_detections,2+num_classes)
        """

        super(ContextAwareModel, self).__init__()

        self.load_weights(weights=weights)

        self.input_size = input_size
        self.num_classes = num_classes
        self.dim_capsule = dim_capsule
        self.receptive_field = receptive_field
        self.num_detections = num_detections
        self.chunk_size = chunk_size
        self.framerate = framerate

        self.pyramid_size_1 = int(np.ceil(receptive_field / 7))
        self.pyramid_size_2 = int(np.ceil(receptive_field / 3))
        self.pyramid_size_3 = int(np.ceil(receptive_field / 2))
        self.pyramid_size_4 = int(np.ceil(receptive_field))

        # Base Convolutional Layers
        self.conv_1 = nn.Conv2d(in_channels=1, out_channels=128, kernel_size=(1, input_size))
        self.conv_2 = nn.Conv2d(in_channels=128, out_channels=32, kernel_size=(1, 1))

        # Temporal Pyramidal Module
        self.pad_p_1 = nn.ZeroPad2d((0, 0, (self.pyramid_size_1 - 1) // 2, self.pyramid_size_1 - 1 - (self.pyramid_size_1 - 1) // 2))
        self.pad_p_2 = nn.ZeroPad2d((0, 0, (self.pyramid_size_2 - 1) // 2, self.pyramid_size_2 - 1 - (self.pyramid_size_2 - 1) // 2))
        self.pad_p_3 = nn.ZeroPad2d((0, 0, (self.pyramid_size_3 - 1) // 2, self.pyramid_size_3 - 1 - (self.pyramid_size_3 - 1) // 2))
        self.pad_p_4 = nn.ZeroPad2d((0, 0, (self.pyramid_size_4 - 1) // 2, self.pyramid_size_4 - 1 - (self.pyramid_size_4 - 1) // 2))
        self.conv_p_1 = nn.Conv2d(in_channels=32, out_channels=8, kernel_size=(self.pyramid_size_1, 1))
        self.conv_p_2 = nn.Conv2d(in_channels=32, out_channels=16, kernel_size=(self.pyramid_size_2, 1))
        self.conv_p_3 = nn.Conv2d(in_channels=32, out_channels=32, kernel_size=(self.pyramid_size_3, 1))
        self.conv_p_4 = nn.Conv2d(in_channels=32, out_channels=64, kernel_size=(self.pyramid_size_4, 1))

        # -------------------
        # Segmentation module
        # -------------------

        self.kernel_seg_size = 3
        self.pad_seg = nn.ZeroPad2d((0, 0, (self.kernel_seg_size - 1) // 2, self.kernel_seg_size - 1 - (self.kernel_seg_size - 1) // 2))
        self.conv_seg = nn.Conv2d(in_channels=152, out_channels=dim_capsule * num_classes, kernel_size=(self.kernel_seg_size, 1))
        self.batch_seg = nn.BatchNorm2d(num_features=self.chunk_size, momentum=0.01, eps=0.001)

        # -------------------
        # detection module
        # -------------------
        self.max_pool_spot = nn.MaxPool2d(kernel_size=(3, 1), stride=(2, 1))
        self.kernel_spot_size = 3
        self.pad_spot_1 = nn.ZeroPad2d((0, 0, (self.kernel_spot_size - 1) // 2, self.kernel_spot_size - 1 - (self.kernel_spot_size - 1) // 2))
        self.conv_spot_1 = nn.Conv2d(in_channels=num_classes * (dim_capsule + 1), out_channels=32, kernel_size=(self.kernel_spot_size, 1))
        self.max_pool_spot_1 = nn.MaxPool2d(kernel_size=(3, 1), stride=(2, 1))
        self.pad_spot_2 = nn.ZeroPad2d((0, 0, (self.kernel_spot_size - 1) // 2, self.kernel_spot_size - 1 - (self.kernel_spot_size - 1) // 2))
        self.conv_spot_2 = nn.Conv2d(in_channels=32, out_channels=16, kernel_size=(self.kernel_spot_size, 1))
        self.max_pool_spot_2 = nn.MaxPool2d(kernel_size=(3, 1), stride=(2, 1))

        # Confidence branch
        self.conv_conf = nn.Conv2d(in_channels=16 * (chunk_size // 8 - 1), out_channels=self.num_detections * 1, kernel_size=(1, 1))

        # Class branch
        self.conv_class = nn.Conv2d(in_channels=16 * (chunk_size // 8 - 1), out_channels=self.num_detections * self.num_classes, kernel_size=(1, 1))
        self.softmax = nn.Softmax(dim=-1)

    def load_weights(self, weights=None):
        if weights is not None:
            print("=> loading checkpoint '{}'".format(weights))
            checkpoint = torch.load(weights)
            self.load_state_dict(checkpoint['state_dict'])
            print("=> loaded checkpoint '{}' (epoch {})"
                  .format(weights, checkpoint['epoch']))

    def forward(self, inputs):

        # -----------------------------------
        # Feature input (chunks of the video)
        # -----------------------------------
        # input_shape: (batch,channel,frames,dim_features)

        # -------------------------------------
        # Temporal Convolutional neural network
        # -------------------------------------

        # Base Convolutional Layers
        conv_1 = F.relu(self.conv_1(inputs))
        conv_2 = F.relu(self.conv_2(conv_1))

        # Temporal Pyramidal Module
        conv_p_1 = F.relu(self.conv_p_1(self.pad_p_1(conv_2)))
        conv_p_2 = F.relu(self.conv_p_2(self.pad_p_2(conv_2)))
        conv_p_3 = F.relu(self.conv_p_3(self.pad_p_3(conv_2)))
        conv_p_4 = F.relu(self.conv_p_4(self.pad_p_4(conv_2)))

        concatenation = torch.cat((conv_2, conv_p_1, conv_p_2, conv_p_3, conv_p_4), 1)

        # -------------------
        # Segmentation module
        # -------------------

        conv_seg = self.conv_seg(self.pad_seg(concatenation))

        conv_seg_permuted = conv_seg.permute(0, 2, 3, 1)

        conv_seg_reshaped = conv_seg_permuted.view(conv_seg_permuted.size()[0], conv_seg_permuted.size()[1], self.dim_capsule, self.num_classes)

        conv_seg_norm = torch.sigmoid(self.batch_seg(conv_seg_reshaped))

        output_segmentation = torch.sqrt(torch.sum(torch.square(conv_seg_norm - 0.5), dim=2) * 4 / self.dim_capsule)

        # ---------------
        # Spotting module
        # ---------------

        # Concatenation of the segmentation score to the capsules
        output_segmentation_reverse = 1 - output_segmentation

        output_segmentation_reverse_reshaped = output_segmentation_reverse.unsqueeze(2)

        output_segmentation_reverse_reshaped_permutted = output_segmentation_reverse_reshaped.permute(0, 3, 1, 2)

        concatenation_2 = torch.cat((conv_seg, output_segmentation_reverse_reshaped_permutted), dim=1)

        conv_spot = self.max_pool_spot(F.relu(concatenation_2))

        conv_spot_1 = F.relu(self.conv_spot_1(self.pad_spot_1(conv_spot)))
        conv_spot_1_pooled = self.max_pool_spot_1(conv_spot_1)

        conv_spot_2 = F.relu(self.conv_spot_2(self.pad_spot_2(conv_spot_1_pooled)))
        conv_spot_2_pooled = self.max_pool_spot_2(conv_spot_2)

        spotting_reshaped = conv_spot_2_pooled.view(conv_spot_2_pooled.size()[0], -1, 1, 1)

        # Confindence branch
        conf_pred = torch.sigmoid(self.conv_conf(spotting_reshaped).view(spotting_reshaped.shape[0], self.num_detections, 1))

        # Class branch
        conf_class = self.softmax(self.conv_class(spotting_reshaped).view(spotting_reshaped.shape[0], self.num_detections, self.num_classes))

        output_spotting = torch.cat((conf_pred, conf_class), dim=-1)

        return output_segmentation, output_spotting
