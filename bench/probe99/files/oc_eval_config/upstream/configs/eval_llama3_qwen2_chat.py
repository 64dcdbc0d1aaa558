from mmengine.config import read_base
from opencompass.models import HuggingFacewithChatTemplate, VLLMwithChatTemplate
from opencompass.partitioners import NumWorkerPartitioner
from opencompass.runners import LocalRunner
from opencompass.tasks import OpenICLInferTask

with read_base():
    from .datasets.mmlu.mmlu_gen_4d595a import mmlu_datasets
    from .datasets.ceval.ceval_gen_5f30c7 import ceval_datasets
    from .datasets.gsm8k.gsm8k_gen_1d7fe4 import gsm8k_datasets
    from .datasets.humaneval.humaneval_gen_8e312c import humaneval_datasets
    from .datasets.bbh.bbh_gen_5b92b0 import bbh_datasets
    from .summarizers.example import summarizer

datasets = [
    *mmlu_datasets,
    *ceval_datasets,
    *gsm8k_datasets,
    *humaneval_datasets,
    *bbh_datasets,
]

# ---------------------------------------------------------------------------
# Models.  `run_cfg.num_gpus` is how many cards each inference task reserves;
# the LocalRunner packs tasks onto the visible cards.
# ---------------------------------------------------------------------------
llama3_8b_instruct_hf = dict(
    type=HuggingFacewithChatTemplate,
    abbr='llama-3-8b-instruct-hf',
    path='meta-llama/Meta-Llama-3-8B-Instruct',
    model_kwargs=dict(
        torch_dtype='torch.bfloat16',
        attn_implementation='flash_attention_2',
    ),
    max_out_len=1024,
    batch_size=16,
    run_cfg=dict(num_gpus=1),
    stop_words=['<|end_of_text|>', '<|eot_id|>'],
)

qwen2_7b_instruct_hf = dict(
    type=HuggingFacewithChatTemplate,
    abbr='qwen2-7b-instruct-hf',
    path='Qwen/Qwen2-7B-Instruct',
    model_kwargs=dict(device_map='cuda:0', torch_dtype='torch.bfloat16'),
    max_out_len=1024,
    batch_size=8,
    run_cfg=dict(num_gpus=1),
)

qwen2_72b_instruct_vllm = dict(
    type=VLLMwithChatTemplate,
    abbr='qwen2-72b-instruct-vllm',
    path='Qwen/Qwen2-72B-Instruct',
    model_kwargs=dict(tensor_parallel_size=4, gpu_memory_utilization=0.9, enforce_eager=False),
    max_out_len=1024,
    batch_size=32,
    generation_kwargs=dict(temperature=0),
    run_cfg=dict(num_gpus=4),
)

models = [llama3_8b_instruct_hf, qwen2_7b_instruct_hf, qwen2_72b_instruct_vllm]

infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=8),
    runner=dict(
        type=LocalRunner,
        max_num_workers=16,
        retry=0,
        task=dict(type=OpenICLInferTask),
    ),
)

work_dir = './outputs/llama3_qwen2_chat'
