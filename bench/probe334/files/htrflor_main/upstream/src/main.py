"""
Provides options via the command line to perform project tasks.
* `--source`: dataset/model name (bentham, iam, rimes, saintgall, washington)
* `--arch`: network to be used (puigcerver, bluche, flor)
* `--transform`: transform dataset to the HDF5 file
* `--cv2`: visualize sample from transformed dataset
* `--kaldi_assets`: save all assets for use with kaldi
* `--image`: predict a single image with the source parameter
* `--train`: train model using the source argument
* `--test`: evaluate and predict model using the source argument
* `--norm_accentuation`: discard accentuation marks in the evaluation
* `--norm_punctuation`: discard punctuation marks in the evaluation
* `--epochs`: number of epochs
* `--batch_size`: number of the size of each batch
* `--gpu`: index of the GPU to use (-1 for CPU)
* `--amp`: train with automatic mixed precision (fp16) on the GPU

PyTorch port of HTR-Flor: the Keras model/callbacks were replaced by a small
training loop in network/model.py, everything else keeps the original layout.
"""

import argparse
import cv2
import datetime
import h5py
import os
import string
import time

import torch

from data import preproc as pp, evaluation
from data.generator import DataGenerator, Tokenizer
from data.reader import Dataset
from network.model import HTRModel


def select_device(gpu):
    """Return the torch.device for --gpu (negative -> CPU)."""
    if gpu >= 0 and torch.cuda.is_available():
        device = torch.device("cuda", gpu)
        torch.cuda.set_device(device)
        print(f"GPU: {torch.cuda.get_device_name(device)}")
    else:
        device = torch.device("cpu")
        print("GPU not found, running on CPU (this will be slow)")
    return device


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--source", type=str, required=True)
    parser.add_argument("--arch", type=str, default="flor")
    parser.add_argument("--transform", action="store_true", default=False)
    parser.add_argument("--cv2", action="store_true", default=False)
    parser.add_argument("--image", type=str, default="")
    parser.add_argument("--kaldi_assets", action="store_true", default=False)

    parser.add_argument("--train", action="store_true", default=False)
    parser.add_argument("--test", action="store_true", default=False)

    parser.add_argument("--norm_accentuation", action="store_true", default=False)
    parser.add_argument("--norm_punctuation", action="store_true", default=False)

    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--batch_size", type=int, default=16)
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

    elif args.image:
        device = select_device(args.gpu)
        tokenizer = Tokenizer(chars=charset_base, max_text_length=max_text_length)

        img = pp.preprocess(args.image, input_size=input_size)
        x_test = pp.normalization([img])

        model = HTRModel(
            architecture=args.arch,
            input_size=input_size,
            vocab_size=tokenizer.vocab_size,
            beam_width=10,
            top_paths=10,
            device=device,
        )

        model.compile(learning_rate=0.001)
        model.load_checkpoint(target=target_path)

        predicts, probabilities = model.predict(x_test, ctc_decode=True)
        predicts = [[tokenizer.decode(x) for x in y] for y in predicts]

        print("\n####################################")
        for i, (pred, prob) in enumerate(zip(predicts, probabilities)):
            print("\nProb.  - Predict")

            for (pd, pb) in zip(pred, prob):
                print(f"{pb:.4f} - {pd}")

            cv2.imshow(f"Image {i + 1}", pp.adjust_to_see(img))
        print("\n####################################")
        cv2.waitKey(0)

    else:
        assert os.path.isfile(source_path) or os.path.isfile(target_path)
        os.makedirs(output_path, exist_ok=True)

        device = select_device(args.gpu)
        torch.backends.cudnn.benchmark = True

        dtgen = DataGenerator(
            source=source_path,
            batch_size=args.batch_size,
            charset=charset_base,
            max_text_length=max_text_length,
            num_workers=args.workers,
            pin_memory=device.type == "cuda",
        )

        model = HTRModel(
            architecture=args.arch,
            input_size=input_size,
            vocab_size=dtgen.tokenizer.vocab_size,
            beam_width=10,
            stop_tolerance=20,
            reduce_tolerance=15,
            device=device,
            use_amp=args.amp,
        )

        model.compile(learning_rate=0.001)
        model.load_checkpoint(target=target_path)

        if args.kaldi_assets:
            predicts, _ = model.predict(dtgen.loader("test"), ctc_decode=False)
            from data import kaldi

            kaldi.generate_kaldi_assets(dtgen, predicts)

        elif args.train:
            model.summary(output_path, "summary.txt")

            start_time = datetime.datetime.now()

            h = model.fit(
                train_loader=dtgen.loader("train"),
                valid_loader=dtgen.loader("valid"),
                epochs=args.epochs,
                checkpoint=target_path,
                logdir=output_path,
                verbose=1,
            )

            total_time = datetime.datetime.now() - start_time

            loss = h["loss"]
            val_loss = h["val_loss"]

            min_val_loss = min(val_loss)
            min_val_loss_i = val_loss.index(min_val_loss)

            time_epoch = total_time / len(loss)
            total_item = dtgen.size["train"] + dtgen.size["valid"]

            if device.type == "cuda":
                peak_mem = torch.cuda.max_memory_allocated(device) / 1024 ** 3
            else:
                peak_mem = 0.0

            t_corpus = "\n".join(
                [
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
                    f"Peak GPU memory (GiB):   {peak_mem:.2f}",
                ]
            )

            with open(os.path.join(output_path, "train.txt"), "w") as lg:
                lg.write(t_corpus)
                print(t_corpus)

        elif args.test:
            start_time = datetime.datetime.now()

            predicts, _ = model.predict(dtgen.loader("test"), ctc_decode=True, verbose=1)
            predicts = [dtgen.tokenizer.decode(x[0]) for x in predicts]
            ground_truth = [x.decode() for x in dtgen.dataset["test"]["gt"]]

            total_time = datetime.datetime.now() - start_time

            with open(os.path.join(output_path, "predict.txt"), "w") as lg:
                for pd, gt in zip(predicts, ground_truth):
                    lg.write(f"TE_L {gt}\nTE_P {pd}\n")

            evaluate = evaluation.ocr_metrics(
                predicts=predicts,
                ground_truth=ground_truth,
                norm_accentuation=args.norm_accentuation,
                norm_punctuation=args.norm_punctuation,
            )

            e_corpus = "\n".join(
                [
                    f"Total test images:    {dtgen.size['test']}",
                    f"Total time:           {total_time}",
                    f"Time per item:        {total_time / dtgen.size['test']}\n",
                    f"Metrics:",
                    f"Character Error Rate: {evaluate[0]:.8f}",
                    f"Word Error Rate:      {evaluate[1]:.8f}",
                    f"Sequence Error Rate:  {evaluate[2]:.8f}",
                ]
            )

            with open(os.path.join(output_path, "evaluate.txt"), "w") as lg:
                lg.write(e_corpus)
                print(e_corpus)
