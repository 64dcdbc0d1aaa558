"""Flower client fine-tuning DistilBERT on a partition of IMDB.

Run one process per client; the clients share a single GPU fine for this model
size. Mixed precision halves activation memory so eight clients fit on one
24 GB card.
"""

import argparse
import warnings
from collections import OrderedDict

import flwr as fl
import torch
from evaluate import load as load_metric
from flwr_datasets import FederatedDataset
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, AutoTokenizer, DataCollatorWithPadding
from transformers import logging as hf_logging

warnings.filterwarnings("ignore", category=UserWarning)
hf_logging.set_verbosity_error()

DEVICE = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
CHECKPOINT = "distilbert-base-uncased"  # transformer model checkpoint


def load_data(partition_id, num_partitions=2):
    """Load IMDB data (training and eval)"""
    fds = FederatedDataset(dataset="imdb", partitioners={"train": num_partitions})
    partition = fds.load_partition(partition_id)
    # Divide data: 80% train, 20% test
    partition_train_test = partition.train_test_split(test_size=0.2, seed=42)

    tokenizer = AutoTokenizer.from_pretrained(CHECKPOINT, model_max_length=512)

    def tokenize_function(examples):
        return tokenizer(examples["text"], truncation=True)

    partition_train_test = partition_train_test.map(tokenize_function, batched=True)
    partition_train_test = partition_train_test.remove_columns("text")
    partition_train_test = partition_train_test.rename_column("label", "labels")

    data_collator = DataCollatorWithPadding(tokenizer=tokenizer)
    trainloader = DataLoader(
        partition_train_test["train"],
        shuffle=True,
        batch_size=32,
        collate_fn=data_collator,
        pin_memory=torch.cuda.is_available(),
    )
    testloader = DataLoader(partition_train_test["test"], batch_size=32, collate_fn=data_collator)
    return trainloader, testloader


def train(net, trainloader, epochs, use_amp=True):
    optimizer = AdamW(net.parameters(), lr=5e-5)
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    net.train()
    for _ in range(epochs):
        for batch in trainloader:
            batch = {k: v.to(DEVICE, non_blocking=True) for k, v in batch.items()}
            optimizer.zero_grad(set_to_none=True)
            with torch.cuda.amp.autocast(enabled=use_amp):
                outputs = net(**batch)
            scaler.scale(outputs.loss).backward()
            scaler.step(optimizer)
            scaler.update()


def test(net, testloader):
    metric = load_metric("accuracy")
    loss = 0
    net.eval()
    for batch in testloader:
        batch = {k: v.to(DEVICE) for k, v in batch.items()}
        with torch.no_grad(), torch.autocast("cuda", dtype=torch.float16):
            outputs = net(**batch)
        logits = outputs.logits
        loss += outputs.loss.item()
        predictions = torch.argmax(logits, dim=-1)
        metric.add_batch(predictions=predictions, references=batch["labels"])
    loss /= len(testloader.dataset)
    accuracy = metric.compute()["accuracy"]
    return loss, accuracy


class IMDBClient(fl.client.NumPyClient):
    def __init__(self, net, trainloader, testloader, local_epochs=1):
        self.net = net
        self.trainloader = trainloader
        self.testloader = testloader
        self.local_epochs = local_epochs

    def get_parameters(self, config):
        return [val.cpu().numpy() for _, val in self.net.state_dict().items()]

    def set_parameters(self, parameters):
        params_dict = zip(self.net.state_dict().keys(), parameters)
        state_dict = OrderedDict({k: torch.Tensor(v) for k, v in params_dict})
        self.net.load_state_dict(state_dict, strict=True)

    def fit(self, parameters, config):
        self.set_parameters(parameters)
        print("Training Started...")
        train(self.net, self.trainloader, epochs=self.local_epochs)
        print("Training Finished.")
        torch.cuda.empty_cache()
        return self.get_parameters(config={}), len(self.trainloader), {}

    def evaluate(self, parameters, config):
        self.set_parameters(parameters)
        loss, accuracy = test(self.net, self.testloader)
        return float(loss), len(self.testloader), {"accuracy": float(accuracy)}


def main():
    parser = argparse.ArgumentParser(description="Flower")
    parser.add_argument("--partition-id", choices=list(range(1_000)), required=True, type=int, help="Partition of the dataset divided into 1,000 iid partitions created artificially.")
    parser.add_argument("--server-address", default="127.0.0.1:8080")
    parser.add_argument("--local-epochs", type=int, default=1)
    parser.add_argument("--no-amp", action="store_true", help="disable CUDA mixed precision")
    args = parser.parse_args()

    net = AutoModelForSequenceClassification.from_pretrained(CHECKPOINT, num_labels=2).to(DEVICE)
    trainloader, testloader = load_data(args.partition_id)

    client = IMDBClient(net, trainloader, testloader, local_epochs=args.local_epochs)
    client.train_kwargs = {"use_amp": not args.no_amp}
    fl.client.start_client(server_address=args.server_address, client=client.to_client())


if __name__ == "__main__":
    main()
