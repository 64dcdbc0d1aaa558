import logging
import os

import torch
from tqdm import tqdm

from smoke.utils import comm
from smoke.utils.timer import Timer, get_time_str
from smoke.data.datasets.evaluation import evaluate


def compute_on_dataset(model, data_loader, device, timer=None):
    model.eval()
    results_dict = {}
    cpu_device = torch.device("cpu")
    for _, batch in enumerate(tqdm(data_loader)):
        images, targets, image_ids = batch["images"], batch["targets"], batch["img_ids"]
        images = images.to(device)
        with torch.no_grad():
            if timer:
                timer.tic()
            output = model(images, targets)
            if timer:
                torch.cuda.synchronize()
                timer.toc()
            output = output.to(cpu_device)
        results_dict.update(
            {img_id: output for img_id in image_ids}
        )
    return results_dict


def _accumulate_predictions_from_multiple_gpus(predictions_per_gpu):
    all_predictions = comm.all_gather(predictions_per_gpu)
    if not comm.is_main_process():
        return

    # merge the list of dicts
    predictions = {}
    for p in all_predictions:
        predictions.update(p)
    # KITTI image ids are zero-padded strings, so only check for duplicates/gaps in count
    if len(predictions) != sum(len(p) for p in all_predictions):
        logger = logging.getLogger("smoke.inference")
        logger.warning(
            "Some images were evaluated by more than one process; "
            "duplicated predictions were merged"
        )

    return predictions


def inference(
        model,
        data_loader,
        dataset_name,
        eval_types=("detections",),
        device="cuda",
        output_folder=None,

):
    device = torch.device(device)
    num_devices = comm.get_world_size()
    logger = logging.getLogger("smoke.inference")
    dataset = data_loader.dataset
    logger.info("Start evaluation on {} dataset({} images).".format(dataset_name, len(dataset)))
    predict_folder = os.path.join(output_folder, "data")
    os.makedirs(predict_folder, exist_ok=True)

    total_timer = Timer()
    inference_timer = Timer()
    total_timer.tic()
    predictions = compute_on_dataset(model, data_loader, device, inference_timer)
    comm.synchronize()

    total_time = total_timer.toc()
    total_time_str = get_time_str(total_time)
    logger.info(
        "Total run time: {} ({} s / img per device, on {} devices)".format(
            total_time_str, total_time * num_devices / len(dataset), num_devices
        )
    )
    total_infer_time = get_time_str(inference_timer.total_time)
    logger.info(
        "Model inference time: {} ({} s / img per device, on {} devices)".format(
            total_infer_time,
            inference_timer.total_time * num_devices / len(dataset),
            num_devices,
        )
    )
    predictions = _accumulate_predictions_from_multiple_gpus(predictions)
    if not comm.is_main_process():
        return

    for image_id, prediction in predictions.items():
        predict_txt = image_id + '.txt'
        predict_txt = os.path.join(predict_folder, predict_txt)
        generate_kitti_3d_detection(prediction, predict_txt)

    return evaluate(eval_type=eval_types,
                    dataset=dataset,
                    predictions=predictions,
                    output_folder=output_folder, )


def generate_kitti_3d_detection(prediction, predict_txt):
    with open(predict_txt, 'w', newline='') as f:
        if len(prediction) == 0:
            return
        ID_TYPE_CONVERSION = {
            0: 'Car',
            1: 'Cyclist',
            2: 'Pedestrian',
        }
        for p in prediction:
            p = p.numpy()
            p = p.round(4)
            type = ID_TYPE_CONVERSION[int(p[0])]
            row = [type, 0, 0] + p[1:].tolist()
            f.write(' '.join(str(v) for v in row))
            f.write('\n')
