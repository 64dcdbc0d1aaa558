import os
import json
import argparse

import torch
from torch.utils.data import TensorDataset, DataLoader

from utils import load_bert_features_claim_test, write_predictions
from models import GEAR

parser = argparse.ArgumentParser()
parser.add_argument('--seed', type=int, default=314, help='Random seed.')
parser.add_argument('--evi_num', type=int, default=5, help='Evidence num.')
parser.add_argument('--layer', type=int, default=1, help='Graph Layer.')
parser.add_argument('--pool', type=str, default='att', help='Aggregating method: top, max, mean, concat, att, sum')
parser.add_argument('--batch_size', type=int, default=256)
parser.add_argument('--cuda', type=int, default=0, help='GPU id.')
parser.add_argument('--test_features', default='../data/bert/bert-nli-test-retrieve-set.tsv')
parser.add_argument('--evidence_file', default='../data/retrieved/test.ensembles.s10.jsonl')
parser.add_argument('--checkpoint_dir', default='../output/')
parser.add_argument('--outdir', default='../output/')
args = parser.parse_args()

device = torch.device('cuda:%d' % args.cuda)

dir_path = args.checkpoint_dir + 'gear-%devi-%dlayer-%s-%dseed-001' % (args.evi_num, args.layer, args.pool, args.seed)
print('Loading model from %s' % dir_path)

features, claims, ids = load_bert_features_claim_test(args.test_features, args.evi_num)
dataset = TensorDataset(features, claims)
dataloader = DataLoader(dataset, batch_size=args.batch_size, shuffle=False)

evidences = []
with open(args.evidence_file) as fin:
    for line in fin:
        instance = json.loads(line)
        evidences.append([[e[0], e[1]] for e in instance['predicted_evidence']][:args.evi_num])

model = GEAR(nfeat=features.shape[2], nins=args.evi_num, nclass=3, nlayer=args.layer, pool=args.pool)
checkpoint = torch.load(dir_path + '/best.pth.tar', map_location=device)
model.load_state_dict(checkpoint['model'])
model.to(device)
model.eval()
print('Best dev accuracy of this checkpoint: %.4f (epoch %d)' % (checkpoint['best_accuracy'], checkpoint['epoch']))

preds = []
with torch.no_grad():
    for feature_batch, claim_batch in dataloader:
        feature_batch = feature_batch.to(device)
        claim_batch = claim_batch.to(device)
        outputs = model(feature_batch, claim_batch)
        preds.extend(outputs.max(1)[1].tolist())

if not os.path.exists(args.outdir):
    os.makedirs(args.outdir)
out_path = os.path.join(args.outdir, 'test-predictions-%dlayer-%s.jsonl' % (args.layer, args.pool))
write_predictions(out_path, ids, preds, evidences)
print('Predictions written to %s' % out_path)
