"""Drug recommendation on MIMIC-III with SafeDrug / GAMENet / RETAIN using PyHealth.

Runs on one GPU in ~15 minutes per model (MIMIC-III demo-size runs fine on CPU with dev=True).
"""
import argparse

import torch

from pyhealth.datasets import MIMIC3Dataset
from pyhealth.datasets import split_by_patient, get_dataloader
from pyhealth.models import GAMENet, RETAIN, SafeDrug
from pyhealth.tasks import drug_recommendation_mimic3_fn
from pyhealth.trainer import Trainer

parser = argparse.ArgumentParser()
parser.add_argument("--root", default="/srv/local/data/physionet.org/files/mimiciii/1.4")
parser.add_argument("--model", default="SafeDrug", choices=["SafeDrug", "GAMENet", "RETAIN"])
parser.add_argument("--epochs", type=int, default=20)
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--lr", type=float, default=1e-3)
parser.add_argument("--dev", action="store_true", help="use the small development subset")
parser.add_argument("--seed", type=int, default=528)
args = parser.parse_args()

torch.manual_seed(args.seed)

# STEP 1: load data
base_dataset = MIMIC3Dataset(
    root=args.root,
    tables=["DIAGNOSES_ICD", "PROCEDURES_ICD", "PRESCRIPTIONS"],
    code_mapping={"NDC": ("ATC", {"target_kwargs": {"level": 3}})},
    dev=args.dev,
    refresh_cache=False,
)
base_dataset.stat()

# STEP 2: set task
sample_dataset = base_dataset.set_task(drug_recommendation_mimic3_fn)
sample_dataset.stat()

train_dataset, val_dataset, test_dataset = split_by_patient(
    sample_dataset, [0.8, 0.1, 0.1]
)
train_dataloader = get_dataloader(train_dataset, batch_size=args.batch_size, shuffle=True)
val_dataloader = get_dataloader(val_dataset, batch_size=args.batch_size, shuffle=False)
test_dataloader = get_dataloader(test_dataset, batch_size=args.batch_size, shuffle=False)

# STEP 3: define model
if args.model == "SafeDrug":
    model = SafeDrug(sample_dataset)
elif args.model == "GAMENet":
    model = GAMENet(sample_dataset)
else:
    model = RETAIN(
        sample_dataset,
        feature_keys=["conditions", "procedures"],
        label_key="drugs",
        mode="multilabel",
    )

# STEP 4: define trainer
trainer = Trainer(
    model=model,
    metrics=["jaccard_samples", "f1_samples", "pr_auc_samples", "ddi"],
    device="cuda",
    exp_name="drugrec_{}".format(args.model.lower()),
)
trainer.train(
    train_dataloader=train_dataloader,
    val_dataloader=val_dataloader,
    epochs=args.epochs,
    optimizer_params={"lr": args.lr},
    monitor="pr_auc_samples",
)

# STEP 5: evaluate
print(trainer.evaluate(test_dataloader))

# STEP 6: reload the best checkpoint into a fresh model on CPU for the DDI analysis notebook
cpu_trainer = Trainer(model=model, device="cpu", enable_logging=False,
                      checkpoint_path=trainer.exp_path + "/best.ckpt")
y_true, y_prob, _ = cpu_trainer.inference(test_dataloader)
print("test samples:", y_true.shape[0], "positive rate: %.4f" % y_true.mean())
