import numpy as np
import torch
from torch import nn
from torch.nn.functional import one_hot
from sklearn import metrics
import pandas as pd
import csv
import os
import json
import copy
from ..utils.utils import debug_print
from pykt.config import que_type_models

device = "cpu" if not torch.cuda.is_available() else "cuda"


def save_cur_predict_result(dres, q, r, d, t, m, sm, p):
    # dres, q, r, qshft, rshft, m, sm, y
    results = []
    for i in range(0, t.shape[0]):
        cps = torch.masked_select(p[i], sm[i]).detach().cpu()
        cts = torch.masked_select(t[i], sm[i]).detach().cpu()

        cqs = torch.masked_select(q[i], m[i]).detach().cpu()
        ccs = torch.masked_select(d[i], m[i]).detach().cpu()
        crs = torch.masked_select(r[i], m[i]).detach().cpu()

        qs, cs, rs, ts, ps, prelabels = [], [], [], [], [], []
        for cq, cc, cr in zip(cqs.int(), ccs.int(), crs.int()):
            qs.append(cq.item())
            cs.append(cc.item())
            rs.append(cr.item())
        for ct, cp in zip(cts.int(), cps):
            ts.append(ct.item())
            ps.append(cp.item())
            prelabels.append(1 if cp.item() >= 0.5 else 0)
        try:
            auc = metrics.roc_auc_score(
                y_true=np.array(ts), y_score=np.array(ps)
            )
        except:
            # print(f"ts: {ts}, ps: {ps}")
            auc = -1
        prelabels = [1 if p >= 0.5 else 0 for p in ps]
        acc = metrics.accuracy_score(ts, prelabels)
        dres[len(dres)] = [qs, cs, rs, ts, ps, prelabels, auc, acc]
        results.append(str([qs, cs, rs, ts, ps, prelabels, auc, acc]))
    return "\n".join(results)


def evaluate(model, test_loader, model_name, rel=None, save_path=""):
    if save_path != "":
        fout = open(save_path, "w", encoding="utf8")
    with torch.no_grad():
        y_trues = []
        y_scores = []
        dres = dict()
        test_mini_index = 0
        for data in test_loader:
            # if model_name in ["dkt_forget", "lpkt"]:
            #     q, c, r, qshft, cshft, rshft, m, sm, d, dshft = data
            if model_name in ["dkt_forget", "bakt_time"]:
                dcur, dgaps = data
            else:
                dcur = data
            if model_name in ["dimkt"]:
                q, c, r, sd, qd = dcur["qseqs"], dcur["cseqs"], dcur["rseqs"], dcur["sdseqs"], dcur["qdseqs"]
                qshft, cshft, rshft, sdshft, qdshft = dcur["shft_qseqs"], dcur["shft_cseqs"], dcur["shft_rseqs"], dcur["shft_sdseqs"], dcur["shft_qdseqs"]
                sd, qd, sdshft, qdshft = sd.to(device), qd.to(device), sdshft.to(device), qdshft.to(device)
            else:
                q, c, r = dcur["qseqs"], dcur["cseqs"], dcur["rseqs"]
                qshft, cshft, rshft = dcur["shft_qseqs"], dcur["shft_cseqs"], dcur["shft_rseqs"]
            m, sm = dcur["masks"], dcur["smasks"]
            q, c, r, qshft, cshft, rshft, m, sm = q.to(device), c.to(device), r.to(device), qshft.to(device), cshft.to(device), rshft.to(device), m.to(device), sm.to(device)
            if model.model_name in que_type_models and model_name not in ["lpkt", "rkt"]:
                model.model.eval()
            else:
                model.eval()

            # print(f"before y: {y.shape}")
            cq = torch.cat((q[:, 0:1], qshft), dim=1)
            cc = torch.cat((c[:, 0:1], cshft), dim=1)
            cr = torch.cat((r[:, 0:1], rshft), dim=1)
            if model_name in ["atdkt"]:
                y = model(dcur)
                if model.emb_type.find("bkt") == -1 and model.emb_type.find("addcshft") == -1:
                    y = (y * one_hot(cshft.long(), model.num_c)).sum(-1)
            elif model_name in ["bakt_time"]:
                y = model(dcur, dgaps)
                y = y[:, 1:]
            elif model_name in ["simplekt", "stablekt", "sparsekt", "cskt"]:
                y = model(dcur)
                y = y[:, 1:]
            elif model_name in ["dkt", "dkt+"]:
                y = model(c.long(), r.long())
                y = (y * one_hot(cshft.long(), model.num_c)).sum(-1)
            elif model_name in ["dkt_forget"]:
                y = model(c.long(), r.long(), dgaps)
                y = (y * one_hot(cshft.long(), model.num_c)).sum(-1)
            elif model_name in ["dkvmn", "deep_irt", "skvmn"]:
                y = model(cc.long(), cr.long())
                y = y[:, 1:]
            elif model_name in ["kqn", "sakt"]:
                y = model(c.long(), r.long(), cshft.long())
            elif model_name == "saint":
                y = model(cq.long(), cc.long(), r.long())
                y = y[:, 1:]
            elif model_name in ["akt", "folibikt", "akt_vector", "akt_norasch", "akt_mono", "akt_attn", "aktattn_pos", "aktmono_pos", "akt_raschx", "akt_raschy", "aktvec_raschx", "lefokt_akt"]:
                y, reg_loss = model(cc.long(), cr.long(), cq.long())
                y = y[:, 1:]
            elif model_name in ["dtransformer"]:
                output, *_ = model.predict(cc.long(), cr.long(), cq.long())
                sg = nn.Sigmoid()
                y = sg(output)
                y = y[:, 1:]
            elif model_name in ["atkt", "atktfix"]:
                y, _ = model(c.long(), r.long())
                y = (y * one_hot(cshft.long(), model.num_c)).sum(-1)
            elif model_name == "gkt":
                y = model(cc.long(), cr.long())
            elif model_name == "lpkt":
                cit = torch.cat((dcur["itseqs"][:, 0:1], dcur["shft_itseqs"]), dim=1)
                y = model(cq.long(), cr.long(), cit.long().to(device))
                y = y[:, 1:]
            elif model_name == "hawkes":
                ct = torch.cat((dcur["tseqs"][:, 0:1], dcur["shft_tseqs"]), dim=1)
                y = model(cc.long(), cq.long(), ct.long(), cr.long())
                y = y[:, 1:]
            elif model_name in que_type_models and model_name not in ["lpkt", "rkt"]:
                y = model.predict_one_step(data)
                c, cshft = q, qshft  # question level
            elif model_name == "dimkt":
                y = model(q.long(), c.long(), sd.long(), qd.long(), r.long(), qshft.long(), cshft.long(), sdshft.long(), qdshft.long())
            # print(f"after y: {y.shape}")
            # save predict result
            if save_path != "":
                result = save_cur_predict_result(dres, c, r, cshft, rshft, m, sm, y)
                fout.write(result + "\n")

            y = torch.masked_select(y, sm).detach().cpu()
            # print(f"pred_results:{y}")
            t = torch.masked_select(rshft, sm).detach().cpu()

            y_trues.append(t.numpy())
            y_scores.append(y.numpy())
            test_mini_index += 1
        ts = np.concatenate(y_trues, axis=0)
        ps = np.concatenate(y_scores, axis=0)
        print(f"ts.shape: {ts.shape}, ps.shape: {ps.shape}")
        auc = metrics.roc_auc_score(y_true=ts, y_score=ps)

        prelabels = [1 if p >= 0.5 else 0 for p in ps]
        acc = metrics.accuracy_score(ts, prelabels)
    # if save_path != "":
    #     pd.to_pickle(dres, save_path+".pkl")
    return auc, acc


def early_fusion(curhs, model, model_name):
    if model_name in ["dkvmn", "deep_irt", "akt", "saint", "sakt", "atdkt", "simplekt", "bakt_time"]:
        p = model.out(curhs[0]).squeeze(-1)
        m = nn.Sigmoid()
        p = m(p)
    elif model_name == "saint":
        p = model.out(model.dropout(curhs[0]))
        p = torch.sigmoid(p).squeeze(-1)
    return p


def late_fusion(dcur, curdf, fusion_type=["mean", "vote", "all"]):
    high, low = [], []
    for pred in curdf["preds"]:
        if pred >= 0.5:
            high.append(pred)
        else:
            low.append(pred)

    if "mean" in fusion_type:
        dcur.setdefault("late_mean", [])
        dcur["late_mean"].append(round(float(curdf["preds"].mean()), 4))
    if "vote" in fusion_type:
        dcur.setdefault("late_vote", [])
        correctnum = list(curdf["preds"] >= 0.5).count(True)
        late_vote = np.mean(high) if correctnum / len(curdf["preds"]) >= 0.5 else np.mean(low)
        dcur["late_vote"].append(late_vote)
    if "all" in fusion_type:
        dcur.setdefault("late_all", [])
        late_all = np.mean(high) if correctnum == len(curdf["preds"]) else np.mean(low)
        dcur["late_all"].append(late_all)
    return


def effective_fusion(df, model, model_name, fusion_type):
    dres = dict()
    df = df.groupby("qidx", as_index=True, sort=True)

    curhs, curr = [[], []], []
    dcur = {"late_trues": [], "qidxs": [], "questions": [], "concepts": [], "row": [], "concept_preds": []}
    hasearly = ["dkvmn", "deep_irt", "akt", "saint", "sakt", "atdkt", "simplekt", "bakt_time"]
    for ui in df:
        # 一题一题处理
        curdf = ui[1]
        if model_name in hasearly and model_name not in ["akt", "simplekt", "bakt_time"]:
            curhs[0].append(torch.tensor(curdf["hidden"].tolist()[0], dtype=torch.float32).to(device))
        elif model_name in ["akt", "simplekt", "bakt_time"]:
            curhs[0].append(torch.tensor(curdf["hidden"].tolist()[0], dtype=torch.float32).to(device))
            curhs[1].append(torch.tensor(curdf["hidden"].tolist()[1], dtype=torch.float32).to(device))
        curr.append(int(curdf["response"].unique()[0]))
        dcur["late_trues"].append(int(curdf["response"].unique()[0]))
        dcur["qidxs"].append(ui[0])
        dcur["row"].append(int(curdf["row"].unique()[0]))
        dcur["questions"].append(",".join([str(int(s)) for s in curdf["questions"].tolist()]))
        dcur["concepts"].append(",".join([str(int(s)) for s in curdf["concepts"].tolist()]))
        late_fusion(dcur, curdf)
        dcur["concept_preds"].append(",".join([str(round(s, 4)) for s in (curdf["preds"].tolist())]))

    for key in dcur:
        dres.setdefault(key, [])
        dres[key].append(np.array(dcur[key]))
    # early fusion
    if "early_fusion" in fusion_type and model_name in hasearly:
        curhs = [torch.stack(curhs[0]), torch.stack(curhs[1])] if curhs[1] != [] else [torch.stack(curhs[0])]
        early_preds = early_fusion(curhs, model, model_name).cpu().tolist()
        dres["early_preds"] = [np.array(early_preds)]
    return dres


def compute_auc_acc(ts, ps, prefix=""):
    auc = metrics.roc_auc_score(y_true=ts, y_score=ps)
    prelabels = [1 if p >= 0.5 else 0 for p in ps]
    acc = metrics.accuracy_score(ts, prelabels)
    return {prefix + "auc": auc, prefix + "acc": acc}


def evaluate_question(model, test_loader, model_name, fusion_type=["early_fusion", "late_fusion"], save_path=""):
    """Question-level evaluation: a question with several concepts is expanded into one row per concept
    by the data preprocessing; predictions are fused back per question here."""
    # dkt / dkt+ / dkt_forget / atkt: give past -> predict all. has no early fusion!!!
    # dkvmn / akt / saint: give cur -> predict cur
    # sakt: give past+cur -> predict cur
    # kqn: give past+cur -> predict cur
    hasearly = ["dkvmn", "deep_irt", "akt", "saint", "sakt", "atdkt", "simplekt", "bakt_time"]
    if save_path != "":
        fout = open(save_path, "w", encoding="utf8")
        if model_name in hasearly:
            fout.write("\t".join(["orirow", "qidx", "question", "concepts", "response", "early_preds", "late_mean", "late_vote", "late_all"]) + "\n")
        else:
            fout.write("\t".join(["orirow", "qidx", "question", "concepts", "response", "late_mean", "late_vote", "late_all"]) + "\n")
    with torch.no_grad():
        y_trues = []
        y_scores = []
        dres = dict()
        for data in test_loader:
            dcurori, dqtest = data
            q, c, r = dcurori["qseqs"], dcurori["cseqs"], dcurori["rseqs"]
            qshft, cshft, rshft = dcurori["shft_qseqs"], dcurori["shft_cseqs"], dcurori["shft_rseqs"]
            m, sm = dcurori["masks"], dcurori["smasks"]
            q, c, r, qshft, cshft, rshft, m, sm = q.to(device), c.to(device), r.to(device), qshft.to(device), cshft.to(device), rshft.to(device), m.to(device), sm.to(device)
            qidxs, rests, orirow = dqtest["qidxs"], dqtest["rests"], dqtest["orirow"]
            qidxs, rests, orirow = qidxs.to(device), rests.to(device), orirow.to(device)

            model.eval()
            cq = torch.cat((q[:, 0:1], qshft), dim=1)
            cc = torch.cat((c[:, 0:1], cshft), dim=1)
            cr = torch.cat((r[:, 0:1], rshft), dim=1)
            if model_name in ["dkt", "dkt+"]:
                y = model(c.long(), r.long())
                y = (y * one_hot(cshft.long(), model.num_c)).sum(-1)
                h = None
            elif model_name in ["dkvmn", "deep_irt"]:
                y, h = model(cc.long(), cr.long(), True)
                y, h = y[:, 1:], h[:, 1:]
            elif model_name in ["sakt"]:
                y, h = model(c.long(), r.long(), cshft.long(), True)
            elif model_name in ["akt", "simplekt"]:
                y, reg_loss, h = model(cc.long(), cr.long(), cq.long(), True)
                y, h = y[:, 1:], h[:, 1:]
            else:
                y = model(c.long(), r.long())
                h = None

            concepts = cshft
            for i in range(y.shape[0]):
                curmask = sm[i]
                cy = torch.masked_select(y[i], curmask).detach().cpu()
                ct = torch.masked_select(rshft[i], curmask).detach().cpu()
                cc_ = torch.masked_select(concepts[i], curmask).detach().cpu()
                cq_ = torch.masked_select(qshft[i], curmask).detach().cpu()
                cqidx = torch.masked_select(qidxs[i], curmask).detach().cpu()
                corow = torch.masked_select(orirow[i], curmask).detach().cpu()
                crest = torch.masked_select(rests[i], curmask).detach().cpu()
                rows = {"qidx": cqidx.tolist(), "row": corow.tolist(), "rest": crest.tolist(),
                        "questions": cq_.tolist(), "concepts": cc_.tolist(), "response": ct.tolist(), "preds": cy.tolist()}
                if h is not None and model_name in hasearly:
                    ch = h[i][curmask.bool()].detach().cpu()
                    rows["hidden"] = [x.tolist() for x in ch]
                curdf = pd.DataFrame(rows)
                for qidx, qdf in curdf.groupby("qidx", sort=True):
                    key = (int(qdf["row"].iloc[0]), int(qidx))
                    dres.setdefault(key, {"response": int(qdf["response"].iloc[0]), "preds": []})
                    dres[key]["preds"].extend(qdf["preds"].tolist())

        late_trues, late_means, late_votes = [], [], []
        for (row, qidx), v in sorted(dres.items()):
            preds = np.array(v["preds"])
            late_trues.append(v["response"])
            late_means.append(float(preds.mean()))
            late_votes.append(float(preds[preds >= 0.5].mean()) if (preds >= 0.5).mean() >= 0.5 else float(preds[preds < 0.5].mean()))
            if save_path != "":
                fout.write("\t".join([str(row), str(qidx), "", "", str(v["response"]), str(late_means[-1]), str(late_votes[-1]), ""]) + "\n")

    aucs, accs = {}, {}
    for name, ps in [("late_mean", late_means), ("late_vote", late_votes)]:
        res = compute_auc_acc(np.array(late_trues), np.array(ps), prefix=name + "_")
        aucs[name] = res[name + "_auc"]
        accs[name] = res[name + "_acc"]
    if save_path != "":
        fout.close()
    return aucs, accs
