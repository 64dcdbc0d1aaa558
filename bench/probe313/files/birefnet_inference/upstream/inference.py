import os
import argparse
from glob import glob
from tqdm import tqdm
import cv2
import torch

from dataset import MyData
from utils import save_tensor_img, check_state_dict
from config import Config


config = Config()


def inference(model, data_loader_test, pred_root, method, testset, device=0, dtype=None):
    model_training = model.training
    if model_training:
        model.eval()
    for batch in tqdm(data_loader_test, total=len(data_loader_test)) if 1 or config.verbose_eval else data_loader_test:
        inputs = batch[0].to(device)
        if dtype is not None:
            inputs = inputs.to(dtype)
        # gts = batch[1].to(device)
        label_paths = batch[-1]
        with torch.no_grad():
            scaled_preds = model(inputs)[-1].sigmoid().float()

        os.makedirs(os.path.join(pred_root, method, testset), exist_ok=True)

        for idx_sample in range(scaled_preds.shape[0]):
            res = torch.nn.functional.interpolate(
                scaled_preds[idx_sample].unsqueeze(0),
                size=cv2.imread(label_paths[idx_sample], cv2.IMREAD_GRAYSCALE).shape[:2],
                mode='bilinear',
                align_corners=True
            )
            save_tensor_img(res, os.path.join(os.path.join(pred_root, method, testset), label_paths[idx_sample].replace('\\', '/').split('/')[-1]))   # test set dir + file name
    if model_training:
        model.train()
    return None


def predict_image(model, image_path, device, size=(1024, 1024), dtype=None):
    """Single-image helper (same preprocessing as the HuggingFace model card); returns an RGBA PIL image."""
    from PIL import Image
    from torchvision import transforms

    transform_image = transforms.Compose([
        transforms.Resize(size[::-1]),
        transforms.ToTensor(),
        transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    ])
    image = Image.open(image_path).convert('RGB')
    input_images = transform_image(image).unsqueeze(0).to(device)
    if dtype is not None:
        input_images = input_images.to(dtype)
    with torch.no_grad():
        preds = model(input_images)[-1].sigmoid().float().cpu()
    pred = preds[0].squeeze()
    pred_pil = transforms.ToPILImage()(pred)
    mask = pred_pil.resize(image.size)
    image.putalpha(mask)
    return image


@torch.no_grad()
def benchmark(model, device, size, dtype=None, n_warmup=10, n_iter=50):
    """Latency of one forward at `size` (wid, hei), measured with CUDA events."""
    x = torch.randn(1, 3, size[1], size[0], device=device)
    if dtype is not None:
        x = x.to(dtype)
    for _ in range(n_warmup):
        model(x)
    starter, ender = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    timings = []
    for _ in range(n_iter):
        starter.record()
        model(x)
        ender.record()
        torch.cuda.synchronize()
        timings.append(starter.elapsed_time(ender))
    mean_ms = sum(timings) / len(timings)
    print('Latency @ {}x{}: {:.1f} ms ({:.1f} FPS)'.format(size[0], size[1], mean_ms, 1000. / mean_ms))
    return mean_ms


def main(args):
    # Init model

    device = config.device
    if args.ckpt_folder:
        print('Testing with models in {}'.format(args.ckpt_folder))
    else:
        print('Testing with model {}'.format(args.ckpt))

    if config.model == 'BiRefNet':
        from models.birefnet import BiRefNet
        model = BiRefNet(bb_pretrained=False)
    elif config.model == 'BiRefNetC2F':
        from models.birefnet import BiRefNetC2F
        model = BiRefNetC2F(bb_pretrained=False)

    dtype = None
    if args.half:
        major, _ = torch.cuda.get_device_capability()
        dtype = torch.bfloat16 if major >= 8 else torch.float16   # bf16 only on Ampere+

    weights_lst = sorted(
        glob(os.path.join(args.ckpt_folder, '*.pth')) if args.ckpt_folder else [args.ckpt],
        key=lambda x: int(x.split('epoch_')[-1].split('.pth')[0]),
        reverse=True
    )
    for testset in args.testsets.split('+'):
        print('>>>> Testset: {}...'.format(testset))
        data_loader_test = torch.utils.data.DataLoader(
            dataset=MyData(testset, data_size=config.size, is_train=False),
            batch_size=config.batch_size_valid, shuffle=False, num_workers=config.num_workers, pin_memory=True
        )
        for weights in weights_lst:
            if int(weights.strip('.pth').split('epoch_')[-1]) % 1 != 0:
                continue
            print('\tInferencing {}...'.format(weights))
            state_dict = torch.load(weights, map_location='cpu', weights_only=True)
            state_dict = check_state_dict(state_dict)
            model.load_state_dict(state_dict)
            model = model.to(device)
            if dtype is not None:
                model = model.to(dtype)
            inference(
                model, data_loader_test=data_loader_test, pred_root=args.pred_root,
                method='--'.join([w.rstrip('.pth') for w in weights.split(os.sep)[-2:]]),
                testset=testset, device=config.device, dtype=dtype
            )
    if args.benchmark:
        benchmark(model, device, config.size, dtype=dtype)


if __name__ == '__main__':
    # Parameter from command line
    parser = argparse.ArgumentParser(description='')
    parser.add_argument('--ckpt', type=str, help='model folder')
    parser.add_argument('--ckpt_folder', default=sorted(glob(os.path.join('ckpt', '*')))[-1], type=str, help='model folder')
    parser.add_argument('--pred_root', default='e_preds', type=str, help='Output folder')
    parser.add_argument('--testsets',
                        default=config.testsets.replace(',', '+'),
                        type=str,
                        help="Test all sets: DIS5K -> 'DIS-VD+DIS-TE1+DIS-TE2+DIS-TE3+DIS-TE4'")
    parser.add_argument('--half', action='store_true', help='run the network in half precision')
    parser.add_argument('--benchmark', action='store_true', help='also report latency on one GPU')

    args = parser.parse_args()

    if config.precisionHigh:
        torch.set_float32_matmul_precision('high')
    main(args)
