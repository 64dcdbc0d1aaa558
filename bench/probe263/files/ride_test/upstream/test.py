import argparse
import torch
from tqdm import tqdm
import data_loader.data_loaders as module_data
import model.loss as module_loss
import model.metric as module_metric
import model.model as module_arch
from parse_config import ConfigParser
import numpy as np


def main(config, posthoc_bias_correction=False):
    logger = config.get_logger('test')

    # setup data_loader instances
    if 'returns_feat' in config['arch']['args']:
        model = config.init_obj('arch', module_arch, allow_override=True, returns_feat=False)
    else:
        model = config.init_obj('arch', module_arch)

    logger.info('Loading checkpoint: {} ...'.format(config.resume))
    checkpoint = torch.load(config.resume)
    state_dict = checkpoint['state_dict']
    if config['n_gpu'] > 1:
        model = torch.nn.DataParallel(model)
    model.load_state_dict(state_dict)

    # prepare model for testing
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = model.to(device)
    model.eval()

    data_loader = getattr(module_data, config['data_loader']['type'])(
        config['data_loader']['args']['data_dir'],
        batch_size=128,
        shuffle=False,
        training=False,
        num_workers=8
    )

    num_classes = config._config["arch"]["args"]["num_classes"]
    confusion_matrix = torch.zeros(num_classes, num_classes).cuda()

    get_class_acc = True
    if get_class_acc:
        train_data_loader = getattr(module_data, config['data_loader']['type'])(
            config['data_loader']['args']['data_dir'],
            batch_size=128,
            training=True
        )
        train_cls_num_list = np.array(train_data_loader.cls_num_list)
        many_shot = train_cls_num_list > 100
        few_shot = train_cls_num_list < 20
        medium_shot = ~many_shot & ~few_shot

    if posthoc_bias_correction:
        test_prior = torch.tensor(train_data_loader.cls_num_list).float().to(device)
        test_prior = test_prior / test_prior.sum()
        test_bias = test_prior.log()
    else:
        test_bias = None

    metric_fns = [getattr(module_metric, met) for met in config['metrics']]
    total_metrics = torch.zeros(len(metric_fns))

    with torch.no_grad():
        for i, (data, target) in enumerate(tqdm(data_loader)):
            data, target = data.to(device), target.to(device)
            output = model(data)
            if isinstance(output, dict):
                output = output["output"]
            if test_bias is not None:
                output = output - test_bias[None, :]
            batch_size = data.shape[0]
            for j, metric in enumerate(metric_fns):
                total_metrics[j] += metric(output, target, return_length=True)[0] * batch_size

            for t, p in zip(target.view(-1), output.argmax(dim=1).view(-1)):
                confusion_matrix[t.long(), p.long()] += 1

    acc_per_class = confusion_matrix.diag() / confusion_matrix.sum(1)
    acc = acc_per_class.cpu().numpy()

    n_samples = len(data_loader.sampler)
    log = {}
    log.update({
        met.__name__: total_metrics[i].item() / n_samples for i, met in enumerate(metric_fns)
    })

    if get_class_acc:
        many_shot_acc = acc[many_shot].mean()
        medium_shot_acc = acc[medium_shot].mean()
        few_shot_acc = acc[few_shot].mean()
        log.update({
            "many_class_num": many_shot.sum(),
            "medium_class_num": medium_shot.sum(),
            "few_class_num": few_shot.sum(),
            "many_shot_acc": many_shot_acc,
            "medium_shot_acc": medium_shot_acc,
            "few_shot_acc": few_shot_acc,
        })

    logger.info(log)

    print("{:.2f} & {:.2f} & {:.2f} & {:.2f}".format(
        log["many_shot_acc"] * 100, log["medium_shot_acc"] * 100,
        log["few_shot_acc"] * 100, log["accuracy"] * 100))


if __name__ == '__main__':
    args = argparse.ArgumentParser(description='PyTorch Template')
    args.add_argument('-c', '--config', default=None, type=str,
                      help='config file path (default: None)')
    args.add_argument('-r', '--resume', default=None, type=str,
                      help='path to latest checkpoint (default: None)')
    args.add_argument('-d', '--device', default=None, type=str,
                      help='indices of GPUs to enable (default: all)')
    args.add_argument('--posthoc_bias_correction', dest='posthoc_bias_correction', action='store_true')

    config = ConfigParser.from_args(args)
    main(config, config._config.get("posthoc_bias_correction", False) or
         args.parse_args().posthoc_bias_correction)
