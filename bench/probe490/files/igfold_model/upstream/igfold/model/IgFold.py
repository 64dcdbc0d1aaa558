import torch
import torch.nn as nn
import pytorch_lightning as pl
from einops import rearrange
from invariant_point_attention import IPABlock, InvariantPointAttention

from igfold.model.interface import IgFoldInput, IgFoldOutput
from igfold.model.components import TriangleGraphTransformer, IPAEncoder, IPATransformer
from igfold.utils.coordinates import get_ideal_coords, place_o_coords
from igfold.utils.general import exists
from igfold.utils.transforms import quaternion_to_matrix

ATOM_DIM = 3


class IgFold(pl.LightningModule):
    def __init__(
        self,
        config,
        num_bert_layers=8,
        bert_feat_dim=512,
        bert_attn_dim=64,
        node_dim=64,
        depth=4,
        gt_depth=1,
        gt_heads=8,
        gt_dim_head=32,
        temp_ipa_depth=2,
        temp_ipa_heads=8,
        str_ipa_depth=3,
        str_ipa_heads=8,
        dev_ipa_depth=2,
        dev_ipa_heads=4,
        lr=1e-3,
        weight_decay=0.0,
    ):
        super().__init__()

        self.save_hyperparameters()

        self.num_bert_layers = num_bert_layers
        self.bert_feat_dim = bert_feat_dim
        self.bert_attn_dim = bert_attn_dim
        self.node_dim = node_dim
        self.depth = depth
        self.gt_depth = gt_depth
        self.lr = lr
        self.weight_decay = weight_decay

        ### Embedding blocks

        self.seq_node_transform = nn.Sequential(
            nn.Linear(bert_feat_dim, node_dim),
            nn.ReLU(),
            nn.LayerNorm(node_dim),
        )
        self.seq_edge_transform = nn.Sequential(
            nn.Linear(bert_attn_dim, node_dim),
            nn.ReLU(),
            nn.LayerNorm(node_dim),
        )

        ### Triangle graph transformer blocks

        self.main_block = TriangleGraphTransformer(
            dim=node_dim,
            edge_dim=node_dim,
            depth=gt_depth,
            tri_dim_hidden=2 * node_dim,
            gt_depth=gt_depth,
            gt_heads=gt_heads,
            gt_dim_head=gt_dim_head,
        )

        ### Template integration blocks

        self.template_ipa = nn.ModuleList([
            InvariantPointAttention(
                dim=node_dim,
                heads=temp_ipa_heads,
                require_pairwise_repr=True,
            ) for _ in range(temp_ipa_depth)
        ])
        self.template_ln = nn.LayerNorm(node_dim)

        ### Structure module

        self.struct_encoder = IPAEncoder(
            dim=node_dim,
            depth=str_ipa_depth,
            heads=str_ipa_heads,
            require_pairwise_repr=True,
        )
        self.structure_ipa = IPATransformer(
            dim=node_dim,
            depth=str_ipa_depth,
            heads=str_ipa_heads,
            require_pairwise_repr=True,
        )

        ### Error prediction

        self.dev_node_transform = nn.Sequential(
            nn.Linear(bert_feat_dim, node_dim),
            nn.ReLU(),
            nn.LayerNorm(node_dim),
        )
        self.dev_edge_transform = nn.Sequential(
            nn.Linear(bert_attn_dim, node_dim),
            nn.ReLU(),
            nn.LayerNorm(node_dim),
        )
        self.dev_ipa = IPAEncoder(
            dim=node_dim,
            depth=dev_ipa_depth,
            heads=dev_ipa_heads,
            require_pairwise_repr=True,
        )
        self.dev_linear = nn.Linear(node_dim, 4)

    def get_tokens(self, seqs):
        if isinstance(seqs, str):
            seqs = [seqs]

        tokens = []
        for seq in seqs:
            tokens.append(torch.tensor([ord(c) for c in seq], device=self.device))
        return tokens

    def get_coords_tran_rot(self, temp_coords, batch_size, seq_len, center=True):
        res_coords = rearrange(temp_coords, "b (l a) d -> b l a d", l=seq_len)
        res_ideal_coords = repeat_ideal_coords(get_ideal_coords(center=center), batch_size, seq_len, self.device)
        _, rotations, translations = kabsch(res_ideal_coords, res_coords, return_translation_rotation=True)
        translations = rearrange(translations, "b l () d -> b l d")
        return translations, rotations

    def clean_input(self, input: IgFoldInput):
        embeddings = input.embeddings
        attentions = input.attentions
        template_coords = input.template_coords
        template_mask = input.template_mask
        batch_mask = input.batch_mask
        align_mask = input.align_mask
        coords_label = input.coords_label
        return_embeddings = input.return_embeddings

        res_batch_mask = (batch_mask.sum(-1) > 0) if exists(batch_mask) else None

        # Inputs arrive from AntiBERTy / PDB parsing on whatever device those ran on
        embeddings = [e.to(self.device) for e in embeddings]
        attentions = [a.to(self.device) for a in attentions]
        if exists(template_coords):
            template_coords = template_coords.to(self.device)
            template_mask = template_mask.to(self.device)

        return (embeddings, attentions, template_coords, template_mask, batch_mask,
                res_batch_mask, align_mask, coords_label, return_embeddings)

    def forward(self, input: IgFoldInput):
        (embeddings, attentions, temp_coords, temp_mask, batch_mask, res_batch_mask,
         align_mask, coords_label, return_embeddings) = self.clean_input(input)

        batch_size = embeddings[0].shape[0]
        seq_lens = [max(e.shape[1], 0) for e in embeddings]
        seq_len = sum(seq_lens)

        ### Prepare BERT features

        bert_feats = torch.cat(embeddings, dim=2)
        bert_feats = bert_feats[:, -1]  # last hidden layer
        bert_attn = torch.zeros(
            (batch_size, seq_len, seq_len, self.bert_attn_dim),
            device=self.device,
        )
        for i, (a, l) in enumerate(zip(attentions, seq_lens)):
            a = rearrange(a, "b n h l1 l2 -> b l1 l2 (n h)")
            cum_l = sum(seq_lens[:i])
            bert_attn[:, cum_l:cum_l + l, cum_l:cum_l + l, :] = a

        ### Node and edge features

        str_nodes = self.seq_node_transform(bert_feats)
        str_edges = self.seq_edge_transform(bert_attn)
        str_nodes, str_edges = self.main_block(str_nodes, str_edges, mask=res_batch_mask)
        gt_embs = str_nodes

        ### Template integration

        if exists(temp_coords):
            translations, rotations = self.get_coords_tran_rot(temp_coords, batch_size, seq_len)
            temp_res_mask = rearrange(temp_mask, "b (l a) -> b l a", l=seq_len).all(-1)
            for ipa in self.template_ipa:
                str_nodes = str_nodes + ipa(
                    str_nodes,
                    translations=translations,
                    rotations=rotations,
                    pairwise_repr=str_edges,
                    mask=temp_res_mask,
                )
            str_nodes = self.template_ln(str_nodes)

        structure_embs = str_nodes

        ### Structure module

        str_nodes = self.struct_encoder(str_nodes, str_edges, mask=res_batch_mask)
        ipa_coords, ipa_translations, ipa_quaternions = self.structure_ipa(
            str_nodes,
            translations=None,
            quaternions=None,
            pairwise_repr=str_edges,
            mask=res_batch_mask,
        )
        ipa_rotations = quaternion_to_matrix(ipa_quaternions)

        bb_coords = rearrange(ipa_coords[:, :, :4], "b l a d -> b (l a) d")
        flat_coords = rearrange(place_o_coords(ipa_coords), "b l a d -> b (l a) d")

        ### Error prediction

        dev_nodes = self.dev_node_transform(bert_feats)
        dev_edges = self.dev_edge_transform(bert_attn)
        dev_out_feats = self.dev_ipa(
            dev_nodes,
            dev_edges,
            translations=ipa_translations.detach(),
            rotations=ipa_rotations.detach(),
            mask=res_batch_mask,
        )
        dev_pred = nn.functional.relu(self.dev_linear(dev_out_feats))
        dev_pred = rearrange(dev_pred, "b l a -> b (l a)", a=4)

        output = IgFoldOutput(
            coords=flat_coords,
            prmsd=dev_pred,
            translations=ipa_translations,
            rotations=ipa_rotations,
            coords_loss=None,
            torsion_loss=None,
            bondlen_loss=None,
            prmsd_loss=None,
            loss=None,
            bert_embs=bert_feats if return_embeddings else None,
            gt_embs=gt_embs if return_embeddings else None,
            structure_embs=structure_embs if return_embeddings else None,
        )

        return output

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        return optimizer


def repeat_ideal_coords(ideal_coords, batch_size, seq_len, device):
    ideal_coords = torch.stack(ideal_coords, dim=0).to(device)
    return ideal_coords.unsqueeze(0).unsqueeze(0).expand(batch_size, seq_len, -1, -1)


def kabsch(mobile, stationary, return_translation_rotation=False):
    """Batched Kabsch superposition over the last two dims (atoms x xyz)."""
    mobile_mean = mobile.mean(dim=-2, keepdim=True)
    stationary_mean = stationary.mean(dim=-2, keepdim=True)
    mobile_c = mobile - mobile_mean
    stationary_c = stationary - stationary_mean

    cov = mobile_c.transpose(-1, -2) @ stationary_c
    u, _, vh = torch.linalg.svd(cov)
    d = torch.sign(torch.linalg.det(u @ vh))
    diag = torch.ones_like(u[..., 0])
    diag[..., -1] = d
    rotation = u @ torch.diag_embed(diag) @ vh

    aligned = (mobile_c @ rotation) + stationary_mean
    if return_translation_rotation:
        return aligned, rotation.transpose(-1, -2), stationary_mean
    return aligned
