import torch
import torch.nn as nn
import torch.nn.functional as F

from nerv.training import BaseModel

from .savi import SlotAttention
from .dVAE import dVAE
from .utils import SoftPositionEmbed, torch_cat, get_lr
from .steve_transformer import STEVETransformerDecoder


def gumbel_softmax(logits, tau=1., hard=False, dim=-1):
    """Straight-through Gumbel-Softmax used by the dVAE tokenizer."""
    eps = torch.finfo(logits.dtype).tiny
    gumbels = -(torch.empty_like(logits).exponential_() + eps).log()
    gumbels = (logits + gumbels) / tau
    y_soft = F.softmax(gumbels, dim)
    if hard:
        index = y_soft.argmax(dim, keepdim=True)
        y_hard = torch.zeros_like(logits).scatter_(dim, index, 1.)
        return y_hard - y_soft.detach() + y_soft
    return y_soft


class SlotAttentionWMask(SlotAttention):
    """Slot attention module that also returns the attention masks."""

    def forward(self, inputs, slots):
        bs, num_inputs, inputs_size = inputs.shape
        inputs = self.norm_inputs(inputs)
        k = self.project_k(inputs)
        v = self.project_v(inputs)

        assert len(slots.shape) == 3

        for _ in range(self.num_iterations):
            slots_prev = slots
            q = self.project_q(slots)

            attn_logits = self.attn_scale * torch.einsum('bnc,bmc->bnm', k, q)
            attn = F.softmax(attn_logits, dim=-1)
            # `attn` has shape: [B, num_inputs, num_slots].

            attn_mask = attn  # keep the un-normalised masks for vis

            attn = attn + self.eps
            attn = attn / torch.sum(attn, dim=1, keepdim=True)
            updates = torch.einsum('bnm,bnc->bmc', attn, v)

            slots = self.gru(
                updates.view(bs * self.num_slots, self.slot_size),
                slots_prev.view(bs * self.num_slots, self.slot_size),
            )
            slots = slots.view(bs, self.num_slots, self.slot_size)
            slots = slots + self.mlp(slots)

        return slots, attn_mask


class STEVE(BaseModel):
    """SA model with TransformerDecoder predicting patch tokens."""

    def __init__(
        self,
        resolution,
        clip_len,
        slot_dict=dict(
            num_slots=7,
            slot_size=128,
            slot_mlp_size=256,
            num_iterations=2,
        ),
        dvae_dict=dict(
            down_factor=4,
            vocab_size=4096,
            dvae_ckp_path='',
        ),
        enc_dict=dict(
            enc_channels=(3, 64, 64, 64, 64),
            enc_ks=5,
            enc_out_channels=128,
            enc_norm='',
        ),
        dec_dict=dict(
            dec_num_layers=4,
            dec_num_heads=4,
            dec_d_model=128,
        ),
        pred_dict=dict(
            pred_type='transformer',
            pred_rnn=True,
            pred_norm_first=True,
            pred_num_layers=2,
            pred_num_heads=4,
            pred_ffn_dim=512,
            pred_sg_every=None,
        ),
        loss_dict=dict(
            use_img_recon_loss=False,
        ),
        eps=1e-6,
    ):
        super().__init__()

        self.resolution = resolution
        self.clip_len = clip_len
        self.eps = eps

        self.slot_dict = slot_dict
        self.dvae_dict = dvae_dict
        self.enc_dict = enc_dict
        self.dec_dict = dec_dict
        self.pred_dict = pred_dict
        self.loss_dict = loss_dict

        self._build_slot_attention()
        self._build_dvae()
        self._build_encoder()
        self._build_decoder()
        self._build_predictor()
        self._build_loss()

        self.testing = False

    def _build_slot_attention(self):
        self.num_slots = self.slot_dict['num_slots']
        self.slot_size = self.slot_dict['slot_size']
        self.init_latents = nn.Parameter(
            nn.init.normal_(torch.empty(1, self.num_slots, self.slot_size)))
        self.slot_attention = SlotAttentionWMask(
            in_features=self.enc_dict['enc_out_channels'],
            num_iterations=self.slot_dict['num_iterations'],
            num_slots=self.num_slots,
            slot_size=self.slot_size,
            mlp_hidden_size=self.slot_dict['slot_mlp_size'],
            eps=self.eps,
        )

    def _build_dvae(self):
        self.vocab_size = self.dvae_dict['vocab_size']
        self.down_factor = self.dvae_dict['down_factor']
        self.dvae = dVAE(vocab_size=self.vocab_size, img_channels=3)
        ckp_path = self.dvae_dict['dvae_ckp_path']
        assert ckp_path, 'Please provide pretrained dVAE weight'
        ckp = torch.load(ckp_path, map_location='cpu')
        if 'state_dict' in ckp:
            ckp = ckp['state_dict']
        ckp = {k[5:]: v for k, v in ckp.items() if k.startswith('dvae.')}
        self.dvae.load_state_dict(ckp)
        # dVAE is frozen when training STEVE
        for p in self.dvae.parameters():
            p.requires_grad = False
        self.dvae.eval()

    def _build_encoder(self):
        from nerv.models import conv_norm_act
        enc_channels = list(self.enc_dict['enc_channels'])
        ks = self.enc_dict['enc_ks']
        layers = len(enc_channels) - 1
        self.encoder = nn.Sequential(*[
            conv_norm_act(
                enc_channels[i],
                enc_channels[i + 1],
                kernel_size=ks,
                stride=2 if (i == 0 and self.resolution[0] == 128) else 1,
                norm=self.enc_dict['enc_norm'],
                act='relu' if i != (layers - 1) else '',
            ) for i in range(layers)
        ])
        if self.resolution[0] == 128:
            self.visual_resolution = tuple(i // 2 for i in self.resolution)
        else:
            self.visual_resolution = self.resolution
        self.encoder_pos_embedding = SoftPositionEmbed(enc_channels[-1],
                                                       self.visual_resolution)
        out_ch = self.enc_dict['enc_out_channels']
        self.encoder_out_layer = nn.Sequential(
            nn.LayerNorm(enc_channels[-1]),
            nn.Linear(enc_channels[-1], out_ch),
            nn.ReLU(),
            nn.Linear(out_ch, out_ch),
        )

    def _build_decoder(self):
        d_model = self.dec_dict['dec_d_model']
        self.h = self.resolution[0] // self.down_factor
        self.w = self.resolution[1] // self.down_factor
        num_patches = self.h * self.w
        self.bos_token = nn.Parameter(torch.zeros(1, 1, d_model))
        nn.init.xavier_uniform_(self.bos_token)
        self.dict = nn.Embedding(self.vocab_size, d_model)
        self.pos_emb = nn.Parameter(torch.zeros(1, num_patches + 1, d_model))
        nn.init.trunc_normal_(self.pos_emb, std=0.02)
        self.slot_proj = nn.Linear(self.slot_size, d_model, bias=False)
        self.tf_dec = STEVETransformerDecoder(
            d_model=d_model,
            num_heads=self.dec_dict['dec_num_heads'],
            num_layers=self.dec_dict['dec_num_layers'],
            max_len=num_patches,
        )
        self.head = nn.Linear(d_model, self.vocab_size, bias=False)

    def _build_predictor(self):
        from .predictor import TransformerPredictor, RNNPredictorWrapper
        self.predictor = TransformerPredictor(
            self.slot_size,
            self.pred_dict['pred_num_layers'],
            self.pred_dict['pred_num_heads'],
            self.pred_dict['pred_ffn_dim'],
            norm_first=self.pred_dict['pred_norm_first'],
        )
        if self.pred_dict['pred_rnn']:
            self.predictor = RNNPredictorWrapper(
                self.predictor,
                input_size=self.slot_size,
                hidden_size=self.slot_size * 2,
                num_layers=1,
                rnn_cell='LSTM',
                sg_every=self.pred_dict['pred_sg_every'],
            )

    def _build_loss(self):
        self.use_img_recon_loss = self.loss_dict['use_img_recon_loss']

    def _get_encoder_out(self, img):
        encoder_out = self.encoder(img)
        encoder_out = self.encoder_pos_embedding(encoder_out)
        encoder_out = torch.flatten(encoder_out, start_dim=2, end_dim=3)
        encoder_out = encoder_out.permute(0, 2, 1).contiguous()
        return self.encoder_out_layer(encoder_out)

    def encode(self, img, prev_slots=None):
        B, T = img.shape[:2]
        encoder_out = self._get_encoder_out(img.flatten(0, 1))
        encoder_out = encoder_out.unflatten(0, (B, T))
        init_latents = self.init_latents.repeat(B, 1, 1)
        all_slots, all_masks = [], []
        for idx in range(T):
            latents = init_latents if prev_slots is None \
                else self.predictor(prev_slots)
            slots, masks = self.slot_attention(encoder_out[:, idx], latents)
            all_slots.append(slots)
            all_masks.append(masks.transpose(-1, -2).unflatten(
                -1, self.visual_resolution))
            prev_slots = slots
        slots = torch.stack(all_slots, dim=1)
        masks = torch.stack(all_masks, dim=1)
        return slots, masks, encoder_out

    @torch.no_grad()
    def _get_tokens(self, img):
        """Tokenize images with the frozen dVAE. Returns [B, h*w] ids."""
        logits = self.dvae.encode(img)  # [B, vocab, h, w]
        z_hard = gumbel_softmax(logits, tau=1., hard=True, dim=1)
        return z_hard.argmax(dim=1).flatten(1)

    def _decode_tokens(self, slots, tokens):
        """Teacher-forced autoregressive decoding of dVAE tokens."""
        B = slots.shape[0]
        emb = self.dict(tokens)
        emb = torch.cat([self.bos_token.expand(B, -1, -1), emb[:, :-1]], dim=1)
        emb = emb + self.pos_emb[:, :emb.shape[1]]
        memory = self.slot_proj(slots)
        out = self.tf_dec(emb, memory)
        return self.head(out)

    def forward(self, data_dict):
        img = data_dict['img']
        B, T = img.shape[:2]
        self.predictor.reset()
        slots, masks, _ = self.encode(img)
        out_dict = {'post_slots': slots, 'masks': masks}
        if self.testing:
            return out_dict
        flat_img = img.flatten(0, 1)
        tokens = self._get_tokens(flat_img)
        logits = self._decode_tokens(slots.flatten(0, 1), tokens)
        out_dict.update({'logits': logits, 'tokens': tokens})
        return out_dict

    def calc_train_loss(self, data_dict, out_dict):
        logits = out_dict['logits'].flatten(0, 1)
        tokens = out_dict['tokens'].flatten(0, 1)
        loss_dict = {'token_recon_loss': F.cross_entropy(logits, tokens)}
        return loss_dict

    @torch.no_grad()
    def calc_eval_loss(self, data_dict, out_dict):
        loss_dict = self.calc_train_loss(data_dict, out_dict)
        pred = out_dict['logits'].argmax(-1)
        loss_dict['token_acc'] = (pred == out_dict['tokens']).float().mean()
        return loss_dict

    @property
    def dtype(self):
        return self.slot_attention.dtype

    @property
    def device(self):
        return self.slot_attention.device
