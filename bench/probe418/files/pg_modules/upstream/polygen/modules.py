"""
PolyGen vertex and face models (PyTorch port).

Mirrors deepmind-research/polygen/modules.py: a TransformerDecoder over the
flattened, quantized (z, y, x) vertex sequence, and a pointer-network face
model that attends over the vertex embeddings produced by a TransformerEncoder.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


def _causal_mask(n):
    """Upper-triangular boolean mask, True where attention is NOT allowed."""
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1).cuda()


def top_k_logits(logits, k):
    if k == 0:
        return logits
    values, _ = torch.topk(logits, k=k, dim=-1)
    min_values = values[..., -1:]
    return torch.where(logits < min_values, torch.full_like(logits, -1e9), logits)


def top_p_logits(logits, p):
    """Nucleus sampling."""
    if p == 1:
        return logits
    seq, dim = logits.shape[1], logits.shape[2]
    logits = logits.reshape(-1, dim)
    sort_logits, sort_idx = torch.sort(logits, dim=-1, descending=True)
    probs = F.softmax(sort_logits, dim=-1).cumsum(dim=-1)
    # shift right so that the first token above the threshold is kept
    remove = probs > p
    remove[..., 1:] = remove[..., :-1].clone()
    remove[..., 0] = False
    sort_logits = sort_logits.masked_fill(remove, -1e9)
    logits = torch.empty_like(logits).scatter_(-1, sort_idx, sort_logits)
    return logits.reshape(-1, seq, dim)


def dequantize_verts(verts, n_bits=8, add_noise=False):
    min_range, max_range = -0.5, 0.5
    range_quantize = 2 ** n_bits - 1
    verts = verts.float()
    verts = verts * (max_range - min_range) / range_quantize + min_range
    if add_noise:
        verts = verts + torch.rand_like(verts) * (1.0 / range_quantize)
    return verts


class DecoderLayer(nn.Module):
    def __init__(self, hidden_size, fc_size, num_heads, dropout, cross_attention=False):
        super().__init__()
        self.ln1 = nn.LayerNorm(hidden_size)
        self.self_attn = nn.MultiheadAttention(hidden_size, num_heads, dropout=dropout, batch_first=True)
        self.cross_attention = cross_attention
        if cross_attention:
            self.ln_x = nn.LayerNorm(hidden_size)
            self.cross_attn = nn.MultiheadAttention(hidden_size, num_heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(hidden_size)
        self.fc = nn.Sequential(
            nn.Linear(hidden_size, fc_size), nn.ReLU(), nn.Dropout(dropout), nn.Linear(fc_size, hidden_size))
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, attn_mask, sequential_context=None, context_pad_mask=None):
        h = self.ln1(x)
        h, _ = self.self_attn(h, h, h, attn_mask=attn_mask, need_weights=False)
        x = x + self.dropout(h)
        if self.cross_attention and sequential_context is not None:
            h = self.ln_x(x)
            h, _ = self.cross_attn(h, sequential_context, sequential_context,
                                   key_padding_mask=context_pad_mask, need_weights=False)
            x = x + self.dropout(h)
        h = self.fc(self.ln2(x))
        return x + self.dropout(h)


class TransformerDecoder(nn.Module):
    """Pre-LN transformer decoder as used in PolyGen (re_zero disabled)."""

    def __init__(self, hidden_size=256, fc_size=1024, num_heads=4, num_layers=8,
                 dropout_rate=0.2, cross_attention=False):
        super().__init__()
        self.layers = nn.ModuleList([
            DecoderLayer(hidden_size, fc_size, num_heads, dropout_rate, cross_attention)
            for _ in range(num_layers)])
        self.ln_out = nn.LayerNorm(hidden_size)

    def forward(self, x, sequential_context=None, context_pad_mask=None):
        mask = _causal_mask(x.shape[1])
        for layer in self.layers:
            x = layer(x, mask, sequential_context, context_pad_mask)
        return self.ln_out(x)


class TransformerEncoder(nn.Module):
    def __init__(self, hidden_size=256, fc_size=1024, num_heads=4, num_layers=8, dropout_rate=0.2):
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            hidden_size, num_heads, fc_size, dropout_rate, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers)
        self.ln_out = nn.LayerNorm(hidden_size)

    def forward(self, x, pad_mask=None):
        return self.ln_out(self.encoder(x, src_key_padding_mask=pad_mask))


class VertexModel(nn.Module):
    """Autoregressive generative model of quantized mesh vertices."""

    def __init__(self, decoder_config, quantization_bits, class_conditional=False, num_classes=55,
                 max_num_input_verts=2500, use_discrete_embeddings=True):
        super().__init__()
        self.embedding_dim = decoder_config['hidden_size']
        self.class_conditional = class_conditional
        self.num_classes = num_classes
        self.max_num_input_verts = max_num_input_verts
        self.quantization_bits = quantization_bits
        self.use_discrete_embeddings = use_discrete_embeddings

        self.decoder = TransformerDecoder(**decoder_config)
        if class_conditional:
            self.class_embedding = nn.Embedding(num_classes, self.embedding_dim)
        self.coord_embedding = nn.Embedding(3, self.embedding_dim)
        self.pos_embedding = nn.Embedding(max_num_input_verts, self.embedding_dim)
        self.value_embedding = nn.Embedding(2 ** quantization_bits + 1, self.embedding_dim)
        self.zero_embedding = nn.Parameter(torch.zeros(1, 1, self.embedding_dim))
        self.project_to_logits = nn.Linear(self.embedding_dim, 2 ** quantization_bits + 1)

    @property
    def device(self):
        return self.zero_embedding.device

    def _prepare_context(self, batch):
        if self.class_conditional:
            global_context = self.class_embedding(batch['class_label']).unsqueeze(1)
        else:
            global_context = None
        return global_context, None

    def _embed_inputs(self, vertices, global_context_embedding=None):
        batch_size, seq_length = vertices.shape
        vertices_embeddings = self.value_embedding(vertices)
        coord_embeddings = self.coord_embedding(
            torch.arange(seq_length, device=vertices.device) % 3)
        pos_embeddings = self.pos_embedding(
            torch.div(torch.arange(seq_length, device=vertices.device), 3, rounding_mode='floor'))
        if global_context_embedding is None:
            zero_embed_tiled = self.zero_embedding.expand(batch_size, 1, self.embedding_dim)
        else:
            zero_embed_tiled = global_context_embedding
        embeddings = vertices_embeddings + (coord_embeddings + pos_embeddings)[None]
        return torch.cat([zero_embed_tiled, embeddings], dim=1)

    def _create_dist(self, vertices, global_context_embedding=None, sequential_context_embeddings=None,
                     temperature=1.0, top_k=0, top_p=1.0):
        decoder_inputs = self._embed_inputs(vertices, global_context_embedding)
        outputs = self.decoder(decoder_inputs, sequential_context=sequential_context_embeddings)
        logits = self.project_to_logits(outputs)
        logits = logits / temperature
        logits = top_k_logits(logits, top_k)
        logits = top_p_logits(logits, top_p)
        return Categorical(logits=logits)

    def forward(self, batch):
        global_context, seq_context = self._prepare_context(batch)
        # teacher forcing: drop the last token (the model predicts the stop token from the rest)
        return self._create_dist(batch['vertices_flat'][:, :-1], global_context, seq_context)

    @torch.no_grad()
    def sample(self, num_samples, context=None, max_sample_length=None, temperature=1.0,
               top_k=0, top_p=1.0, recenter_verts=True, only_return_complete=True):
        global_context, seq_context = self._prepare_context(context) if context is not None else (None, None)
        max_sample_length = max_sample_length or self.max_num_input_verts
        samples = torch.zeros([num_samples, 0], dtype=torch.long, device=self.device)

        for _ in range(max_sample_length * 3 + 1):
            dist = self._create_dist(samples, global_context, seq_context,
                                     temperature=temperature, top_k=top_k, top_p=top_p)
            next_sample = dist.sample()[:, -1:]
            samples = torch.cat([samples, next_sample], dim=1)
            if (samples == 0).any(dim=-1).all():
                break

        # Check if samples completed. Samples are complete if the stopping token is produced.
        completed = (samples == 0).any(dim=-1)
        stop_index_completed = torch.argmax((samples == 0).int(), dim=-1)
        stop_index_incomplete = torch.full_like(stop_index_completed, max_sample_length * 3)
        stop_index = torch.where(completed, stop_index_completed, stop_index_incomplete)
        num_vertices = torch.div(stop_index, 3, rounding_mode='floor')

        # Convert to 3D vertices by reshaping and re-ordering x -> y -> z
        samples = samples[:, :(torch.max(num_vertices) * 3)] - 1
        verts_dequantized = dequantize_verts(samples, self.quantization_bits)
        vertices = verts_dequantized.reshape(num_samples, -1, 3)
        vertices = vertices[..., [2, 1, 0]]

        # Pad samples to max sample length. This is required in order to concatenate
        # Samples across different replicator instances. Pad with stopping tokens
        # for incomplete samples.
        pad_size = max_sample_length - vertices.shape[1]
        vertices = F.pad(vertices, (0, 0, 0, pad_size))

        # 3D Vertex mask
        vertices_mask = (torch.arange(max_sample_length, device=self.device)[None] < num_vertices[:, None]).float()

        if recenter_verts:
            vert_max = torch.max(vertices - 1e10 * (1. - vertices_mask)[..., None], dim=1, keepdim=True)[0]
            vert_min = torch.min(vertices + 1e10 * (1. - vertices_mask)[..., None], dim=1, keepdim=True)[0]
            vert_centers = 0.5 * (vert_max + vert_min)
            vertices = vertices - vert_centers
        vertices = vertices * vertices_mask[..., None]

        if only_return_complete:
            vertices = vertices[completed]
            num_vertices = num_vertices[completed]
            vertices_mask = vertices_mask[completed]
            completed = completed[completed]

        return {'completed': completed, 'vertices': vertices,
                'num_vertices': num_vertices, 'vertices_mask': vertices_mask}


class FaceModel(nn.Module):
    """Autoregressive generative model of n-gon meshes conditioned on vertices."""

    def __init__(self, encoder_config, decoder_config, class_conditional=True, num_classes=55,
                 decoder_cross_attention=True, use_discrete_vertex_embeddings=True,
                 quantization_bits=8, max_seq_length=5000, max_num_input_verts=2500):
        super().__init__()
        self.embedding_dim = decoder_config['hidden_size']
        self.class_conditional = class_conditional
        self.num_classes = num_classes
        self.max_seq_length = max_seq_length
        self.decoder_cross_attention = decoder_cross_attention
        self.use_discrete_vertex_embeddings = use_discrete_vertex_embeddings
        self.quantization_bits = quantization_bits

        self.decoder = TransformerDecoder(**decoder_config, cross_attention=decoder_cross_attention)
        self.encoder = TransformerEncoder(**encoder_config)
        if class_conditional:
            self.class_embedding = nn.Embedding(num_classes, self.embedding_dim)
        self.vertex_value_embedding = nn.ModuleList(
            [nn.Embedding(2 ** quantization_bits + 1, self.embedding_dim) for _ in range(3)])
        self.stopping_embeddings = nn.Parameter(torch.randn(1, 2, self.embedding_dim) * 0.02)
        self.zero_embed = nn.Parameter(torch.randn(1, 1, self.embedding_dim) * 0.02)
        self.pos_embedding = nn.Embedding(max_seq_length, self.embedding_dim)
        self.project_to_pointers = nn.Linear(self.embedding_dim, self.embedding_dim)

    def _embed_vertices(self, vertices, vertices_mask):
        if self.use_discrete_vertex_embeddings:
            q = (vertices + 0.5) * (2 ** self.quantization_bits - 1)
            q = q.round().long().clamp(0, 2 ** self.quantization_bits - 1)
            vertex_embeddings = 0.
            for c in range(3):
                vertex_embeddings = vertex_embeddings + self.vertex_value_embedding[c](q[..., c] + 1)
        else:
            raise NotImplementedError('continuous vertex embeddings are not ported')
        vertex_embeddings = vertex_embeddings * vertices_mask[..., None]
        stopping = self.stopping_embeddings.expand(vertices.shape[0], -1, -1)
        vertex_embeddings = torch.cat([stopping, vertex_embeddings], dim=1)
        pad_mask = torch.cat([torch.ones_like(vertices_mask[:, :2]), vertices_mask], dim=1) == 0
        return self.encoder(vertex_embeddings, pad_mask=pad_mask), pad_mask

    def _embed_inputs(self, faces_long, vertex_embeddings, global_context_embedding=None):
        batch_size = faces_long.shape[0]
        face_embeddings = torch.gather(
            vertex_embeddings, 1,
            faces_long[..., None].expand(-1, -1, self.embedding_dim))
        pos_embeddings = self.pos_embedding(torch.arange(faces_long.shape[1], device=faces_long.device))
        if global_context_embedding is None:
            zero_embed_tiled = self.zero_embed.expand(batch_size, 1, self.embedding_dim)
        else:
            zero_embed_tiled = global_context_embedding
        embeddings = face_embeddings + pos_embeddings[None]
        return torch.cat([zero_embed_tiled, embeddings], dim=1)

    def _create_dist(self, vertex_embeddings, vertices_pad_mask, faces_long, global_context_embedding=None,
                     temperature=1.0, top_k=0, top_p=1.0):
        decoder_inputs = self._embed_inputs(faces_long, vertex_embeddings, global_context_embedding)
        if self.decoder_cross_attention:
            decoder_outputs = self.decoder(decoder_inputs, sequential_context=vertex_embeddings,
                                           context_pad_mask=vertices_pad_mask)
        else:
            decoder_outputs = self.decoder(decoder_inputs)
        pred_pointers = self.project_to_pointers(decoder_outputs)
        logits = torch.matmul(pred_pointers, vertex_embeddings.transpose(1, 2))
        logits = logits / math.sqrt(self.embedding_dim)
        logits = logits.masked_fill(vertices_pad_mask[:, None, :], -1e9)
        logits = logits / temperature
        logits = top_k_logits(logits, top_k)
        logits = top_p_logits(logits, top_p)
        return Categorical(logits=logits)

    def forward(self, batch):
        vertex_embeddings, pad_mask = self._embed_vertices(batch['vertices'], batch['vertices_mask'])
        global_context = None
        if self.class_conditional:
            global_context = self.class_embedding(batch['class_label']).unsqueeze(1)
        return self._create_dist(vertex_embeddings, pad_mask, batch['faces'][:, :-1], global_context)

    @torch.no_grad()
    def sample(self, context, max_sample_length=None, temperature=1.0, top_k=0, top_p=1.0,
               only_return_complete=True):
        vertex_embeddings, pad_mask = self._embed_vertices(context['vertices'], context['vertices_mask'])
        num_samples = vertex_embeddings.shape[0]
        max_sample_length = max_sample_length or self.max_seq_length
        global_context = None
        if self.class_conditional:
            global_context = self.class_embedding(context['class_label']).unsqueeze(1)

        samples = torch.cuda.LongTensor(num_samples, 0).fill_(0)
        for _ in range(max_sample_length):
            dist = self._create_dist(vertex_embeddings, pad_mask, samples, global_context,
                                     temperature=temperature, top_k=top_k, top_p=top_p)
            next_sample = dist.sample()[:, -1:]
            samples = torch.cat([samples, next_sample], dim=1)
            if (samples == 0).any(dim=-1).all():
                break

        completed = (samples == 0).any(dim=-1)
        stop_index = torch.argmax((samples == 0).int(), dim=-1)
        stop_index = torch.where(completed, stop_index, torch.full_like(stop_index, samples.shape[1]))
        faces = samples - 1
        faces_mask = (torch.arange(samples.shape[1], device=samples.device)[None] < stop_index[:, None])
        faces = torch.where(faces_mask, faces, torch.zeros_like(faces))
        num_face_indices = faces_mask.sum(dim=-1)

        if only_return_complete:
            faces = faces[completed]
            num_face_indices = num_face_indices[completed]
            completed = completed[completed]

        return {'context': context, 'completed': completed, 'faces': faces,
                'num_face_indices': num_face_indices}
