"""Zero/few-shot evaluation on C-Eval and CMMLU (multiple choice, next-token A/B/C/D logits).

    python eval/evaluate_chinese_mc.py -c Qwen/Qwen-7B -d data/ceval --task ceval --shots 5
"""
import argparse
import json
import os
import random

import numpy as np
import pandas as pd
import torch
from tqdm import tqdm
from transformers import AutoModelForCausalLM, AutoTokenizer
from transformers.generation import GenerationConfig

CHOICES = ["A", "B", "C", "D"]
torch.backends.cuda.matmul.allow_tf32 = True


def set_seed(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.cuda.manual_seed_all(seed)


def load_models_tokenizer(args):
    tokenizer = AutoTokenizer.from_pretrained(args.checkpoint_path, trust_remote_code=True)
    model = AutoModelForCausalLM.from_pretrained(
        args.checkpoint_path,
        device_map="auto",
        torch_dtype=torch.bfloat16,
        trust_remote_code=True,
        use_flash_attn=args.use_flash_attn,
    ).eval()
    model.generation_config = GenerationConfig.from_pretrained(args.checkpoint_path, trust_remote_code=True)
    model.generation_config.do_sample = False
    return model, tokenizer


def format_example(line, include_answer=True, task="ceval"):
    if task == "ceval":
        example = "问题：" + line["question"]
    else:
        example = "问题：" + line["Question"]
    for choice in CHOICES:
        example += f'\n{choice}. {line[choice]}'
    if include_answer:
        example += "\n答案：" + line["answer" if task == "ceval" else "Answer"] + "\n\n"
    else:
        example += "\n答案："
    return example


def generate_few_shot_prompt(k, subject, dev_df, task):
    prompt = f"以下是中国关于{subject}考试的单项选择题，请选出其中的正确答案。\n\n"
    if k == -1:
        k = dev_df.shape[0]
    for i in range(k):
        prompt += format_example(dev_df.iloc[i, :], include_answer=True, task=task)
    return prompt


def get_logits(tokenizer, model, inputs):
    input_ids = tokenizer(inputs, padding=False)["input_ids"]
    input_ids = torch.tensor(input_ids, device="cuda")
    tokens = {"input_ids": input_ids}
    outputs = model(input_ids)["logits"]
    logits = outputs[:, -1, :]
    log_probs = torch.nn.functional.softmax(logits, dim=-1)
    return log_probs, {"tokens": tokens}


@torch.no_grad()
def eval_subject(model, tokenizer, subject_name, test_df, k=5, dev_df=None, few_shot=False, task="ceval",
                 save_result_dir=None):
    result, score = [], []
    few_shot_prompt = generate_few_shot_prompt(k, subject_name, dev_df, task) if few_shot else ""
    all_probs = {"prob_A": [], "prob_B": [], "prob_C": [], "prob_D": []}
    choice_ids = [tokenizer(c)["input_ids"][-1] for c in CHOICES]
    for _, row in tqdm(test_df.iterrows(), total=len(test_df)):
        question = format_example(row, include_answer=False, task=task)
        full_prompt = few_shot_prompt + question
        output, _ = get_logits(tokenizer, model, [full_prompt])
        assert output.shape[0] == 1
        logits = output.flatten()
        softval = torch.nn.functional.softmax(logits[choice_ids], dim=0)
        if softval.dtype in {torch.bfloat16, torch.float16}:
            softval = softval.to(dtype=torch.float32)
        probs = softval.detach().cpu().numpy()
        for i, choice in enumerate(CHOICES):
            all_probs[f"prob_{choice}"].append(probs[i])
        pred = CHOICES[np.argmax(probs)]
        gold = row["answer"] if task == "ceval" else row["Answer"]
        if gold:
            score.append(1 if pred == gold else 0)
        result.append(pred)

    if save_result_dir:
        test_df["model_output"] = result
        for i, choice in enumerate(CHOICES):
            test_df[f"prob_{choice}"] = all_probs[f"prob_{choice}"]
        if score:
            test_df["correctness"] = score
        os.makedirs(save_result_dir, exist_ok=True)
        test_df.to_csv(os.path.join(save_result_dir, f"{subject_name}_result.csv"), encoding="utf-8", index=False)
    return score


def main(args):
    set_seed(args.seed)
    model, tokenizer = load_models_tokenizer(args)
    dev_dir = os.path.join(args.eval_data_path, "dev")
    test_dir = os.path.join(args.eval_data_path, "val" if args.task == "ceval" else "test")
    subjects = sorted(f.replace("_val.csv", "").replace("_test.csv", "").replace(".csv", "")
                      for f in os.listdir(test_dir))
    dev_suffix = "_dev.csv" if args.task == "ceval" else ".csv"
    test_suffix = "_val.csv" if args.task == "ceval" else ".csv"
    scores = {}
    for subject in subjects:
        dev_df = pd.read_csv(os.path.join(dev_dir, subject + dev_suffix))
        test_df = pd.read_csv(os.path.join(test_dir, subject + test_suffix))
        score = eval_subject(model, tokenizer, subject, test_df, k=args.shots, dev_df=dev_df,
                             few_shot=args.shots > 0, task=args.task,
                             save_result_dir=os.path.join("outs", args.task))
        scores[subject] = 100.0 * sum(score) / max(1, len(score))
        print(f"{subject}: {scores[subject]:.2f}")
        torch.cuda.empty_cache()
    avg = sum(scores.values()) / len(scores)
    print(f"AVERAGE ACC ({args.task}): {avg:.2f}")
    with open(os.path.join("outs", f"{args.task}_summary.json"), "w") as f:
        json.dump({"avg": avg, "subjects": scores}, f, ensure_ascii=False, indent=2)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Test HF checkpoint.")
    parser.add_argument("-c", "--checkpoint-path", type=str, default="Qwen/Qwen-7B")
    parser.add_argument("-s", "--seed", type=int, default=1234)
    parser.add_argument("-d", "--eval_data_path", type=str, required=True)
    parser.add_argument("--task", choices=["ceval", "cmmlu"], default="ceval")
    parser.add_argument("--shots", type=int, default=5)
    parser.add_argument("--use-flash-attn", dest="use_flash_attn", action="store_true")
    main(parser.parse_args())
