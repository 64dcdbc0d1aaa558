"""SAINT+ (Shin et al., 2021) on EdNet-KT1 / Riiid, trained with PyTorch Lightning.

    python train.py --gpus 1 --precision 16 --batch_size 128

The encoder sees exercise + part embeddings, the decoder sees responses, elapsed time and lag time.
"""
import argparse
import gc
import pickle

import numpy as np
import torch
import torch.nn as nn
import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint, EarlyStopping, LearningRateMonitor
from pytorch_lightning.loggers import TensorBoardLogger
from torch.utils.data import Dataset, DataLoader
from sklearn.metrics import roc_auc_score

import config


class FFN(nn.Module):
    def __init__(self, in_feat):
        super(FFN, self).__init__()
        self.linear1 = nn.Linear(in_feat, in_feat)
        self.linear2 = nn.Linear(in_feat, in_feat)

    def forward(self, x):
        out = torch.relu(self.linear1(x))
        out = self.linear2(out)
        return out


class EncoderEmbedding(nn.Module):
    def __init__(self, n_exercises, n_categories, n_dims, seq_len):
        super(EncoderEmbedding, self).__init__()
        self.n_dims = n_dims
        self.seq_len = seq_len
        self.exercise_embed = nn.Embedding(n_exercises, n_dims)
        self.category_embed = nn.Embedding(n_categories, n_dims)
        self.position_embed = nn.Embedding(seq_len, n_dims)

    def forward(self, exercises, categories):
        e = self.exercise_embed(exercises)
        c = self.category_embed(categories)
        seq = torch.arange(self.seq_len, device=exercises.device).unsqueeze(0)
        p = self.position_embed(seq)
        return p + c + e


class DecoderEmbedding(nn.Module):
    def __init__(self, n_responses, n_dims, seq_len):
        super(DecoderEmbedding, self).__init__()
        self.n_dims = n_dims
        self.seq_len = seq_len
        self.response_embed = nn.Embedding(n_responses, n_dims)
        self.time_embed = nn.Linear(1, n_dims, bias=False)
        self.lag_embed = nn.Linear(1, n_dims, bias=False)
        self.position_embed = nn.Embedding(seq_len, n_dims)

    def forward(self, responses, elapsed_time, lag_time):
        e = self.response_embed(responses)
        t = self.time_embed(elapsed_time.unsqueeze(-1).float())
        l = self.lag_embed(lag_time.unsqueeze(-1).float())
        seq = torch.arange(self.seq_len, device=responses.device).unsqueeze(0)
        p = self.position_embed(seq)
        return p + e + t + l


class SaintPlus(nn.Module):
    def __init__(self, n_encoder, n_decoder, enc_heads, dec_heads, n_dims, total_ex, total_cat, total_responses, seq_len, dropout):
        super(SaintPlus, self).__init__()
        self.seq_len = seq_len
        self.encoder_embedding = EncoderEmbedding(total_ex, total_cat, n_dims, seq_len)
        self.decoder_embedding = DecoderEmbedding(total_responses, n_dims, seq_len)
        self.transformer = nn.Transformer(d_model=n_dims, nhead=enc_heads, num_encoder_layers=n_encoder,
                                          num_decoder_layers=n_decoder, dim_feedforward=n_dims * 4, dropout=dropout)
        self.fc = nn.Linear(n_dims, 1)

    def forward(self, in_exercise, in_category, in_response, in_etime, in_ltime):
        enc = self.encoder_embedding(in_exercise, in_category).transpose(0, 1)
        dec = self.decoder_embedding(in_response, in_etime, in_ltime).transpose(0, 1)
        mask = self.transformer.generate_square_subsequent_mask(self.seq_len).to(enc.device)
        out = self.transformer(enc, dec, src_mask=mask, tgt_mask=mask, memory_mask=mask)
        return self.fc(out.transpose(0, 1)).squeeze(-1)


class Riiid_Sequence(Dataset):
    def __init__(self, groups, seq_len):
        self.samples = {}
        self.seq_len = seq_len
        self.user_ids = []
        for user_id in groups.index:
            c_id, p, r, e_t, l_t = groups[user_id]
            if len(c_id) < 2:
                continue
            self.user_ids.append(user_id)
            self.samples[user_id] = (c_id, p, r, e_t, l_t)

    def __len__(self):
        return len(self.user_ids)

    def __getitem__(self, index):
        user_id = self.user_ids[index]
        c_id, p, r, e_t, l_t = self.samples[user_id]
        seq_len = len(c_id)

        input = {k: np.zeros(self.seq_len, dtype=int) for k in ["content_id", "part", "answered", "elapsed", "lag"]}
        if seq_len >= self.seq_len:
            sl = slice(-self.seq_len, None)
            input["content_id"][:] = c_id[sl]
            input["part"][:] = p[sl]
            input["answered"][:] = r[sl]
            input["elapsed"][:] = e_t[sl]
            input["lag"][:] = l_t[sl]
        else:
            input["content_id"][-seq_len:] = c_id
            input["part"][-seq_len:] = p
            input["answered"][-seq_len:] = r
            input["elapsed"][-seq_len:] = e_t
            input["lag"][-seq_len:] = l_t
        labels = input["answered"].copy()
        # decoder input is the response of the previous step ("start" token = 2)
        input["answered"] = np.concatenate([[2], input["answered"][:-1]])
        return input, labels


class SaintPlusModule(pl.LightningModule):
    def __init__(self, model_args, lr=1e-3, warmup_steps=4000):
        super().__init__()
        self.save_hyperparameters()
        self.model = SaintPlus(**model_args)
        self.loss = nn.BCEWithLogitsLoss()
        self.lr = lr
        self.warmup_steps = warmup_steps

    def forward(self, x):
        return self.model(x["content_id"], x["part"], x["answered"], x["elapsed"], x["lag"])

    def training_step(self, batch, batch_idx):
        x, labels = batch
        out = self(x)
        loss = self.loss(out.float(), labels.float())
        self.log("train_loss", loss, on_step=True, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, labels = batch
        out = self(x)
        loss = self.loss(out.float(), labels.float())
        self.log("val_loss", loss, prog_bar=True)
        return {"pred": torch.sigmoid(out[:, -1]).detach().cpu(), "label": labels[:, -1].cpu()}

    def validation_epoch_end(self, outputs):
        preds = torch.cat([o["pred"] for o in outputs]).numpy()
        labels = torch.cat([o["label"] for o in outputs]).numpy()
        self.log("val_auc", roc_auc_score(labels, preds), prog_bar=True)

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr, betas=(0.9, 0.999), eps=1e-8)
        scheduler = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: min((step + 1) ** -0.5, (step + 1) * self.warmup_steps ** -1.5) * self.warmup_steps ** 0.5)
        return [optimizer], [{"scheduler": scheduler, "interval": "step"}]


def get_dataloaders(args):
    with open(config.TRAIN_FILE, "rb") as f:
        train_group = pickle.load(f)
    with open(config.VAL_FILE, "rb") as f:
        val_group = pickle.load(f)
    train_loader = DataLoader(Riiid_Sequence(train_group, config.MAX_SEQ), batch_size=args.batch_size,
                              num_workers=args.num_workers, shuffle=True, pin_memory=True)
    val_loader = DataLoader(Riiid_Sequence(val_group, config.MAX_SEQ), batch_size=args.batch_size,
                            num_workers=args.num_workers, shuffle=False, pin_memory=True)
    del train_group, val_group
    gc.collect()
    return train_loader, val_loader


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--precision", type=int, default=16)
    parser.add_argument("--batch_size", type=int, default=config.BATCH_SIZE)
    parser.add_argument("--num_workers", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=config.EPOCHS)
    args = parser.parse_args()

    pl.seed_everything(config.SEED)
    train_loader, val_loader = get_dataloaders(args)

    model_args = dict(n_encoder=config.NUM_ENCODER, n_decoder=config.NUM_DECODER, enc_heads=config.ENC_HEADS,
                      dec_heads=config.DEC_HEADS, n_dims=config.EMBED_DIMS, total_ex=config.TOTAL_EXE,
                      total_cat=config.TOTAL_CAT, total_responses=config.TOTAL_EXE, seq_len=config.MAX_SEQ,
                      dropout=config.DROPOUT)
    module = SaintPlusModule(model_args, lr=config.LR)

    checkpoint = ModelCheckpoint(monitor="val_auc", mode="max", save_top_k=1, filename="saint-{epoch:02d}-{val_auc:.4f}")
    trainer = pl.Trainer(gpus=args.gpus,
                         precision=args.precision,
                         max_epochs=args.epochs,
                         callbacks=[checkpoint, EarlyStopping(monitor="val_auc", mode="max", patience=3),
                                    LearningRateMonitor()],
                         logger=TensorBoardLogger("lightning_logs", name="saint_plus"),
                         progress_bar_refresh_rate=21,
                         gradient_clip_val=1.0)
    trainer.fit(module, train_dataloaders=train_loader, val_dataloaders=val_loader)
    print("best checkpoint:", checkpoint.best_model_path)

    # export the best model as a plain state_dict for the inference kernel
    best = SaintPlusModule.load_from_checkpoint(checkpoint.best_model_path, map_location="cuda:0")
    best.eval()
    torch.save(best.model.state_dict(), "saint_plus_best.pt")
    with torch.no_grad():
        x, labels = next(iter(val_loader))
        x = {k: v.to(best.device) for k, v in x.items()}
        probs = torch.sigmoid(best(x)[:, -1]).cpu().numpy()
    print("sanity check, val auc on one batch:", roc_auc_score(labels[:, -1].numpy(), probs))
