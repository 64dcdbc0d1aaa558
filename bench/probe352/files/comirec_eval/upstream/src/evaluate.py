"""Full-catalogue evaluation for MIND / ComiRec-SA / ComiRec-DR (PyTorch port).

Multi-interest models emit K user vectors; each is searched against all item
embeddings with an exact inner-product index and the K result lists are merged
(optionally with the controllable diversity re-ranking from the paper).
"""
import argparse
import math
import os
import pickle
import sys
import time

import faiss
import numpy as np
import torch

from data_iterator import DataIterator
from model import ComiRec_DR, ComiRec_SA, MIND, Model_DNN, Model_GRU4REC
from utils import get_exp_name, load_item_cate, compute_diversity


def get_model(dataset, model_type, item_count, batch_size, maxlen, args):
    if model_type == 'DNN':
        model = Model_DNN(item_count, args.embedding_dim, args.hidden_size, batch_size, maxlen)
    elif model_type == 'GRU4REC':
        model = Model_GRU4REC(item_count, args.embedding_dim, args.hidden_size, batch_size, maxlen)
    elif model_type == 'MIND':
        relu_layer = True if dataset == 'book' else False
        model = MIND(item_count, args.embedding_dim, args.hidden_size, batch_size, args.num_interest,
                     args.routing_iter, maxlen, relu_layer=relu_layer)
    elif model_type == 'ComiRec-DR':
        model = ComiRec_DR(item_count, args.embedding_dim, args.hidden_size, batch_size, args.num_interest,
                           args.routing_iter, maxlen)
    elif model_type == 'ComiRec-SA':
        model = ComiRec_SA(item_count, args.embedding_dim, args.hidden_size, batch_size, args.num_interest, maxlen)
    else:
        print("Invalid model_type : %s", model_type)
        return
    return model


def build_index(item_embs, embedding_dim, gpu_id=0):
    """Exact MIPS index over all items; falls back to the CPU index if the GPU one cannot be built."""
    res = faiss.StandardGpuResources()
    flat_config = faiss.GpuIndexFlatConfig()
    flat_config.device = gpu_id
    try:
        gpu_index = faiss.GpuIndexFlatIP(res, embedding_dim, flat_config)
        gpu_index.add(item_embs)
        return gpu_index
    except Exception as e:
        print('faiss gpu index failed, using cpu index:', e)
        cpu_index = faiss.IndexFlatIP(embedding_dim)
        cpu_index.add(item_embs)
        return cpu_index


def evaluate_full(device, test_data, model, model_path, batch_size, item_cate_map, save=True, coef=None, topN=50):
    item_embs = model.output_items().cpu().detach().numpy()
    index = build_index(item_embs, model.embedding_dim, gpu_id=device.index or 0)

    total = 0
    total_recall = 0.0
    total_ndcg = 0.0
    total_hitrate = 0
    total_diversity = 0.0
    for src, tgt in test_data:
        nick_id, item_id, hist_item, hist_mask = prepare_data(src, tgt)

        user_embs = model(torch.LongTensor(item_id).to(device),
                          torch.LongTensor(hist_item).to(device),
                          torch.FloatTensor(hist_mask).to(device), train=False)
        user_embs = user_embs.cpu().detach().numpy()

        # single-interest models (DNN / GRU4REC)
        if len(user_embs.shape) == 2:
            D, I = index.search(user_embs, topN)
            for i, iid_list in enumerate(item_id):
                recall = 0
                dcg = 0.0
                item_list = set(iid_list)
                for no, iid in enumerate(I[i]):
                    if iid in item_list:
                        recall += 1
                        dcg += 1.0 / math.log(no + 2, 2)
                idcg = 0.0
                for no in range(recall):
                    idcg += 1.0 / math.log(no + 2, 2)
                total_recall += recall * 1.0 / len(iid_list)
                if recall > 0:
                    total_ndcg += dcg / idcg
                    total_hitrate += 1
                if not save:
                    total_diversity += compute_diversity(I[i], item_cate_map)
        else:
            ni = user_embs.shape[1]
            user_embs = np.reshape(user_embs, [-1, user_embs.shape[-1]])
            D, I = index.search(user_embs, topN)
            for i, iid_list in enumerate(item_id):
                recall = 0
                dcg = 0.0
                item_list_set = set()
                if coef is None:
                    item_list = list(zip(np.reshape(I[i * ni:(i + 1) * ni], -1),
                                         np.reshape(D[i * ni:(i + 1) * ni], -1)))
                    item_list.sort(key=lambda x: x[1], reverse=True)
                    for j in range(len(item_list)):
                        if item_list[j][0] not in item_list_set and item_list[j][0] != 0:
                            item_list_set.add(item_list[j][0])
                            if len(item_list_set) >= topN:
                                break
                else:
                    origin_item_list = list(zip(np.reshape(I[i * ni:(i + 1) * ni], -1),
                                                np.reshape(D[i * ni:(i + 1) * ni], -1)))
                    origin_item_list.sort(key=lambda x: x[1], reverse=True)
                    item_list = []
                    tmp_item_set = set()
                    for (x, y) in origin_item_list:
                        if x not in tmp_item_set and x in item_cate_map:
                            item_list.append((x, y, item_cate_map[x]))
                            tmp_item_set.add(x)
                    cate_dict = dict()
                    for j in range(topN):
                        max_index = 0
                        max_score = item_list[0][1] - coef * cate_dict.get(item_list[0][2], 0)
                        for k in range(1, len(item_list)):
                            if item_list[k][1] - coef * cate_dict.get(item_list[k][2], 0) > max_score:
                                max_index = k
                                max_score = item_list[k][1] - coef * cate_dict.get(item_list[k][2], 0)
                            elif item_list[k][1] < max_score:
                                break
                        item_list_set.add(item_list[max_index][0])
                        cate_dict[item_list[max_index][2]] = cate_dict.get(item_list[max_index][2], 0) + 1
                        item_list.pop(max_index)

                true_item_set = set(iid_list)
                for no, iid in enumerate(item_list_set):
                    if iid in true_item_set:
                        recall += 1
                        dcg += 1.0 / math.log(no + 2, 2)
                idcg = 0.0
                for no in range(recall):
                    idcg += 1.0 / math.log(no + 2, 2)
                total_recall += recall * 1.0 / len(iid_list)
                if recall > 0:
                    total_ndcg += dcg / idcg
                    total_hitrate += 1
                if not save:
                    total_diversity += compute_diversity(list(item_list_set), item_cate_map)

        total += len(item_id)

    recall = total_recall / total
    ndcg = total_ndcg / total
    hitrate = total_hitrate * 1.0 / total
    diversity = total_diversity * 1.0 / total

    if save:
        return {'recall': recall, 'ndcg': ndcg, 'hitrate': hitrate}
    return {'recall': recall, 'ndcg': ndcg, 'hitrate': hitrate, 'diversity': diversity}


def prepare_data(src, target):
    nick_id, item_id = src
    hist_item, hist_mask = target
    return nick_id, item_id, hist_item, hist_mask


def test(args, test_file, cate_file, item_count, dataset="book", batch_size=128, maxlen=100, model_type='DNN', lr=0.001):
    exp_name = get_exp_name(dataset, model_type, batch_size, lr, maxlen, save=False)
    best_model_path = "best_model/" + exp_name + '/'

    device = torch.device("cuda:" + args.gpu if torch.cuda.is_available() else "cpu")
    model = get_model(dataset, model_type, item_count, batch_size, maxlen, args)
    model.load_state_dict(torch.load(best_model_path + 'model.pt'))
    model = model.to(device)
    model.eval()

    item_cate_map = load_item_cate(cate_file)
    test_data = DataIterator(test_file, batch_size, maxlen, train_flag=2)
    with torch.no_grad():
        metrics = evaluate_full(device, test_data, model, best_model_path, batch_size, item_cate_map,
                                save=False, coef=args.coef)
    print(', '.join(['test ' + key + ': %.6f' % value for key, value in metrics.items()]))


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('-p', type=str, default='test', help='train | test | output')
    parser.add_argument('--dataset', type=str, default='book', help='book | taobao')
    parser.add_argument('--random_seed', type=int, default=19)
    parser.add_argument('--embedding_dim', type=int, default=64)
    parser.add_argument('--hidden_size', type=int, default=64)
    parser.add_argument('--num_interest', type=int, default=4)
    parser.add_argument('--model_type', type=str, default='none', help='DNN | GRU4REC | ..')
    parser.add_argument('--learning_rate', type=float, default=0.001, help='')
    parser.add_argument('--max_iter', type=int, default=1000, help='(k)')
    parser.add_argument('--patience', type=int, default=50)
    parser.add_argument('--coef', default=None)
    parser.add_argument('--topN', type=int, default=50)
    parser.add_argument('--gpu', type=str, default='0')
    args = parser.parse_args()

    os.environ['CUDA_VISIBLE_DEVICES'] = args.gpu
    if args.coef is not None:
        args.coef = float(args.coef)

    path = './data/' + args.dataset + '_data/'
    test_file = path + args.dataset + '_test.txt'
    cate_file = path + args.dataset + '_item_cate.txt'
    item_count = 367983 if args.dataset == 'book' else 1708531
    if args.p == 'test':
        test(args, test_file, cate_file, item_count, dataset=args.dataset, model_type=args.model_type,
             lr=args.learning_rate)
    else:
        print('only the test phase lives in this script; use train.py for training / output')
