from mmengine.config import read_base

from opencompass.models import (HuggingFacewithChatTemplate,
                                TurboMindModelwithChatTemplate,
                                VLLMwithChatTemplate)
from opencompass.partitioners import NaivePartitioner, NumWorkerPartitioner
from opencompass.runners import LocalRunner
from opencompass.tasks import OpenICLEvalTask, OpenICLInferTask

with read_base():
    # choose a list of datasets
    from .datasets.ceval.ceval_gen_5f30c7 import ceval_datasets
    from .datasets.cmmlu.cmmlu_gen_c13365 import cmmlu_datasets
    from .datasets.gsm8k.gsm8k_gen_1d7fe4 import gsm8k_datasets
    from .datasets.humaneval.humaneval_gen_8e312c import humaneval_datasets
    from .datasets.mmlu.mmlu_gen_4d595a import mmlu_datasets
    from .datasets.triviaqa.triviaqa_wiki_1shot_gen_eaf81e import \
        triviaqa_datasets
    # and output the results in a chosen format
    from .summarizers.medium import summarizer

datasets = sum((v for k, v in locals().items() if k.endswith('_datasets')), [])

# Three backends for the same checkpoint, so that scores can be compared
# across inference engines on the same GPU box.
models = [
    # LMDeploy TurboMind: fastest on A100/H800, needs sm80+ for bf16 kernels
    dict(
        type=TurboMindModelwithChatTemplate,
        abbr='internlm2_5-7b-chat-turbomind',
        path='internlm/internlm2_5-7b-chat',
        engine_config=dict(session_len=16384, max_batch_size=16, tp=1),
        gen_config=dict(top_k=1, temperature=1e-6, top_p=0.9, max_new_tokens=2048),
        max_seq_len=16384,
        max_out_len=2048,
        batch_size=16,
        run_cfg=dict(num_gpus=1),
    ),
    # vLLM with two-way tensor parallelism
    dict(
        type=VLLMwithChatTemplate,
        abbr='internlm2_5-7b-chat-vllm',
        path='internlm/internlm2_5-7b-chat',
        model_kwargs=dict(tensor_parallel_size=2, gpu_memory_utilization=0.85),
        max_out_len=2048,
        batch_size=32,
        generation_kwargs=dict(temperature=0),
        run_cfg=dict(num_gpus=2),
    ),
    # plain HuggingFace transformers as the reference implementation
    dict(
        type=HuggingFacewithChatTemplate,
        abbr='internlm2_5-7b-chat-hf',
        path='internlm/internlm2_5-7b-chat',
        model_kwargs=dict(
            device_map='auto',
            torch_dtype='torch.bfloat16',
            attn_implementation='flash_attention_2',
        ),
        max_out_len=2048,
        batch_size=8,
        run_cfg=dict(num_gpus=1),
    ),
]

infer = dict(
    partitioner=dict(type=NumWorkerPartitioner, num_worker=8),
    runner=dict(
        type=LocalRunner,
        max_num_workers=16,
        # one inference worker per GPU; TurboMind/vLLM grab ~90% of HBM
        max_workers_per_gpu=1,
        task=dict(type=OpenICLInferTask),
    ),
)

eval = dict(
    partitioner=dict(type=NaivePartitioner, n=10),
    runner=dict(
        type=LocalRunner,
        max_num_workers=32,
        task=dict(type=OpenICLEvalTask)),
)

work_dir = './outputs/internlm2_5_chat_accel/'
