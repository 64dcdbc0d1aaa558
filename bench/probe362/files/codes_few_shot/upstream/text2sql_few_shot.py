import argparse
import os
import torch
import json
import time

from tqdm import tqdm
from transformers import AutoTokenizer, AutoModelForCausalLM
from utils.db_utils import check_sql_executability, detect_special_char
from utils.load_sft_dataset import prepare_inputs_and_labels, get_db_schema_sequence, get_content_sequence
from schema_item_filter import SchemaItemClassifierInference, filter_schema
from simcse import SimCSE

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

def text2sql_func(model, text2sql_input, tokenizer, max_tokens, max_new_tokens):
    inputs = tokenizer(text2sql_input, return_tensors="pt")
    input_length = inputs["input_ids"].shape[1]
    # keep the last `max_tokens - max_new_tokens` tokens so the prompt fits into the context window
    if input_length > max_tokens - max_new_tokens:
        inputs["input_ids"] = inputs["input_ids"][:, -(max_tokens - max_new_tokens):]
        inputs["attention_mask"] = inputs["attention_mask"][:, -(max_tokens - max_new_tokens):]
        input_length = inputs["input_ids"].shape[1]

    inputs = {key: value.to(model.device) for key, value in inputs.items()}

    with torch.no_grad():
        generate_ids = model.generate(
            **inputs,
            max_new_tokens = max_new_tokens,
            num_beams = 4,
            num_return_sequences = 4,
            use_cache = True,
            eos_token_id = tokenizer.eos_token_id
        )

    generated_sqls = tokenizer.batch_decode(generate_ids[:, input_length:], skip_special_tokens = True, clean_up_tokenization_spaces = False)

    return generated_sqls

def get_demonstrations(simsce_model, eval_set, demonstration_set, num_of_demonstrations):
    eval_questions = [data["question"] for data in eval_set]
    demonstration_questions = [data["question"] for data in demonstration_set]

    # the SimCSE encoder runs on the default GPU; build its index once
    simsce_model.build_index(demonstration_questions, device = "cuda", batch_size = 256)
    results = simsce_model.search(eval_questions, device = "cuda", threshold = 0.0, top_k = num_of_demonstrations)

    demonstration_ids = []
    for result in results:
        demonstration_ids.append([demonstration_questions.index(question) for question, _ in result])

    return demonstration_ids

if __name__ == "__main__":
    opt = parse_option()
    print(opt)

    max_tokens = opt.max_tokens
    max_new_tokens = opt.max_new_tokens

    eval_set = json.load(open(opt.dataset_path))
    demonstration_set = json.load(open(opt.demonstration_set_path))

    # filter schema items with the trained schema item classifier
    sic = SchemaItemClassifierInference(opt.sic_path)
    eval_set = filter_schema(eval_set, "eval", sic, opt.table_num, opt.column_num)
    demonstration_set = filter_schema(demonstration_set, "train", None, opt.table_num, opt.column_num)
    del sic
    torch.cuda.empty_cache()

    # retrieve the most similar demonstrations for each question
    simsce_model = SimCSE("princeton-nlp/sup-simcse-roberta-base")
    demonstration_ids = get_demonstrations(simsce_model, eval_set, demonstration_set, opt.num_of_demonstrations)
    del simsce_model
    torch.cuda.empty_cache()  # free the SimCSE encoder before loading the LLM

    tokenizer = AutoTokenizer.from_pretrained(opt.llm_path)
    model = AutoModelForCausalLM.from_pretrained(opt.llm_path, device_map = "auto", torch_dtype = torch.float16)
    model.eval()
    print(model.dtype)

    start_time = time.time()
    predicted_sqls = []
    for eval_data_idx, eval_data in tqdm(enumerate(eval_set)):
        text2sql_input = ""
        for demonstration_idx in demonstration_ids[eval_data_idx]:
            demonstration = demonstration_set[demonstration_idx]
            text2sql_input += get_db_schema_sequence(demonstration["schema"]) + "\n" + \
                get_content_sequence(demonstration["matched_contents"]) + "\n" + \
                demonstration["question"] + "\n" + demonstration["sql"] + "\n\n"
        text2sql_input += get_db_schema_sequence(eval_data["schema"]) + "\n" + \
            get_content_sequence(eval_data["matched_contents"]) + "\n" + eval_data["question"] + "\n"

        generated_sqls = text2sql_func(model, text2sql_input, tokenizer, max_tokens, max_new_tokens)
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

    torch.cuda.synchronize()
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
    else:
        with open("pred_sqls.txt", "w", encoding = 'utf-8') as f:
            for sql in predicted_sqls:
                f.write(sql + "\n")
