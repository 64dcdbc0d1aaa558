
import sys
import torch
import logging
import multiprocessing
from datetime import datetime

import test
import parser
import commons
from eigenplaces_model import eigenplaces_network
from datasets.test_dataset import TestDataset

torch.backends.cudnn.benchmark = True  # Provides a speedup

args = parser.parse_arguments(is_training=False)
start_time = datetime.now()
args.output_folder = f"logs/{args.save_dir}/{start_time.strftime('%Y-%m-%d_%H-%M-%S')}"
commons.make_deterministic(args.seed)
commons.setup_logging(args.output_folder, console="info")
logging.info(" ".join(sys.argv))
logging.info(f"Arguments: {args}")
logging.info(f"The outputs are being saved in {args.output_folder}")

#### Model
if args.resume_model == "torchhub":
    # Download the trained weights released with the paper (same as hubconf.py)
    model = torch.hub.load("gmberton/eigenplaces", "get_trained_model",
                           backbone=args.backbone, fc_output_dim=args.fc_output_dim)
else:
    model = eigenplaces_network.GeoLocalizationNet_(args.backbone, args.fc_output_dim)

    if args.resume_model is not None:
        logging.info(f"Loading model from {args.resume_model}")
        model_state_dict = torch.load(args.resume_model, map_location=args.device)
        model.load_state_dict(model_state_dict)
    else:
        logging.info("WARNING: You didn't provide a path to resume the model (--resume_model parameter). " +
                     "Evaluation will be computed using randomly initialized weights.")

logging.info(f"There are {torch.cuda.device_count()} GPUs and {multiprocessing.cpu_count()} CPUs.")
logging.info(f"Evaluating on {torch.cuda.get_device_name(torch.cuda.current_device())}")

model = model.to(args.device)

test_ds = TestDataset(args.test_set_folder, queries_folder="queries",
                      positive_dist_threshold=args.positive_dist_threshold,
                      image_size=args.image_size, resize_test_imgs=args.resize_test_imgs)

recalls, recalls_str = test.test(args, test_ds, model, args.num_preds_to_save)
logging.info(f"{test_ds}: {recalls_str}")

if args.device == "cuda":
    logging.info(f"Peak GPU memory: {torch.cuda.max_memory_reserved() / 2**20:.0f} MiB")

logging.info(f"Finished in {str(datetime.now() - start_time)[:-7]}")
