import argparse
import json
import os

import numpy as np


def parse_args():
    parser = argparse.ArgumentParser(description="3-in-1 evaluation (BLIP-VQA + UniDet + CLIPScore).")
    parser.add_argument(
        "--outpath",
        type=str,
        default=None,
        required=True,
        help="Path to output the 3-in-1 score",
    )
    parser.add_argument(
        "--data_path",
        type=str,
        default="examples/dataset/complex_val.txt",
        help="Prompt file of the complex category",
    )
    args = parser.parse_args()
    return args


def load_answers(path):
    with open(path, "r") as f:
        data = json.load(f)
    return {int(d['question_id']): float(d['answer']) for d in data}


def main():
    args = parse_args()
    outpath = args.outpath

    # attribute binding: BLIP-VQA, spatial: UniDet, non-spatial: CLIPScore
    attribute_score = load_answers(os.path.join(outpath, "annotation_blip", "vqa_result.json"))
    spatial_score = load_answers(os.path.join(outpath, "labels", "annotation_obj_detection_2d", "vqa_result.json"))
    action_score = load_answers(os.path.join(outpath, "annotation_clip", "vqa_result.json"))

    keys = sorted(set(attribute_score) & set(spatial_score) & set(action_score))
    if len(keys) != len(attribute_score):
        print(f"warning: {len(attribute_score) - len(keys)} samples are missing in one of the sub-scores")

    average_score = []
    result = []
    for k in keys:
        s = (attribute_score[k] + spatial_score[k] + action_score[k]) / 3
        average_score.append(s)
        result.append({"question_id": k, "answer": '{:.4f}'.format(s)})

    save_dir = os.path.join(outpath, "annotation_3_in_1")
    os.makedirs(save_dir, exist_ok=True)
    with open(os.path.join(save_dir, "vqa_result.json"), "w") as f:
        json.dump(result, f)

    final = float(np.mean(average_score)) if average_score else 0.0
    with open(os.path.join(save_dir, "score_avg.txt"), "w") as f:
        f.write("score avg:" + str(final))
    print("3-in-1 score avg:", final)


if __name__ == "__main__":
    main()
