import os
import torch
import argparse
import numpy as np
from tqdm import tqdm
from model.encoder import SketchEncoder, ExtEncoder
from model.decoder import SketchDecoder, ExtDecoder, CodeDecoder
from utils import CADparser, write_obj_sample, sample_cad_vec
from dataset import CodeData


@torch.inference_mode()
def sample(args):
    # Initialize gpu device
    device = torch.device("cuda:0")

    # Load model weights
    sketch_dec = SketchDecoder(args.max_pixel)
    sketch_dec.load_state_dict(torch.load(args.sketch_weight))
    sketch_dec.to(device).eval()

    ext_dec = ExtDecoder()
    ext_dec.load_state_dict(torch.load(args.ext_weight))
    ext_dec.to(device).eval()

    sketch_enc = SketchEncoder()
    sketch_enc.load_state_dict(torch.load(args.sketch_weight.replace('sketch_dec', 'sketch_enc')))
    sketch_enc.to(device).eval()

    ext_enc = ExtEncoder()
    ext_enc.load_state_dict(torch.load(args.ext_weight.replace('ext_dec', 'ext_enc')))
    ext_enc.to(device).eval()

    code_dec = CodeDecoder(args.code_len, args.code_book)
    code_dec.load_state_dict(torch.load(args.code_weight))
    code_dec.to(device).eval()

    # Random sampling
    code_bs = 1000  # every batch samples 1000 codes
    code_size = 2000
    cad = []
    print('Random Generation...')
    while len(cad) < args.n_samples:
        # Sample codes
        codes = code_dec.sample(n_samples=code_bs, top_k=0, top_p=0.95)
        sketch_codes = codes[:, :args.sketch_len]
        ext_codes = codes[:, args.sketch_len:] - args.sketch_code

        # Decode codes to latent vectors
        sketch_latent = sketch_enc.vq_encoder.codebook.embedding(sketch_codes)
        ext_latent = ext_enc.vq_encoder.codebook.embedding(ext_codes)
        latent_sketch = sketch_latent.unsqueeze(1)
        latent_extrude = ext_latent.unsqueeze(1)

        # Sample sketch and extrude
        pixel_seq, xy_seq, pix_mask = sketch_dec.sample(n_samples=code_bs,
                                                        latent_z=latent_sketch,
                                                        latent_ext=latent_extrude,
                                                        top_k=1, top_p=0)
        ext_seq, ext_mask = ext_dec.sample(n_samples=code_bs,
                                           latent_z=latent_extrude,
                                           latent_sketch=latent_sketch)

        # Convert to CAD vectors
        cad_vecs = sample_cad_vec(pixel_seq.detach().cpu().numpy(),
                                  ext_seq.detach().cpu().numpy(),
                                  args.bit)
        cad += cad_vecs
        print(f'{len(cad)} / {args.n_samples} sampled')

    cad = cad[:args.n_samples]

    # Parse and save to obj format
    print('Saving samples...')
    for index, value in enumerate(tqdm(cad)):
        try:
            parser = CADparser(args.bit)
            parsed_data = parser.perform(value)
            save_folder = os.path.join(args.output, str(index).zfill(5))
            if not os.path.exists(save_folder):
                os.makedirs(save_folder)
            write_obj_sample(save_folder, parsed_data)
        except Exception as ex:
            print(f'Failed to parse sample {index}: {ex}')
            continue


@torch.inference_mode()
def encode_codes(args):
    """dump the discrete sketch / extrude code indices of the training set (input to the code selector)"""
    device = torch.device("cuda")

    sketch_enc = SketchEncoder()
    sketch_ckpt = torch.load(args.sketch_weight.replace('sketch_dec', 'sketch_enc'), map_location='cpu')
    sketch_enc.load_state_dict(sketch_ckpt)
    sketch_enc = sketch_enc.to(device).eval()
    ext_enc = ExtEncoder()
    ext_ckpt = torch.load(args.ext_weight.replace('ext_dec', 'ext_enc'), map_location='cpu')
    ext_enc.load_state_dict(ext_ckpt)
    ext_enc = ext_enc.to(device).eval()

    dataset = CodeData(args.data, args.invalid, args.maxlen)
    dataloader = torch.utils.data.DataLoader(dataset, shuffle=False, batch_size=1024, num_workers=4)

    all_codes = []
    for pix, xy, mask, ext, ext_mask in tqdm(dataloader):
        pix, xy, mask = pix.to(device), xy.to(device), mask.to(device)
        ext, ext_mask = ext.to(device), ext_mask.to(device)
        _, _, sketch_sel, _ = sketch_enc(pix, xy, mask, epoch=1000)
        _, _, ext_sel, _ = ext_enc(ext, ext_mask, epoch=1000)
        codes = torch.cat([sketch_sel, ext_sel + args.sketch_code], dim=1)
        all_codes.append(codes.cpu().numpy())
    all_codes = np.concatenate(all_codes, axis=0)
    unique_codes = np.unique(all_codes, axis=0)
    print(f'{len(unique_codes)} unique codes out of {len(all_codes)}')
    np.save(os.path.join(args.output, 'train_codes.npy'), unique_codes)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--sketch_weight", type=str, required=True)
    parser.add_argument("--ext_weight", type=str, required=True)
    parser.add_argument("--code_weight", type=str, default=None)
    parser.add_argument("--output", type=str, required=True)
    parser.add_argument("--data", type=str, default=None)
    parser.add_argument("--invalid", type=str, default=None)
    parser.add_argument("--maxlen", type=int, default=200)
    parser.add_argument("--n_samples", type=int, default=10000)
    parser.add_argument("--code_len", type=int, default=14)
    parser.add_argument("--code_book", type=int, default=2000)
    parser.add_argument("--sketch_len", type=int, default=10)
    parser.add_argument("--sketch_code", type=int, default=1000)
    parser.add_argument("--max_pixel", type=int, default=64)
    parser.add_argument("--bit", type=int, default=6)
    parser.add_argument("--mode", type=str, choices=['sample', 'encode'], default='sample')
    parser.add_argument("--device", type=int, help="CUDA Device Index", required=True)
    args = parser.parse_args()

    os.environ["CUDA_VISIBLE_DEVICES"] = str(args.device)
    if not os.path.exists(args.output):
        os.makedirs(args.output)

    if args.mode == 'sample':
        sample(args)
    else:
        encode_codes(args)
