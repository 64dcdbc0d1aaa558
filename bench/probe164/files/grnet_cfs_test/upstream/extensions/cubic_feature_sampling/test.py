# -*- coding: utf-8 -*-
# @Author: Haozhe Xie
# @Date:   2019-12-20 11:50:50
# @Last Modified by:   Haozhe Xie
# @Last Modified time: 2019-12-26 13:52:33
# @Email:  cshzxie@gmail.com
#
# Note:
# - Replace float -> double, kFloat -> kDouble in cubic_feature_sampling.cu

import os
import sys
import torch
import unittest

from torch.autograd import gradcheck

sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from extensions.cubic_feature_sampling import CubicFeatureSamplingFunction


class CubicFeatureSamplingTestCase(unittest.TestCase):
    def test_neighborhood_size_1(self):
        ptcloud = torch.rand(2, 64, 3) * 2 - 1
        cubic_features = torch.rand(2, 4, 8, 8, 8)
        ptcloud.requires_grad = True
        cubic_features.requires_grad = True
        self.assertTrue(
            gradcheck(CubicFeatureSamplingFunction.apply,
                      [ptcloud.double().cuda(), cubic_features.double().cuda()]))

    def test_neighborhood_size_2(self):
        ptcloud = torch.rand(2, 32, 3) * 2 - 1
        cubic_features = torch.rand(2, 2, 8, 8, 8)
        ptcloud.requires_grad = True
        cubic_features.requires_grad = True
        self.assertTrue(
            gradcheck(CubicFeatureSamplingFunction.apply,
                      [ptcloud.double().cuda(), cubic_features.double().cuda(), 2]))

    def test_neighborhood_size_3(self):
        ptcloud = torch.rand(1, 32, 3) * 2 - 1
        cubic_features = torch.rand(1, 2, 16, 16, 16)
        ptcloud.requires_grad = True
        cubic_features.requires_grad = True
        self.assertTrue(
            gradcheck(CubicFeatureSamplingFunction.apply,
                      [ptcloud.double().cuda(), cubic_features.double().cuda(), 3]))

    def test_forward_shape(self):
        # quick smoke test on float inputs, no gradients
        device = torch.device('cuda')
        ptcloud = (torch.rand(4, 2048, 3, device=device) * 2 - 1) * 16 + 16
        cubic_features = torch.rand(4, 32, 32, 32, 32, device=device)
        point_features = CubicFeatureSamplingFunction.apply(ptcloud, cubic_features, 1)
        self.assertEqual(point_features.size(), torch.Size([4, 2048, 8, 32]))


if __name__ == '__main__':
    unittest.main()
