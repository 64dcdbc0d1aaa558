import json
import numpy as np
import torch

ENCODING = 'utf-8'
SENTENCE_NUM = 5
LABEL_MAP = {'SUPPORTS': 0, 'REFUTES': 1, 'NOT ENOUGH INFO': 2}


def load_bert_features_claim(filename, evi_num=SENTENCE_NUM):
    """Read the per-sentence BERT [CLS] vectors written by feature_extractor/extractor.py.

    Every claim is followed by `evi_num` evidence lines (padded with the claim itself
    when fewer were retrieved). Returns float tensors shaped [N, evi_num, 768],
    [N, 768] and long labels [N].
    """
    features = []
    claims = []
    labels = []
    with open(filename, 'r', encoding=ENCODING) as fin:
        lines = fin.readlines()
    block = evi_num + 1
    for start in range(0, len(lines), block):
        chunk = lines[start:start + block]
        if len(chunk) < block:
            break
        claim_parts = chunk[0].strip().split('\t')
        label = LABEL_MAP[claim_parts[1]]
        claim_vec = [float(x) for x in claim_parts[-1].split(' ')]
        evi_vecs = []
        for line in chunk[1:]:
            parts = line.strip().split('\t')
            evi_vecs.append([float(x) for x in parts[-1].split(' ')])
        features.append(evi_vecs)
        claims.append(claim_vec)
        labels.append(label)
    features = torch.FloatTensor(np.array(features, dtype=np.float32))
    claims = torch.FloatTensor(np.array(claims, dtype=np.float32))
    labels = torch.LongTensor(labels)
    return features, claims, labels


def load_bert_features_claim_test(filename, evi_num=SENTENCE_NUM):
    """Same as load_bert_features_claim, but test files carry instance ids instead of labels."""
    features = []
    claims = []
    ids = []
    with open(filename, 'r', encoding=ENCODING) as fin:
        lines = fin.readlines()
    block = evi_num + 1
    for start in range(0, len(lines), block):
        chunk = lines[start:start + block]
        if len(chunk) < block:
            break
        claim_parts = chunk[0].strip().split('\t')
        ids.append(int(claim_parts[0]))
        claims.append([float(x) for x in claim_parts[-1].split(' ')])
        features.append([[float(x) for x in line.strip().split('\t')[-1].split(' ')] for line in chunk[1:]])
    features = torch.FloatTensor(np.array(features, dtype=np.float32))
    claims = torch.FloatTensor(np.array(claims, dtype=np.float32))
    return features, claims, ids


def correct_prediction(output, labels):
    preds = output.max(1)[1].type_as(labels)
    correct = preds.eq(labels).double()
    correct = correct.sum()
    return correct


def accuracy(output, labels):
    return correct_prediction(output, labels) / len(labels)


def write_predictions(path, ids, preds, evidences=None):
    inv = {v: k for k, v in LABEL_MAP.items()}
    with open(path, 'w', encoding=ENCODING) as fout:
        for i, (iid, pred) in enumerate(zip(ids, preds)):
            item = {'id': iid, 'predicted_label': inv[int(pred)]}
            if evidences is not None:
                item['predicted_evidence'] = evidences[i]
            fout.write(json.dumps(item) + '\n')
