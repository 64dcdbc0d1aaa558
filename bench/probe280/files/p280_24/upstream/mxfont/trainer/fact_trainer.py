"""
MX-Font
Copyright (c) 2021-present NAVER Corp.
MIT license
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from .base_trainer import BaseTrainer
from datasets import cyclize
import utils

from itertools import combinations
import numpy as np


def to_batch(batch, keys, device="cuda"):
    """Move the tensor entries of a loader batch to `device`; python lists are left alone."""
    out = {}
    for k in keys:
        v = batch[k]
        out[k] = v.to(device) if torch.is_tensor(v) else v
    return out


class FactTrainer(BaseTrainer):
    def __init__(self, gen, disc, g_optim, d_optim, aux_clf, ac_optim,
                 writer, logger, evaluator, test_loader, cfg):
        super().__init__(gen, disc, g_optim, d_optim, aux_clf, ac_optim,
                         writer, logger, evaluator, test_loader, cfg)

        self.to_batch = lambda b, keys: to_batch(b, keys)

    def sync_g_ema(self, style_imgs, char_imgs):
        org_train_mode = self.gen_ema.training
        with torch.no_grad():
            self.gen_ema.train()
            self.gen_ema.gen_from_style_char(style_imgs, char_imgs)
        self.gen_ema.train(org_train_mode)

    def train(self, loader, st_step=1, max_step=100000):

        self.gen.train()
        if self.disc is not None:
            self.disc.train()

        losses = utils.AverageMeters("g_total", "pixel", "disc", "gen", "fm", "indp_exp", "indp_fact",
                                     "ac_s", "ac_c", "cross_ac_s", "cross_ac_c",
                                     "ac_gen_s", "ac_gen_c", "cross_ac_gen_s", "cross_ac_gen_c")
        discs = utils.AverageMeters("real_font", "real_uni", "fake_font", "fake_uni",
                                    "real_font_acc", "real_uni_acc",
                                    "fake_font_acc", "fake_uni_acc")
        # etc stats
        stats = utils.AverageMeters("B", "ac_acc_s", "ac_acc_c", "ac_gen_acc_s", "ac_gen_acc_c")

        self.step = st_step
        self.clear_losses()

        self.logger.info("Start training ...")

        for batch in cyclize(loader):
            epoch = self.step // len(loader)
            if self.cfg.use_ddp and (self.step % len(loader)) == 0:
                loader.sampler.set_epoch(epoch)

            style_imgs = batch["style_imgs"].cuda()
            style_fids = batch["style_fids"].cuda()
            style_decs = batch["style_decs"]
            char_imgs = batch["char_imgs"].cuda()
            char_fids = batch["char_fids"].cuda()
            char_decs = batch["char_decs"]

            trg_imgs = batch["trg_imgs"].cuda()
            trg_fids = batch["trg_fids"].cuda()
            trg_cids = batch["trg_cids"].cuda()
            trg_decs = batch["trg_decs"]

            ##############################################################
            # infer
            ##############################################################

            B = len(trg_imgs)
            n_s = style_imgs.shape[1]
            n_c = char_imgs.shape[1]

            style_feats = self.gen.encode(style_imgs.flatten(0, 1))  # (B*n_s, n_exp, *feat_shape)
            char_feats = self.gen.encode(char_imgs.flatten(0, 1))

            self.add_indp_exp_loss(torch.cat([style_feats["last"], char_feats["last"]]))

            style_facts_s = self.gen.factorize(style_feats, 0)  # (B*n_s, n_exp, *feat_shape)
            style_facts_c = self.gen.factorize(style_feats, 1)
            char_facts_s = self.gen.factorize(char_feats, 0)
            char_facts_c = self.gen.factorize(char_feats, 1)

            self.add_indp_fact_loss(
                [style_facts_s["last"], style_facts_c["last"]],
                [style_facts_s["skip"], style_facts_c["skip"]],
                [char_facts_s["last"], char_facts_c["last"]],
                [char_facts_s["skip"], char_facts_c["skip"]],
            )

            mean_style_facts = {k: utils.add_dim_and_reshape(v, 0, (-1, n_s)).mean(1) for k, v in style_facts_s.items()}
            mean_char_facts = {k: utils.add_dim_and_reshape(v, 0, (-1, n_c)).mean(1) for k, v in char_facts_c.items()}
            gen_feats = self.gen.defactorize([mean_style_facts, mean_char_facts])
            gen_imgs = self.gen.decode(gen_feats)

            stats.updates({
                "B": B,
            })

            real_font, real_uni, *real_feats = self.disc(
                trg_imgs, trg_fids, trg_cids, out_feats=self.cfg['fm_layers']
            )

            fake_font, fake_uni = self.disc(gen_imgs.detach(), trg_fids, trg_cids)
            self.add_gan_d_loss([real_font, real_uni], [fake_font, fake_uni])

            self.d_optim.zero_grad()
            self.d_backward()
            self.d_optim.step()

            fake_font, fake_uni, *fake_feats = self.disc(
                gen_imgs, trg_fids, trg_cids, out_feats=self.cfg['fm_layers']
            )
            self.add_gan_g_loss(fake_font, fake_uni)

            self.add_fm_loss(real_feats, fake_feats)

            def racc(x):
                return (x > 0.).float().mean().item()

            def facc(x):
                return (x < 0.).float().mean().item()

            discs.updates({
                "real_font": real_font.mean().item(),
                "real_uni": real_uni.mean().item(),
                "fake_font": fake_font.mean().item(),
                "fake_uni": fake_uni.mean().item(),

                'real_font_acc': racc(real_font),
                'real_uni_acc': racc(real_uni),
                'fake_font_acc': facc(fake_font),
                'fake_uni_acc': facc(fake_uni)
            }, B)

            self.add_pixel_loss(gen_imgs, trg_imgs)

            self.g_optim.zero_grad()

            self.add_ac_losses_and_update_stats(
                torch.cat([style_facts_s["last"], char_facts_s["last"]]),
                torch.cat([style_fids.flatten(), char_fids.flatten()]),
                torch.cat([style_facts_c["last"], char_facts_c["last"]]),
                style_decs + char_decs,
                gen_imgs,
                trg_fids,
                trg_decs,
                stats
            )
            self.ac_optim.zero_grad()
            self.ac_backward()
            self.ac_optim.step()

            self.g_backward()
            self.g_optim.step()

            loss_dic = self.clear_losses()
            losses.updates(loss_dic, B)  # accum loss stats

            # EMA g
            self.accum_g()
            if self.is_bn_gen:
                self.sync_g_ema(style_imgs, char_imgs)

            torch.cuda.synchronize()

            if self.cfg.gpu <= 0:
                if self.step % self.cfg.tb_freq == 0:
                    self.plot(losses, discs, stats)

                if self.step % self.cfg.print_freq == 0:
                    self.log(losses, discs, stats)
                    self.logger.debug("GPU Memory usage: max mem_alloc = %.1fM / %.1fM",
                                      torch.cuda.max_memory_allocated() / 1000 / 1000,
                                      torch.cuda.max_memory_cached() / 1000 / 1000)
                    losses.resets()
                    discs.resets()
                    stats.resets()

                    nrow = len(trg_imgs)
                    grid = utils.make_comparable_grid(style_imgs[:, 0], char_imgs[:, 0], gen_imgs.detach(), trg_imgs,
                                                      nrow=nrow)
                    self.writer.add_image("last", grid)

                if self.step > 0 and self.step % self.cfg.val_freq == 0:
                    epoch = self.step / len(loader)
                    self.logger.info("Validation at Epoch = {:.3f}".format(epoch))

                    if not self.is_bn_gen:
                        self.sync_g_ema(style_imgs, char_imgs)

                    self.evaluator.comparable_val_saveimg(self.gen_ema, self.test_loader, self.step, n_row=self.test_n_row)

                    self.save(loss_dic['g_total'], self.cfg.save, self.cfg.get('save_freq', self.cfg.val_freq))
            else:
                pass

            if self.step >= max_step:
                break

            self.step += 1

        self.logger.info("Iteration finished.")

    def add_indp_exp_loss(self, exps):
        exps = [F.adaptive_avg_pool2d(exps[:, i], 1).squeeze() for i in range(exps.shape[1])]
        crit = utils.HSIC()
        pairs = list(combinations(exps, 2))
        loss = torch.stack([crit(*pair) for pair in pairs]).mean()
        loss = loss * self.cfg['indp_exp_w']
        self.g_losses["indp_exp"] = loss

    def add_indp_fact_loss(self, *exp_pairs):
        pairs = []
        for _exp1, _exp2 in exp_pairs:
            _pairs = [(F.adaptive_avg_pool2d(_exp1[:, i], 1).squeeze(),
                       F.adaptive_avg_pool2d(_exp2[:, i], 1).squeeze())
                      for i in range(_exp1.shape[1])]
            pairs += _pairs

        crit = utils.HSIC()
        loss = torch.stack([crit(*pair) for pair in pairs]).mean()
        loss = loss * self.cfg['indp_fact_w']
        self.g_losses["indp_fact"] = loss

    def infer_comp_ac(self, fact_experts, comp_ids):
        B, n_experts = fact_experts.shape[:2]
        ac_logit_s_flat, ac_logit_c_flat = self.aux_clf(fact_experts.flatten(0, 1))  # (B*n_experts, n_comps)

        n_comps = ac_logit_c_flat.shape[-1]
        ac_prob_c = nn.Softmax(dim=-1)(ac_logit_c_flat).view(B, n_experts, n_comps)
        T_probs = [-ac_prob_c[i][:, comp_ids[i]].detach().cpu().numpy() for i in range(B)]

        from scipy.optimize import linear_sum_assignment
        cids = [linear_sum_assignment(T_prob)[1] for T_prob in T_probs]
        tgt_ids = torch.LongTensor(np.concatenate([comp_ids[i][cids[i]] for i in range(B)])).cuda()
        ac_loss_c = F.cross_entropy(torch.cat([ac_logit_c_flat.view(B, n_experts, -1)[i][cids[i]]
                                               for i in range(B)]), tgt_ids)
        return ac_loss_c, ac_logit_c_flat, tgt_ids
