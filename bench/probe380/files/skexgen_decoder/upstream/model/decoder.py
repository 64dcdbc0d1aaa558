import torch
import torch.nn as nn
import torch.nn.functional as F
from .layers.transformer import *
from .layers.improved_transformer import *
from .network import *
from config import *


def top_k_top_p_filtering(logits, top_k=0, top_p=0.0, filter_value=-float('Inf')):
    """ Filter a distribution of logits using top-k and/or nucleus (top-p) filtering
        Args:
            logits: logits distribution shape (vocabulary size)
            top_k >0: keep only top k tokens with highest probability (top-k filtering).
            top_p >0.0: keep the top tokens with cumulative probability >= top_p (nucleus filtering).
    """
    top_k = min(top_k, logits.size(-1))  # Safety check
    if top_k > 0:
        # Remove all tokens with a probability less than the last token of the top-k
        indices_to_remove = logits < torch.topk(logits, top_k)[0][..., -1, None]
        logits[indices_to_remove] = filter_value

    if top_p > 0.0:
        sorted_logits, sorted_indices = torch.sort(logits, descending=True)
        cumulative_probs = torch.cumsum(F.softmax(sorted_logits, dim=-1), dim=-1)

        # Remove tokens with cumulative probability above the threshold
        sorted_indices_to_remove = cumulative_probs > top_p
        # Shift the indices to the right to keep also the first token above the threshold
        sorted_indices_to_remove[..., 1:] = sorted_indices_to_remove[..., :-1].clone()
        sorted_indices_to_remove[..., 0] = 0

        # scatter sorted tensors to original indexing
        indices_to_remove = sorted_indices_to_remove.scatter(dim=1, index=sorted_indices, src=sorted_indices_to_remove)
        logits[indices_to_remove] = filter_value
    return logits


class SketchDecoder(nn.Module):
    """
    Autoregressive generative model
    """

    def __init__(self, max_pixel=64):
        super(SketchDecoder, self).__init__()
        self.embed_dim = DECODER_CONFIG['embed_dim']
        self.bbox_size = 2 ** 6 - 1
        self.max_pixel = max_pixel
        self.command_embed = nn.Embedding(3, self.embed_dim)
        self.coord_embed_x = nn.Embedding(self.bbox_size + 2, self.embed_dim)
        self.coord_embed_y = nn.Embedding(self.bbox_size + 2, self.embed_dim)
        self.pixel_embed = nn.Embedding(self.max_pixel * self.max_pixel + 3, self.embed_dim)
        self.pos_embed = PositionalEncoding(max_len=MAX_SKETCH_LEN, d_model=self.embed_dim)
        self.mempos_embed = PositionalEncoding(max_len=CODE_LEN, d_model=self.embed_dim)
        self.logit_fc = nn.Linear(self.embed_dim, self.max_pixel * self.max_pixel + 3)

        layers = TransformerDecoderLayerImproved(d_model=self.embed_dim,
                                                 dim_feedforward=DECODER_CONFIG['hidden_dim'],
                                                 nhead=DECODER_CONFIG['num_heads'],
                                                 dropout=DECODER_CONFIG['dropout_rate'])
        self.network = TransformerDecoder(layers, DECODER_CONFIG['num_layers'], LayerNorm(self.embed_dim))

    def forward(self, pixel, coord, mask, latent_z, latent_ext):
        """ forward pass """
        c_bs, c_seqlen, device = pixel.shape[0], pixel.shape[1], pixel.device

        # Context embedding values
        context_embedding = torch.zeros((1, c_bs, self.embed_dim)).to(device)  # [1, bs, dim]

        # Data input embedding
        if c_seqlen > 0:
            coord_embed = self.coord_embed_x(coord[..., 0]) + self.coord_embed_y(coord[..., 1])  # [bs, seqlen, dim]
            pixel_embed = self.pixel_embed(pixel)
            embed_inputs = pixel_embed + coord_embed
            embeddings = torch.cat([context_embedding, embed_inputs.transpose(0, 1)], axis=0)
        else:
            embeddings = context_embedding
        decoder_inputs = self.pos_embed(embeddings)

        memory = self.mempos_embed(torch.cat([latent_z, latent_ext], 1).transpose(0, 1))

        nopeak_mask = torch.nn.Transformer.generate_square_subsequent_mask(c_seqlen + 1).to(device)  # masked with -inf
        if mask is not None:
            # mask = torch.cat([(torch.zeros([c_bs, 1])==1).cuda(), mask], axis=1)
            mask = torch.cat([(torch.zeros([c_bs, 1]) == 1).to(device), mask], axis=1)
        decoder_out = self.network(tgt=decoder_inputs, memory=memory, memory_key_padding_mask=None,
                                   tgt_mask=nopeak_mask, tgt_key_padding_mask=mask)

        # Logits fc
        logits = self.logit_fc(decoder_out)  # [seqlen, bs, dim]
        return logits.transpose(1, 0)

    def sample(self, n_samples, latent_z, latent_ext, top_k=0, top_p=0.0):
        """ sample from distribution (top-k, top-p) """
        pix_samples = []
        xy_samples = []
        latent_ext_samples = []
        top_k = 0
        top_p = 0.5

        # Mapping from pixel index to xy coordiante
        pixel2xy = {}
        x = np.linspace(0, self.max_pixel - 1, self.max_pixel)
        y = np.linspace(0, self.max_pixel - 1, self.max_pixel)
        xx, yy = np.meshgrid(x, y)
        xy_grid = (np.array((xx.ravel(), yy.ravel())).T).astype(int)
        for pixel, xy in enumerate(xy_grid):
            pixel2xy[pixel] = xy + PIX_PAD

        # Sample per token
        for k in range(MAX_SKETCH_LEN):
            if k == 0:
                pixel_seq = None
                xy_seq = None

            # pass through model
            with torch.no_grad():
                p_pred = self.forward(pixel_seq, xy_seq, None, latent_z, latent_ext)
                p_logits = p_pred[:, -1, :]

            next_pixels = []
            # Top-p sampling of next pixel
            for logit in p_logits:
                filtered_logits = top_k_top_p_filtering(logit.unsqueeze(0), top_k=top_k, top_p=top_p)
                next_pixel = torch.multinomial(F.softmax(filtered_logits, dim=-1), 1)
                next_pixels.append(next_pixel.item())

            # Convert pixel index to xy coordinate
            next_xys = []
            for pixel in next_pixels:
                if pixel >= PIX_PAD:
                    xy = pixel2xy[pixel - PIX_PAD]
                else:
                    xy = np.array([pixel, pixel]).astype(int)
                next_xys.append(xy)
            next_xys = np.vstack(next_xys)  # [BS, 2]
            next_pixels = np.vstack(next_pixels)  # [BS, 1]

            # Add next tokens
            nextp_seq = torch.LongTensor(next_pixels).view(len(next_pixels), 1).cuda()
            nextxy_seq = torch.LongTensor(next_xys).unsqueeze(1).cuda()

            if pixel_seq is None:
                pixel_seq = nextp_seq
                xy_seq = nextxy_seq
            else:
                pixel_seq = torch.cat([pixel_seq, nextp_seq], 1)
                xy_seq = torch.cat([xy_seq, nextxy_seq], 1)

            # Early stopping
            done_idx = np.where(next_pixels == 0)[0]
            if len(done_idx) > 0:
                done_pixs = pixel_seq[done_idx]
                done_xys = xy_seq[done_idx]
                done_ext = latent_ext[done_idx]
                for pix, xy, ext in zip(done_pixs, done_xys, done_ext):
                    pix = pix.detach().cpu().numpy()
                    xy = xy.detach().cpu().numpy()
                    pix_samples.append(pix)
                    xy_samples.append(xy)
                    latent_ext_samples.append(ext.unsqueeze(0))

            left_idx = np.where(next_pixels != 0)[0]
            if len(left_idx) == 0:
                break  # no more jobs to do
            pixel_seq = pixel_seq[left_idx]
            xy_seq = xy_seq[left_idx]
            latent_z = latent_z[left_idx]
            latent_ext = latent_ext[left_idx]

        return pix_samples, xy_samples, latent_ext_samples


class ExtDecoder(nn.Module):
    """ Autoregressive generative model for the extrude sequence """

    def __init__(self):
        super(ExtDecoder, self).__init__()
        self.embed_dim = DECODER_CONFIG['embed_dim']
        self.ext_embed = nn.Embedding(2 ** CAD_BIT + EXT_PAD, self.embed_dim)
        self.pos_embed = PositionalEncoding(max_len=MAX_EXT, d_model=self.embed_dim)
        self.logit_fc = nn.Linear(self.embed_dim, 2 ** CAD_BIT + EXT_PAD)
        layers = TransformerDecoderLayerImproved(d_model=self.embed_dim,
                                                 dim_feedforward=DECODER_CONFIG['hidden_dim'],
                                                 nhead=DECODER_CONFIG['num_heads'],
                                                 dropout=DECODER_CONFIG['dropout_rate'])
        self.network = TransformerDecoder(layers, DECODER_CONFIG['num_layers'], LayerNorm(self.embed_dim))

    def forward(self, ext_seq, mask, latent_z, latent_sketch):
        c_bs, c_seqlen, device = ext_seq.shape[0], ext_seq.shape[1], ext_seq.device
        context_embedding = torch.zeros((1, c_bs, self.embed_dim), device=device)
        if c_seqlen > 0:
            embeddings = torch.cat([context_embedding, self.ext_embed(ext_seq).transpose(0, 1)], axis=0)
        else:
            embeddings = context_embedding
        decoder_inputs = self.pos_embed(embeddings)
        memory = torch.cat([latent_z, latent_sketch], 1).transpose(0, 1)
        nopeak_mask = torch.nn.Transformer.generate_square_subsequent_mask(c_seqlen + 1).to(device)
        if mask is not None:
            mask = torch.cat([torch.zeros([c_bs, 1], dtype=torch.bool, device=device), mask], axis=1)
        decoder_out = self.network(tgt=decoder_inputs, memory=memory, memory_key_padding_mask=None,
                                   tgt_mask=nopeak_mask, tgt_key_padding_mask=mask)
        return self.logit_fc(decoder_out).transpose(1, 0)

    def sample(self, n_samples, latent_z, latent_sketch, top_k=0, top_p=0.0):
        ext_seq = torch.zeros((n_samples, 0), dtype=torch.long).cuda()
        finished = torch.zeros(n_samples, dtype=torch.bool, device=ext_seq.device)
        for k in range(MAX_EXT):
            with torch.no_grad():
                logits = self.forward(ext_seq, None, latent_z, latent_sketch)[:, -1, :]
            filtered = top_k_top_p_filtering(logits, top_k=top_k, top_p=top_p)
            next_ext = torch.multinomial(F.softmax(filtered, dim=-1), 1)
            next_ext[finished] = 0
            ext_seq = torch.cat([ext_seq, next_ext], 1)
            finished = finished | (next_ext.squeeze(1) == 0)
            if finished.all():
                break
        ext_mask = ext_seq == 0
        return ext_seq, ext_mask
