# modified from https://github.com/KaihuaTang/VCTree-Scene-Graph-Generation
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F
from maskrcnn_benchmark.modeling.utils import cat
from maskrcnn_benchmark.structures.boxlist_ops import boxlist_iou
from .utils_motifs import obj_edge_vectors, to_onehot, nms_overlaps, encode_box_info
from .utils_treelstm import MultiLayer_BTreeLSTM
from .model_motifs import DecoderRNN


class ArbitraryTree(object):
    def __init__(self, idx, score, label=-1, box=None, is_root=False):
        self.index = int(idx)
        self.is_root = is_root
        self.score = float(score)
        self.children = []
        self.label = label
        self.embeded_label = None
        self.box = box.view(-1) if box is not None else None #[x1,y1,x2,y2]
        self.parent = None
        self.node_order = -1 # the n_th node added to the tree

    def generate_bi_tree(self):
        # generate a BiTree node, parent/child relationship are not inherited
        return BiTree(self.index, self.score, self.label, self.box, self.is_root)

    def add_child(self, child):
        child.parent = self
        self.children.append(child)

    def get_child_num(self):
        return len(self.children)

    def get_total_child(self):
        sum = 0
        sum += self.get_child_num()
        for i in range(self.get_child_num()):
            sum += self.children[i].get_total_child()
        return sum


class BiTree(object):
    def __init__(self, idx, node_score, label, box, is_root=False):
        self.index = int(idx)
        self.is_root = is_root
        self.left_child = None
        self.right_child = None
        self.parent = None
        self.num_child = 0
        self.label = label
        self.box = box
        self.node_score = node_score
        self.state_c = None
        self.state_h = None
        self.state_c_backward = None
        self.state_h_backward = None

    def add_left_child(self, child):
        if self.left_child is not None:
            print('Left child already exist')
            return
        child.parent = self
        self.left_child = child
        self.num_child += 1

    def add_right_child(self, sibling):
        if self.right_child is not None:
            print('Right child already exist')
            return
        sibling.parent = self
        self.right_child = sibling
        self.num_child += 1


def generate_forest(pair_scores, proposals, mode):
    """
    generate a list of trees that covers all the objects in a batch
    proposals.bbox: [obj_num, (x1, y1, x2, y2)]
    pair_scores: [obj_num, obj_num]
    output: list of trees, each present a chunk of overlaping objects
    """
    output_forest = []  # the list of trees, each one is a chunk of overlapping objects

    for pair_score, proposal in zip(pair_scores, proposals):
        num_obj = pair_score.shape[0]
        if mode == 'predcls':
            obj_label = proposal.get_field('labels')
        else:
            obj_label = proposal.get_field('predict_logits')[:,1:].max(-1)[1] + 1

        assert pair_score.shape[0] == len(proposal)
        assert pair_score.shape[0] == pair_score.shape[1]
        node_scores = pair_score.mean(1).view(-1)
        root_idx = int(node_scores.max(-1)[1])

        root = ArbitraryTree(root_idx, float(node_scores[root_idx]), int(obj_label[root_idx]), proposal.bbox[root_idx], is_root=True)

        node_container = []
        remain_index = []
        # put all nodes into node container
        for idx in list(range(num_obj)):
            if idx == root_idx:
                continue
            new_node = ArbitraryTree(idx, float(node_scores[idx]), int(obj_label[idx]), proposal.bbox[idx])
            node_container.append(new_node)
            remain_index.append(idx)

        # iteratively generate tree
        gen_tree(node_container, pair_score, node_scores, root, remain_index, mode)
        output_forest.append(root)

    return output_forest


def gen_tree(node_container, pair_score, node_scores, root, remain_index, mode):
    """
    Step 1: Devide all nodes into left child container and right child container
    Step 2: From left child container and right child container, select their respective sub roots

    pair_scores: [obj_num, obj_num]
    node_scores: [obj_num]
    """
    num_nodes = len(node_container)
    device = pair_score.device
    # Step 0
    if num_nodes == 0:
        return
    # Step 1
    select_node = []
    select_index = []
    select_node.append(root)
    select_index.append(root.index)

    while len(node_container) > 0:
        wid = len(remain_index)
        select_indexs = torch.tensor(select_index, device=device, dtype=torch.int64)
        remain_indexs = torch.tensor(remain_index, device=device, dtype=torch.int64)
        select_score_map = pair_score[select_indexs][:, remain_indexs].view(-1)
        best_id = select_score_map.max(0)[1]

        depend_id = int(best_id) // wid
        insert_id = int(best_id) % wid
        best_depend_node = select_node[depend_id]
        best_insert_node = node_container[insert_id]
        best_depend_node.add_child(best_insert_node)

        select_node.append(best_insert_node)
        select_index.append(best_insert_node.index)
        node_container.remove(best_insert_node)
        remain_index.remove(best_insert_node.index)


def arbForest_to_biForest(forest):
    """
    forest: a set of arbitrary Tree
    output: a set of corresponding binary tree
    """
    output = []
    for i in range(len(forest)):
        result_tree = arTree_to_biTree(forest[i])
        output.append(result_tree)

    return output


def arTree_to_biTree(arTree):
    root_node = arTree.generate_bi_tree()
    arNode_to_biNode(arTree, root_node)
    return root_node


def arNode_to_biNode(arNode, biNode):
    if arNode.get_child_num() >= 1:
        new_bi_node = arNode.children[0].generate_bi_tree()
        biNode.add_left_child(new_bi_node)
        arNode_to_biNode(arNode.children[0], biNode.left_child)

    if arNode.get_child_num() > 1:
        current_bi_node = biNode.left_child
        for i in range(arNode.get_child_num() - 1):
            new_bi_node = arNode.children[i+1].generate_bi_tree()
            current_bi_node.add_right_child(new_bi_node)
            current_bi_node = current_bi_node.right_child
            arNode_to_biNode(arNode.children[i+1], current_bi_node)


def get_overlap_info(proposals):
    assert proposals[0].mode == 'xyxy'
    overlap_info = []
    for proposal in proposals:
        boxes = proposal.bbox
        intersection = boxlist_iou(proposal, proposal).float()  # num, num
        overlap = (intersection > 0.0).float()
        overlap_ratio = overlap.sum(1, keepdim=True) / (overlap.shape[0] * 1.0)
        info = torch.cat([overlap_ratio, intersection.mean(1, keepdim=True), intersection.max(1, keepdim=True)[0]], dim=-1)
        overlap_info.append(info)
    return torch.cat(overlap_info, dim=0)


class VCTreeLSTMContext(nn.Module):
    """
    Modified from neural-motifs to encode contexts for each objects
    """
    def __init__(self, config, obj_classes, rel_classes, statistics, in_channels):
        super(VCTreeLSTMContext, self).__init__()
        self.cfg = config
        self.obj_classes = obj_classes
        self.rel_classes = rel_classes
        self.num_obj_classes = len(obj_classes)

        # mode
        if self.cfg.MODEL.ROI_RELATION_HEAD.USE_GT_BOX:
            if self.cfg.MODEL.ROI_RELATION_HEAD.USE_GT_OBJECT_LABEL:
                self.mode = 'predcls'
            else:
                self.mode = 'sgcls'
        else:
            self.mode = 'sgdet'

        # word embedding
        self.embed_dim = self.cfg.MODEL.ROI_RELATION_HEAD.EMBED_DIM
        obj_embed_vecs = obj_edge_vectors(self.obj_classes, wv_dir=self.cfg.GLOVE_DIR, wv_dim=self.embed_dim)
        self.obj_embed1 = nn.Embedding(self.num_obj_classes, self.embed_dim)
        self.obj_embed2 = nn.Embedding(self.num_obj_classes, self.embed_dim)
        with torch.no_grad():
            self.obj_embed1.weight.copy_(obj_embed_vecs, non_blocking=True)
            self.obj_embed2.weight.copy_(obj_embed_vecs, non_blocking=True)

        # position embedding
        self.pos_embed = nn.Sequential(*[
            nn.Linear(9, 32), nn.BatchNorm1d(32, momentum= 0.001),
            nn.Linear(32, 128), nn.ReLU(inplace=True),
        ])
        self.overlap_embed = nn.Sequential(*[
            nn.Linear(6, 128), nn.ReLU(inplace=True),
        ])
        self.box_embed = nn.Sequential(*[
            nn.Linear(9, 128), nn.ReLU(inplace=True),
        ])

        # object & relation context
        self.obj_dim = in_channels
        self.dropout_rate = self.cfg.MODEL.ROI_RELATION_HEAD.CONTEXT_DROPOUT_RATE
        self.hidden_dim = self.cfg.MODEL.ROI_RELATION_HEAD.CONTEXT_HIDDEN_DIM
        self.nl_obj = self.cfg.MODEL.ROI_RELATION_HEAD.CONTEXT_OBJ_LAYER
        self.nl_edge = self.cfg.MODEL.ROI_RELATION_HEAD.CONTEXT_REL_LAYER
        assert self.nl_obj > 0 and self.nl_edge > 0

        co_occour = statistics['pred_dist'].float().sum(-1)
        assert co_occour.shape[0] == co_occour.shape[1]
        co_occour = co_occour / co_occour.sum()
        self.bi_freq_prior = nn.Linear(self.num_obj_classes*self.num_obj_classes, 1, bias=False)
        with torch.no_grad():
            self.bi_freq_prior.weight.copy_(co_occour.view(-1).unsqueeze(0), non_blocking=True)

        self.obj_reduce = nn.Linear(self.obj_dim, 128)
        self.emb_reduce = nn.Linear(self.embed_dim, 128)
        self.score_pre = nn.Linear(128 * 4, self.hidden_dim)
        self.score_sub = nn.Linear(self.hidden_dim, self.hidden_dim)
        self.score_obj = nn.Linear(self.hidden_dim, self.hidden_dim)
        self.vision_prior = nn.Linear(self.hidden_dim * 3 + 1, 1)

        self.obj_ctx_rnn = MultiLayer_BTreeLSTM(in_dim=self.obj_dim+self.embed_dim+128, out_dim=self.hidden_dim, num_layer=self.nl_obj, dropout=self.dropout_rate if self.nl_obj > 1 else 0)
        self.decoder_rnn = DecoderRNN(self.cfg, self.obj_classes, embed_dim=self.embed_dim,
                inputs_dim=self.hidden_dim + self.obj_dim + self.embed_dim + 128,
                hidden_dim=self.hidden_dim,
                rnn_drop=self.dropout_rate)
        self.edge_ctx_rnn = MultiLayer_BTreeLSTM(in_dim=self.embed_dim+self.hidden_dim+self.obj_dim, out_dim=self.hidden_dim, num_layer=self.nl_edge, dropout=self.dropout_rate if self.nl_edge > 1 else 0,)

        # untreated average features
        self.average_ratio = 0.0005
        self.effect_analysis = config.MODEL.ROI_RELATION_HEAD.CAUSAL.EFFECT_ANALYSIS

        if self.effect_analysis:
            self.register_buffer("untreated_dcd_feat", torch.zeros(self.hidden_dim + self.obj_dim + self.embed_dim + 128))
            self.register_buffer("untreated_obj_feat", torch.zeros(self.obj_dim+self.embed_dim + 128))
            self.register_buffer("untreated_edg_feat", torch.zeros(self.embed_dim + self.obj_dim))

    def obj_ctx(self, num_objs, obj_feats, proposals, obj_labels=None, vc_forest=None, ctx_average=False):
        obj_feats = obj_feats.split(num_objs, dim=0)
        obj_labels = obj_labels.split(num_objs, dim=0) if obj_labels is not None else None

        obj_ctxs = []
        obj_preds = []
        obj_dists = []
        for i, (feat, tree, proposal) in enumerate(zip(obj_feats, vc_forest, proposals)):
            encod_rep = self.obj_ctx_rnn(tree, feat, len(proposal))
            obj_ctxs.append(encod_rep)
            # Decode in order
            if self.mode != 'predcls':
                if (not self.training) and self.effect_analysis and ctx_average:
                    decoder_inp = self.untreated_dcd_feat.view(1, -1).expand(encod_rep.shape[0], -1)
                else:
                    decoder_inp = torch.cat((feat, encod_rep), 1)
                if self.training and self.effect_analysis:
                    self.untreated_dcd_feat = self.moving_average(self.untreated_dcd_feat, decoder_inp)
                label = obj_labels[i] if obj_labels is not None else None
                obj_dist = self.decoder_rnn_tree_free(decoder_inp)
                obj_pred = obj_dist[:, 1:].max(1)[1] + 1
            else:
                assert obj_labels is not None
                obj_pred = obj_labels[i]
                obj_dist = to_onehot(obj_pred, self.num_obj_classes)
            obj_preds.append(obj_pred)
            obj_dists.append(obj_dist)

        obj_ctxs = cat(obj_ctxs, dim=0)
        obj_preds = cat(obj_preds, dim=0)
        obj_dists = cat(obj_dists, dim=0)
        return obj_ctxs, obj_preds, obj_dists

    def decoder_rnn_tree_free(self, decoder_inp):
        # SGCls/SGDet: a plain linear classifier on top of the tree context (no NMS here)
        return self.decoder_rnn.out_obj(self.decoder_rnn.input_linearity(
            torch.cat((decoder_inp, self.decoder_rnn.obj_embed.weight[0, None].expand(decoder_inp.shape[0], -1)), 1)
        )[:, :self.hidden_dim])

    def edge_ctx(self, num_objs, obj_feats, forest):
        inp_feats = obj_feats.split(num_objs, dim=0)

        edge_ctxs = []
        for feat, tree, num_obj in zip(inp_feats, forest, num_objs):
            edge_rep = self.edge_ctx_rnn(tree, feat, num_obj)
            edge_ctxs.append(edge_rep)
        edge_ctxs = cat(edge_ctxs, dim=0)
        return edge_ctxs

    def forward(self, x, proposals, rel_pair_idxs, logger=None, all_average=False, ctx_average=False):
        num_objs = [len(b) for b in proposals]
        # labels will be used in DecoderRNN during training (for nms)
        if self.training or self.cfg.MODEL.ROI_RELATION_HEAD.USE_GT_BOX:
            obj_labels = cat([proposal.get_field("labels") for proposal in proposals], dim=0)
        else:
            obj_labels = None

        if self.cfg.MODEL.ROI_RELATION_HEAD.USE_GT_OBJECT_LABEL:
            obj_embed = self.obj_embed1(obj_labels.long())
            obj_logits = to_onehot(obj_labels, self.num_obj_classes)
        else:
            obj_logits = cat([proposal.get_field("predict_logits") for proposal in proposals], dim=0).detach()
            obj_embed = F.softmax(obj_logits, dim=1) @ self.obj_embed1.weight

        box_info = encode_box_info(proposals)
        pos_embed = self.pos_embed(box_info)

        batch_size = x.shape[0]
        if all_average and self.effect_analysis and (not self.training):
            obj_pre_rep = self.untreated_obj_feat.view(1, -1).expand(batch_size, -1)
        else:
            obj_pre_rep = cat((x, obj_embed, pos_embed), -1)

        # construct VCTree
        box_inp = self.box_embed(box_info)
        pair_inp = self.overlap_embed(torch.cat([get_overlap_info(proposals), get_overlap_info(proposals)], -1))
        bi_inp = cat((self.obj_reduce(x.detach()), self.emb_reduce(obj_embed.detach()), box_inp, pair_inp), -1)
        bi_preds, vc_scores = self.vctree_score_net(num_objs, bi_inp, obj_logits)
        forest = generate_forest(vc_scores, proposals, self.mode)
        vc_forest = arbForest_to_biForest(forest)

        # object level contextual feature
        obj_ctxs, obj_preds, obj_dists = self.obj_ctx(num_objs, obj_pre_rep, proposals, obj_labels, vc_forest, ctx_average=ctx_average)
        # edge level contextual feature
        obj_embed2 = self.obj_embed2(obj_preds.long())

        if (all_average or ctx_average) and self.effect_analysis and (not self.training):
            obj_rel_rep = cat((self.untreated_edg_feat.view(1, -1).expand(batch_size, -1), obj_ctxs), dim=-1)
        else:
            obj_rel_rep = cat((obj_embed2, x, obj_ctxs), -1)

        edge_ctx = self.edge_ctx(num_objs, obj_rel_rep, vc_forest)

        # memorize average feature
        if self.training and self.effect_analysis:
            self.untreated_obj_feat = self.moving_average(self.untreated_obj_feat, obj_pre_rep)
            self.untreated_edg_feat = self.moving_average(self.untreated_edg_feat, cat((obj_embed2, x), -1))

        return obj_dists, obj_preds, edge_ctx, bi_preds

    def moving_average(self, holder, input):
        assert len(input.shape) == 2
        with torch.no_grad():
            holder = holder * (1 - self.average_ratio) + self.average_ratio * input.mean(0).view(-1)
        return holder

    def vctree_score_net(self, num_objs, roi_feat, roi_dist):
        roi_dist = roi_dist.detach()
        roi_dist = F.softmax(roi_dist, dim=-1)
        # separate into each image
        roi_feat = F.relu(self.score_pre(roi_feat))  # 512
        sub_feat = F.relu(self.score_sub(roi_feat))  # 512
        obj_feat = F.relu(self.score_obj(roi_feat))  # 512

        sub_feats = sub_feat.split(num_objs, dim=0)
        obj_feats = obj_feat.split(num_objs, dim=0)
        roi_dists = roi_dist.split(num_objs, dim=0)

        bi_preds = []
        vc_scores = []
        for sub, obj, dist in zip(sub_feats, obj_feats, roi_dists):
            # only used to calculate loss
            num_obj = sub.shape[0]
            num_dim = sub.shape[-1]
            sub = sub.view(1, num_obj, num_dim).expand(num_obj, num_obj, num_dim)   # num_obj, num_obj, num_dim
            obj = obj.view(num_obj, 1, num_dim).expand(num_obj, num_obj, num_dim)   # num_obj, num_obj, num_dim
            sub_dist = dist.view(1, num_obj, -1).expand(num_obj, num_obj, -1).unsqueeze(2)   # num_obj, num_obj, 1, num_dist
            obj_dist = dist.view(num_obj, 1, -1).expand(num_obj, num_obj, -1).unsqueeze(3)   # num_obj, num_obj, num_dist, 1
            joint_dist = (sub_dist * obj_dist).view(num_obj, num_obj, -1) # num_obj, num_obj, num_dist*num_dist

            co_prior = self.bi_freq_prior(joint_dist.view(num_obj*num_obj, -1)).view(num_obj, num_obj)
            vis_prior = self.vision_prior(torch.cat([co_prior.unsqueeze(-1), sub, obj, sub * obj], dim=-1).view(num_obj*num_obj, -1)).view(num_obj, num_obj)
            joint_pred = torch.sigmoid(vis_prior) * co_prior

            bi_preds.append(vis_prior)
            vc_scores.append(joint_pred)

        return bi_preds, vc_scores
