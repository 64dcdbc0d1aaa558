import random, os
import argparse
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from pytorch_pretrained_bert.tokenization import BertTokenizer
from models import inference_model
from data_loader import DataLoaderTest
from bert_model import BertForSequenceEncoder
import logging
import json

logger = logging.getLogger(__name__)


def save_to_file(all_predict, outpath, evi_list):
    with open(outpath, "w") as out:
        for key, values in all_predict.items():
            sentences = list()
            for evidence in evi_list[key]:
                sentences.append(evidence)
            # NOTE: the FEVER scorer expects "predicted_label" and "predicted_evidence"
            predicted_label = values
            out.write(json.dumps({'id': key, 'predicted_label': predicted_label,
                                  'predicted_evidence': sentences}) + '\n')


def eval_model(model, label_list, validset_reader, outdir, name):
    outpath = outdir + name

    with open(outpath, "w") as f:
        for index, data in enumerate(validset_reader):
            inputs, ids = data
            logits = model(inputs)
            preds = logits.max(1)[1].tolist()
            assert len(preds) == len(ids)
            for step in range(len(preds)):
                instance = {"id": ids[step], "predicted_label": label_list[preds[step]]}
                f.write(json.dumps(instance) + "\n")


def eval_model_with_evidence(model, label_list, validset_reader):
    model.eval()
    all_predict = dict()
    all_evidence = dict()
    for inputs, ids, evi_list in validset_reader:
        logits = model(inputs)
        preds = logits.max(1)[1].tolist()
        assert len(preds) == len(ids)
        for step in range(len(preds)):
            all_predict[ids[step]] = label_list[preds[step]]
            all_evidence[ids[step]] = evi_list[step]
    return all_predict, all_evidence


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument('--test_path', help='train path')
    parser.add_argument('--name', help='train path')
    parser.add_argument("--batch_size", default=32, type=int, help="Total batch size for training.")
    parser.add_argument('--outdir', required=True, help='path to output directory')
    parser.add_argument('--bert_pretrain', required=True)
    parser.add_argument('--checkpoint', required=True)
    parser.add_argument('--dropout', type=float, default=0.6, help='Dropout.')
    parser.add_argument('--no-cuda', action='store_true', default=False, help='Disables CUDA training.')
    parser.add_argument("--bert_hidden_dim", default=768, type=int, help="Total batch size for training.")
    parser.add_argument("--layer", type=int, default=1, help='Graph Layer.')
    parser.add_argument("--num_labels", type=int, default=3)
    parser.add_argument("--evi_num", type=int, default=5, help='Evidence num.')
    parser.add_argument("--kernel", type=int, default=21, help='Evidence num.')
    parser.add_argument("--threshold", type=float, default=0.0, help='Evidence num.')
    parser.add_argument("--max_len", default=120, type=int,
                        help="The maximum total input sequence length after WordPiece tokenization. Sequences "
                             "longer than this will be truncated, and sequences shorter than this will be padded.")
    args = parser.parse_args()

    if not os.path.exists(args.outdir):
        os.mkdir(args.outdir)
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    handlers = [logging.FileHandler(os.path.abspath(args.outdir) + '/train_log.txt'), logging.StreamHandler()]
    logging.basicConfig(format='[%(asctime)s] %(levelname)s: %(message)s', level=logging.DEBUG,
                        datefmt='%d-%m-%Y %H:%M:%S', handlers=handlers)
    logger.info(args)
    logger.info('Start testing!')

    label_list = ["SUPPORTS", "REFUTES", "NOT ENOUGH INFO"]
    tokenizer = BertTokenizer.from_pretrained(args.bert_pretrain, do_lower_case=False)
    logger.info("loading validation set")
    validset_reader = DataLoaderTest(args.test_path, tokenizer, args, batch_size=args.batch_size)

    logger.info('initializing estimator model')
    bert_model = BertForSequenceEncoder.from_pretrained(args.bert_pretrain)
    bert_model = bert_model.cuda()
    model = inference_model(bert_model, args)
    model.load_state_dict(torch.load(args.checkpoint)['model'])
    model = model.cuda()
    logger.info('Start eval!')
    with torch.no_grad():
        predict_dict, evidence_dict = eval_model_with_evidence(model, label_list, validset_reader)
    save_to_file(predict_dict, os.path.join(args.outdir, args.name), evidence_dict)
