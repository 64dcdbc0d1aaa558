"""llmstep: [L]LM proofstep suggestions in Lean.

Runs a small HTTP server that receives the current tactic state (and the
tactic prefix typed so far) from the Lean `llmstep` tactic and returns a list
of suggested next tactics, GPT-f style: the model is prompted with
"[GOAL]<state>[PROOFSTEP]<prefix>" and samples completions.
"""
from http.server import HTTPServer, BaseHTTPRequestHandler
import argparse
import json
import os
import time

import torch
import transformers

DEFAULT_MODEL = 'wellecks/llmstep-mathlib4-pythia2.8b'


def load_hf(hf_model):
    print("Loading model...")
    if torch.cuda.is_available():
        model = transformers.GPTNeoXForCausalLM.from_pretrained(hf_model, torch_dtype=torch.bfloat16).cuda()
    else:
        model = transformers.GPTNeoXForCausalLM.from_pretrained(hf_model)
    tokenizer = transformers.GPTNeoXTokenizerFast.from_pretrained(hf_model)

    model.eval()
    print("Done.")
    return model, tokenizer


def load_vllm(model_name):
    import vllm
    print("Loading model with vLLM...")
    model = vllm.LLM(
        model=model_name,
        tensor_parallel_size=1,
        dtype='bfloat16',
        gpu_memory_utilization=0.45,
    )
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_name)
    print("Done.")
    return model, tokenizer


def hf_generate(
    model,
    tokenizer,
    prompt,
    temperatures,
    num_samples,
    max_new_tokens=128
):
    input_ids = tokenizer.encode(prompt, return_tensors='pt').to(model.device)
    texts = []
    for temp in temperatures:
        out = model.generate(
            input_ids,
            max_new_tokens=max_new_tokens,
            do_sample=temp > 0,
            temperature=temp,
            pad_token_id=tokenizer.eos_token_id,
            num_return_sequences=num_samples if temp > 0 else 1,
            output_scores=True,
            return_dict_in_generate=True,
        )
        output_tokens = out.sequences[:, input_ids.shape[1]:]
        texts.extend(tokenizer.batch_decode(
            output_tokens,
            skip_special_tokens=True
        ))
    texts = _unique_sorted(texts)
    return texts


def vllm_generate(
    model,
    tokenizer,
    prompt,
    temperatures,
    num_samples,
    max_new_tokens=128
):
    import vllm
    texts = []
    for temp in temperatures:
        params = vllm.SamplingParams(
            n=num_samples if temp > 0 else 1,
            temperature=temp,
            max_tokens=max_new_tokens,
            stop=['\n'],
        )
        outputs = model.generate([prompt], params, use_tqdm=False)
        texts.extend([o.text for o in outputs[0].outputs])
    texts = _unique_sorted(texts)
    return texts


def _unique_sorted(texts):
    texts_ = []
    for t in texts:
        if t not in texts_:
            texts_.append(t)
    return texts_


def llmstep_prompt(tactic_state, prefix):
    return '[GOAL]%s[PROOFSTEP]%s' % (tactic_state, prefix)


def get_config(args):
    config = {
        'LLMSTEP_MODEL': args.hf_model,
        'LLMSTEP_TEMPERATURES': args.temperatures,
        'LLMSTEP_NUM_SAMPLES': args.num_samples,
        'LLMSTEP_PROMPT': llmstep_prompt,
        'LLMSTEP_HOST': args.host,
        'LLMSTEP_PORT': args.port,
    }
    return config


class LLMStepServer(HTTPServer):
    def __init__(
        self, model, tokenizer, generate_function, config
    ):
        self.model = model
        self.tokenizer = tokenizer
        self.generate_function = generate_function
        self.config = config
        address = (config['LLMSTEP_HOST'], config['LLMSTEP_PORT'])
        super().__init__(address, LLMStepRequestHandler)


class LLMStepRequestHandler(BaseHTTPRequestHandler):
    def process_request(self, data):
        config = self.server.config
        prompt = config['LLMSTEP_PROMPT'](data["tactic_state"], data["prefix"])
        texts = self.server.generate_function(
            model=self.server.model,
            tokenizer=self.server.tokenizer,
            prompt=prompt,
            temperatures=config['LLMSTEP_TEMPERATURES'],
            num_samples=config['LLMSTEP_NUM_SAMPLES']
        )
        texts = [data["prefix"] + text for text in texts]
        response = {"suggestions": texts}
        return response

    def do_POST(self):
        content_length = int(self.headers['Content-Length'])
        post_data = self.rfile.read(content_length)
        self.send_response(200)
        self.send_header('Content-type', 'application/json')
        self.end_headers()

        try:
            data = json.loads(post_data)
            t0 = time.time()
            result = self.process_request(data)
            print("%d suggestions in %.2fs" % (len(result["suggestions"]), time.time() - t0))
            response = result
        except Exception as e:
            response = {"error": str(e)}

        self.wfile.write(json.dumps(response).encode('utf-8'))


def print_config(config):
    txt = '\n\t'.join([('%s: %s' % (k, v)) for k, v in config.items()])
    print("Config:\n\t%s" % txt)


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--hf-model', type=str, default=DEFAULT_MODEL)
    parser.add_argument('--port', type=int, default=6000)
    parser.add_argument('--host', type=str, default='localhost')
    parser.add_argument('--temperatures', type=float, nargs='+', default=[0.5])
    parser.add_argument('--num-samples', type=int, default=10)
    parser.add_argument('--vllm', action='store_true')
    args = parser.parse_args()

    config = get_config(args)
    print_config(config)

    if args.vllm:
        model, tokenizer = load_vllm(args.hf_model)
        generate = vllm_generate
    else:
        model, tokenizer = load_hf(args.hf_model)
        generate = hf_generate

    httpd = LLMStepServer(
        model, tokenizer, generate, config
    )

    print('Server started')
    httpd.serve_forever()
