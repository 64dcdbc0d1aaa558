import argparse
import json
import os
import random
from pathlib import Path

import spacy
import torch
from PIL import Image
from tqdm import tqdm
from lavis.models import load_model_and_preprocess


def parse_args():
    parser = argparse.ArgumentParser(description="BLIP vqa evaluation.")
    parser.add_argument(
        "--out_dir",
        type=str,
        default=None,
        required=True,
        help="Path to output BLIP vqa score",
    )
    parser.add_argument(
        "--np_num",
        type=int,
        default=8,
        help="Noun phrase number, can be greater or equal to the actual noun phrase number",
    )
    parser.add_argument(
        "--batch_size",
        type=int,
        default=32,
    )
    args = parser.parse_args()
    return args


def Create_annotation_for_BLIP(image_folder, outpath, np_index=None):
    nlp = spacy.load("en_core_web_sm")

    annotations = []
    file_names = os.listdir(image_folder)
    file_names.sort(key=lambda x: int(x.split("_")[-1].split('.')[0]))  # sort

    cnt = 0

    # output annotation.json
    for file_name in file_names:
        image_dict = {}
        image_dict['image'] = image_folder + file_name
        image_dict['question_id'] = cnt
        f = file_name.split('_')[0]
        doc = nlp(f)

        noun_phrases = []
        for chunk in doc.noun_chunks:
            if chunk.text not in ['top', 'the side', 'the left', 'the right']:  # todo remove some phrases
                noun_phrases.append(chunk.text)
        if len(noun_phrases) > np_index:
            q_tmp = noun_phrases[np_index]
            image_dict['question'] = f'{q_tmp}?'
        else:
            image_dict['question'] = ''

        image_dict['dataset'] = "color"
        cnt += 1

        annotations.append(image_dict)

    print('Number of Processed Images:', len(annotations))

    json_file = json.dumps(annotations)
    with open(f'{outpath}/vqa_test.json', 'w') as f:
        f.write(json_file)


def VQA(annotation_file, result_dir, batch_size=32):
    device = torch.device("cuda") if torch.cuda.is_available() else "cpu"
    model, vis_processors, txt_processors = load_model_and_preprocess(
        name="blip_vqa", model_type="vqav2", is_eval=True, device=device)

    with open(annotation_file) as f:
        annotations = json.load(f)

    results = []
    for start in tqdm(range(0, len(annotations), batch_size), desc="BLIP-VQA"):
        chunk = annotations[start:start + batch_size]
        questions = [a['question'] for a in chunk]
        images = [vis_processors["eval"](Image.open(a['image']).convert("RGB")) for a in chunk]
        image = torch.stack(images).to(device)
        question = [txt_processors["eval"](q) for q in questions]
        with torch.no_grad():
            answers, probs = model.predict_answers(
                samples={"image": image, "text_input": question},
                inference_method="rank",
                answer_list=["yes", "no"],
                num_ans_candidates=2,
                return_probs=True,
            )
        for a, ans, p in zip(chunk, answers, probs):
            # probability of "yes"
            results.append({"question_id": a['question_id'], "answer": float(p[0]), "pred": ans})

    os.makedirs(result_dir, exist_ok=True)
    with open(os.path.join(result_dir, "result.json"), "w") as f:
        json.dump(results, f)
    return os.path.join(result_dir, "result.json")


def main():
    args = parse_args()
    np_index = args.np_num  # how many noun phrases

    answer = []
    sample_num = len(os.listdir(os.path.join(args.out_dir, "samples")))
    reward = torch.zeros((sample_num, np_index)).to(device='cuda')

    out_dir = args.out_dir

    order = "_blip"  # rename file
    for i in tqdm(range(np_index)):
        print(f"start VQA{i + 1}/{np_index}!")
        os.makedirs(f"{out_dir}/annotation{i + 1}{order}", exist_ok=True)
        os.makedirs(f"{out_dir}/annotation{i + 1}{order}/VQA/", exist_ok=True)
        Create_annotation_for_BLIP(
            f"{out_dir}/samples/",
            f"{out_dir}/annotation{i + 1}{order}",
            np_index=i,
        )
        answer_tmp = VQA(f"{out_dir}/annotation{i + 1}{order}/vqa_test.json",
                         f"{out_dir}/annotation{i + 1}{order}/VQA/", batch_size=args.batch_size)
        answer.append(answer_tmp)

        with open(f"{out_dir}/annotation{i + 1}{order}/VQA/result.json", "r") as file:
            r = json.load(file)
        with open(f"{out_dir}/annotation{i + 1}{order}/vqa_test.json", "r") as file:
            r_tmp = json.load(file)
        for k in range(len(r)):
            if (r_tmp[k]['question'] != ''):
                reward[k][i] = float(r[k]["answer"])
            else:
                reward[k][i] = 1
        print(f"end VQA{i + 1}/{np_index}!")
    reward_final = reward[:, 0]
    for i in range(1, np_index):
        reward_final *= reward[:, i]

    # output final json
    with open(f"{out_dir}/annotation{np_index}{order}/VQA/result.json", "r") as file:
        r = json.load(file)
    reward_after = 0
    for k in range(len(r)):
        r[k]["answer"] = '{:.4f}'.format(reward_final[k].item())
        reward_after += float(r[k]["answer"])
    os.makedirs(f"{out_dir}/annotation_blip", exist_ok=True)
    with open(f"{out_dir}/annotation_blip/vqa_result.json", "w") as file:
        json.dump(r, file)

    # calculate avg of BLIP-VQA as BLIP-VQA score
    print("BLIP-VQA score:", reward_after / len(r), '!\n')
    with open(f"{out_dir}/annotation_blip/blip_vqa_score.txt", "w") as file:
        file.write("BLIP-VQA score:" + str(reward_after / len(r)))


if __name__ == "__main__":
    main()
