import argparse

import deepspeed

parser = argparse.ArgumentParser(description="sp")
parser.add_argument("--basepath", type=str, default="/home/lyh/weights/hf/llama31chat/8B/")
parser.add_argument("--trainpath", type=str, default="/home/lyh/code/nlp/developing/vllmbase/vllm/gedata/l318b.jsonl")
parser.add_argument("--testpath", type=str, default="/home/lyh/code/nlp/developing/vllmbase/vllm/gedata/0318.json")
parser.add_argument("--savedir", type=str, default="0")
parser.add_argument("--configpath", type=str, default="config.json")
parser.add_argument("--local_rank", type=int, default=-1, help="local_rank for distributed training on gpus")
parser = deepspeed.add_config_arguments(parser)
args = parser.parse_args()
import json
import os
import re

deepspeed_config = args.deepspeed_config
with open(deepspeed_config) as f:
    ds_config = json.load(f)
train_config = {
    "bs": ds_config["train_micro_batch_size_per_gpu"],
    "num_epochs": 40,
    "num_workers": 2,
    "max_len": 2048,
    "config_path": args.configpath,
    "p_w": 0.1,
    "v_w": 1.0,
    "noise_std": 0.2,
}

import torch
from safetensors import safe_open
from torch import nn
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
from tqdm import tqdm
from transformers import AutoConfig

from ..model.cnets import Model
from ..model.configs import EConfig
from .main import AddUniformNoise, CustomDataset, DataCollatorWithPadding, list_files, top_accuracy

torch.backends.cuda.matmul.allow_tf32 = True

deepspeed.init_distributed(dist_backend="nccl")
rank = torch.distributed.get_rank()
if rank == 0:
    import wandb

    wandb.init(project="eagle-ds", config=train_config)


def load_lm_head(basepath):
    baseconfig = AutoConfig.from_pretrained(basepath)
    head = torch.nn.Linear(baseconfig.hidden_size, baseconfig.vocab_size, bias=False)
    try:
        with open(os.path.join(basepath, "model.safetensors.index.json"), "r") as f:
            index_json = json.loads(f.read())
            head_path = index_json["weight_map"]["lm_head.weight"]
        with safe_open(os.path.join(basepath, head_path), framework="pt", device="cpu") as f:
            tensor_slice = f.get_slice("lm_head.weight")
            vocab_size, hidden_dim = tensor_slice.get_shape()
            tensor = tensor_slice[:, :hidden_dim].float()
    except Exception:
        with open(os.path.join(basepath, "pytorch_model.bin.index.json"), "r") as f:
            index_json = json.loads(f.read())
            head_path = index_json["weight_map"]["lm_head.weight"]
        weights = torch.load(os.path.join(basepath, head_path))
        tensor = weights["lm_head.weight"].float()
    head.weight.data = tensor
    head.eval()
    for param in head.parameters():
        param.requires_grad = False
    return head


class DraftWithLoss(nn.Module):
    """Wrap the draft Model so the DeepSpeed engine sees a single module returning the losses."""

    def __init__(self, draft, head, p_w, v_w):
        super().__init__()
        self.draft = draft
        self.head = head
        self.p_w = p_w
        self.v_w = v_w
        self.criterion = nn.SmoothL1Loss(reduction="none")

    def forward(self, hidden_states, input_ids, attention_mask, target, loss_mask):
        predict = self.draft(hidden_states, input_ids=input_ids, attention_mask=attention_mask)
        with torch.no_grad():
            target_head = self.head(target)
            target_p = nn.Softmax(dim=2)(target_head).detach()
        out_head = self.head(predict)
        out_logp = nn.LogSoftmax(dim=2)(out_head)
        plogp = target_p * out_logp
        ploss = -torch.sum(torch.sum(loss_mask * plogp, 2)) / (loss_mask.sum() + 1e-5)
        vloss = self.criterion(predict, target)
        vloss = torch.sum(torch.mean(loss_mask * vloss, 2)) / (loss_mask.sum() + 1e-5)
        loss = self.v_w * vloss + self.p_w * ploss
        return loss, ploss, vloss, out_head, target_head


head = load_lm_head(args.basepath)
config = EConfig.from_pretrained(train_config["config_path"])
draft = Model(config, load_emb=True, path=args.basepath)
model = DraftWithLoss(draft, head, train_config["p_w"], train_config["v_w"])

traindataset = CustomDataset(list_files(args.trainpath), transform=AddUniformNoise(std=train_config["noise_std"]))
testdataset = CustomDataset(list_files(args.testpath))

model_engine, optimizer, _, _ = deepspeed.initialize(
    args=args, model=model, model_parameters=[p for p in model.parameters() if p.requires_grad]
)

global_rank = deepspeed.comm.get_rank()
rank = deepspeed.comm.get_local_rank()
world_size = deepspeed.comm.get_world_size()
if global_rank == 0:
    os.makedirs(args.savedir, exist_ok=True)

sampler = DistributedSampler(testdataset, num_replicas=world_size, rank=global_rank, shuffle=False)
test_loader = DataLoader(
    testdataset,
    batch_size=train_config["bs"],
    sampler=sampler,
    num_workers=train_config["num_workers"],
    pin_memory=True,
    collate_fn=DataCollatorWithPadding(),
)

train_sampler = DistributedSampler(traindataset, num_replicas=world_size, rank=global_rank, shuffle=True)
train_loader = DataLoader(
    traindataset,
    batch_size=train_config["bs"],
    sampler=train_sampler,
    num_workers=train_config["num_workers"],
    pin_memory=True,
    collate_fn=DataCollatorWithPadding(),
)


def find_max_state_with_file(directory, filename="zero_to_fp32.py"):
    max_a = -1
    for subdir in os.listdir(directory):
        match = re.match(r"state_(\d+)", subdir)
        if match:
            a_value = int(match.group(1))
            subdir_path = os.path.join(directory, subdir)
            file_path = os.path.join(subdir_path, filename)
            if os.path.isdir(subdir_path) and os.path.exists(file_path):
                max_a = max(max_a, a_value)
    if max_a == -1:
        return None, 0
    return f"{directory}/state_{max_a}", max_a + 1


checkpoint_path, start_epoch = find_max_state_with_file(args.savedir)
if checkpoint_path:
    print(f"load from {checkpoint_path}")
    model_engine.load_checkpoint(checkpoint_path)


def to_dev(batch):
    return {k: v.to(rank) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


for epoch in range(start_epoch, train_config["num_epochs"]):
    train_sampler.set_epoch(epoch + 1)
    print(f"Now training epoch {epoch}")

    model_engine.train()
    epoch_acces = [[] for _ in range(3)]
    epoch_losses = []

    for batch_idx, data in enumerate(tqdm(train_loader, disable=global_rank != 0)):
        model_engine.zero_grad()
        data = to_dev(data)
        loss_mask = data["loss_mask"][:, :, None]
        loss, ploss, vloss, out_head, target_head = model_engine(
            data["hidden_states"],
            data["input_ids"],
            data["attention_mask"],
            data["target"],
            loss_mask,
        )
        model_engine.backward(loss)
        model_engine.step()

        with torch.no_grad():
            ct = loss_mask.sum().item()
            _, target = torch.max(target_head, 2)
            flat_head = out_head.view(-1, target_head.shape[-1])[loss_mask.view(-1) == 1]
            flat_target = target.view(-1)[loss_mask.view(-1) == 1]
            topkacc = top_accuracy(flat_head, flat_target, (1, 2, 3))
            for i in range(3):
                epoch_acces[i].append(topkacc[i].item() / max(ct, 1))
        epoch_losses.append(loss.item())

        if global_rank == 0 and batch_idx % 20 == 0:
            logdict = {
                "train/lr": optimizer.optimizer.param_groups[0]["lr"],
                "train/loss": loss.item(),
                "train/ploss": ploss.item(),
                "train/vloss": vloss.item(),
            }
            wandb.log(logdict)

    for i in range(len(epoch_acces)):
        acc_i = torch.tensor(epoch_acces[i]).cuda().mean()
        deepspeed.comm.all_reduce(acc_i, op=deepspeed.comm.ReduceOp.AVG)
        acc_i = acc_i.item()
        if global_rank == 0:
            wandb.log({f"train/epochacc_{i}": acc_i})
            print(f"Train Epoch [{epoch + 1}/{train_config['num_epochs']}], position {i},  Acc: {acc_i:.2f}")

    loss_avg = torch.tensor(epoch_losses, device=f"cuda:{rank}").mean()
    deepspeed.comm.all_reduce(loss_avg, op=deepspeed.comm.ReduceOp.AVG)
    if global_rank == 0:
        wandb.log({"train/epochloss": loss_avg.item()})

    model_engine.eval()
    test_losses = []
    with torch.no_grad():
        for batch_idx, data in enumerate(tqdm(test_loader, disable=global_rank != 0)):
            data = to_dev(data)
            loss_mask = data["loss_mask"][:, :, None]
            loss, _, _, _, _ = model_engine(
                data["hidden_states"], data["input_ids"], data["attention_mask"], data["target"], loss_mask
            )
            test_losses.append(loss.item())
    test_loss = torch.tensor(test_losses).mean().to(model_engine.device)
    deepspeed.comm.all_reduce(test_loss, op=deepspeed.comm.ReduceOp.AVG)
    if global_rank == 0:
        wandb.log({"test/epochloss": test_loss.item()})

    torch.cuda.empty_cache()

    model_engine.save_16bit_model(f"{args.savedir}/state_{epoch}", exclude_frozen_parameters=True)
    if epoch % 10 == 0:
        deepspeed.DeepSpeedEngine.save_checkpoint(model_engine, save_dir=f"{args.savedir}/state_{epoch}")
