import argparse
import os
import sys
import importlib

from runner import runner
from generate_model import get_model


def parse_args():
    parser = argparse.ArgumentParser(description='Inference models')
    parser.add_argument('--model_name', default="tgnet_fps", type=str,
                        help="model name. list: tsegnet | tgnet_fps/tgnet_bdl | pointnet | pointnetpp | dgcnn | pointtransformer")
    parser.add_argument('--config_path', default="train_configs/tgnet_fps.py", type=str, help="train config file path.")
    parser.add_argument('--experiment_name', default="tgnet_fps", type=str, help="experiment name.")
    parser.add_argument('--input_data_dir_path', default="data_preprocessed_path", type=str, help="input data dir path.")
    parser.add_argument('--train_data_split_txt_path', default="base_name_train_fold.txt", type=str, help="train cases list file path.")
    parser.add_argument('--val_data_split_txt_path', default="base_name_val_fold.txt", type=str, help="val cases list file path.")
    parser.add_argument('--gpu', default="0", type=str, help="which GPU(s) to use, e.g. '0' or '0,1'")
    parser.add_argument('--resume', default="", type=str, help="checkpoint to resume from.")
    return parser.parse_args()


def load_config(config_path):
    spec = importlib.util.spec_from_file_location("train_config", config_path)
    config_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(config_module)
    return config_module.config


if __name__ == "__main__":
    args = parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu

    config = load_config(args.config_path)

    config["wandb"]["name"] = args.experiment_name
    config["generator"]["input_data_dir_path"] = args.input_data_dir_path
    config["generator"]["train_data_split_txt_path"] = args.train_data_split_txt_path
    config["generator"]["val_data_split_txt_path"] = args.val_data_split_txt_path
    config["checkpoint_save_path"] = os.path.join("ckpts", args.experiment_name)
    if args.resume:
        config["resume_ckpt_path"] = args.resume

    os.makedirs(config["checkpoint_save_path"], exist_ok=True)

    model = get_model(args.model_name, config)
    print("start training:", args.experiment_name, "on GPU", args.gpu)
    runner(config, model)
