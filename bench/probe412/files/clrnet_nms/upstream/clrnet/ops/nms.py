# Copyright (c) 2018, Grégoire Payen de La Garanderie, Durham University
# All rights reserved.
#
# Redistribution and use in source and binary forms, with or without
# modification, are permitted provided that the following conditions are met:
#
# * Redistributions of source code must retain the above copyright notice, this
#   list of conditions and the following disclaimer.
#
# * Redistributions in binary form must reproduce the above copyright notice,
#   this list of conditions and the following disclaimer in the documentation
#   and/or other materials provided with the distribution.
#
# * Neither the name of the copyright holder nor the names of its
#   contributors may be used to endorse or promote products derived from
#   this software without specific prior written permission.
#
# THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS "AS IS"
# AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT LIMITED TO, THE
# IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A PARTICULAR PURPOSE ARE
# DISCLAIMED.

from . import nms_impl


def nms(boxes, scores, overlap, top_k):
    """Lane NMS (greedy, on the GPU).

    Args:
        boxes (Tensor): (N, 5 + S) lane proposals: 2 scores, start_y, start_x,
            length, then S x-coordinates (absolute, in pixels).
        scores (Tensor): (N,) confidence of each proposal.
        overlap (float): two lanes whose mean horizontal distance over the
            rows they share is below this threshold (pixels) are duplicates.
        top_k (int): keep at most this many lanes.

    Returns:
        keep (LongTensor), num_to_keep (int), parent_object_index (LongTensor)
    """
    return nms_impl.nms_forward(boxes, scores, overlap, top_k)
