"""Neural document matching (NSMN, stage 1): re-rank the keyword-matched Wikipedia pages for each claim."""
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from allennlp.data.iterators import BasicIterator
from allennlp.data.token_indexers import SingleIdTokenIndexer, ELMoTokenCharactersIndexer
from tqdm import tqdm

import config
from data_util.data_readers.fever_reader_with_wn_simi_doc import WNSIMIReader
from data_util.exvocab import load_vocab_embeddings
from log_util import save_tool
from nli.mesim_wn_simi_v1_2 import Model
from nli.wn_feature import wn_persistent_api
from utils import common, fever_db
from nn_doc_retrieval.doc_sampler import sample_disamb_training_v0, sample_disamb_inference

torch.backends.cudnn.benchmark = True


def hidden_eval(model, data_iter, dev_data_list):
    with torch.no_grad():
        model.eval()
        y_pred_prob = []
        y_id_list = []
        for batch_idx, batch in enumerate(data_iter):
            out = model(batch)
            prob = torch.sigmoid(out[:, 0] - out[:, 1])
            y_id_list.extend(list(batch['pid']))
            y_pred_prob.extend(prob.tolist())

        assert len(y_id_list) == len(dev_data_list)
        for i in range(len(dev_data_list)):
            assert str(y_id_list[i]) == str(dev_data_list[i]['selection_id'])
            dev_data_list[i]['prob'] = y_pred_prob[i]
        return dev_data_list


def train_doc_disamb(seed=12, num_epoch=5, batch_size=64, dev_batch_size=128):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)

    experiment_name = "doc_disamb_simi_v0"
    lazy = True

    dev_upstream_file = config.RESULT_PATH / "doc_retri_bls/docretri.basic.nopageview/dev.jsonl"
    train_upstream_file = config.RESULT_PATH / "doc_retri_bls/docretri.basic.nopageview/train.jsonl"

    cursor = fever_db.get_cursor()
    token_indexers = {
        'tokens': SingleIdTokenIndexer(namespace='tokens'),
        'elmo_chars': ELMoTokenCharactersIndexer(namespace='elmo_characters')
    }
    p_dict = wn_persistent_api.persistence_load()
    train_reader = WNSIMIReader(token_indexers=token_indexers, lazy=lazy, wn_p_dict=p_dict, max_l=180)
    dev_reader = WNSIMIReader(token_indexers=token_indexers, lazy=lazy, wn_p_dict=p_dict, max_l=180)

    complete_upstream_dev_data = sample_disamb_inference(common.load_jsonl(dev_upstream_file), cursor)
    dev_instances = dev_reader.read(complete_upstream_dev_data)

    biterator = BasicIterator(batch_size=batch_size)
    dev_biterator = BasicIterator(batch_size=dev_batch_size)

    vocab, weight_dict = load_vocab_embeddings(config.DATA_ROOT / "vocab_cache" / "nli_basic")
    vocab.change_token_with_index_to_namespace('hidden', -2, namespace='labels')
    biterator.index_with(vocab)
    dev_biterator.index_with(vocab)

    device = torch.device("cuda:0")
    model = Model(rnn_size_in=(1024 + 300 + dev_reader.wn_feature_size,
                               1024 + 450 + dev_reader.wn_feature_size),
                  rnn_size_out=(450, 450),
                  weight=weight_dict['glove.840B.300d'],
                  vocab_size=vocab.get_vocab_size('tokens'),
                  mlp_d=900, embedding_dim=300, max_l=160, num_of_class=2)
    model.display()
    model.to(device)

    file_path_prefix, date = save_tool.gen_file_prefix(f"{experiment_name}")

    optimizer = optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=0.0002)
    criterion = nn.CrossEntropyLoss()
    best_dev = -1
    iteration = 0

    for i_epoch in range(num_epoch):
        print("Resampling...")
        complete_upstream_train_data = sample_disamb_training_v0(common.load_jsonl(train_upstream_file), cursor,
                                                                 pn_ratio=1.0, only_found=False)
        random.shuffle(complete_upstream_train_data)
        print("Sample data length:", len(complete_upstream_train_data))
        train_instances = train_reader.read(complete_upstream_train_data)
        train_iter = biterator(train_instances, shuffle=True, num_epochs=1)

        for i, batch in tqdm(enumerate(train_iter)):
            model.train()
            out = model(batch)
            y = batch['selection_label'].to(device)
            loss = criterion(out, y)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            iteration += 1

            if iteration % 5000 == 0:
                dev_iter = dev_biterator(dev_instances, shuffle=False, num_epochs=1)
                complete_upstream_dev_data = hidden_eval(model, dev_iter, complete_upstream_dev_data)
                recall = doc_recall_at_k(complete_upstream_dev_data, k=5)
                print(f"Epoch {i_epoch} iter {iteration}: dev recall@5 = {recall}")
                if recall > best_dev:
                    best_dev = recall
                    save_path = os.path.join(file_path_prefix,
                                             f'i({iteration})_epoch({i_epoch})_(rec:{recall})_seed({seed})')
                    torch.save(model.state_dict(), save_path)
                torch.cuda.empty_cache()
                print("Peak GPU memory: %.1f MB" % (torch.cuda.max_memory_allocated() / 1024 ** 2))


def doc_recall_at_k(d_list, k=5):
    hit = 0
    total = 0
    for item in d_list:
        if item.get('label') == 'NOT ENOUGH INFO':
            continue
        total += 1
        if item.get('gold_in_top_k') and item['rank'] < k:
            hit += 1
    return hit / max(total, 1)


def eval_doc_disamb(model_path, upstream_file, out_file, batch_size=128):
    cursor = fever_db.get_cursor()
    token_indexers = {
        'tokens': SingleIdTokenIndexer(namespace='tokens'),
        'elmo_chars': ELMoTokenCharactersIndexer(namespace='elmo_characters')
    }
    p_dict = wn_persistent_api.persistence_load()
    reader = WNSIMIReader(token_indexers=token_indexers, lazy=True, wn_p_dict=p_dict, max_l=180)
    d_list = sample_disamb_inference(common.load_jsonl(upstream_file), cursor)
    instances = reader.read(d_list)

    vocab, weight_dict = load_vocab_embeddings(config.DATA_ROOT / "vocab_cache" / "nli_basic")
    vocab.change_token_with_index_to_namespace('hidden', -2, namespace='labels')
    biterator = BasicIterator(batch_size=batch_size)
    biterator.index_with(vocab)

    model = Model(rnn_size_in=(1024 + 300 + reader.wn_feature_size,
                               1024 + 450 + reader.wn_feature_size),
                  rnn_size_out=(450, 450),
                  weight=weight_dict['glove.840B.300d'],
                  vocab_size=vocab.get_vocab_size('tokens'),
                  mlp_d=900, embedding_dim=300, max_l=160, num_of_class=2)
    model.load_state_dict(torch.load(model_path, map_location=lambda storage, loc: storage.cuda(0)))
    model.cuda(0)

    data_iter = biterator(instances, shuffle=False, num_epochs=1)
    d_list = hidden_eval(model, data_iter, d_list)
    common.save_jsonl(d_list, out_file)


if __name__ == "__main__":
    train_doc_disamb()
