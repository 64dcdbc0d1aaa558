import argparse
import os

import torch

from common.dataset.data_set import DataSet
from common.dataset.reader import JSONLineReader
from common.features.feature_function import Features
from common.training.early_stopping import EarlyStopping
from common.training.options import gpu, gpu_id
from common.training.run import train, print_evaluation, save_model, load_model
from common.util.log_helper import LogHelper
from common.util.random import SimpleRandom
from retrieval.fever_doc_db import FeverDocDB
from rte.riedel.data import FEVERGoldFormatter, FEVERLabelSchema
from rte.riedel.fever_features import TermFrequencyFeatureFunction
from rte.riedel.model import SimpleMLP


def model_exists(mname):
    return os.path.exists(os.path.join("models", "{0}.model".format(mname)))


if __name__ == "__main__":
    SimpleRandom.set_seeds()

    LogHelper.setup()
    logger = LogHelper.get_logger(__name__)

    parser = argparse.ArgumentParser()
    parser.add_argument('db', type=str, help='db file path')
    parser.add_argument('train', type=str, help='train file path')
    parser.add_argument('dev', type=str, help='dev file path')
    parser.add_argument('--test', required=False, default=None, type=str, help="test file path")
    parser.add_argument("--model", type=str, help="model name")
    parser.add_argument("--sentence", type=bool, default=False)
    parser.add_argument("--filtering", type=str, default=None)
    args = parser.parse_args()

    logger.info("Model name is {0}".format(args.model))

    ffns = []

    if args.sentence:
        logger.info("Model is Sentence level")
        ffns.append(SentenceLevelTermFrequencyFeatureFunction(db, naming=mname))
    else:
        logger.info("Model is Document level")
        db = FeverDocDB(args.db)
        ffns.append(TermFrequencyFeatureFunction(db, naming=args.model))

    f = Features(args.model, ffns)
    jlr = JSONLineReader()

    formatter = FEVERGoldFormatter(None, FEVERLabelSchema(), filtering=args.filtering)

    train_ds = DataSet(file=args.train, reader=jlr, formatter=formatter)
    dev_ds = DataSet(file=args.dev, reader=jlr, formatter=formatter)

    train_ds.read()
    dev_ds.read()

    test_ds = None
    if args.test is not None:
        test_ds = DataSet(file=args.test, reader=jlr, formatter=formatter)
        test_ds.read()

    train_feats, dev_feats, test_feats = f.load(train_ds, dev_ds, test_ds)
    f.save_vocab(args.model)

    input_shape = train_feats[0].shape[1]

    model = SimpleMLP(input_shape, 100, 3)

    if gpu():
        torch.cuda.manual_seed(SimpleRandom.get_seed())
        model.cuda(gpu_id())

    if model_exists(args.model) and not args.override:
        load_model(model, os.path.join("models", "{0}.model".format(args.model)))
    else:
        train(model, train_feats, 500, 1e-2, 90, dev_feats, early_stopping=EarlyStopping(args.model))
        save_model(model, os.path.join("models", "{0}.model".format(args.model)))

    print_evaluation(model, dev_feats, FEVERLabelSchema())
    if test_feats is not None:
        print_evaluation(model, test_feats, FEVERLabelSchema(), log="logs/{0}.test.jsonl".format(args.model))
