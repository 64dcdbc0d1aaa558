"""
##################################################################################################
# Copyright Info :    Copyright (c) Davar Lab @ Hikvision Research Institute. All rights reserved.
# Filename       :    post_lgpma.py
# Abstract       :    Post processing of lgpma detector. Get the complete table structure from
#                     aligned cell bboxes and the local/global pyramid masks.
#
# Current Version:    1.0.0
# Date           :    2021-09-18
##################################################################################################
"""
import numpy as np
import cv2

from davarocr.davar_common.core import POSTPROCESS
from davarocr.davar_common.core.builder import BasePostDetector
from .generate_html import area_to_html, format_html
from .post_utils import get_table_bbox, adjacency_matrix, nms_inter_classes, bbox2adj, \
    rect_max_iou, refine_bboxes as refine_cells


def refine_bbox_with_mask(bboxes, pyramid_mask, thresh=0.5):
    """ Refine the cell bbox boundaries with the local pyramid mask (horizontal & vertical channels).

    Args:
        bboxes (np.ndarray): cell boxes, shape [N, 4]
        pyramid_mask (list(np.ndarray)): per cell, 2 x h x w soft masks
        thresh (float): threshold for pyramid mask response

    Returns:
        np.ndarray: refined boxes
    """
    refined = bboxes.copy()
    for i, (box, mask) in enumerate(zip(bboxes, pyramid_mask)):
        x1, y1, x2, y2 = [int(v) for v in box[:4]]
        if x2 <= x1 or y2 <= y1:
            continue
        hor, ver = mask[0], mask[1]
        cols = np.where(hor.max(axis=0) > thresh)[0]
        rows = np.where(ver.max(axis=1) > thresh)[0]
        if len(cols) > 0:
            refined[i, 0] = x1 + cols[0] * (x2 - x1) / hor.shape[1]
            refined[i, 2] = x1 + (cols[-1] + 1) * (x2 - x1) / hor.shape[1]
        if len(rows) > 0:
            refined[i, 1] = y1 + rows[0] * (y2 - y1) / ver.shape[0]
            refined[i, 3] = y1 + (rows[-1] + 1) * (y2 - y1) / ver.shape[0]
    return refined


def get_empty_cells(bboxes, global_seg, table_box, thresh=0.5, min_area=25):
    """ Find regions of the global segmentation map not covered by any non-empty cell; these are
    candidate empty cells to be merged into the grid.
    """
    x1, y1, x2, y2 = [int(v) for v in table_box]
    seg = (global_seg[y1:y2, x1:x2] > thresh).astype(np.uint8)
    for box in bboxes:
        bx1, by1, bx2, by2 = [int(v) for v in box[:4]]
        seg[max(by1 - y1, 0):max(by2 - y1, 0), max(bx1 - x1, 0):max(bx2 - x1, 0)] = 0
    num, labels, stats, _ = cv2.connectedComponentsWithStats(seg, connectivity=4)
    empty = []
    for k in range(1, num):
        x, y, w, h, area = stats[k]
        if area >= min_area:
            empty.append([x + x1, y + y1, x + x1 + w, y + y1 + h])
    return np.array(empty, dtype=np.float32).reshape(-1, 4)


def bboxes_to_grid(bboxes, row_adj, col_adj):
    """ Turn the adjacency matrices into (start_row, start_col, end_row, end_col) per cell via
    connected components over the 'same row' / 'same column' relations.
    """
    n = len(bboxes)
    row_ids = -np.ones(n, dtype=np.int64)
    col_ids = -np.ones(n, dtype=np.int64)

    order_y = np.argsort([b[1] for b in bboxes])
    cur = 0
    for idx in order_y:
        if row_ids[idx] >= 0:
            continue
        stack = [idx]
        while stack:
            j = stack.pop()
            if row_ids[j] >= 0:
                continue
            row_ids[j] = cur
            stack.extend(np.where(row_adj[j] > 0)[0].tolist())
        cur += 1

    order_x = np.argsort([b[0] for b in bboxes])
    cur = 0
    for idx in order_x:
        if col_ids[idx] >= 0:
            continue
        stack = [idx]
        while stack:
            j = stack.pop()
            if col_ids[j] >= 0:
                continue
            col_ids[j] = cur
            stack.extend(np.where(col_adj[j] > 0)[0].tolist())
        cur += 1

    cells = np.stack([row_ids, col_ids, row_ids, col_ids], axis=1) if n else np.zeros((0, 4), np.int64)
    return cells


@POSTPROCESS.register_module()
class PostLGPMA(BasePostDetector):
    """Get the format html of table
    """

    def __init__(self,
                 refine_bboxes=False,
                 nms_inter=True,
                 nms_threshold=0.3,
                 max_side_merge=False,
                 ):
        """
        Args:
            refine_bboxes(bool): whether refine bboxes of aligned cells according to pyramid masks.
            nms_inter(bool): whether using nms inter classes.
            nms_threshold(float): nsm threshold
            max_side_merge(bool): whether merge empty cells by the max side of table.
        """

        super().__init__()
        self.refine_bboxes = refine_bboxes
        self.nms_inter = nms_inter
        self.nms_threshold = nms_threshold
        self.max_side_merge = max_side_merge

    def post_processing(self, batch_result, **kwargs):
        """
        Args:
            batch_result(list(Tensor)): prediction results,
                like [(box_result, seg_result, local_pyramid_masks, global_pyramid_masks), ...]
            **kwargs: other parameters

        Returns:
            list(str): Format results, like [html of table1 (str), html of table2 (str), ...]
        """
        table_results = []
        for result in batch_result:
            table_result = dict()

            # Processing bboxes of aligned cells, such as nms between all classes and bboxes refined according to lpma
            bboxes_results = result[0]
            if self.nms_inter:
                bboxes_results, labels = nms_inter_classes(bboxes_results, self.nms_threshold)
                labels = [[lab[0]] for lab in labels]
            else:
                labels = [[0]] * len(bboxes_results[0])
                bboxes_results = bboxes_results[0]

            if self.refine_bboxes:
                pyramid_masks = result[1][0]
                bboxes_results = refine_bbox_with_mask(bboxes_results, pyramid_masks)

            # Initialize the table bbox with the bounding rectangle of all cells
            table_bbox = get_table_bbox(bboxes_results)

            # Recover the empty cells from the global segmentation map
            global_seg = result[2] if len(result) > 2 else None
            if global_seg is not None and len(bboxes_results):
                empty = get_empty_cells(bboxes_results, global_seg[0], table_bbox)
                if len(empty):
                    bboxes_results = np.concatenate([bboxes_results[:, :4], empty], axis=0)
                    labels = labels + [[1]] * len(empty)

            # Row / column adjacency from the (refined) aligned bboxes
            row_adj, col_adj = adjacency_matrix(bboxes_results)
            cells = bboxes_to_grid(bboxes_results, row_adj, col_adj)

            # Assemble html
            html_str_rec = area_to_html(cells, labels, bboxes_results)
            table_result['html'] = format_html(html_str_rec)
            table_result['content_ann'] = {'bboxes': [b[:4].tolist() for b in bboxes_results],
                                           'labels': labels,
                                           'cells': cells.tolist()}
            table_results.append(table_result)

        return table_results
