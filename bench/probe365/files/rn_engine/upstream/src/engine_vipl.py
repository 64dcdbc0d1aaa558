from tqdm import tqdm
import torch
import config


def train_fn(model, data_loader, optimizer, loss_fn):
    model.train()
    fin_loss = 0

    target_hr_list = []
    predicted_hr_list = []
    tk_iterator = tqdm(data_loader, total=len(data_loader))
    batched_data = []
    for batch in tk_iterator:
        for data in batch:
            # an item of the data is available as a dictionary
            for (key, value) in data.items():
                data[key] = value.to(config.DEVICE)

            optimizer.zero_grad()
            with torch.set_grad_enabled(True):
                outputs, gru_outputs = model(**{"st_maps": data["st_maps"]})
                # w/o GRU
                # loss = loss_fn(outputs.squeeze(0), data["target"])
                loss = loss_fn(outputs.squeeze(0), gru_outputs, data["target"])
                loss.backward()
                optimizer.step()
            # "For each face video, the avg of all HR (bpm) of individual clips are computed as the final HR result
            # target_hr_batch = list(map(lambda x: data['target'][x].mean().item(), range(config.BATCH_SIZE)))
            target_hr_list.append(data["target"].mean().item())

            # predicted_hr_batch = list(map(lambda x: outputs[x].squeeze(0).mean().item(), range(config.BATCH_SIZE)))
            predicted_hr_list.append(outputs.squeeze(0).mean().item())
            fin_loss += loss.item()

    return target_hr_list, predicted_hr_list, fin_loss / (len(data_loader) * config.BATCH_SIZE)


def eval_fn(model, data_loader, loss_fn):
    model.eval()
    fin_loss = 0
    target_hr_list = []
    predicted_hr_list = []
    with torch.no_grad():
        tk_iterator = tqdm(data_loader, total=len(data_loader))
        for batch in tk_iterator:
            for data in batch:
                for (key, value) in data.items():
                    data[key] = value.to(config.DEVICE)

                # with torch.set_grad_enabled(False):
                outputs, gru_outputs = model(**{"st_maps": data["st_maps"]})
                # _, batch_preds = torch.max(outputs.data, 1)
                loss = loss_fn(outputs.squeeze(0), gru_outputs, data["target"])
                fin_loss += loss.item()
                # target_hr_batch = list(map(lambda x: data['target'][x].mean().item(), range(config.BATCH_SIZE)))
                target_hr_list.append(data["target"].mean().item())

                # predicted_hr_batch = list(map(lambda x: outputs[x].squeeze(0).mean().item(), range(config.BATCH_SIZE)))
                predicted_hr_list.append(outputs.squeeze(0).mean().item())
        return target_hr_list, predicted_hr_list, fin_loss / (len(data_loader) * config.BATCH_SIZE), gru_outputs
