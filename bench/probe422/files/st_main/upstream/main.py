import numpy as np
import argparse
from tqdm import tqdm
import os, shutil
import random
import torch
import torch.nn as nn
from data_loader import get_dataloaders
from SelfTalk import SelfTalk


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False


def trainer(args, train_loader, dev_loader, model, optimizer, criterion, epoch=100):
    save_path = os.path.join(args.dataset, args.save_path)
    if os.path.exists(save_path):
        shutil.rmtree(save_path)
    os.makedirs(save_path)

    train_subjects_list = [i for i in args.train_subjects.split(" ")]
    iteration = 0
    best_loss = float("inf")
    for e in range(epoch + 1):
        loss_log = []
        model.train()
        pbar = tqdm(enumerate(train_loader), total=len(train_loader))
        optimizer.zero_grad()

        for i, (audio, vertice, template, one_hot, file_name) in pbar:
            iteration += 1
            audio, vertice = audio.to(args.device), vertice.to(args.device)
            template, one_hot = template.to(args.device), one_hot.to(args.device)
            vertice_out, vertice, lip_features, text_hidden_states, logits, text_logits = model(audio, template, vertice)
            # reconstruction + velocity losses on the mesh
            loss1 = criterion(vertice_out, vertice)
            vel_pred = vertice_out[:, 1:, :] - vertice_out[:, :-1, :]
            vel_gt = vertice[:, 1:, :] - vertice[:, :-1, :]
            loss2 = criterion(vel_pred, vel_gt)
            # lip-reading consistency: features of the predicted lips vs. the speech-recognition features
            loss3 = criterion(lip_features, text_hidden_states)
            log_probs = torch.log_softmax(logits, dim=-1)
            text_log_probs = torch.log_softmax(text_logits, dim=-1)
            loss4 = nn.functional.kl_div(log_probs, text_log_probs, reduction="batchmean", log_target=True)
            loss = torch.mean(1000 * loss1 + 1000 * loss2 + 0.001 * loss3 + 0.0001 * loss4)
            loss.backward()
            loss_log.append(loss.item())
            if i % args.gradient_accumulation_steps == 0:
                optimizer.step()
                optimizer.zero_grad()

            pbar.set_description(
                "(Epoch {}, iteration {}) TRAIN LOSS:{:.8f}, loss1:{:.8f}, loss2:{:.8f}, loss3:{:.8f}".format(
                    (e + 1), iteration, np.mean(loss_log), loss1.item(), loss2.item(), loss3.item()))

        # validation
        valid_loss_log = []
        model.eval()
        with torch.no_grad():
            for audio, vertice, template, one_hot_all, file_name in dev_loader:
                audio, vertice = audio.to(args.device), vertice.to(args.device)
                template = template.to(args.device)
                vertice_out, vertice, lip_features, text_hidden_states, logits, text_logits = model(audio, template, vertice)
                loss = criterion(vertice_out, vertice)
                valid_loss_log.append(loss.item())

        current_loss = np.mean(valid_loss_log)
        if current_loss < best_loss:
            best_loss = current_loss
            torch.save(model.state_dict(), os.path.join(save_path, 'best_model.pth'))
        if (e > 0 and e % 25 == 0) or e == args.max_epoch:
            torch.save(model.state_dict(), os.path.join(save_path, '{}_model.pth'.format(e)))

        print("epoch: {}, current loss:{:.8f}, best loss:{:.8f}".format(e + 1, current_loss, best_loss))
        if args.empty_cache:
            torch.cuda.empty_cache()
    return model


@torch.no_grad()
def test(args, model, test_loader, epoch):
    result_path = os.path.join(args.dataset, args.result_path)
    if os.path.exists(result_path):
        shutil.rmtree(result_path)
    os.makedirs(result_path)

    save_path = os.path.join(args.dataset, args.save_path)
    train_subjects_list = [i for i in args.train_subjects.split(" ")]

    model.load_state_dict(torch.load(os.path.join(save_path, 'best_model.pth'), map_location=args.device))
    model = model.to(torch.device(args.device))
    model.eval()

    for audio, vertice, template, one_hot_all, file_name in test_loader:
        audio, vertice, template = audio.to(args.device), vertice.to(args.device), template.to(args.device)
        prediction, lip_features, logits = model.predict(audio, template)
        prediction = prediction.squeeze()  # (seq_len, V*3)
        np.save(os.path.join(result_path, file_name[0].split(".")[0] + ".npy"), prediction.detach().cpu().numpy())


def count_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def main():
    parser = argparse.ArgumentParser(
        description='SelfTalk: A Self-Supervised Commutative Training Diagram to Comprehend 3D Talking Faces')
    parser.add_argument("--lr", type=float, default=0.0001, help='learning rate')
    parser.add_argument("--dataset", type=str, default="vocaset", help='vocaset or BIWI')
    parser.add_argument("--vertice_dim", type=int, default=5023 * 3,
                        help='number of vertices - 5023*3 for vocaset; 23370*3 for BIWI')
    parser.add_argument("--feature_dim", type=int, default=512, help='512 for vocaset; 1024 for BIWI')
    parser.add_argument("--period", type=int, default=30, help='period in PPE - 30 for vocaset; 25 for BIWI')
    parser.add_argument("--wav_path", type=str, default="wav", help='path of the audio signals')
    parser.add_argument("--vertices_path", type=str, default="vertices_npy", help='path of the ground truth')
    parser.add_argument("--gradient_accumulation_steps", type=int, default=1, help='gradient accumulation')
    parser.add_argument("--max_epoch", type=int, default=100, help='number of epochs')
    parser.add_argument("--gpu", type=str, default=None, help='gpu id(s), e.g. 0 or 0,1 (default: inherit)')
    parser.add_argument("--device", type=str, default="cuda")
    parser.add_argument("--seed", type=int, default=3407)
    parser.add_argument("--empty_cache", action="store_true", help='release cached GPU memory after every epoch')
    parser.add_argument("--template_file", type=str, default="templates.pkl", help='path of the personalized templates')
    parser.add_argument("--save_path", type=str, default="save", help='path of the trained models')
    parser.add_argument("--result_path", type=str, default="result", help='path to the predictions')
    parser.add_argument("--train_subjects", type=str, default="FaceTalk_170728_03272_TA"
                                                               " FaceTalk_170904_00128_TA FaceTalk_170725_00137_TA FaceTalk_170915_00223_TA"
                                                               " FaceTalk_170811_03274_TA FaceTalk_170913_03279_TA"
                                                               " FaceTalk_170904_03276_TA FaceTalk_170912_03278_TA")
    parser.add_argument("--val_subjects", type=str, default="FaceTalk_170811_03275_TA"
                                                             " FaceTalk_170908_03277_TA")
    parser.add_argument("--test_subjects", type=str, default="FaceTalk_170809_00138_TA"
                                                              " FaceTalk_170731_00024_TA")
    args = parser.parse_args()

    if args.gpu is not None:
        os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu
    seed_everything(args.seed)

    # build model
    model = SelfTalk(args)
    print("model parameters: ", count_parameters(model))

    # to cuda
    assert (torch.cuda.is_available())
    model = model.to(torch.device(args.device))

    # load data
    dataset = get_dataloaders(args)
    # loss
    criterion = nn.MSELoss()

    # Train the model
    optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, model.parameters()), lr=args.lr)
    model = trainer(args, dataset["train"], dataset["valid"], model, optimizer, criterion, epoch=args.max_epoch)

    test(args, model, dataset["test"], epoch=args.max_epoch)


if __name__ == "__main__":
    main()
