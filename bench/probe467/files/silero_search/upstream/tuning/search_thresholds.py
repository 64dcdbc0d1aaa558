from utils import init_jit_model, predict, calculate_best_thresholds, SileroVadDataset, SileroVadPadder
from omegaconf import OmegaConf
import argparse
import torch

if __name__ == '__main__':
    parser = argparse.ArgumentParser(description='Search the best speech / non-speech thresholds on the validation set')
    parser.add_argument('--config_path', type=str, default='config.yml', help='path to the yaml config')
    parser.add_argument('--model_path', type=str, default='', help='tuned jit model; defaults to config.model_save_path')
    args = parser.parse_args()

    config = OmegaConf.load(args.config_path)
    model_path = args.model_path or config.model_save_path

    val_dataset = SileroVadDataset(config, mode='val')
    val_loader = torch.utils.data.DataLoader(val_dataset,
                                             batch_size=config.batch_size,
                                             collate_fn=SileroVadPadder,
                                             num_workers=config.num_workers)

    if model_path:
        print(f'Loading model from the local folder: {model_path}')
        model = init_jit_model(model_path, device=config.device)
    else:
        if config.use_torchhub:
            print('Loading model using torch.hub')
            model, _ = torch.hub.load(repo_or_dir='snakers4/silero-vad',
                                      model='silero_vad',
                                      onnx=False,
                                      force_reload=True)
        else:
            print('Loading model using silero-vad library')
            from silero_vad import load_silero_vad
            model = load_silero_vad(onnx=False)
        model.to(config.device)

    print('Model loaded')
    model.eval()

    print('Making predicts...')
    all_predicts, all_gts = predict(model, val_loader, config.device, sr=8000 if config.tune_8k else 16000)
    print('Calculating thresholds...')
    best_ths_enter, best_ths_exit, best_acc = calculate_best_thresholds(all_predicts, all_gts)
    print(f'Best threshold: {best_ths_enter}\nBest exit threshold: {best_ths_exit}\nBest accuracy: {best_acc}')
