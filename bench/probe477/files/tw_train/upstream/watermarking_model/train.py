import os
import yaml
import torch
import random
import shutil
import logging
import argparse
import datetime
import numpy as np
from rich.progress import track
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter

from model.loss import Loss_identity
from model.conv2_mel_modules import Encoder, Decoder, Discriminator
from dataset.data import twod_dataset as used_dataset
from utils.tools import save, log, get_param_num
from distortions.dl import distortion

logging_mark = "#" * 20
logging.basicConfig(level=logging.INFO, format='%(message)s')

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)
    torch.backends.cudnn.benchmark = True


def main(args, configs):
    logging.info('main function')
    process_config, model_config, train_config = configs
    pre_step = 0
    if model_config["structure"]["mel"]:
        logging.info("use mel-spectrogram as the carrier")
    # ---------------- get train dataset
    audios = used_dataset(process_config=process_config, train_config=train_config, flag='train')
    val_audios = used_dataset(process_config=process_config, train_config=train_config, flag='val')

    batch_size = train_config["optimize"]["batch_size"]
    assert batch_size < len(audios)
    audios_loader = DataLoader(audios, batch_size=batch_size, shuffle=True,
                               num_workers=train_config["optimize"]["num_workers"])
    val_audios_loader = DataLoader(val_audios, batch_size=1, shuffle=False)

    # ---------------- build model
    win_dim = process_config["audio"]["win_len"]
    embedding_dim = model_config["dim"]["embedding"]
    nlayers_encoder = model_config["layer"]["nlayers_encoder"]
    nlayers_decoder = model_config["layer"]["nlayers_decoder"]
    attention_heads_encoder = model_config["layer"]["attention_heads_encoder"]
    attention_heads_decoder = model_config["layer"]["attention_heads_decoder"]
    msg_length = train_config["watermark"]["length"]
    encoder = Encoder(process_config, model_config, msg_length, win_dim, embedding_dim,
                      nlayers_encoder=nlayers_encoder, attention_heads=attention_heads_encoder).to(device)
    decoder = Decoder(process_config, model_config, msg_length, win_dim, embedding_dim,
                      nlayers_decoder=nlayers_decoder, attention_heads=attention_heads_decoder).to(device)
    discriminator = Discriminator(process_config).to(device)
    if torch.cuda.device_count() > 1:
        logging.info("Let's use {} GPUs!".format(torch.cuda.device_count()))
        encoder = torch.nn.DataParallel(encoder)
        decoder = torch.nn.DataParallel(decoder)
        discriminator = torch.nn.DataParallel(discriminator)

    # shared parameters
    if model_config["structure"]["share"]:
        if model_config["structure"]["transformer"]:
            decoder.msg_decoder = encoder.encoder
        else:
            decoder.wav_encoder = encoder.wav_encoder

    # ---------------- optimizer
    en_de_optim = torch.optim.Adam(
        params=list(encoder.parameters()) + list(decoder.parameters()),
        betas=train_config["optimize"]["betas"],
        eps=train_config["optimize"]["eps"],
        weight_decay=train_config["optimize"]["weight_decay"],
        lr=train_config["optimize"]["lr"],
    )
    lr_sched = torch.optim.lr_scheduler.StepLR(en_de_optim, step_size=train_config["optimize"]["step_size"],
                                               gamma=train_config["optimize"]["gamma"])
    d_op = torch.optim.Adam(
        params=discriminator.parameters(),
        betas=train_config["optimize"]["betas"],
        eps=train_config["optimize"]["eps"],
        weight_decay=train_config["optimize"]["weight_decay"],
        lr=train_config["optimize"]["lr"],
    )

    # ---------------- resume
    if args.resume is not None:
        ckpt = torch.load(args.resume)
        encoder.load_state_dict(ckpt["encoder"])
        decoder.load_state_dict(ckpt["decoder"])
        discriminator.load_state_dict(ckpt["discriminator"])
        en_de_optim.load_state_dict(ckpt["en_de_op"])
        d_op.load_state_dict(ckpt["d_op"])
        pre_step = ckpt.get("step", 0)
        logging.info(f"resumed from {args.resume} @ step {pre_step}")

    # ---------------- Loss
    loss = Loss_identity(train_config=train_config)

    # ---------------- Init logger
    for i in range(10):
        train_config["path"]["log_path"] = os.path.join(train_config["path"]["log_path"], str(datetime.date.today()))
        if not os.path.exists(train_config["path"]["log_path"]):
            break
    os.makedirs(train_config["path"]["log_path"], exist_ok=True)
    writer = SummaryWriter(train_config["path"]["log_path"])
    shutil.copyfile(args.train_config, os.path.join(train_config["path"]["log_path"], "train.yaml"))
    logging.info(logging_mark + "\t" + "Encoder/Decoder params: {}/{}".format(
        get_param_num(encoder), get_param_num(decoder)) + "\t" + logging_mark)

    # ---------------- train
    logging.info(logging_mark + "\t" + "Begin Trainging" + "\t" + logging_mark)
    epoch_num = train_config["iter"]["epoch"]
    save_circle = train_config["iter"]["save_circle"]
    show_circle = train_config["iter"]["show_circle"]
    lambda_e = train_config["optimize"]["lambda_e"]
    lambda_m = train_config["optimize"]["lambda_m"]
    global_step = pre_step
    train_len = len(audios_loader)
    for ep in range(1, epoch_num + 1):
        encoder.train()
        decoder.train()
        discriminator.train()
        step = 0
        logging.info('Epoch {}/{}'.format(ep, epoch_num))
        for sample in track(audios_loader):
            global_step += 1
            step += 1
            # ---------------- build watermark
            msg = np.random.choice([0, 1], [batch_size, 1, msg_length])
            msg = torch.from_numpy(msg).float() * 2 - 1
            wav_matrix = sample["matrix"].to(device)
            msg = msg.to(device)
            encoded, carrier_wateramrked = encoder(wav_matrix, msg, global_step)
            decoded = decoder(encoded, global_step, train_config["attack_type"])
            losses = loss.en_de_loss(wav_matrix, encoded, msg, decoded)
            if global_step < pre_step + 1000:
                sum_loss = lambda_m * losses[1]
            else:
                sum_loss = lambda_e * losses[0] + lambda_m * losses[1]

            # adversarial part
            d_target_label_cover = torch.full((batch_size, 1), 1, device=device).float()
            d_target_label_encoded = torch.full((batch_size, 1), 0, device=device).float()
            g_target_label_encoded = torch.full((batch_size, 1), 1, device=device).float()
            d_on_encoded_for_enc = discriminator(encoded)
            g_loss_adv = torch.nn.functional.binary_cross_entropy_with_logits(d_on_encoded_for_enc,
                                                                              g_target_label_encoded)
            sum_loss = sum_loss + train_config["optimize"]["lambda_a"] * g_loss_adv

            en_de_optim.zero_grad()
            sum_loss.backward()
            en_de_optim.step()

            d_op.zero_grad()
            d_on_cover = discriminator(wav_matrix)
            d_loss_on_cover = torch.nn.functional.binary_cross_entropy_with_logits(d_on_cover, d_target_label_cover)
            d_loss_on_cover.backward()
            d_on_encoded = discriminator(encoded.detach())
            d_loss_on_encoded = torch.nn.functional.binary_cross_entropy_with_logits(d_on_encoded,
                                                                                     d_target_label_encoded)
            d_loss_on_encoded.backward()
            d_op.step()

            decoder_acc = [((decoded[0] >= 0).eq(msg >= 0).sum().float() / msg.numel()).item(),
                           ((decoded[1] >= 0).eq(msg >= 0).sum().float() / msg.numel()).item()]
            zero_tensor = torch.zeros(wav_matrix.shape).to(device)
            snr = 10 * torch.log10(torch.mean((wav_matrix - zero_tensor) ** 2) /
                                   torch.mean((wav_matrix.detach() - encoded) ** 2))
            norm2 = torch.mean(torch.abs(wav_matrix.detach() - encoded))

            if step % show_circle == 0:
                logging.info('-' * 100)
                logging.info("step:{} - wav_loss:{:.8f} - msg_loss:{:.8f} - acc:[{:.8f},{:.8f}] - snr:{:.8f} "
                             "- norm:{:.8f} - d_loss_on_encoded:{:.8f} - d_loss_on_cover:{:.8f}".format(
                                 step, losses[0], losses[1], decoder_acc[0], decoder_acc[1], snr, norm2,
                                 d_loss_on_encoded, d_loss_on_cover))
                logging.info("gpu memory: {:.1f} MB".format(torch.cuda.memory_allocated(device) / 1024 ** 2))
            writer.add_scalar("train/wav_loss", losses[0], global_step)
            writer.add_scalar("train/msg_loss", losses[1], global_step)
            writer.add_scalar("train/snr", snr, global_step)
        if ep % save_circle == 0 or ep == epoch_num:
            path = os.path.join(train_config["path"]["ckpt"], 'pth')
            save(path, ep, encoder, decoder, en_de_optim, d_op, discriminator, global_step)
        lr_sched.step()

        # ---------------- validation
        with torch.no_grad():
            encoder.eval()
            decoder.eval()
            avg_acc = [0, 0]
            avg_snr = 0
            count = 0
            for sample in track(val_audios_loader):
                count += 1
                msg = np.random.choice([0, 1], [1, 1, msg_length])
                msg = torch.from_numpy(msg).float() * 2 - 1
                wav_matrix = sample["matrix"].to(device)
                msg = msg.to(device)
                encoded, carrier_wateramrked = encoder(wav_matrix, msg, global_step)
                decoded = decoder(encoded, global_step, train_config["attack_type"])
                avg_acc[0] += ((decoded[0] >= 0).eq(msg >= 0).sum().float() / msg.numel()).item()
                avg_acc[1] += ((decoded[1] >= 0).eq(msg >= 0).sum().float() / msg.numel()).item()
                avg_snr += 10 * torch.log10(torch.mean(wav_matrix ** 2) /
                                            torch.mean((wav_matrix - encoded) ** 2)).item()
            logging.info("validation acc:[{:.4f},{:.4f}] snr:{:.2f}".format(
                avg_acc[0] / count, avg_acc[1] / count, avg_snr / count))
            writer.add_scalar("val/acc_distorted", avg_acc[1] / count, ep)
            writer.add_scalar("val/snr", avg_snr / count, ep)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("-p", "--process_config", type=str, default="config/process.yaml")
    parser.add_argument("-m", "--model_config", type=str, default="config/model.yaml")
    parser.add_argument("-t", "--train_config", type=str, default="config/train.yaml")
    parser.add_argument("--resume", type=str, default=None)
    parser.add_argument("--seed", type=int, default=2022)
    args = parser.parse_args()

    set_seed(args.seed)
    process_config = yaml.load(open(args.process_config, "r"), Loader=yaml.FullLoader)
    model_config = yaml.load(open(args.model_config, "r"), Loader=yaml.FullLoader)
    train_config = yaml.load(open(args.train_config, "r"), Loader=yaml.FullLoader)
    configs = (process_config, model_config, train_config)

    main(args, configs)
