import os
import argparse
import numpy as np

import sys
sys.path.append(os.path.abspath(__file__ + '/../../..'))

import torch
torch.set_num_threads(3)

from src.models.gwnet import GWNET
from src.engines.gwnet_engine import GWNET_Engine
from src.utils.args import get_public_config, check_device
from src.utils.dataloader import load_dataset, load_adj_from_numpy, get_dataset_info
from src.utils.graph_algo import normalize_adj_mx
from src.utils.metrics import masked_mae
from src.utils.logging import get_logger
from src.utils.helper import set_seed, select_free_gpu


def get_config():
    parser = get_public_config()
    parser.add_argument('--adp_adj', type=int, default=1)
    parser.add_argument('--init_dim', type=int, default=32)
    parser.add_argument('--skip_dim', type=int, default=256)
    parser.add_argument('--end_dim', type=int, default=512)

    parser.add_argument('--lrate', type=float, default=1e-3)
    parser.add_argument('--wdecay', type=float, default=1e-4)
    parser.add_argument('--dropout', type=float, default=0.3)
    parser.add_argument('--clip_grad_value', type=float, default=5)
    args = parser.parse_args()

    folder_name = '{}-{}-{}'.format(args.dataset, args.years, args.model_name)
    log_dir = './experiments/{}/save/{}/'.format(args.model_name, folder_name)
    logger = get_logger(log_dir, __name__, 'record_s{}.log'.format(args.seed))
    logger.info(args)

    return args, log_dir, logger


def main():
    args, log_dir, logger = get_config()
    set_seed(args.seed)
    if args.auto_gpu:
        picked = select_free_gpu()
        if picked is not None:
            logger.info('NVML picked {} (was {})'.format(picked, args.device))
            args.device = picked
    check_device(args)
    device = torch.device(args.device)
    if device.type == 'cuda':
        torch.cuda.set_device(device)

    data_path, adj_path, node_num = get_dataset_info(args.dataset)
    logger.info('Adj path: ' + adj_path)

    adj_mx = load_adj_from_numpy(adj_path)
    adj_mx = adj_mx - np.eye(node_num)

    adj_mx = normalize_adj_mx(adj_mx, 'doubletransition')
    supports = [torch.tensor(i).to(device) for i in adj_mx]

    dataloader, scaler = load_dataset(data_path, args, logger)

    model = GWNET(node_num=node_num,
                  input_dim=args.input_dim,
                  output_dim=args.output_dim,
                  supports=supports,
                  adp_adj=args.adp_adj,
                  dropout=args.dropout,
                  residual_channels=args.init_dim,
                  dilation_channels=args.init_dim,
                  skip_channels=args.skip_dim,
                  end_channels=args.end_dim
                  )

    loss_fn = masked_mae
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lrate, weight_decay=args.wdecay)
    scheduler = None

    engine = GWNET_Engine(device=device,
                          model=model,
                          dataloader=dataloader,
                          scaler=scaler,
                          sampler=None,
                          loss_fn=loss_fn,
                          lrate=args.lrate,
                          optimizer=optimizer,
                          scheduler=scheduler,
                          clip_grad_value=args.clip_grad_value,
                          max_epochs=args.max_epochs,
                          patience=args.patience,
                          log_dir=log_dir,
                          logger=logger,
                          seed=args.seed
                          )

    if args.mode == 'train':
        engine.train()
    else:
        engine.evaluate(args.mode)


if __name__ == "__main__":
    main()
