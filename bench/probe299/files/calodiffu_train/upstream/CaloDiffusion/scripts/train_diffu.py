import numpy as np
import os
import argparse
import h5py as h5
import torch
import torch.optim as optim
import torch.utils.data as torchdata
from tqdm import tqdm

from utils import *
from CaloDiffu import *
from models import *


if __name__ == '__main__':
    print("TRAIN DIFFU")

    parser = argparse.ArgumentParser()
    parser.add_argument('--data_folder', default='/wclustre/cms_mlsim/denoise/CaloChallenge/', help='Folder containing data and MC files')
    parser.add_argument('--model', default='Diffu', help='Diffusion model to train')
    parser.add_argument('-c', '--config', default='configs/test.json', help='Config file with training parameters')
    parser.add_argument('--nevts', type=float, default=-1, help='Number of events to load')
    parser.add_argument('--frac', type=float, default=0.85, help='Fraction of total events used for training')
    parser.add_argument('--load', action='store_true', default=False, help='Load pretrained weights to continue the training')
    parser.add_argument('--seed', type=int, default=1234, help='Pytorch seed')
    parser.add_argument('--reset_training', action='store_true', default=False, help='Retrain')
    parser.add_argument('--amp', action='store_true', default=False, help='Mixed precision (fp16) training on the GPU')
    parser.add_argument('--gpu', type=int, default=0, help='Which GPU to use')
    flags = parser.parse_args()

    dataset_config = LoadJson(flags.config)

    print("TRAINING OPTIONS")
    print(dataset_config, flush=True)

    torch.manual_seed(flags.seed)
    np.random.seed(flags.seed)

    cuda = torch.cuda.is_available()
    if(cuda):
        device = torch.device("cuda:%i" % flags.gpu)
        torch.cuda.manual_seed(flags.seed)
        torch.backends.cudnn.benchmark = True
    else:
        device = torch.device("cpu")
    print(device)

    batch_size = dataset_config['BATCH']
    num_epochs = dataset_config['MAXEPOCH']
    early_stop = dataset_config['EARLYSTOP']
    training_obj = dataset_config.get('TRAINING_OBJ', 'noise_pred')
    loss_type = dataset_config.get("LOSS_TYPE", "l2")
    dataset_num = dataset_config.get('DATASET_NUM', 2)
    shower_embed = dataset_config.get('SHOWER_EMBED', '')
    orig_shape = ('orig' in shower_embed)
    layer_norm = 'layer' in dataset_config['SHOWERMAP']

    energy = None
    data = None
    for i, dataset in enumerate(dataset_config['FILES']):
        data_, e_ = DataLoader(
            os.path.join(flags.data_folder, dataset),
            dataset_config['SHAPE_PAD'],
            emax=dataset_config['EMAX'], emin=dataset_config['EMIN'],
            nevts=flags.nevts,
            max_deposit=dataset_config['MAXDEP'],  # noise can generate more deposited energy than generated
            logE=dataset_config['logE'],
            showerMap=dataset_config['SHOWERMAP'],
            nholdout=dataset_config.get('HOLDOUT', 0),
            dataset_num=dataset_num,
            orig_shape=orig_shape,
        )

        if(i == 0):
            data = data_
            energy = e_
        else:
            data = np.concatenate((data, data_))
            energy = np.concatenate((energy, e_))

    NN_embed = None
    if('NN' in shower_embed):
        if(dataset_num == 1):
            bins = XMLHandler("photon", "CaloChallenge/code/binning_dataset_1_photons.xml")
        else:
            bins = XMLHandler("pion", "CaloChallenge/code/binning_dataset_1_pions.xml")

        NN_embed = NNConverter(bins=bins).to(device=device)

    dshape = dataset_config['SHAPE_PAD']
    if(not orig_shape):
        data = np.reshape(data, dshape)
    else:
        data = np.reshape(data, (len(data), -1))

    num_data = data.shape[0]
    print("Data Shape " + str(data.shape))
    data_size = data.shape[0]
    torch_data_tensor = torch.from_numpy(data)
    torch_E_tensor = torch.from_numpy(energy)
    del data

    torch_dataset = torchdata.TensorDataset(torch_E_tensor, torch_data_tensor)
    nTrain = int(round(flags.frac * num_data))
    nVal = num_data - nTrain
    train_dataset, val_dataset = torch.utils.data.random_split(torch_dataset, [nTrain, nVal])

    loader_train = torchdata.DataLoader(train_dataset, batch_size=batch_size, shuffle=True, num_workers=4, pin_memory=cuda)
    loader_val = torchdata.DataLoader(val_dataset, batch_size=batch_size, shuffle=True, num_workers=4, pin_memory=cuda)

    del torch_data_tensor, torch_E_tensor, train_dataset, val_dataset
    checkpoint_folder = '../models/{}_{}/'.format(dataset_config['CHECKPOINT_NAME'], flags.model)
    if not os.path.exists(checkpoint_folder):
        os.makedirs(checkpoint_folder)

    checkpoint = dict()
    checkpoint_path = os.path.join(checkpoint_folder, "checkpoint.pth")
    if(flags.load and os.path.exists(checkpoint_path)):
        print("Loading training checkpoint from %s" % checkpoint_path, flush=True)
        checkpoint = torch.load(checkpoint_path, map_location=device)
        print(checkpoint.keys())

    if(flags.model == "Diffu"):
        shape = dataset_config['SHAPE_PAD'][1:] if (not orig_shape) else dataset_config['SHAPE_ORIG'][1:]
        model = CaloDiffu(shape, config=dataset_config, training_obj=training_obj, NN_embed=NN_embed,
                          nsteps=dataset_config['NSTEPS'], cold_diffu=False).to(device=device)

        # sometimes save only weights, sometimes save other info
        if('model_state_dict' in checkpoint.keys()):
            model.load_state_dict(checkpoint['model_state_dict'])
        elif(len(checkpoint.keys()) > 1):
            model.load_state_dict(checkpoint)

    else:
        print("Model %s not supported!" % flags.model)
        exit(1)

    os.system('cp CaloDiffu.py {}'.format(checkpoint_folder))  # bkp of model def
    os.system('cp models.py {}'.format(checkpoint_folder))  # bkp of model def
    os.system('cp {} {}'.format(flags.config, checkpoint_folder))  # bkp of config file

    early_stopper = EarlyStopper(patience=dataset_config['EARLYSTOP'], mode='diff', min_delta=1e-5)
    if('early_stop_dict' in checkpoint.keys() and not flags.reset_training):
        early_stopper.__dict__ = checkpoint['early_stop_dict']
    print(early_stopper.__dict__)

    criterion = nn.MSELoss().to(device=device)

    optimizer = optim.Adam(model.parameters(), lr=float(dataset_config["LR"]))
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(optimizer=optimizer, factor=0.1, patience=15, verbose=True)
    if('optimizer_state_dict' in checkpoint.keys() and not flags.reset_training):
        optimizer.load_state_dict(checkpoint['optimizer_state_dict'])
    if('scheduler_state_dict' in checkpoint.keys() and not flags.reset_training):
        scheduler.load_state_dict(checkpoint['scheduler_state_dict'])

    scaler = torch.cuda.amp.GradScaler(enabled=flags.amp)

    training_losses = np.zeros(num_epochs)
    val_losses = np.zeros(num_epochs)
    start_epoch = 0
    min_validation_loss = 99999.
    if('train_loss_hist' in checkpoint.keys() and not flags.reset_training):
        training_losses = checkpoint['train_loss_hist']
        val_losses = checkpoint['val_loss_hist']
        start_epoch = checkpoint['epoch'] + 1

    # training loop
    for epoch in range(start_epoch, num_epochs):
        print("Beginning epoch %i" % epoch, flush=True)
        train_loss = 0

        model.train()
        for i, (E, data) in tqdm(enumerate(loader_train, 0), unit="batch", total=len(loader_train)):
            model.zero_grad()
            optimizer.zero_grad()

            data = data.to(device=device, non_blocking=True)
            E = E.to(device=device, non_blocking=True)

            t = torch.randint(0, model.nsteps, (data.size()[0],), device=device).long()
            noise = torch.randn_like(data)

            with torch.cuda.amp.autocast(enabled=flags.amp):
                batch_loss = model.compute_loss(data, E, noise=noise, t=t, loss_type=loss_type)

            scaler.scale(batch_loss).backward()
            scaler.step(optimizer)
            scaler.update()

            train_loss += batch_loss.item()

            del data, E, noise, batch_loss

        train_loss = train_loss / len(loader_train)
        training_losses[epoch] = train_loss
        print("loss: " + str(train_loss))

        val_loss = 0
        model.eval()
        for i, (vE, vdata) in tqdm(enumerate(loader_val, 0), unit="batch", total=len(loader_val)):
            vdata = vdata.to(device=device)
            vE = vE.to(device=device)

            t = torch.randint(0, model.nsteps, (vdata.size()[0],), device=device).long()
            noise = torch.randn_like(vdata)

            with torch.no_grad():
                batch_loss = model.compute_loss(vdata, vE, noise=noise, t=t, loss_type=loss_type)

            val_loss += batch_loss.item()
            del vdata, vE, noise, batch_loss

        val_loss = val_loss / len(loader_val)
        scheduler.step(torch.tensor([val_loss]))
        val_losses[epoch] = val_loss
        print("val_loss: " + str(val_loss), flush=True)

        if(val_loss < min_validation_loss):
            torch.save(model.state_dict(), os.path.join(checkpoint_folder, 'best_val.pth'))
            min_validation_loss = val_loss

        if(early_stopper.early_stop(val_loss - train_loss)):
            print("Early stopping!")
            break

        # save the model
        model.eval()
        print("SAVING")

        # save full training state so can be resumed
        torch.save({
            'epoch': epoch,
            'model_state_dict': model.state_dict(),
            'optimizer_state_dict': optimizer.state_dict(),
            'scheduler_state_dict': scheduler.state_dict(),
            'train_loss_hist': training_losses,
            'val_loss_hist': val_losses,
            'early_stop_dict': early_stopper.__dict__,
        }, checkpoint_path)

        with open(checkpoint_folder + "/training_losses.txt", "w") as tfileout:
            tfileout.write("\n".join("{}".format(tl) for tl in training_losses) + "\n")
        with open(checkpoint_folder + "/validation_losses.txt", "w") as vfileout:
            vfileout.write("\n".join("{}".format(vl) for vl in val_losses) + "\n")

        if cuda:
            print("peak GPU memory: %.2f GB" % (torch.cuda.max_memory_allocated(device) / 1e9), flush=True)
            torch.cuda.reset_peak_memory_stats(device)

    print("Saving to %s" % checkpoint_folder, flush=True)
    torch.save(model.state_dict(), os.path.join(checkpoint_folder, 'final.pth'))

    with open(checkpoint_folder + "/training_losses.txt", "w") as tfileout:
        tfileout.write("\n".join("{}".format(tl) for tl in training_losses) + "\n")
    with open(checkpoint_folder + "/validation_losses.txt", "w") as vfileout:
        vfileout.write("\n".join("{}".format(vl) for vl in val_losses) + "\n")
