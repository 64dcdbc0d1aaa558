import torch
import torch.nn as nn
import numpy as np
import math
import os
import pickle
from wav2vec import Wav2Vec2Model, Wav2Vec2ForCTC, linear_interpolation


# Temporal Bias (from FaceFormer)
def init_biased_mask(n_head, max_seq_len, period):
    def get_slopes(n):
        def get_slopes_power_of_2(n):
            start = (2 ** (-2 ** -(math.log2(n) - 3)))
            ratio = start
            return [start * ratio ** i for i in range(n)]

        if math.log2(n).is_integer():
            return get_slopes_power_of_2(n)
        else:
            closest_power_of_2 = 2 ** math.floor(math.log2(n))
            return get_slopes_power_of_2(closest_power_of_2) + get_slopes(2 * closest_power_of_2)[0::2][
                                                               :n - closest_power_of_2]

    slopes = torch.Tensor(get_slopes(n_head))
    bias = torch.arange(start=0, end=max_seq_len, step=period).unsqueeze(1).repeat(1, period).view(-1) // (period)
    bias = - torch.flip(bias, dims=[0])
    alibi = torch.zeros(max_seq_len, max_seq_len)
    for i in range(max_seq_len):
        alibi[i, :i + 1] = bias[-(i + 1):]
    alibi = slopes.unsqueeze(1).unsqueeze(1) * alibi.unsqueeze(0)
    mask = (torch.triu(torch.ones(max_seq_len, max_seq_len)) == 1).transpose(0, 1)
    mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
    mask = mask.unsqueeze(0) + alibi
    return mask


# Alignment Bias
def enc_dec_mask(device, dataset, T, S):
    mask = torch.ones(T, S)
    if dataset == "BIWI":
        for i in range(T):
            mask[i, i * 2:i * 2 + 2] = 0
    elif dataset == "vocaset":
        for i in range(T):
            mask[i, i] = 0
    return (mask == 1).to(device=device)


class PeriodicPositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, period=25, max_seq_len=600):
        super(PeriodicPositionalEncoding, self).__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = torch.zeros(period, d_model)
        position = torch.arange(0, period, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        pe = pe.unsqueeze(0)
        repeat_num = (max_seq_len // period) + 1
        pe = pe.repeat(1, repeat_num, 1)
        self.register_buffer('pe', pe)

    def forward(self, x):
        x = x + self.pe[:, :x.size(1), :]
        return self.dropout(x)


class SelfTalk(nn.Module):
    def __init__(self, args):
        super(SelfTalk, self).__init__()
        """
        audio: (batch_size, raw_wav)
        template: (batch_size, V*3)
        vertice: (batch_size, seq_len, V*3)
        """
        self.dataset = args.dataset
        self.device = args.device
        self.audio_encoder = Wav2Vec2Model.from_pretrained("facebook/wav2vec2-large-xlsr-53")
        self.text_encoder = Wav2Vec2ForCTC.from_pretrained("jonatasgrosman/wav2vec2-large-xlsr-53-english")
        self.audio_encoder.feature_extractor._freeze_parameters()
        self.text_encoder.wav2vec2.feature_extractor._freeze_parameters()
        for param in self.text_encoder.parameters():
            param.requires_grad = False

        if args.dataset == "vocaset":
            with open(os.path.join(args.dataset, "FLAME_masks.pkl"), "rb") as f:
                masks = pickle.load(f, encoding="latin1")
            lip_idx = masks["lips"]
        else:
            lip_idx = np.load("BIWI/lip_idx.npy")
        self.register_buffer("lip_idx", torch.from_numpy(np.asarray(lip_idx)).long(), persistent=False)
        self.lip_dim = len(lip_idx) * 3

        self.audio_feature_map = nn.Linear(1024, args.feature_dim)
        self.vertice_map = nn.Linear(args.vertice_dim, args.feature_dim)
        self.PPE = PeriodicPositionalEncoding(args.feature_dim, period=args.period)
        self.biased_mask = init_biased_mask(n_head=4, max_seq_len=600, period=args.period)
        decoder_layer = nn.TransformerDecoderLayer(d_model=args.feature_dim, nhead=4,
                                                   dim_feedforward=2 * args.feature_dim, batch_first=True)
        self.transformer_decoder = nn.TransformerDecoder(decoder_layer, num_layers=1)
        self.vertice_map_r = nn.Linear(args.feature_dim, args.vertice_dim)
        nn.init.constant_(self.vertice_map_r.weight, 0)
        nn.init.constant_(self.vertice_map_r.bias, 0)

        # lip-reading branch: lip vertex motion -> text features of the frozen ASR model
        self.lip_map = nn.Linear(self.lip_dim, 1024)
        lip_layer = nn.TransformerEncoderLayer(d_model=1024, nhead=4, dim_feedforward=1024, batch_first=True)
        self.lip_encoder = nn.TransformerEncoder(lip_layer, num_layers=1)
        self.lip_head = nn.Linear(1024, self.text_encoder.config.vocab_size)

    def lip_reading(self, vertice_out, template):
        bs, T, _ = vertice_out.shape
        lip_vertices = (vertice_out - template).reshape(bs, T, -1, 3)[:, :, self.lip_idx.cuda(), :]
        lip_features = self.lip_encoder(self.lip_map(lip_vertices.reshape(bs, T, -1)))
        logits = self.lip_head(lip_features)
        return lip_features, logits

    def forward(self, audio, template, vertice):
        template = template.unsqueeze(1)  # (1,1, V*3)
        frame_num = vertice.shape[1]
        hidden_states = self.audio_encoder(audio, self.dataset, frame_num=frame_num).last_hidden_state
        if self.dataset == "BIWI":
            if hidden_states.shape[1] < frame_num * 2:
                vertice = vertice[:, :hidden_states.shape[1] // 2]
                frame_num = hidden_states.shape[1] // 2
        hidden_states = self.audio_feature_map(hidden_states)

        # frozen ASR features, resampled to the mesh frame rate
        text_out = self.text_encoder(audio, output_hidden_states=True)
        text_hidden_states = linear_interpolation(text_out.hidden_states[-1], 50, 30, output_len=frame_num)
        text_logits = linear_interpolation(text_out.logits, 50, 30, output_len=frame_num)

        vertice_input = self.PPE(hidden_states)
        tgt_mask = self.biased_mask[:, :vertice_input.shape[1], :vertice_input.shape[1]].clone().detach().to(
            device=self.device)
        memory_mask = enc_dec_mask(self.device, self.dataset, vertice_input.shape[1], hidden_states.shape[1])
        vertice_out = self.transformer_decoder(vertice_input, hidden_states, tgt_mask=tgt_mask, memory_mask=memory_mask)
        vertice_out = self.vertice_map_r(vertice_out)
        vertice_out = vertice_out + template

        lip_features, logits = self.lip_reading(vertice_out, template)
        return vertice_out, vertice, lip_features, text_hidden_states, logits, text_logits

    def predict(self, audio, template):
        template = template.unsqueeze(1)  # (1,1, V*3)
        hidden_states = self.audio_encoder(audio, self.dataset).last_hidden_state
        if self.dataset == "BIWI":
            frame_num = hidden_states.shape[1] // 2
            hidden_states = hidden_states[:, :frame_num * 2]
        elif self.dataset == "vocaset":
            frame_num = hidden_states.shape[1]
        hidden_states = self.audio_feature_map(hidden_states)
        vertice_input = self.PPE(hidden_states)
        tgt_mask = self.biased_mask[:, :vertice_input.shape[1], :vertice_input.shape[1]].clone().detach().to(
            device=self.device)
        memory_mask = enc_dec_mask(self.device, self.dataset, vertice_input.shape[1], hidden_states.shape[1])
        vertice_out = self.transformer_decoder(vertice_input, hidden_states, tgt_mask=tgt_mask, memory_mask=memory_mask)
        vertice_out = self.vertice_map_r(vertice_out)
        vertice_out = vertice_out + template
        lip_features, logits = self.lip_reading(vertice_out, template)
        return vertice_out, lip_features, logits
