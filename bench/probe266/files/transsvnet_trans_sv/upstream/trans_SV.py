#some code adapted from https://github.com/YuemingJin/MTRCNet-CL
# and https://github.com/YuemingJin/TMRNet
"""Trans-SVNet stage 3: temporal transformer that fuses TCN phase logits (query) with the
spatial ResNet embeddings of the long-range feature bank (key/value).

    python trans_SV.py --lfb ./LFB --tcn best_model/TeCNO/TeCNO50_epoch_6_train_9935_val_8924_test_8603.pth
"""
import torch
from torch import optim
from torch import nn
import torch.nn.functional as F
import numpy as np
import pickle, time
import random
import copy
import os
import math
import argparse
from sklearn import metrics

import mstcn

parser = argparse.ArgumentParser(description='Trans-SVNet training')
parser.add_argument('-g', '--gpu', default=True, type=bool, help='gpu use, default True')
parser.add_argument('-s', '--seq', default=30, type=int, help='length of the transformer window, default 30')
parser.add_argument('-e', '--epo', default=25, type=int, help='epochs to train and val, default 25')
parser.add_argument('-l', '--lr', default=1e-3, type=float, help='learning rate for optimizer, default 1e-3')
parser.add_argument('--lfb', default='./LFB', type=str, help='folder with the g_LFB50_*.pkl feature banks')
parser.add_argument('--tcn', default='', type=str, help='pretrained TeCNO weights')
parser.add_argument('--seed', default=1234, type=int)
args = parser.parse_args()

sequence_length = args.seq
epochs = args.epo
learning_rate = args.lr
use_gpu = args.gpu and torch.cuda.is_available()

mstcn_causal_conv = True
mstcn_layers = 8
mstcn_f_maps = 32
mstcn_f_dim = 2048
mstcn_stages = 2
out_features = 7


class ScaledDotProductAttention(nn.Module):
    def __init__(self, d_k):
        super(ScaledDotProductAttention, self).__init__()
        self.d_k = d_k

    def forward(self, Q, K, V, attn_mask=None):
        # Q: [b, n_heads, len_q, d_k], K: [b, n_heads, len_k, d_k], V: [b, n_heads, len_k, d_v]
        scores = torch.matmul(Q, K.transpose(-1, -2)) / np.sqrt(self.d_k)
        if attn_mask is not None:
            scores.masked_fill_(attn_mask, -1e9)
        attn = nn.Softmax(dim=-1)(scores)
        context = torch.matmul(attn, V)
        return context, attn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, d_k, d_v, n_heads):
        super(MultiHeadAttention, self).__init__()
        self.d_k, self.d_v, self.n_heads = d_k, d_v, n_heads
        self.W_Q = nn.Linear(d_model, d_k * n_heads, bias=False)
        self.W_K = nn.Linear(d_model, d_k * n_heads, bias=False)
        self.W_V = nn.Linear(d_model, d_v * n_heads, bias=False)
        self.fc = nn.Linear(n_heads * d_v, d_model, bias=False)
        self.attention = ScaledDotProductAttention(d_k)
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, input_Q, input_K, input_V, attn_mask=None):
        residual, batch_size = input_Q, input_Q.size(0)
        Q = self.W_Q(input_Q).view(batch_size, -1, self.n_heads, self.d_k).transpose(1, 2)
        K = self.W_K(input_K).view(batch_size, -1, self.n_heads, self.d_k).transpose(1, 2)
        V = self.W_V(input_V).view(batch_size, -1, self.n_heads, self.d_v).transpose(1, 2)
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(1).repeat(1, self.n_heads, 1, 1)
        context, attn = self.attention(Q, K, V, attn_mask)
        context = context.transpose(1, 2).reshape(batch_size, -1, self.n_heads * self.d_v)
        output = self.fc(context)
        return self.layer_norm(output + residual), attn


class PoswiseFeedForwardNet(nn.Module):
    def __init__(self, d_model, d_ff):
        super(PoswiseFeedForwardNet, self).__init__()
        self.fc = nn.Sequential(
            nn.Linear(d_model, d_ff, bias=False),
            nn.ReLU(),
            nn.Linear(d_ff, d_model, bias=False),
        )
        self.layer_norm = nn.LayerNorm(d_model)

    def forward(self, inputs):
        residual = inputs
        output = self.fc(inputs)
        return self.layer_norm(output + residual)


class DecoderLayer(nn.Module):
    def __init__(self, d_model, d_ff, d_k, d_v, n_heads):
        super(DecoderLayer, self).__init__()
        self.dec_self_attn = MultiHeadAttention(d_model, d_k, d_v, n_heads)
        self.dec_enc_attn = MultiHeadAttention(d_model, d_k, d_v, n_heads)
        self.pos_ffn = PoswiseFeedForwardNet(d_model, d_ff)

    def forward(self, dec_inputs, enc_outputs):
        dec_outputs, dec_self_attn = self.dec_self_attn(dec_inputs, dec_inputs, dec_inputs)
        dec_outputs, dec_enc_attn = self.dec_enc_attn(dec_outputs, enc_outputs, enc_outputs)
        dec_outputs = self.pos_ffn(dec_outputs)
        return dec_outputs, dec_self_attn, dec_enc_attn


class Transformer2_3_1(nn.Module):
    def __init__(self, d_model, d_ff, d_k, d_v, n_layers, n_heads, len_q):
        super(Transformer2_3_1, self).__init__()
        self.layers = nn.ModuleList([DecoderLayer(d_model, d_ff, d_k, d_v, n_heads) for _ in range(n_layers)])
        self.len_q = len_q
        self.fc = nn.Linear(d_model, out_features, bias=False)

    def forward(self, dec_inputs, enc_outputs):
        dec_outputs = dec_inputs
        for layer in self.layers:
            dec_outputs, _, _ = layer(dec_outputs, enc_outputs)
        return self.fc(dec_outputs[:, -1])


class Transformer(nn.Module):
    def __init__(self, mstcn_f_maps, mstcn_f_dim, out_features, len_q):
        super(Transformer, self).__init__()
        self.num_f_maps = mstcn_f_maps  # 32
        self.dim = mstcn_f_dim  # 2048
        self.num_classes = out_features  # 7
        self.len_q = len_q
        self.transformer = Transformer2_3_1(d_model=out_features, d_ff=mstcn_f_maps, d_k=mstcn_f_maps,
                                            d_v=mstcn_f_maps, n_layers=1, n_heads=8, len_q=sequence_length)
        self.fc = nn.Linear(mstcn_f_dim, out_features, bias=False)

    def forward(self, x, long_feature):
        out_features = x.transpose(1, 2)
        inputs = []
        for i in range(out_features.size(1)):
            if i < self.len_q - 1:
                input = torch.zeros((1, self.len_q - 1 - i, self.num_classes)).cuda()
                input = torch.cat([input, out_features[:, 0:i + 1]], dim=1)
            else:
                input = out_features[:, i - self.len_q + 1:i + 1]
            inputs.append(input)
        inputs = torch.stack(inputs, dim=0).squeeze(1)
        feas = torch.tanh(self.fc(long_feature).transpose(0, 1))
        output = self.transformer(inputs, feas)
        return output


def get_data(data_path):
    with open(data_path, 'rb') as f:
        train_test_paths_labels = pickle.load(f)
    train_labels = np.asarray(train_test_paths_labels[3], dtype=np.int64)
    val_labels = np.asarray(train_test_paths_labels[4], dtype=np.int64)
    test_labels = np.asarray(train_test_paths_labels[5], dtype=np.int64)
    train_num_each = train_test_paths_labels[6]
    val_num_each = train_test_paths_labels[7]
    test_num_each = train_test_paths_labels[8]
    return (train_labels, train_num_each), (val_labels, val_num_each), (test_labels, test_num_each)


def load_bank(name):
    with open(os.path.join(args.lfb, name), 'rb') as f:
        return pickle.load(f)


def split_videos(bank, labels, num_each):
    start = 0
    for n in num_each:
        yield bank[start:start + n], labels[start:start + n, 0]
        start += n


def train_model(train_data, val_data, test_data):
    g_LFB_train = load_bank("g_LFB50_train0.pkl")
    g_LFB_val = load_bank("g_LFB50_val0.pkl")
    g_LFB_test = load_bank("g_LFB50_test0.pkl")
    print("load completed")
    print("g_LFB_train shape:", g_LFB_train.shape)
    print("g_LFB_val shape:", g_LFB_val.shape)

    out_features = 7
    num_workers = 3
    mstcn_causal_conv = True
    learning_rate = 1e-3
    min_epochs = 12
    max_epochs = 25
    mstcn_layers = 8
    mstcn_f_maps = 32
    mstcn_f_dim = 2048
    mstcn_stages = 2

    model1 = mstcn.MultiStageModel(mstcn_stages, mstcn_layers, mstcn_f_maps, mstcn_f_dim, out_features,
                                   mstcn_causal_conv)
    if args.tcn:
        model1.load_state_dict(torch.load(args.tcn, map_location='cuda:0'))
    model1.cuda()
    model1.eval()

    model = Transformer(mstcn_f_maps, mstcn_f_dim, out_features, sequence_length)
    model.cuda()

    weights_train = np.asarray([1.6411019141231247, 0.19090963801041133, 1.0, 0.2502662616859295,
                                1.9176363911137977, 0.9840248158200853, 2.174635818337618])
    criterion_phase = nn.CrossEntropyLoss(weight=torch.from_numpy(weights_train).type(torch.cuda.FloatTensor))
    criterion_phase1 = nn.CrossEntropyLoss()

    optimizer = optim.Adam(model.parameters(), lr=learning_rate)

    best_model_wts = copy.deepcopy(model.state_dict())
    best_val_accuracy_phase = 0.0
    best_epoch = 0

    for epoch in range(epochs):
        model.train()
        train_loss_phase = 0.0
        train_corrects_phase = 0
        train_frames = 0
        train_start_time = time.time()
        for video_bank, video_labels in split_videos(g_LFB_train, train_data[0], train_data[1]):
            optimizer.zero_grad()
            labels_phase = torch.LongTensor(video_labels).cuda()
            long_feature = torch.from_numpy(video_bank).float().unsqueeze(0).cuda()

            with torch.no_grad():
                out_features = model1.forward(long_feature.transpose(2, 1))[-1]
                out_features = out_features.squeeze(1)
            p_classes1 = model(out_features.detach(), long_feature)
            p_classes = p_classes1.squeeze()

            loss_phase = criterion_phase(p_classes, labels_phase)
            _, preds_phase = torch.max(p_classes.data, 1)
            loss_phase.backward()
            optimizer.step()

            train_loss_phase += loss_phase.data.item()
            train_corrects_phase += torch.sum(preds_phase == labels_phase.data).item()
            train_frames += len(video_labels)

        train_elapsed_time = time.time() - train_start_time
        train_accuracy_phase = train_corrects_phase / train_frames

        model.eval()
        val_corrects_phase = 0
        val_frames = 0
        val_loss_phase = 0.0
        all_preds, all_labels = [], []
        with torch.no_grad():
            for video_bank, video_labels in split_videos(g_LFB_val, val_data[0], val_data[1]):
                labels_phase = torch.as_tensor(video_labels, dtype=torch.long).cuda()
                long_feature = torch.tensor(video_bank, dtype=torch.float32)[None].cuda()
                out_features = model1.forward(long_feature.transpose(2, 1))[-1].squeeze(1)
                p_classes = model(out_features, long_feature).squeeze()
                val_loss_phase += criterion_phase1(p_classes, labels_phase).item()
                _, preds_phase = torch.max(p_classes.data, 1)
                val_corrects_phase += torch.sum(preds_phase == labels_phase.data).item()
                val_frames += len(video_labels)
                all_preds.extend(preds_phase.cpu().numpy().tolist())
                all_labels.extend(labels_phase.cpu().numpy().tolist())

        val_accuracy_phase = val_corrects_phase / val_frames
        val_jaccard = metrics.jaccard_score(all_labels, all_preds, average='macro')
        print('epoch: {:3d} train in {:2.0f}m{:2.0f}s acc {:.4f} | val acc {:.4f} jacc {:.4f}'.format(
            epoch, train_elapsed_time // 60, train_elapsed_time % 60, train_accuracy_phase,
            val_accuracy_phase, val_jaccard))

        if val_accuracy_phase > best_val_accuracy_phase:
            best_val_accuracy_phase = val_accuracy_phase
            best_model_wts = copy.deepcopy(model.state_dict())
            best_epoch = epoch

    os.makedirs("./best_model/TeCNO50_trans1_3_5_1", exist_ok=True)
    save_name = "TeCNO50_trans1_3_5_1_length_{}_epoch_{}_val_{:.0f}.pth".format(
        sequence_length, best_epoch, best_val_accuracy_phase * 10000)
    torch.save(best_model_wts, os.path.join("./best_model/TeCNO50_trans1_3_5_1", save_name))
    print("best_epoch", best_epoch)


def main():
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed_all(args.seed)
    np.random.seed(args.seed)
    random.seed(args.seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    train_data, val_data, test_data = get_data('./train_val_paths_labels1.pkl')
    train_model(train_data, val_data, test_data)


if __name__ == "__main__":
    main()
