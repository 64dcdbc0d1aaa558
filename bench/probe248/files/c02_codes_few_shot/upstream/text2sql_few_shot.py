import argparse
import os
import torch
import json
import time
import numpy as np

from tqdm import tqdm
from simcse import SimCSE
from transformers import AutoTokenizer, AutoModelForCausalLM
from utils.db_utils import check_sql_executability, detect_special_char, get_db_schema_sequence, get_matched_content_sequence
from utils.nltk_utils import ner_tagger
from schema_item_filter import SchemaItemClassifierInference, filter_schema

def parse_option():
    parser = argparse.ArgumentParser()

    parser.add_argument('--llm_path', type = str)
    parser.add_argument('--sic_path', type = str)
    parser.add_argument('--table_num', type = int, default = 6)
    parser.add_argument('--column_num', type = int, default = 10)

    parser.add_argument('--dataset_path', type = str)
    parser.add_argument('--demonstration_set_path', type = str)
    parser.add_argument('--num_of_demonstrations', type = int)

    parser.add_argument('--max_tokens', type = int)
    parser.add_argument('--max_new_tokens', type = int)

    opt = parser.parse_args()

    return opt

def get_question_pattern_with_schema_linking(question, schema_linking_ids):
    """mask table/column mentions (e.g. "how many singers ..." -> "how many <mask> ...") so that
    demonstrations are retrieved by question *skeleton* rather than by domain words."""
    tokens = question.split()
    masked = [("<mask>" if idx in schema_linking_ids else tok) for idx, tok in enumerate(tokens)]
    return " ".join(masked)

def prepare_input_ids_and_attention_mask(tokenizer, input_seq, max_input_length, device):
    input_ids = tokenizer(input_seq , truncation = False)["input_ids"]

    if len(input_ids) <= max_input_length:
        input_ids = input_ids
        attention_mask = [1] * len(input_ids)
    else:
        if tokenizer.name_or_path == "THUDM/codegeex2-6b":
            input_ids = [64790, 64792] + input_ids[-(max_input_length-2):]
        else:
            input_ids = [tokenizer.bos_token_id] + input_ids[-(max_input_length-1):]

        attention_mask = [1] * max_input_length

    print("input length:", len(input_ids))

    return {
        "input_ids": torch.tensor([input_ids]).to(device), # torch.int64
        "attention_mask": torch.tensor([attention_mask]).to(device) # torch.int64
    }

def text2sql_func(model, text2sql_input, tokenizer, max_tokens, max_new_tokens):
    inputs = prepare_input_ids_and_attention_mask(
        tokenizer,
        text2sql_input,
        max_tokens - max_new_tokens,
        model.device
    )

    input_length = inputs["input_ids"].shape[1]

    with torch.no_grad():
        generate_ids = model.generate(
            **inputs,
            max_new_tokens = max_new_tokens,
            num_beams = 4,
            num_return_sequences = 4,
            use_cache = True,
            eos_token_id = tokenizer.convert_tokens_to_ids(";")
        )

    generated_sqls = tokenizer.batch_decode(generate_ids[:, input_length:], skip_special_tokens = True, clean_up_tokenization_spaces = False)

    return generated_sqls

if __name__ == "__main__":
    opt = parse_option()
    print(opt)
    max_tokens = opt.max_tokens
    max_new_tokens = opt.max_new_tokens

    eval_set = json.load(open(opt.dataset_path))
    demonstration_set = json.load(open(opt.demonstration_set_path))

    if opt.sic_path is not None:
        # filter the schema of each example with the schema item classifier
        sic = SchemaItemClassifierInference(opt.sic_path)
        eval_set = filter_schema(eval_set, "eval", sic, opt.table_num, opt.column_num)
        demonstration_set = filter_schema(demonstration_set, "train", None, opt.table_num, opt.column_num)
        del sic
        torch.cuda.empty_cache()

    # similarity model used to retrieve demonstrations (question skeletons)
    simsce_model = SimCSE("princeton-nlp/sup-simcse-roberta-base", device = "cuda:0")

    demonstration_questions = [data["question"] for data in demonstration_set]
    demonstration_question_skeletons = [get_question_pattern_with_schema_linking(data["question"], data.get("schema_linking_ids", [])) for data in demonstration_set]
    eval_question_skeletons = [get_question_pattern_with_schema_linking(data["question"], data.get("schema_linking_ids", [])) for data in eval_set]

    # (num of eval set, num of demonstration set)
    similarities = np.maximum(
        simsce_model.similarity([data["question"] for data in eval_set], demonstration_questions),
        simsce_model.similarity(eval_question_skeletons, demonstration_question_skeletons)
    )
    # remove the similarity model from the GPU before loading the LLM
    del simsce_model
    torch.cuda.empty_cache()  # make room for the LLM

    tokenizer = AutoTokenizer.from_pretrained(opt.llm_path)
    model = AutoModelForCausalLM.from_pretrained(opt.llm_path, device_map = "auto", torch_dtype = torch.float16)

    model.eval()
    print(model.dtype)

    predicted_sqls = []
    start_time = time.time()
    for eval_data_idx, eval_data in tqdm(enumerate(eval_set)):
        top_k_indices = sorted(range(len(similarities[eval_data_idx])), key = lambda x: similarities[eval_data_idx][x], reverse = True)[:opt.num_of_demonstrations]
        print(top_k_indices)
        print(similarities[eval_data_idx][top_k_indices])

        input_seq = ""
        for idx in top_k_indices:
            demonstration = demonstration_set[idx]
            input_seq += demonstration["schema_sequence"] + "\n" + demonstration["content_sequence"] + "\n" + \
                demonstration["text"] + "\n" + demonstration["sql"] + "\n\n"

        input_seq += eval_data["schema_sequence"] + "\n" + eval_data["content_sequence"] + "\n" + eval_data["text"] + "\n"
        print(input_seq)
        print("-"*30)

        generated_sqls = text2sql_func(model, input_seq, tokenizer, max_tokens, max_new_tokens)
        generated_sqls = [generated_sql.split(";")[0].strip() for generated_sql in generated_sqls]
        generated_sqls = [generated_sql + ";" if not generated_sql.endswith(";") else generated_sql for generated_sql in generated_sqls]

        final_generated_sql = None
        for generated_sql in generated_sqls:
            execution_error = check_sql_executability(generated_sql, eval_data["db_path"])
            if execution_error is None: # the generated sql has no execution errors, we will return it as the final generated sql
                final_generated_sql = generated_sql
                break

        if final_generated_sql is None:
            if generated_sqls[0].strip() != "":
                final_generated_sql = generated_sqls[0].strip()
            else:
                final_generated_sql = "SQL placeholder"

        print(final_generated_sql)
        predicted_sqls.append(final_generated_sql)
    end_time = time.time()
    print("LLM name: {} | Total time: {}s | Example number: {} | Average time: {}s".format(
        opt.llm_path,
        end_time - start_time,
        len(eval_set),
        (end_time - start_time) / len(eval_set)
        )
    )

    print("LLM name:", opt.llm_path)
    if "bird" in opt.dataset_path:
        bird_results_dict = dict()
        for idx, (data, predicted_sql) in enumerate(zip(eval_set, predicted_sqls)):
            bird_results_dict[idx] = predicted_sql + "\t----- bird -----\t" + data["db_id"]
        with open("predict_dev.json", "w", encoding = 'utf-8') as f:
            f.write(json.dumps(bird_results_dict, indent = 2, ensure_ascii = False))
        os.system("sh bird_evaluation/run_evaluation.sh predict_dev.json")
    elif "spider_dev" in opt.dataset_path:
        with open("pred_sqls.txt", "w", encoding = 'utf-8') as f:
            for sql in predicted_sqls:
                f.write(sql + "\n")
        print("Execution accuracy:")
        os.system('python -u test_suite_sql_eval/evaluation.py --gold ./data/sft_data_collections/spider/dev_gold.sql --pred pred_sqls.txt --db ./data/sft_data_collections/spider/database --etype exec')
        print("Test suit execution accuracy:")
        os.system('python -u test_suite_sql_eval/evaluation.py --gold ./data/sft_data_collections/spider/dev_gold.sql --pred pred_sqls.txt --db test_suite_sql_eval/test_suite_database --etype exec')
