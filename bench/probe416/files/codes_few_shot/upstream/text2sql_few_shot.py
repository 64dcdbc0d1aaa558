import argparse
import os
import torch
import json
import time
import copy
import numpy as np

from tqdm import tqdm
from transformers import AutoTokenizer, AutoModelForCausalLM
from simcse import SimCSE
from utils.db_utils import check_sql_executability, get_db_schema_sequence, get_matched_content_sequence, detect_special_char
from utils.load_sft_dataset import prepare_inputs_and_labels
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

def post_process(sql, schema_items):
    sql = sql.replace("\n", " ")
    for table in schema_items:
        for column_name in table["column_names"]:
            if detect_special_char(column_name) and column_name in sql:
                sql = sql.replace(column_name, "`"+column_name+"`")

    while "``" in sql:
        sql = sql.replace("``", "`")

    return sql

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

    print("len(input_ids):", len(input_ids))

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
            eos_token_id = tokenizer.convert_tokens_to_ids(["\n"])[0]
        )

    generated_sqls = tokenizer.batch_decode(generate_ids[:, input_length:], skip_special_tokens = True, clean_up_tokenization_spaces = False)
    # print(tokenizer.decode(generate_ids[0]))
    return generated_sqls

if __name__ == "__main__":
    opt = parse_option()
    print(opt)
    max_tokens = opt.max_tokens
    max_new_tokens = opt.max_new_tokens

    tokenizer = AutoTokenizer.from_pretrained(opt.llm_path)
    model = AutoModelForCausalLM.from_pretrained(opt.llm_path, device_map = "auto", torch_dtype = torch.float16)
    model.eval()

    # load the evaluation set
    eval_set = json.load(open(opt.dataset_path))
    eval_set_questions = [data["question"] for data in eval_set]
    eval_set_db_ids = [data["db_id"] for data in eval_set]
    print("length of evaluation set:", len(eval_set))

    # load the demonstration pool
    demonstration_set = json.load(open(opt.demonstration_set_path))
    demonstration_set_questions = [data["question"] for data in demonstration_set]
    print("length of demonstration set:", len(demonstration_set))

    if opt.sic_path is not None:
        sic = SchemaItemClassifierInference(opt.sic_path)
        eval_set = filter_schema(eval_set, "eval", sic, opt.table_num, opt.column_num)
        demonstration_set = filter_schema(demonstration_set, "train", None, opt.table_num, opt.column_num)
        del sic
        torch.cuda.empty_cache()  # free the classifier before loading SimCSE

    # SimCSE embeddings of questions are used to retrieve the most similar demonstrations
    simsce_model = SimCSE("princeton-nlp/sup-simcse-roberta-base")
    question_similarities = simsce_model.similarity(eval_set_questions, demonstration_set_questions)
    # remove the simcse model from GPU memory
    del simsce_model
    torch.cuda.empty_cache()

    predicted_sqls = []
    start_time = time.time()
    for eval_data_idx, eval_data in tqdm(enumerate(eval_set)):
        top_k_indices = sorted(range(len(question_similarities[eval_data_idx])),
            key = lambda x: question_similarities[eval_data_idx][x], reverse = True)[:opt.num_of_demonstrations]
        print(top_k_indices)
        print(question_similarities[eval_data_idx][top_k_indices])

        input_seq = ""
        for idx in top_k_indices:
            demonstration = demonstration_set[idx]
            demonstration_seq = demonstration["schema_sequence"] + "\n" + demonstration["content_sequence"] + "\n" + \
                demonstration["text"] + "\n" + demonstration["sql"] + "\n\n"
            input_seq += demonstration_seq

        input_seq += eval_data["schema_sequence"] + "\n" + eval_data["content_sequence"] + "\n" + eval_data["text"] + "\n"

        generated_sqls = text2sql_func(model, input_seq, tokenizer, max_tokens, max_new_tokens)
        generated_sqls = [post_process(generated_sql, eval_data["schema"]["schema_items"]) for generated_sql in generated_sqls]

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
        print("Execution accuarcy:")
        os.system('python -u test_suite_sql_eval/evaluation.py --gold ./data/sft_data_collections/spider/dev_gold.sql --pred pred_sqls.txt --db ./data/sft_data_collections/spider/database --etype exec')
        print("Test suit execution accuarcy:")
        os.system('python -u test_suite_sql_eval/evaluation.py --gold ./data/sft_data_collections/spider/dev_gold.sql --pred pred_sqls.txt --db test_suite_sql_eval/test_suite_database --etype exec')
