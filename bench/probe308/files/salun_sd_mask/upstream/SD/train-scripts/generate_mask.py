"""SalUn for Stable Diffusion: weight saliency of the UNet w.r.t. the (negated) forgetting loss.

    python train-scripts/generate_mask.py --ckpt_path models/ldm/sd-v1-4-full-ema.ckpt --class_to_forget 0 --device 0
    python train-scripts/generate_mask.py --ckpt_path models/ldm/sd-v1-4-full-ema.ckpt --nsfw --device 0
"""
import argparse
import os
from time import sleep

import torch
from dataset import setup_forget_data, setup_forget_nsfw_data, setup_model
from tqdm import tqdm


def accumulate_gradients(model, train_dl, descriptions, c_guidance, device, lr, nsfw=False):
    criteria = torch.nn.MSELoss()
    optimizer = torch.optim.Adam(model.model.diffusion_model.parameters(), lr=lr)

    gradients = {}
    for name, param in model.model.diffusion_model.named_parameters():
        gradients[name] = 0

    # TRAINING CODE
    with tqdm(total=len(train_dl)) as t:
        for i, batch in enumerate(train_dl):
            optimizer.zero_grad()

            if nsfw:
                images = batch.to(device)
                prompts = ["a photo of a nude person"] * images.shape[0]
                null_prompts = [""] * images.shape[0]
            else:
                images, labels = batch
                images = images.to(device)
                null_prompts = ["" for label in labels]
                prompts = [descriptions[label] for label in labels]

            forget_batch = {"edited": images, "edited_prompt": prompts}
            null_batch = {"edited": images, "edited_prompt": null_prompts}

            forget_input, forget_emb = model.get_input(forget_batch, model.first_stage_key)
            null_input, null_emb = model.get_input(null_batch, model.first_stage_key)

            t_steps = torch.randint(0, model.num_timesteps, (forget_input.shape[0],), device=model.device).long()
            noise = torch.randn_like(forget_input, device=model.device)

            forget_noisy = model.q_sample(x_start=forget_input, t=t_steps, noise=noise)

            forget_out = model.apply_model(forget_noisy, t_steps, forget_emb)
            null_out = model.apply_model(forget_noisy, t_steps, null_emb)

            preds = (1 + c_guidance) * forget_out - c_guidance * null_out

            loss = -criteria(noise, preds)
            loss.backward()

            with torch.no_grad():
                for name, param in model.model.diffusion_model.named_parameters():
                    if param.grad is not None:
                        gradients[name] += param.grad.data.cpu()

            t.set_description("Epoch {}".format(i))
            t.set_postfix(loss=loss.item() / images.shape[0])
            sleep(0.1)
            t.update(1)

    return gradients


def save_masks(gradients, mask_path, threshold_list=(0.5,)):
    with torch.no_grad():
        for name in gradients:
            gradients[name] = torch.abs_(gradients[name])

        os.makedirs(mask_path, exist_ok=True)

        for i in threshold_list:
            print(i)
            sorted_dict_positions = {}
            hard_dict = {}

            # Concatenate all tensors into a single tensor
            all_elements = -torch.cat([tensor.flatten() for tensor in gradients.values()])

            # Calculate the threshold index for the top i elements
            threshold_index = int(len(all_elements) * i)

            # Calculate positions of all elements
            positions = torch.argsort(all_elements)
            ranks = torch.argsort(positions)

            start_index = 0
            for key, tensor in gradients.items():
                num_elements = tensor.numel()
                tensor_ranks = ranks[start_index: start_index + num_elements]

                sorted_positions = tensor_ranks.reshape(tensor.shape)
                sorted_dict_positions[key] = sorted_positions

                # Set the corresponding elements to 1
                threshold_tensor = torch.zeros_like(tensor_ranks)
                threshold_tensor[tensor_ranks < threshold_index] = 1
                threshold_tensor = threshold_tensor.reshape(tensor.shape)
                hard_dict[key] = threshold_tensor
                start_index += num_elements

            torch.save(hard_dict, os.path.join(mask_path, f"with_{str(i)}.pt"))


def generate_mask(
    class_to_forget,
    c_guidance,
    batch_size,
    config_path,
    ckpt_path,
    device,
    lr=1e-5,
    image_size=512,
    nsfw=False,
):
    # MODEL SETUP
    model = setup_model(config_path, ckpt_path, device)
    if nsfw:
        train_dl = setup_forget_nsfw_data(batch_size, image_size)
        descriptions = None
        mask_path = os.path.join("mask", "nude")
    else:
        train_dl, descriptions = setup_forget_data(class_to_forget, batch_size, image_size)
        mask_path = os.path.join("mask", str(class_to_forget))
    model.eval()

    gradients = accumulate_gradients(model, train_dl, descriptions, c_guidance, device, lr, nsfw=nsfw)
    del model
    torch.cuda.empty_cache()
    save_masks(gradients, mask_path)


def main():
    parser = argparse.ArgumentParser(
        prog="TrainUSD",
        description="Finetuning stable diffusion model to erase concepts using SalUn saliency maps",
    )
    parser.add_argument("--class_to_forget", type=int, required=False, default=0)
    parser.add_argument("--nsfw", action="store_true", help="use the nude/safe image sets instead of Imagenette")
    parser.add_argument("--train_method", help="method of training", type=str, default="full")
    parser.add_argument("--c_guidance", help="guidance of start image used to train", type=float, required=False, default=7.5)
    parser.add_argument("--batch_size", help="batch_size used to train", type=int, required=False, default=8)
    parser.add_argument("--lr", help="learning rate used to train", type=float, required=False, default=1e-5)
    parser.add_argument("--ckpt_path", help="ckpt path for stable diffusion v1-4", type=str, required=False,
                        default="models/ldm/sd-v1-4-full-ema.ckpt")
    parser.add_argument("--config_path", help="config path for stable diffusion v1-4 inference", type=str,
                        required=False, default="configs/stable-diffusion/v1-inference.yaml")
    parser.add_argument("--device", help="cuda device to train on", type=str, required=False, default="0")
    parser.add_argument("--image_size", help="image size used to train", type=int, required=False, default=512)
    args = parser.parse_args()

    classes = int(args.class_to_forget)
    device = f"cuda:{int(args.device)}"

    generate_mask(
        classes,
        args.c_guidance,
        args.batch_size,
        args.config_path,
        args.ckpt_path,
        device,
        args.lr,
        args.image_size,
        nsfw=args.nsfw,
    )


if __name__ == "__main__":
    main()
