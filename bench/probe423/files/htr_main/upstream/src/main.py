"""
Provides options via the command line to perform project tasks.
* `--source`: dataset/model name (bentham, iam, rimes, saintgall, washington)
* `--arch`: network to be used (puigcerver, bluche, flor)
* `--transform`: transform dataset to the HDF5 file
* `--cv2`: visualize sample from transformed dataset
* `--image`: predict a single image with the source parameter
* `--train`: train model using the source argument
* `--test`: evaluate and predict model using the source argument
* `--norm_accentuation`: discard accentuation marks in the evaluation
* `--norm_punctuation`: discard punctuation marks in the evaluation
* `--epochs`: number of epochs
* `--batch_size`: number of the size of each batch
* `--gpu`: index of the GPU to use
* `--amp`: automatic mixed precision training
"""

import argparse
import datetime
import os
import string
import time

import cv2
import h5py
import numpy as np
import torch

from data import preproc as pp, evaluation
from data.generator import DataGenerator, Tokenizer
from data.reader import Dataset
from network.model import HTRModel


def log_gpu_usage(index):
    """Print memory/utilisation of the selected GPU (best effort)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        mem = pynvml.nvmlDeviceGetMemoryInfo(handle)
        util = pynvml.nvmlDeviceGetUtilizationRates(handle)
        print(f"GPU {index}: {mem.used / 2**20:.0f}/{mem.total / 2**20:.0f} MiB, util {util.gpu}%")
        pynvml.nvmlShutdown()
    except Exception as e:  # noqa: BLE001
        print(f"GPU stats unavailable: {e}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=str, required=True)
    parser.add_argument("--arch", type=str, default="flor")

    parser.add_argument("--transform", action="store_true", default=False)
    parser.add_argument("--cv2", action="store_true", default=False)
    parser.add_argument("--image", type=str, default="")
    parser.add_argument("--train", action="store_true", default=False)
    parser.add_argument("--test", action="store_true", default=False)

    parser.add_argument("--norm_accentuation", action="store_true", default=False)
    parser.add_argument("--norm_punctuation", action="store_true", default=False)

    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--batch_size", type=int, default=16)
    parser.add_argument("--learning_rate", type=float, default=1e-3)
    parser.add_argument("--ctc", type=str, default="pytorch", choices=["pytorch", "warp"],
                        help="CTC implementation (warp needs warpctc_pytorch built for your CUDA)")
    parser.add_argument("--gpu", type=int, default=0)
    parser.add_argument("--amp", action="store_true", default=False)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()

    raw_path = os.path.join("..", "raw", args.source)
    source_path = os.path.join("..", "data", f"{args.source}.hdf5")
    output_path = os.path.join("..", "output", args.source, args.arch)
    target_path = os.path.join(output_path, "checkpoint_weights.pt")

    input_size = (1024, 128, 1)
    max_text_length = 128
    charset_base = string.printable[:95]

    if args.transform:
        print(f"{args.source} dataset will be transformed...")
        ds = Dataset(source=raw_path, name=args.source)
        ds.read_partitions()
        ds.save_partitions(source_path, input_size, max_text_length)

    elif args.cv2:
        with h5py.File(source_path, "r") as hf:
            dt = hf["test"]["dt"][:256]
            gt = hf["test"]["gt"][:256]

        predict_file = os.path.join(output_path, "predict.txt")
        predicts = [""] * len(dt)

        if os.path.isfile(predict_file):
            with open(predict_file, "r") as lg:
                predicts = [line[5:] for line in lg if line.startswith("TE_P")]

        for x in range(len(dt)):
            print(f"Image shape:\t{dt[x].shape}")
            print(f"Ground truth:\t{gt[x].decode()}")
            print(f"Predict:\t{predicts[x]}\n")

            cv2.imshow("img", pp.adjust_to_see(dt[x]))
            cv2.waitKey(0)

    else:
        device = torch.device(f"cuda:{args.gpu}" if torch.cuda.is_available() else "cpu")
        if device.type == "cuda":
            torch.cuda.set_device(args.gpu)
            torch.backends.cudnn.benchmark = True
            print(f"Using {torch.cuda.get_device_name(args.gpu)}")
            log_gpu_usage(args.gpu)

        tokenizer = Tokenizer(chars=charset_base, max_text_length=max_text_length)
        model = HTRModel(architecture=args.arch,
                         input_size=input_size,
                         vocab_size=tokenizer.vocab_size,
                         device=device,
                         ctc_impl=args.ctc,
                         amp=args.amp)

        model.compile(learning_rate=args.learning_rate)

        if args.image:
            model.load_checkpoint(target=target_path)
            img = pp.preprocess(args.image, input_size=input_size)
            x_test = pp.normalization([img])

            predicts, probabilities = model.predict(x_test, ctc_decode=True)
            predicts = [[tokenizer.decode(x) for x in y] for y in predicts]

            print("\n####################################")
            for i, (pred, prob) in enumerate(zip(predicts, probabilities)):
                print("\nProb.  - Predict")
                for (pd, pb) in zip(pred, prob):
                    print(f"{pb:.4f} - {pd}")
            print("\n####################################")

        else:
            assert os.path.isfile(source_path) or os.path.isfile(target_path)
            os.makedirs(output_path, exist_ok=True)

            dtgen = DataGenerator(source=source_path,
                                  batch_size=args.batch_size,
                                  charset=charset_base,
                                  max_text_length=max_text_length,
                                  workers=args.workers)

            model.summary(output_path, "summary.txt")
            model.load_checkpoint(target=target_path)

            if args.train:
                start_time = datetime.datetime.now()

                h = model.fit(train_loader=dtgen.loader("train", augment=True),
                              valid_loader=dtgen.loader("valid"),
                              epochs=args.epochs,
                              target=target_path)

                total_time = datetime.datetime.now() - start_time

                loss = h["loss"]
                val_loss = h["val_loss"]

                min_val_loss = min(val_loss)
                min_val_loss_i = val_loss.index(min_val_loss)

                time_epoch = (total_time / len(loss))
                total_item = (dtgen.size["train"] + dtgen.size["valid"])

                t_corpus = "\n".join([
                    f"Total train images:      {dtgen.size['train']}",
                    f"Total validation images: {dtgen.size['valid']}",
                    f"Batch:                   {dtgen.batch_size}\n",
                    f"Total time:              {total_time}",
                    f"Time per epoch:          {time_epoch}",
                    f"Time per item:           {time_epoch / total_item}\n",
                    f"Total epochs:            {len(loss)}",
                    f"Best epoch               {min_val_loss_i + 1}\n",
                    f"Training loss:           {loss[min_val_loss_i]:.8f}",
                    f"Validation loss:         {min_val_loss:.8f}",
                    f"Peak GPU memory:         {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB",
                ])

                with open(os.path.join(output_path, "train.txt"), "w") as lg:
                    lg.write(t_corpus)
                    print(t_corpus)

            elif args.test:
                start_time = datetime.datetime.now()

                predicts, _ = model.predict(dtgen.loader("test"), ctc_decode=True)
                predicts = [tokenizer.decode(x[0]) for x in predicts]
                ground_truth = [x.decode() for x in dtgen.dataset["test"]["gt"]]

                total_time = datetime.datetime.now() - start_time

                with open(os.path.join(output_path, "predict.txt"), "w") as lg:
                    for pd, gt in zip(predicts, ground_truth):
                        lg.write(f"TE_L {gt}\nTE_P {pd}\n")

                evaluate = evaluation.ocr_metrics(predicts=predicts,
                                                  ground_truth=ground_truth,
                                                  norm_accentuation=args.norm_accentuation,
                                                  norm_punctuation=args.norm_punctuation)

                e_corpus = "\n".join([
                    f"Total test images:    {dtgen.size['test']}",
                    f"Total time:           {total_time}",
                    f"Time per item:        {total_time / dtgen.size['test']}\n",
                    f"Metrics:",
                    f"Character Error Rate: {evaluate[0]:.8f}",
                    f"Word Error Rate:      {evaluate[1]:.8f}",
                    f"Sequence Error Rate:  {evaluate[2]:.8f}",
                ])

                with open(os.path.join(output_path, "evaluate.txt"), "w") as lg:
                    lg.write(e_corpus)
                    print(e_corpus)
