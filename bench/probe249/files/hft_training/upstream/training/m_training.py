#! python

import os
import argparse
import json
import pickle
import random
import time
import sys
import numpy as np
import torch
import torch.nn as nn
sys.path.append(os.path.join(os.path.dirname(__file__), '..'))
from model import dataset
from model import model_spec2midi as model_spec2midi

##
## main
##
if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    # dir
    parser.add_argument('-d_out', help='output directory', required=True)
    parser.add_argument('-d_dataset', help='dataset directory', required=True)
    # training parameter
    parser.add_argument('-n_div_train', help='num of train dataset division(1)', type=int, default=1)
    parser.add_argument('-n_div_valid', help='num of valid dataset division(1)', type=int, default=1)
    parser.add_argument('-n_div_test', help='num of test dataset division(1)', type=int, default=1)
    parser.add_argument('-n_slice', help='dataset slice(0: num_frame, 1>=: this number)(16)', type=int, default=16)
    parser.add_argument('-epoch', help='number of epochs(100)', type=int, default=100)
    parser.add_argument('-resume_epoch', help='number of epoch to resume(-1)', type=int, default=-1)
    parser.add_argument('-resume_div', help='number of div to resume(-1)', type=int, default=-1)
    parser.add_argument('-batch', help='batch size(8)', type=int, default=8)
    parser.add_argument('-lr', help='learning rate(1e-04)', type=float, default=1e-4)
    parser.add_argument('-dropout', help='dropout parameter(0.1)', type=float, default=0.1)
    parser.add_argument('-clip', help='clip parameter(1.0)', type=float, default=1.0)
    parser.add_argument('-seed', help='seed value(1234)', type=int, default=1234)
    # parameter (model)
    parser.add_argument('-cnn_channel', help='number of cnn channel(4)', type=int, default=4)
    parser.add_argument('-cnn_kernel', help='number of cnn kernel(5)', type=int, default=5)
    parser.add_argument('-hid_dim', help='size of hidden layer(256)', type=int, default=256)
    parser.add_argument('-pf_dim', help='size of position-wise feed-forward layer(512)', type=int, default=512)
    parser.add_argument('-enc_layer', help='number of layer of transformer(encoder)(3)', type=int, default=3)
    parser.add_argument('-dec_layer', help='number of layer of transformer(decoder)(3)', type=int, default=3)
    parser.add_argument('-enc_head', help='number of head of transformer(encoder)(4)', type=int, default=4)
    parser.add_argument('-dec_head', help='number of head of transformer(decoder)(4)', type=int, default=4)
    # parameter (loss)
    parser.add_argument('-weight_A', help='loss weight for 1st output(1.0)', type=float, default=1.0)
    parser.add_argument('-weight_B', help='loss weight for 2nd output(1.0)', type=float, default=1.0)
    # validation
    parser.add_argument('-valid_test', help='validation with valid set and test set', action='store_true')
    parser.add_argument('-v_seed', help='set seed for every validation', action='store_true')
    # device / precision
    parser.add_argument('-device', help='device(cpu|cuda|cuda:N)(cpu)', default='cpu')
    parser.add_argument('-amp', help='use torch.cuda.amp mixed precision on GPU', action='store_true')
    args = parser.parse_args()

    print('** hFT-Transformer: training **')
    print(' directory')
    print('  output         : '+str(args.d_out))
    print('  dataset        : '+str(args.d_dataset))
    print(' training parameter')
    print('  n_div(train)   : '+str(args.n_div_train))
    print('  n_div(valid)   : '+str(args.n_div_valid))
    print('  n_div(test)    : '+str(args.n_div_test))
    print('  n_slice        : '+str(args.n_slice))
    print('  epoch          : '+str(args.epoch))
    print('  batch          : '+str(args.batch))
    print('  learning rate  : '+str(args.lr))
    print('  dropout        : '+str(args.dropout))
    print('  clip           : '+str(args.clip))
    print('  seed           : '+str(args.seed))
    print('  amp            : '+str(args.amp))

    # (0) seed / determinism
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    torch.cuda.manual_seed(args.seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False

    # (1) device
    device = torch.device(args.device)
    print(' device')
    print('  device         : '+str(device))
    if device.type == 'cuda':
        print('  device name    : '+torch.cuda.get_device_name(device))

    # (2) config
    with open(args.d_dataset.rstrip('/')+'/config.json', 'r', encoding='utf-8') as f:
        config = json.load(f)
    os.makedirs(args.d_out, exist_ok=True)
    with open(args.d_out.rstrip('/')+'/parameter.json', 'w', encoding='utf-8') as f:
        json.dump(vars(args), f, ensure_ascii=False, indent=4, sort_keys=False)

    # (3) model
    encoder = model_spec2midi.Encoder_SPEC2MIDI(config['input']['margin_b'],
                                                config['input']['num_frame'],
                                                config['feature']['n_bins'],
                                                args.cnn_channel,
                                                args.cnn_kernel,
                                                args.hid_dim,
                                                args.enc_layer,
                                                args.enc_head,
                                                args.pf_dim,
                                                args.dropout,
                                                device)
    decoder = model_spec2midi.Decoder_SPEC2MIDI(config['input']['num_frame'],
                                                config['feature']['n_bins'],
                                                config['midi']['num_note'],
                                                config['midi']['num_velocity'],
                                                args.hid_dim,
                                                args.dec_layer,
                                                args.dec_head,
                                                args.pf_dim,
                                                args.dropout,
                                                device)
    model = model_spec2midi.Model_SPEC2MIDI(encoder, decoder)
    model = model.to(device)

    def count_parameters(model):
        return sum(p.numel() for p in model.parameters() if p.requires_grad)
    print('** model **')
    print(f'The model has {count_parameters(model):,} trainable parameters')

    def initialize_weights(m):
        if hasattr(m, 'weight') and m.weight.dim() > 1:
            nn.init.xavier_uniform_(m.weight.data)

    # (4) optimizer / scheduler / loss
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, 'min', factor=0.99, patience=5)
    criterion_onset = nn.BCELoss()
    criterion_offset = nn.BCELoss()
    criterion_mpe = nn.BCELoss()
    criterion_velocity = nn.CrossEntropyLoss()
    scaler = torch.cuda.amp.GradScaler(enabled=args.amp)

    if args.resume_epoch >= 0:
        with open(args.d_out.rstrip('/')+'/model_'+str(args.resume_epoch).zfill(3)+'.pkl', 'rb') as f:
            state = torch.load(f, map_location=device)
        model.load_state_dict(state['model'])
        optimizer.load_state_dict(state['optimizer'])
        start_epoch = args.resume_epoch + 1
    else:
        model.apply(initialize_weights)
        start_epoch = 0

    # (5) training
    def compute_loss(output, label_onset, label_offset, label_mpe, label_velocity):
        (onset_A, offset_A, mpe_A, velocity_A, _attention, onset_B, offset_B, mpe_B, velocity_B) = output
        # BCELoss is not autocast-safe: always compute the losses in fp32
        onset_A, offset_A, mpe_A = onset_A.float(), offset_A.float(), mpe_A.float()
        onset_B, offset_B, mpe_B = onset_B.float(), offset_B.float(), mpe_B.float()
        velocity_A, velocity_B = velocity_A.float(), velocity_B.float()

        num_velocity = velocity_A.shape[-1]
        loss_A = criterion_onset(onset_A, label_onset) + criterion_offset(offset_A, label_offset) + \
            criterion_mpe(mpe_A, label_mpe) + \
            criterion_velocity(velocity_A.contiguous().view(-1, num_velocity), label_velocity.contiguous().view(-1))
        loss_B = criterion_onset(onset_B, label_onset) + criterion_offset(offset_B, label_offset) + \
            criterion_mpe(mpe_B, label_mpe) + \
            criterion_velocity(velocity_B.contiguous().view(-1, num_velocity), label_velocity.contiguous().view(-1))
        return args.weight_A * loss_A + args.weight_B * loss_B

    def train_one_division(dataloader):
        model.train()
        epoch_loss = 0
        for i, (input_spec, label_onset, label_offset, label_mpe, label_velocity) in enumerate(dataloader):
            input_spec = input_spec.to(device, non_blocking=True)
            label_onset = label_onset.to(device, non_blocking=True)
            label_offset = label_offset.to(device, non_blocking=True)
            label_mpe = label_mpe.to(device, non_blocking=True)
            label_velocity = label_velocity.to(device, non_blocking=True)

            optimizer.zero_grad()
            with torch.cuda.amp.autocast(enabled=args.amp):
                output = model(input_spec)
            loss = compute_loss(output, label_onset, label_offset, label_mpe, label_velocity)
            scaler.scale(loss).backward()
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
            scaler.step(optimizer)
            scaler.update()
            epoch_loss += loss.item()
            if i % 100 == 0:
                print('  [' + str(i) + '/' + str(len(dataloader)) + '] loss: ' + str(loss.item()))
        return epoch_loss, len(dataloader)

    def valid_one_division(dataloader):
        model.eval()
        epoch_loss = 0
        with torch.no_grad():
            for input_spec, label_onset, label_offset, label_mpe, label_velocity in dataloader:
                input_spec = input_spec.to(device)
                with torch.cuda.amp.autocast(args.amp):
                    output = model(input_spec)
                loss = compute_loss(output,
                                    label_onset.to(device), label_offset.to(device),
                                    label_mpe.to(device), label_velocity.to(device))
                epoch_loss += loss.item()
        return epoch_loss, len(dataloader)

    def make_loader(split, n_div, idx, shuffle):
        ds = dataset.MyDataset(args.d_dataset.rstrip('/')+'/feature/'+split+'.pkl' if n_div == 1 else
                               args.d_dataset.rstrip('/')+'/feature/'+split+'_'+str(idx).zfill(3)+'.pkl',
                               args.d_dataset.rstrip('/')+'/label/'+split+'.pkl' if n_div == 1 else
                               args.d_dataset.rstrip('/')+'/label/'+split+'_'+str(idx).zfill(3)+'.pkl',
                               args.d_dataset.rstrip('/')+'/idx/'+split+'.pkl' if n_div == 1 else
                               args.d_dataset.rstrip('/')+'/idx/'+split+'_'+str(idx).zfill(3)+'.pkl',
                               config, args.n_slice)
        return torch.utils.data.DataLoader(ds, batch_size=args.batch, shuffle=shuffle,
                                           num_workers=2, pin_memory=True)

    best_loss = float('inf')
    for epoch in range(start_epoch, args.epoch):
        print('[epoch: '+str(epoch).zfill(3)+']')
        start_time = time.time()

        train_loss = 0
        train_num = 0
        for div in range(args.n_div_train):
            loader = make_loader('train', args.n_div_train, div, True)
            l, n = train_one_division(loader)
            train_loss += l
            train_num += n
            del loader

        if args.v_seed:
            torch.manual_seed(args.seed)
            torch.cuda.manual_seed_all(args.seed)

        valid_loss = 0
        valid_num = 0
        for div in range(args.n_div_valid):
            loader = make_loader('valid', args.n_div_valid, div, False)
            l, n = valid_one_division(loader)
            valid_loss += l
            valid_num += n
            del loader
        if args.valid_test:
            for div in range(args.n_div_test):
                loader = make_loader('test', args.n_div_test, div, False)
                l, n = valid_one_division(loader)
                valid_loss += l
                valid_num += n
                del loader
        torch.cuda.empty_cache()

        epoch_train = train_loss / max(train_num, 1)
        epoch_valid = valid_loss / max(valid_num, 1)
        scheduler.step(epoch_valid)
        end_time = time.time()
        print(' train loss: '+str(epoch_train)+'  valid loss: '+str(epoch_valid)+'  time: '+str(end_time-start_time))

        state = {'model': model.state_dict(), 'optimizer': optimizer.state_dict(), 'epoch': epoch}
        torch.save(state, args.d_out.rstrip('/')+'/model_'+str(epoch).zfill(3)+'.pkl')
        if epoch_valid < best_loss:
            best_loss = epoch_valid
            torch.save(model, args.d_out.rstrip('/')+'/best_model.pkl')

    print('** done **')
