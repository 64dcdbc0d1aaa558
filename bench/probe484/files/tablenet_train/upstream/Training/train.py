import os
import random
import time

import numpy as np
import torch
from torch.utils.data import DataLoader
from torch.utils.tensorboard import SummaryWriter
from tqdm import tqdm

import config
from tablenet.dataset import ImageFolder, get_splits, read_processed_data
from tablenet.model import TableNet, TableNetLoss
from tablenet.utils import compute_metrics, display_metrics, load_checkpoint, save_checkpoint


def seed_all(SEED_VALUE=config.SEED):
    random.seed(SEED_VALUE)
    os.environ['PYTHONHASHSEED'] = str(SEED_VALUE)
    np.random.seed(SEED_VALUE)
    torch.manual_seed(SEED_VALUE)
    torch.cuda.manual_seed(SEED_VALUE)
    torch.cuda.manual_seed_all(SEED_VALUE)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def get_data_loaders(data_path=config.DATAPATH):
    df = read_processed_data(data_path)
    train_data, test_data = get_splits(df, test_size=0.1, seed=config.SEED)

    train_dataset = ImageFolder(train_data, isTrain=True)
    test_dataset = ImageFolder(test_data, isTrain=False)

    train_loader = DataLoader(train_dataset, batch_size=config.BATCH_SIZE, shuffle=True,
                              num_workers=config.NUM_WORKERS, pin_memory=config.PIN_MEMORY)
    test_loader = DataLoader(test_dataset, batch_size=8, shuffle=False,
                             num_workers=config.NUM_WORKERS, pin_memory=config.PIN_MEMORY)
    return train_loader, test_loader


def train_on_epoch(data_loader, model, optimizer, loss, scaler, threshold=0.5):
    combined_loss = []
    table_loss, table_acc, table_precision, table_recall, table_f1 = [], [], [], [], []
    col_loss, col_acc, col_precision, col_recall, col_f1 = [], [], [], [], []

    loop = tqdm(data_loader, leave=True)

    for batch_idx, img_dict in enumerate(loop):
        image = img_dict["image"].to(config.DEVICE)
        table_image = img_dict["table_image"].to(config.DEVICE)
        column_image = img_dict["column_image"].to(config.DEVICE)

        with torch.cuda.amp.autocast(enabled=config.USE_AMP):
            table_out, column_out = model(image)
            t_loss = loss(table_out, table_image)
            c_loss = loss(column_out, column_image)

        total_loss = t_loss + c_loss
        optimizer.zero_grad()

        scaler.scale(total_loss).backward()
        scaler.step(optimizer)
        scaler.update()

        table_loss.append(t_loss.item())
        col_loss.append(c_loss.item())
        combined_loss.append(total_loss.item())

        # metrics are computed on CPU numpy arrays
        table_metrics = compute_metrics(table_image, table_out, threshold)
        col_metrics = compute_metrics(column_image, column_out, threshold)

        table_f1.append(table_metrics['f1'])
        table_precision.append(table_metrics['precision'])
        table_acc.append(table_metrics['acc'])
        table_recall.append(table_metrics['recall'])

        col_f1.append(col_metrics['f1'])
        col_acc.append(col_metrics['acc'])
        col_precision.append(col_metrics['precision'])
        col_recall.append(col_metrics['recall'])

        loop.set_postfix(loss=total_loss.item())

    metrics = {
        'combined_loss': np.mean(combined_loss),
        'table_loss': np.mean(table_loss),
        'column_loss': np.mean(col_loss),
        'table_acc': np.mean(table_acc),
        'col_acc': np.mean(col_acc),
        'table_f1': np.mean(table_f1),
        'col_f1': np.mean(col_f1),
        'table_precision': np.mean(table_precision),
        'col_precision': np.mean(col_precision),
        'table_recall': np.mean(table_recall),
        'col_recall': np.mean(col_recall),
    }
    return metrics


@torch.no_grad()
def test_on_epoch(data_loader, model, loss, threshold=0.5, device=config.DEVICE):
    combined_loss = []
    table_loss, table_acc, table_precision, table_recall, table_f1 = [], [], [], [], []
    col_loss, col_acc, col_precision, col_recall, col_f1 = [], [], [], [], []

    model.eval()
    loop = tqdm(data_loader, leave=True)
    for batch_idx, img_dict in enumerate(loop):
        image = img_dict["image"].to(device)
        table_image = img_dict["table_image"].to(device)
        column_image = img_dict["column_image"].to(device)

        table_out, column_out = model(image)
        t_loss = loss(table_out, table_image)
        c_loss = loss(column_out, column_image)

        table_loss.append(t_loss.item())
        col_loss.append(c_loss.item())
        combined_loss.append((t_loss + c_loss).item())

        table_metrics = compute_metrics(table_image, table_out, threshold)
        col_metrics = compute_metrics(column_image, column_out, threshold)

        table_f1.append(table_metrics['f1'])
        table_precision.append(table_metrics['precision'])
        table_acc.append(table_metrics['acc'])
        table_recall.append(table_metrics['recall'])
        col_f1.append(col_metrics['f1'])
        col_acc.append(col_metrics['acc'])
        col_precision.append(col_metrics['precision'])
        col_recall.append(col_metrics['recall'])

    model.train()
    return {
        'combined_loss': np.mean(combined_loss),
        'table_loss': np.mean(table_loss),
        'column_loss': np.mean(col_loss),
        'table_acc': np.mean(table_acc),
        'col_acc': np.mean(col_acc),
        'table_f1': np.mean(table_f1),
        'col_f1': np.mean(col_f1),
        'table_precision': np.mean(table_precision),
        'col_precision': np.mean(col_precision),
        'table_recall': np.mean(table_recall),
        'col_recall': np.mean(col_recall),
    }


def main():
    seed_all()

    print(f"Training TableNet ({config.ENCODER}) on {config.DEVICE}")
    train_loader, test_loader = get_data_loaders()

    model = TableNet(encoder=config.ENCODER, use_pretrained_model=config.USE_PRETRAINED,
                     basemodel_requires_grad=config.BASEMODEL_REQUIRES_GRAD)
    model = model.to(config.DEVICE)

    optimizer = torch.optim.Adam(model.parameters(), lr=config.LEARNING_RATE,
                                 weight_decay=config.WEIGHT_DECAY)
    loss = TableNetLoss().bce
    scaler = torch.cuda.amp.GradScaler(enabled=config.USE_AMP)

    nl = '\n'
    os.makedirs(config.MODEL_DIR, exist_ok=True)
    checkpoint_path = os.path.join(config.MODEL_DIR, config.CHECKPOINT_NAME)
    writer = SummaryWriter(f"{config.LOG_DIR}/TableNet/{config.ENCODER}/config_4_batch_{config.BATCH_SIZE}")

    last_epoch = 0
    best_table_f1 = 0.
    if os.path.exists(checkpoint_path):
        last_epoch, tr_metrics, te_metrics = load_checkpoint(torch.load(checkpoint_path), model)
        best_table_f1 = te_metrics['table_f1']
        print(f"Resuming from epoch {last_epoch}, best table F1 {best_table_f1:.4f}")

    for epoch in range(last_epoch, config.EPOCHS):
        start = time.time()
        train_metrics = train_on_epoch(train_loader, model, optimizer, loss, scaler, threshold=config.THRESHOLD)
        test_metrics = test_on_epoch(test_loader, model, loss, threshold=config.THRESHOLD)

        for k, v in train_metrics.items():
            writer.add_scalar(f'Train/{k}', v, epoch)
        for k, v in test_metrics.items():
            writer.add_scalar(f'Test/{k}', v, epoch)

        display_metrics(epoch, train_metrics, test_metrics)
        print(f"Epoch {epoch} took {time.time() - start:.1f}s; "
              f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**20:.0f} MiB{nl}")

        if best_table_f1 <= test_metrics['table_f1']:
            best_table_f1 = test_metrics['table_f1']
            save_checkpoint({
                'epoch': epoch,
                'state_dict': model.state_dict(),
                'optimizer': optimizer.state_dict(),
                'train_metrics': train_metrics,
                'test_metrics': test_metrics,
            }, checkpoint_path)

        torch.cuda.empty_cache()

    writer.close()


if __name__ == '__main__':
    main()
