import bchlib
import glob
import os
from PIL import Image, ImageOps
import numpy as np
import torch
from torchvision import transforms

BCH_POLYNOMIAL = 137
BCH_BITS = 5


def build_secret(secret_str, secret_size=100):
    """Encodes a <=7 character string with BCH ECC into a secret_size-bit vector."""
    if len(secret_str) > 7:
        print('Error: Can only encode 56bits (7 characters) with ECC')
        return None

    bch = bchlib.BCH(BCH_POLYNOMIAL, BCH_BITS)
    data = bytearray(secret_str + ' ' * (7 - len(secret_str)), 'utf-8')
    ecc = bch.encode(data)
    packet = data + ecc

    packet_binary = ''.join(format(x, '08b') for x in packet)
    secret = [int(x) for x in packet_binary]
    secret.extend([0, 0, 0, 0])
    assert len(secret) == secret_size, 'secret has {} bits, expected {}'.format(len(secret), secret_size)
    return secret


def main():
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument('--model', type=str, required=True, help='path to the pickled encoder (encoder.pth)')
    parser.add_argument('--image', type=str, default=None)
    parser.add_argument('--images_dir', type=str, default=None)
    parser.add_argument('--save_dir', type=str, default=r'./images')
    parser.add_argument('--secret', type=str, default='Stega!!')
    parser.add_argument('--secret_size', type=int, default=100)
    parser.add_argument('--cuda', type=bool, default=True)
    parser.add_argument('--half', action='store_true', help='run the encoder in fp16 (GPU only)')
    args = parser.parse_args()

    if args.image is not None:
        files_list = [args.image]
    elif args.images_dir is not None:
        files_list = glob.glob(args.images_dir + '/*')
    else:
        print('Missing input image')
        return

    encoder = torch.load(args.model)
    encoder.eval()
    if args.cuda:
        encoder = encoder.cuda()
        if args.half:
            encoder = encoder.half()

    secret = build_secret(args.secret, args.secret_size)
    if secret is None:
        return
    secret = torch.tensor(secret, dtype=torch.float).unsqueeze(0)
    if args.cuda:
        secret = secret.cuda()
        if args.half:
            secret = secret.half()

    width = 400
    height = 400
    size = (width, height)
    to_tensor = transforms.ToTensor()

    if args.save_dir is not None:
        if not os.path.exists(args.save_dir):
            os.makedirs(args.save_dir)

        with torch.no_grad():
            for filename in files_list:
                image = Image.open(filename).convert("RGB")
                image = ImageOps.fit(image, size)
                image = to_tensor(image).unsqueeze(0)
                if args.cuda:
                    image = image.cuda()
                    if args.half:
                        image = image.half()

                residual = encoder((secret, image))
                encoded = image + residual
                encoded = torch.clamp(encoded, 0, 1)
                if args.cuda:
                    residual = residual.float().cpu()
                    encoded = encoded.float().cpu()
                encoded = np.array(encoded.squeeze(0) * 255, dtype=np.uint8).transpose((1, 2, 0))

                residual = residual[0] + .5
                residual = np.array(residual.squeeze(0) * 255, dtype=np.uint8).transpose((1, 2, 0))

                save_name = os.path.basename(filename).split('.')[0]

                im = Image.fromarray(encoded)
                im.save(args.save_dir + '/' + save_name + '_hidden.png')

                im = Image.fromarray(residual)
                im.save(args.save_dir + '/' + save_name + '_residual.png')

        if args.cuda:
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
