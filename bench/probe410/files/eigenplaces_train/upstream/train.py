
import sys
import torch
import logging
import numpy as np
from tqdm import tqdm
import multiprocessing
from datetime import datetime
import torchvision.transforms as tfm

import test
import util
import parser
import commons
import cosface_loss
import augmentations
from eigenplaces_model import eigenplaces_network
from datasets.test_dataset import TestDataset
from datasets.eigenplaces_dataset import EigenPlacesDataset

torch.backends.cudnn.benchmark = True  # Provides a speedup

args = parser.parse_arguments()
start_time = datetime.now()
args.output_folder = f"logs/{args.save_dir}/{start_time.strftime('%Y-%m-%d_%H-%M-%S')}"
commons.make_deterministic(args.seed)
commons.setup_logging(args.output_folder, console="debug")
logging.info(" ".join(sys.argv))
logging.info(f"Arguments: {args}")
logging.info(f"The outputs are being saved in {args.output_folder}")

#### Model
model = eigenplaces_network.GeoLocalizationNet_(args.backbone, args.fc_output_dim)

logging.info(f"There are {torch.cuda.device_count()} GPUs and {multiprocessing.cpu_count()} CPUs.")

if args.resume_model is not None:
    logging.debug(f"Loading model from {args.resume_model}")
    model_state_dict = torch.load(args.resume_model, map_location="cpu")
    model.load_state_dict(model_state_dict)

model = model.to(args.device).train()

#### Optimizer
criterion = torch.nn.CrossEntropyLoss()
model_optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

#### Datasets
groups = [EigenPlacesDataset(
        args.train_dataset_folder, M=args.M, N=args.N, focal_dist=args.focal_dist,
        current_group=n//2, min_images_per_class=args.min_images_per_class, angle=[0, 90][n % 2],
        visualize_classes=args.visualize_classes)
    for n in range(args.groups_num * 2)
]
# Each group has its own classifier, which depends on the number of classes in the group
classifiers = [cosface_loss.MarginCosineProduct(args.fc_output_dim, len(group), s=args.s, m=args.m) for group in groups]
classifiers_optimizers = [torch.optim.Adam(classifier.parameters(), lr=args.classifiers_lr) for classifier in classifiers]

logging.info(f"Using {len(groups)} groups")
logging.info(f"The {len(groups)} groups have respectively the following number of classes {[len(g) for g in groups]}")
logging.info(f"The {len(groups)} groups have respectively the following number of images {[g.get_images_num() for g in groups]}")
logging.info(f"There are {len(groups[0])} classes for the first group, " +
             f"each epoch has {args.iterations_per_epoch} iterations " +
             f"with batch_size {args.batch_size}, therefore the model sees each class (on average) " +
             f"{args.iterations_per_epoch * args.batch_size / len(groups[0]):.1f} times per epoch")

val_ds = TestDataset(args.val_dataset_folder, positive_dist_threshold=args.positive_dist_threshold,
                     image_size=args.image_size, resize_test_imgs=args.resize_test_imgs)
logging.info(f"Validation set: {val_ds}")

#### Resume
if args.resume_train:
    model, model_optimizer, classifiers, classifiers_optimizers, best_val_recall1, start_epoch_num = \
        util.resume_train(args, args.output_folder, model, model_optimizer, classifiers, classifiers_optimizers)
    epoch_num = start_epoch_num - 1
    logging.info(f"Resuming from epoch {start_epoch_num} with best R@1 {best_val_recall1:.1f} from checkpoint {args.resume_train}")
else:
    best_val_recall1 = start_epoch_num = 0

#### Train / evaluation loop
logging.info("Start training ...")

gpu_augmentation = tfm.Compose([
    augmentations.DeviceAgnosticColorJitter(brightness=args.brightness,
                                            contrast=args.contrast,
                                            saturation=args.saturation,
                                            hue=args.hue),
    augmentations.DeviceAgnosticRandomResizedCrop([args.image_size, args.image_size],
                                                  scale=[1-args.random_resized_crop, 1]),
    tfm.Normalize(mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
])

scaler = torch.cuda.amp.GradScaler(enabled=args.use_amp16)

for epoch_num in range(start_epoch_num, args.epochs_num):
    #### Train
    epoch_start_time = datetime.now()
    # Select classifier and dataloader according to epoch
    current_dataset_num = (epoch_num % args.groups_num) * 2
    iterators = []
    for i in range(2):  # 0 is lateral loss, 1 is frontal loss
        dataloader = commons.InfiniteDataLoader(groups[current_dataset_num + i], num_workers=args.num_workers,
                                                batch_size=args.batch_size, shuffle=True,
                                                pin_memory=True, drop_last=True)
        iterators.append(iter(dataloader))
        classifiers[current_dataset_num + i] = classifiers[current_dataset_num + i].to(args.device)
        util.move_to_device(classifiers_optimizers[current_dataset_num + i], args.device)

    model = model.train()
    epoch_losses = np.zeros((0, 2), dtype=np.float32)
    for iteration in tqdm(range(args.iterations_per_epoch), ncols=100):
        model_optimizer.zero_grad()
        classifiers_optimizers[current_dataset_num].zero_grad()
        classifiers_optimizers[current_dataset_num + 1].zero_grad()

        batch_losses = np.zeros(2, dtype=np.float32)
        for i in range(2):
            images, targets, _ = next(iterators[i])
            images, targets = images.to(args.device, non_blocking=True), targets.to(args.device, non_blocking=True)
            images = gpu_augmentation(images)

            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=args.use_amp16):
                descriptors = model(images)
                output = classifiers[current_dataset_num + i](descriptors, targets)
                loss = criterion(output, targets)
                if i == 0:
                    loss *= args.lambda_lat
                else:
                    loss *= args.lambda_front
            scaler.scale(loss).backward()
            batch_losses[i] = loss.item()
            del loss, output, images

        epoch_losses = np.concatenate((epoch_losses, np.expand_dims(batch_losses, axis=0)))
        scaler.step(model_optimizer)
        scaler.step(classifiers_optimizers[current_dataset_num])
        scaler.step(classifiers_optimizers[current_dataset_num + 1])
        scaler.update()

    for i in range(2):
        classifiers[current_dataset_num + i] = classifiers[current_dataset_num + i].cpu()
        util.move_to_device(classifiers_optimizers[current_dataset_num + i], "cpu")

    logging.debug(f"Epoch {epoch_num:>2} in {str(datetime.now() - epoch_start_time)[:-7]}, "
                  f"loss_lateral = {epoch_losses[:, 0].mean():.4f}, loss_frontal = {epoch_losses[:, 1].mean():.4f}, "
                  f"peak GPU mem = {torch.cuda.max_memory_allocated() / 2**30:.1f} GB")
    torch.cuda.reset_peak_memory_stats()

    #### Evaluation
    recalls, recalls_str = test.test(args, val_ds, model, batchify=True)
    logging.info(f"Epoch {epoch_num:>2} in {str(datetime.now() - epoch_start_time)[:-7]}, {val_ds}: {recalls_str[:20]}")
    is_best = recalls[0] > best_val_recall1
    best_val_recall1 = max(recalls[0], best_val_recall1)
    # Save checkpoint, which contains all training parameters
    util.save_checkpoint({
        "epoch_num": epoch_num + 1,
        "model_state_dict": model.state_dict(),
        "optimizer_state_dict": model_optimizer.state_dict(),
        "classifiers_state_dict": [c.state_dict() for c in classifiers],
        "optimizers_state_dict": [c.state_dict() for c in classifiers_optimizers],
        "best_val_recall1": best_val_recall1
    }, is_best, args.output_folder)


logging.info(f"Trained for {epoch_num+1:02d} epochs, in total in {str(datetime.now() - start_time)[:-7]}")

logging.info("Experiment finished (without any errors)")
