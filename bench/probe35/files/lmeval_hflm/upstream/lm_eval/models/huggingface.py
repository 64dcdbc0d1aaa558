import copy
import gc
import os
from datetime import timedelta
from typing import Dict, List, Literal, Optional, Tuple, Union

import torch
import torch.nn.functional as F
import transformers
from accelerate import (
    Accelerator,
    DistributedType,
    InitProcessGroupKwargs,
    find_executable_batch_size,
)
from packaging import version
from tqdm import tqdm

from lm_eval import utils
from lm_eval.api.model import TemplateLM
from lm_eval.api.registry import register_model
from lm_eval.models.utils import Collator, pad_and_concat, stop_sequences_criteria

eval_logger = utils.eval_logger


def clear_torch_cache() -> None:
    gc.collect()
    torch.cuda.empty_cache()


def _get_accelerate_args(
    device_map_option: Optional[str] = "auto",
    max_memory_per_gpu: Optional[Union[int, str]] = None,
    max_cpu_memory: Optional[Union[int, str]] = None,
    offload_folder: Optional[str] = "./offload",
    gpus: Optional[int] = None,
) -> dict:
    """Returns the kwargs needed to apply `accelerate` in `AutoModel.from_pretrained`."""
    max_memory = {}
    if max_memory_per_gpu is not None:
        max_memory_per_gpu_map = {device_idx: max_memory_per_gpu for device_idx in range(gpus)}
        max_memory.update(max_memory_per_gpu_map)
    if max_cpu_memory is not None:
        max_memory["cpu"] = max_cpu_memory

    args = {}
    if max_memory:
        args["max_memory"] = max_memory
    args["device_map"] = device_map_option
    args["offload_folder"] = offload_folder
    return args


@register_model("hf-auto", "hf", "huggingface")
class HFLM(TemplateLM):
    """
    An abstracted Huggingface model class. Enables usage with both models of
    `transformers.AutoModelForCausalLM` and `transformers.AutoModelForSeq2SeqLM` classes.

    Supports data-parallel multi-GPU with HF Accelerate.
    """

    AUTO_MODEL_CLASS = None
    _DEFAULT_MAX_LENGTH = 2048

    def __init__(
        self,
        pretrained: Union[str, transformers.PreTrainedModel],
        backend: Optional[Literal["default", "causal", "seq2seq"]] = "default",
        revision: Optional[str] = "main",
        tokenizer: Optional[str] = None,
        truncation: Optional[bool] = False,
        logits_cache: bool = True,
        max_length: Optional[int] = None,
        device: Optional[str] = "cuda",
        dtype: Optional[Union[str, torch.dtype]] = "auto",
        batch_size: Optional[Union[int, str]] = 1,
        max_batch_size: Optional[int] = 64,
        trust_remote_code: Optional[bool] = False,
        use_fast_tokenizer: Optional[bool] = True,
        add_bos_token: Optional[bool] = False,
        # arguments used for splitting a model across GPUs naively.
        # only used if `parallelize=True`.
        parallelize: Optional[bool] = False,
        device_map_option: Optional[str] = "auto",
        max_memory_per_gpu: Optional[Union[int, str]] = None,
        max_cpu_memory: Optional[Union[int, str]] = None,
        offload_folder: Optional[Union[str, os.PathLike]] = "./offload",
        **kwargs,
    ) -> None:
        super().__init__()

        assert isinstance(device, str)
        assert isinstance(pretrained, str)
        assert isinstance(batch_size, (int, str))

        gpus = torch.cuda.device_count()
        accelerator_kwargs = InitProcessGroupKwargs(timeout=timedelta(weeks=52))
        accelerator = Accelerator(kwargs_handlers=[accelerator_kwargs])
        if accelerator.num_processes > 1:
            self.accelerator = accelerator

        if not (parallelize or accelerator.num_processes > 1):
            # use user-passed device
            device_list = set(["cuda", "cpu"] + [f"cuda:{i}" for i in range(gpus)] + ["mps", "mps:0"])
            if device and device in device_list:
                self._device = torch.device(device)
                eval_logger.info(f"Using device '{device}'")
                if device in ("mps", "mps:0") and version.parse(torch.__version__) < version.parse("2.1"):
                    raise RuntimeError(
                        f"mps requires torch >= 2.1. You have {torch.__version__}"
                    )
            else:
                eval_logger.info("Device not specified")
                eval_logger.info(f"Cuda Available? {torch.cuda.is_available()}")
                self._device = torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
        else:
            if device != "cuda":
                eval_logger.info(
                    f"Using `accelerate launch` or `parallelize=True`, device '{device}' will be overridden when placing model."
                )
            self._device = torch.device(device)

        self._get_config(pretrained, revision=revision, trust_remote_code=trust_remote_code)
        self._get_backend(config=self.config, backend=backend, trust_remote_code=trust_remote_code)

        self._create_model(
            pretrained=pretrained,
            revision=revision,
            dtype=dtype,
            trust_remote_code=trust_remote_code,
            parallelize=parallelize,
            gpus=gpus,
            device_map_option=device_map_option,
            max_memory_per_gpu=max_memory_per_gpu,
            max_cpu_memory=max_cpu_memory,
            offload_folder=offload_folder,
            **kwargs,
        )

        self._create_tokenizer(pretrained, tokenizer, revision=revision, trust_remote_code=trust_remote_code,
                               use_fast_tokenizer=use_fast_tokenizer)

        self.truncation = truncation
        self.logits_cache = logits_cache
        self.vocab_size = self.tokenizer.vocab_size
        self.add_bos_token = add_bos_token
        self._max_length = max_length

        self.batch_schedule = 1
        self.batch_sizes = {}
        self.max_batch_size = max_batch_size

        if str(batch_size).startswith("auto"):
            batch_size = batch_size.split(":")
            self.batch_size_per_gpu = batch_size[0]
            self.batch_schedule = float(batch_size[1]) if len(batch_size) > 1 else 1
        else:
            self.batch_size_per_gpu = int(batch_size)

        if gpus >= 1 and not (parallelize or hasattr(self, "accelerator")):
            # place model onto device requested manually,
            # if not using HF Accelerate or device_map
            try:
                self.model.to(self.device)
            except ValueError:
                eval_logger.debug("Failed to place model onto specified device. This may be because the model is quantized via `bitsandbytes`.")

        # multigpu data-parallel support when launched with accelerate
        if gpus > 1:
            if accelerator.num_processes > 1:
                if parallelize:
                    eval_logger.warning(
                        "You are both using a HF Accelerate `device_map` (`--model_args parallelize=True`) and launching via `accelerate launch`. This will attempt to do model and data parallelism depending on the resources available."
                    )
                assert accelerator.distributed_type in [
                    DistributedType.FSDP,
                    DistributedType.MULTI_GPU,
                ], "Unsupported distributed type provided. Only DDP and FSDP are supported."
                if accelerator.distributed_type == DistributedType.FSDP:
                    self._model = accelerator.prepare(self.model)
                else:
                    self._model = accelerator.prepare_model(self.model, evaluation_mode=True)
                self._device = torch.device(f"cuda:{accelerator.local_process_index}")
                self.accelerator = accelerator

                if self.accelerator.is_local_main_process:
                    eval_logger.info(f"Using {gpus} devices with data parallelism")

                self._rank = self.accelerator.local_process_index
                self._world_size = self.accelerator.num_processes
        else:
            self._rank = 0
            self._world_size = 1

    @property
    def device(self):
        return self._device

    @property
    def model(self):
        if hasattr(self, "accelerator"):
            return self.accelerator.unwrap_model(self._model)
        return self._model

    @property
    def rank(self):
        return self._rank

    @property
    def world_size(self):
        return self._world_size

    def _get_config(self, pretrained, revision="main", trust_remote_code=False) -> None:
        self._config = transformers.AutoConfig.from_pretrained(
            pretrained, revision=revision, trust_remote_code=trust_remote_code
        )

    @property
    def config(self):
        return self._config

    def _get_backend(self, config, backend="default", trust_remote_code=False) -> None:
        if backend == "seq2seq" or getattr(config, "model_type") in transformers.models.auto.modeling_auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES:
            self.AUTO_MODEL_CLASS = transformers.AutoModelForSeq2SeqLM
        else:
            self.AUTO_MODEL_CLASS = transformers.AutoModelForCausalLM

    def _create_model(self, pretrained, revision="main", dtype="auto", trust_remote_code=False, parallelize=False,
                      gpus=None, device_map_option="auto", max_memory_per_gpu=None, max_cpu_memory=None,
                      offload_folder="./offload", **kwargs) -> None:
        model_kwargs = kwargs if kwargs else {}

        if parallelize:
            model_kwargs.update(
                _get_accelerate_args(device_map_option, max_memory_per_gpu, max_cpu_memory, offload_folder, gpus)
            )
        elif "device_map" not in model_kwargs:
            # set a device_map to initialize model on the right GPU.
            # this is needed because it seems that the default behavior
            # for quantized models now seems to be device_map="auto"
            # which breaks data-parallel mode.
            if hasattr(self, "accelerator"):
                model_kwargs.update({"device_map": {"": f"cuda:{self.accelerator.local_process_index}"}})
            else:
                model_kwargs.update({"device_map": {"": str(self.device)}})

        self._model = self.AUTO_MODEL_CLASS.from_pretrained(
            pretrained,
            revision=revision,
            torch_dtype=utils.get_dtype(dtype),
            trust_remote_code=trust_remote_code,
            **model_kwargs,
        )

    def _create_tokenizer(self, pretrained, tokenizer, revision="main", trust_remote_code=False,
                          use_fast_tokenizer=True) -> None:
        self.tokenizer = transformers.AutoTokenizer.from_pretrained(
            tokenizer or pretrained,
            revision=revision,
            trust_remote_code=trust_remote_code,
            use_fast=use_fast_tokenizer,
        )

    def _model_call(self, inps, attn_mask=None, labels=None):
        with torch.no_grad():
            return self.model(inps).logits

    def _detect_batch_size(self, requests=None, pos: int = 0):
        if requests:
            _, context_enc, continuation_enc = requests[pos]
            max_length = len((context_enc + continuation_enc)[-(self.max_length + 1) :][:-1])
        else:
            max_length = self.max_length

        # if OOM, then halves batch_size and tries again
        @find_executable_batch_size(starting_batch_size=self.max_batch_size)
        def forward_batch(batch_size):
            test_batch = torch.ones((batch_size, max_length), device=self.device).long()
            for _ in range(5):
                out = F.log_softmax(self._model_call(test_batch), dim=-1)  # noqa: F841
            return batch_size

        try:
            batch_size = forward_batch()
        except RuntimeError as e:
            if "No executable batch size found" in str(e):
                batch_size = 1
            else:
                raise

        if self.world_size > 1:
            # if multi-GPU, always take minimum over all selected batch sizes
            max_rnk_bs = torch.tensor([batch_size], device=self.device)
            gathered = self.accelerator.gather(max_rnk_bs).cpu().detach().numpy().tolist()
            batch_size = min(gathered)
            clear_torch_cache()
            return batch_size

        clear_torch_cache()
        return batch_size

    @property
    def max_length(self):
        if self._max_length:
            return self._max_length
        for attr in ("n_positions", "max_position_embeddings", "n_ctx"):
            if hasattr(self.model.config, attr):
                return getattr(self.model.config, attr)
        return self._DEFAULT_MAX_LENGTH

    def tok_encode(self, string: str, left_truncate_len=None, add_special_tokens=None) -> List[int]:
        special_tokens_kwargs = {}
        if add_special_tokens is None:
            special_tokens_kwargs = {"add_special_tokens": False or self.add_bos_token}
        else:
            special_tokens_kwargs = {"add_special_tokens": add_special_tokens}
        encoding = self.tokenizer.encode(string, **special_tokens_kwargs)
        if left_truncate_len:
            encoding = encoding[-left_truncate_len:]
        return encoding

    def _select_cont_toks(self, logits: torch.Tensor, contlen: int = None, inplen: int = None) -> torch.Tensor:
        assert contlen and inplen, "Must pass input len and cont. len to select scored logits for causal LM"
        # discard right-padding; also discard the input/context tokens
        return logits[inplen - contlen : inplen]

    def _loglikelihood_tokens(self, requests, disable_tqdm: bool = False, override_bs: int = None) -> List[Tuple[float, bool]]:
        res = []

        def _collate(req):
            toks = req[1] + req[2]
            return -len(toks), tuple(toks)

        re_ord = Collator(requests, sort_fn=_collate, group_by=None)

        n_reordered_requests = len(re_ord)
        batch_size = self.batch_size_per_gpu if self.batch_size_per_gpu != "auto" else override_bs or 0
        if self.batch_size_per_gpu == "auto" and not override_bs:
            batch_size = self._detect_batch_size(requests)
        chunks = re_ord.get_batched(n=batch_size, batch_fn=None)
        pbar = tqdm(total=len(requests), disable=(disable_tqdm or (self.rank != 0)), desc="Running loglikelihood requests")

        for chunk in chunks:
            inps, cont_toks_list, inplens = [], [], []
            padding_len_inp = None
            for _, context_enc, continuation_enc in chunk:
                inp = torch.tensor(
                    (context_enc + continuation_enc)[-(self.max_length + 1) :][:-1],
                    dtype=torch.long,
                    device=self.device,
                )
                (inplen,) = inp.shape
                padding_len_inp = max(padding_len_inp, inplen) if padding_len_inp is not None else inplen
                inps.append(inp)
                cont_toks_list.append(continuation_enc)
                inplens.append(inplen)

            batched_inps = pad_and_concat(padding_len_inp, inps, padding_side="right")
            multi_logits = F.log_softmax(self._model_call(batched_inps), dim=-1)

            for (request_str, ctx_tokens, _), logits, inplen, cont_toks in zip(chunk, multi_logits, inplens, cont_toks_list):
                contlen = len(cont_toks)
                ctx_len = inplen + (logits.shape[0] - padding_len_inp)
                logits = self._select_cont_toks(logits, contlen=contlen, inplen=ctx_len).unsqueeze(0)
                greedy_tokens = logits.argmax(dim=-1)
                cont_toks = torch.tensor(cont_toks, dtype=torch.long, device=self.device).unsqueeze(0)
                max_equal = (greedy_tokens == cont_toks).all()
                logits = torch.gather(logits, 2, cont_toks.unsqueeze(-1)).squeeze(-1)
                answer = (float(logits.sum()), bool(max_equal))
                res.append(answer)
                if request_str is not None:
                    self.cache_hook.add_partial("loglikelihood", request_str, answer)
                pbar.update(1)

        pbar.close()
        return re_ord.get_original(res)

    def _model_generate(self, context, max_length, stop, **generation_kwargs):
        generation_kwargs["temperature"] = generation_kwargs.get("temperature", 0.0)
        do_sample = generation_kwargs.get("do_sample", None)
        if generation_kwargs.get("temperature") == 0.0 and do_sample is None:
            generation_kwargs["do_sample"] = do_sample = False
        if do_sample is False and generation_kwargs.get("temperature") == 0.0:
            generation_kwargs.pop("temperature")
        stopping_criteria = stop_sequences_criteria(self.tokenizer, stop, context.shape[1], context.shape[0])
        return self.model.generate(
            input_ids=context,
            max_length=max_length,
            stopping_criteria=stopping_criteria,
            pad_token_id=self.tokenizer.pad_token_id,
            use_cache=True,
            **generation_kwargs,
        )

    def generate_until(self, requests, disable_tqdm: bool = False) -> List[str]:
        res = []
        pbar = tqdm(total=len(requests), disable=(disable_tqdm or (self.rank != 0)), desc="Running generate_until requests")
        batch_size = self.batch_size_per_gpu if self.batch_size_per_gpu != "auto" else self._detect_batch_size()
        re_ords = Collator([reg.args for reg in requests], sort_fn=lambda r: (-len(self.tok_encode(r[0])), r[0]),
                           group_by="gen_kwargs", group_fn=lambda x: x[1])
        for chunk in re_ords.get_batched(n=batch_size, batch_fn=None):
            contexts, all_gen_kwargs = zip(*chunk)
            gen_kwargs = copy.deepcopy(all_gen_kwargs[0])
            until = gen_kwargs.pop("until", None) or [self.tokenizer.decode(self.tokenizer.eos_token_id)]
            max_gen_toks = gen_kwargs.pop("max_gen_toks", 256)
            enc = self.tokenizer(list(contexts), return_tensors="pt", padding="longest", truncation=False)
            context_enc = enc["input_ids"].to(self.device)
            attn_masks = enc["attention_mask"].to(self.device)
            cont = self._model_generate(
                context=context_enc,
                attention_mask=attn_masks,
                max_length=context_enc.shape[1] + max_gen_toks,
                stop=until,
                **gen_kwargs,
            )
            for cont_toks, context in zip(cont.tolist(), contexts):
                s = self.tokenizer.decode(cont_toks[context_enc.shape[1] :])
                for term in until:
                    if len(term) > 0:
                        s = s.split(term)[0]
                res.append(s)
                pbar.update(1)
        pbar.close()
        return re_ords.get_original(res)
