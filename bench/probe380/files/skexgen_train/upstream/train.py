import os
import torch
import argparse
import torch.nn as nn
import torch.nn.functional as F
from tqdm import tqdm
from torch.utils.tensorboard import SummaryWriter
from dataset import SketchData, ExtData
from model.encoder import SketchEncoder, ExtEncoder
from model.decoder import SketchDecoder, ExtDecoder
from utils import CADparser, write_obj_sample, get_loss


def train_sketch(args, device, writer):
    # Initialize dataset loader
    dataset = SketchData(args.data, args.invalid, args.maxlen)
    dataloader = torch.utils.data.DataLoader(dataset,
                                             shuffle=True,
                                             batch_size=args.batchsize,
                                             num_workers=6,
                                             pin_memory=True)

    # Initialize models
    encoder = SketchEncoder()
    encoder = encoder.to(device).train()

    decoder = SketchDecoder(args.max_pixel)
    decoder = decoder.to(device).train()

    params = list(encoder.parameters()) + list(decoder.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=300, gamma=0.5)

    # Main training loop
    iters = 0
    print('Start training...')
    for epoch in range(args.epoch):
        progress_bar = tqdm(total=len(dataloader))
        progress_bar.set_description(f"Epoch {epoch}")

        for cmd, pix, xy, mask, pix_aug, xy_aug, mask_aug in dataloader:
            cmd = cmd.to(device)
            pix = pix.to(device)
            xy = xy.to(device)
            mask = mask.to(device)
            pix_aug = pix_aug.to(device)
            xy_aug = xy_aug.to(device)
            mask_aug = mask_aug.to(device)

            # Pass through encoder
            latent_code, vq_loss, selection, _ = encoder(pix_aug, xy_aug, mask_aug, epoch)

            # Pass through decoder
            cmd_logits, pix_logits = decoder(pix[:, :-1], xy[:, :-1, :], mask[:, :-1], latent_code)

            # Compute loss
            cmd_loss = get_loss(cmd_logits, cmd[:, 1:], mask[:, 1:])
            pix_loss = get_loss(pix_logits, pix[:, 1:], mask[:, 1:])
            total_loss = cmd_loss + pix_loss + vq_loss

            # logging
            if iters % 20 == 0:
                writer.add_scalar("Loss/Total", total_loss, iters)
                writer.add_scalar("Loss/cmd", cmd_loss, iters)
                writer.add_scalar("Loss/pix", pix_loss, iters)
                writer.add_scalar("Loss/vq", vq_loss, iters)

            # Update model
            optimizer.zero_grad()
            total_loss.backward()
            nn.utils.clip_grad_norm_(params, max_norm=1.0)  # clip gradient
            optimizer.step()
            iters += 1
            progress_bar.update(1)

        progress_bar.close()
        writer.flush()
        scheduler.step()

        # Re-init codebook
        if epoch < REINIT_EPOCH:
            # Compute cluster data count & data to cluster distance
            code_encoder = SketchEncoder()
            code_encoder.load_state_dict(encoder.state_dict())
            code_encoder = code_encoder.to(device).eval()
            code_dataloader = torch.utils.data.DataLoader(dataset,
                                                          shuffle=False,
                                                          batch_size=1024,
                                                          num_workers=6)
            code_selection = []
            for cmd, pix, xy, mask, _, _, _ in code_dataloader:
                pix = pix.to(device)
                xy = xy.to(device)
                mask = mask.to(device)
                with torch.no_grad():
                    _, _, selection, _ = code_encoder(pix, xy, mask, epoch)
                code_selection.append(selection)
            code_selection = torch.vstack(code_selection)
            encoder.vq_encoder.update_codebook(code_selection)
            del code_encoder
            torch.cuda.empty_cache()

        # Save model after n epoch
        if (epoch + 1) % 50 == 0:
            torch.save(encoder.state_dict(), os.path.join(args.output, 'sketch_enc_epoch_' + str(epoch + 1) + '.pt'))
            torch.save(decoder.state_dict(), os.path.join(args.output, 'sketch_dec_epoch_' + str(epoch + 1) + '.pt'))

    writer.close()


def train_extrude(args, device, writer):
    # Initialize dataset loader
    dataset = ExtData(args.data, args.invalid, args.maxlen)
    dataloader = torch.utils.data.DataLoader(dataset, shuffle=True, batch_size=args.batchsize,
                                             num_workers=6, pin_memory=True)

    encoder = ExtEncoder()
    encoder = encoder.to(device).train()
    decoder = ExtDecoder()
    decoder = decoder.to(device).train()

    params = list(encoder.parameters()) + list(decoder.parameters())
    optimizer = torch.optim.AdamW(params, lr=1e-3)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=300, gamma=0.5)

    iters = 0
    for epoch in range(args.epoch):
        progress_bar = tqdm(total=len(dataloader))
        progress_bar.set_description(f"Epoch {epoch}")

        for ext_seq, ext_mask, ext_seq_aug, ext_mask_aug in dataloader:
            ext_seq = ext_seq.to(device)
            ext_mask = ext_mask.to(device)
            ext_seq_aug = ext_seq_aug.to(device)
            ext_mask_aug = ext_mask_aug.to(device)

            latent_code, vq_loss, selection, _ = encoder(ext_seq_aug, ext_mask_aug, epoch)
            ext_logits = decoder(ext_seq[:, :-1], ext_mask[:, :-1], latent_code)
            ext_loss = get_loss(ext_logits, ext_seq[:, 1:], ext_mask[:, 1:])
            total_loss = ext_loss + vq_loss

            if iters % 20 == 0:
                writer.add_scalar("Loss/Total", total_loss, iters)
                writer.add_scalar("Loss/ext", ext_loss, iters)
                writer.add_scalar("Loss/vq", vq_loss, iters)

            optimizer.zero_grad()
            total_loss.backward()
            nn.utils.clip_grad_norm_(params, max_norm=1.0)
            optimizer.step()
            iters += 1
            progress_bar.update(1)

        progress_bar.close()
        writer.flush()
        scheduler.step()

        if (epoch + 1) % 50 == 0:
            torch.save(encoder.state_dict(), os.path.join(args.output, 'ext_enc_epoch_' + str(epoch + 1) + '.pt'))
            torch.save(decoder.state_dict(), os.path.join(args.output, 'ext_dec_epoch_' + str(epoch + 1) + '.pt'))

    writer.close()


REINIT_EPOCH = 10

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=str, required=True)
    parser.add_argument("--invalid", type=str, required=True)
    parser.add_argument("--output", type=str, help="Output folder to save the data", required=True)
    parser.add_argument("--batchsize", type=int, help="Training batchsize", required=True)
    parser.add_argument("--device", type=str, help="CUDA Device Index", required=True)
    parser.add_argument("--epoch", type=int, default=350)
    parser.add_argument("--maxlen", type=int, help="maximum token length", default=200)
    parser.add_argument("--max_pixel", type=int, default=64)
    parser.add_argument("--mode", type=str, choices=['sketch', 'extrude'], required=True)
    args = parser.parse_args()

    # Environment setup
    os.environ["CUDA_VISIBLE_DEVICES"] = args.device
    device = torch.device("cuda:0")

    # Make project directory
    if not os.path.exists(args.output):
        os.makedirs(args.output)
    writer = SummaryWriter(log_dir=args.output)

    # Start training
    if args.mode == 'sketch':
        train_sketch(args, device, writer)
    else:
        train_extrude(args, device, writer)
