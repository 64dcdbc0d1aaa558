import logging
import multiprocessing as mp
from typing import Any, List, Optional, Tuple, Union

import numpy as np
import torch
from tqdm import tqdm, trange
from transformers import AutoModelForSequenceClassification, AutoTokenizer

logger = logging.getLogger(__name__)


def sigmoid(x):
    return float(1 / (1 + np.exp(-x)))


class CrossEncoderReranker:
    """
    Cross-encoder reranker (bge-reranker-base / -large / -v2-m3).

    Args:
        model_name_or_path: HF model id or local path.
        use_fp16: cast the model to fp16 - faster on GPUs, slight accuracy drop.
        devices: list of devices to run on, e.g. ["cuda:0", "cuda:1"]. By default every visible GPU is
            used, or the CPU if there is none.
        batch_size / max_length / normalize: defaults for ``compute_score``.
    """

    def __init__(
        self,
        model_name_or_path: str,
        use_fp16: bool = False,
        devices: Optional[Union[str, List[str]]] = None,
        batch_size: int = 128,
        max_length: int = 512,
        normalize: bool = False,
        trust_remote_code: bool = False,
        cache_dir: Optional[str] = None,
    ):
        self.model_name_or_path = model_name_or_path
        self.use_fp16 = use_fp16
        self.target_devices = self.get_target_devices(devices)
        self.batch_size = batch_size
        self.max_length = max_length
        self.normalize = normalize

        self.tokenizer = AutoTokenizer.from_pretrained(
            model_name_or_path, cache_dir=cache_dir, trust_remote_code=trust_remote_code
        )
        self.model = AutoModelForSequenceClassification.from_pretrained(
            model_name_or_path, cache_dir=cache_dir, trust_remote_code=trust_remote_code
        )
        self.pool = None

    @staticmethod
    def get_target_devices(devices: Union[str, int, List[str], List[int], None]) -> List[str]:
        if devices is None:
            if torch.cuda.is_available():
                return [f"cuda:{i}" for i in range(torch.cuda.device_count())]
            elif torch.backends.mps.is_available():
                return ["mps"]
            else:
                return ["cpu"]
        elif isinstance(devices, str):
            return [devices]
        elif isinstance(devices, int):
            return [f"cuda:{devices}"]
        elif isinstance(devices, list):
            if isinstance(devices[0], str):
                return devices
            elif isinstance(devices[0], int):
                return [f"cuda:{device}" for device in devices]
            else:
                raise ValueError("devices should be a string or an integer or a list of strings or a list of integers.")
        else:
            raise ValueError("devices should be a string or an integer or a list of strings or a list of integers.")

    def stop_self_pool(self):
        if self.pool is not None:
            self.stop_multi_process_pool(self.pool)
            self.pool = None
        try:
            self.model.to("cpu")
            torch.cuda.empty_cache()
        except Exception:
            pass

    def compute_score(
        self,
        sentence_pairs: Union[List[Tuple[str, str]], Tuple[str, str]],
        batch_size: Optional[int] = None,
        max_length: Optional[int] = None,
        normalize: Optional[bool] = None,
        **kwargs: Any,
    ) -> Union[float, List[float]]:
        if isinstance(sentence_pairs[0], str):
            sentence_pairs = [sentence_pairs]

        if len(self.target_devices) == 1:
            return self.compute_score_single_device(
                sentence_pairs, batch_size=batch_size, max_length=max_length, normalize=normalize,
                device=self.target_devices[0], **kwargs,
            )

        if self.pool is None:
            self.pool = self.start_multi_process_pool()
        return self.compute_score_multi_process(
            sentence_pairs, self.pool, batch_size=batch_size, max_length=max_length, normalize=normalize
        )

    @torch.no_grad()
    def compute_score_single_device(
        self,
        sentence_pairs: List[Tuple[str, str]],
        batch_size: Optional[int] = None,
        max_length: Optional[int] = None,
        normalize: Optional[bool] = None,
        device: Optional[str] = None,
        **kwargs: Any,
    ) -> List[float]:
        batch_size = batch_size or self.batch_size
        max_length = max_length or self.max_length
        normalize = self.normalize if normalize is None else normalize
        device = device or self.target_devices[0]

        if device == "cpu":
            self.use_fp16 = False
        if self.use_fp16:
            self.model.half()

        self.model.to(device)
        self.model.eval()

        # adjust batch size: halve on OOM
        flag = False
        while not flag:
            try:
                test_inputs_batch = self.tokenizer(
                    sentence_pairs[:batch_size], return_tensors="pt", padding=True, truncation=True,
                    max_length=max_length,
                ).to(device)
                self.model(**test_inputs_batch, return_dict=True)
                flag = True
            except RuntimeError as e:
                batch_size = batch_size * 3 // 4
            except torch.cuda.OutOfMemoryError as e:
                batch_size = batch_size * 3 // 4

        # sort by length for efficient padding
        length_sorted_idx = np.argsort([-len(q) - len(p) for q, p in sentence_pairs])
        sentences_sorted = [sentence_pairs[idx] for idx in length_sorted_idx]

        all_scores = []
        for start_index in trange(0, len(sentences_sorted), batch_size, desc="Compute Scores",
                                  disable=len(sentences_sorted) < 128):
            sentences_batch = sentences_sorted[start_index : start_index + batch_size]
            inputs = self.tokenizer(
                sentences_batch, return_tensors="pt", padding=True, truncation=True, max_length=max_length
            ).to(device)
            scores = self.model(**inputs, return_dict=True).logits.view(-1).float()
            all_scores.extend(scores.cpu().numpy().tolist())

        all_scores = [all_scores[idx] for idx in np.argsort(length_sorted_idx)]

        if normalize:
            all_scores = [sigmoid(score) for score in all_scores]

        return all_scores

    def start_multi_process_pool(self) -> dict:
        logger.info("Start multi-process pool on devices: {}".format(", ".join(map(str, self.target_devices))))
        self.model.to("cpu")
        self.model.share_memory()
        ctx = mp.get_context("spawn")
        input_queue = ctx.Queue()
        output_queue = ctx.Queue()
        processes = []
        for device_id in tqdm(self.target_devices, desc="initial target device"):
            p = ctx.Process(target=CrossEncoderReranker._worker, args=(device_id, self, input_queue, output_queue),
                            daemon=True)
            p.start()
            processes.append(p)
        return {"input": input_queue, "output": output_queue, "processes": processes}

    @staticmethod
    def _worker(target_device: str, model: "CrossEncoderReranker", input_queue, results_queue) -> None:
        while True:
            try:
                chunk_id, pairs, kwargs = input_queue.get()
                scores = model.compute_score_single_device(pairs, device=target_device, **kwargs)
                results_queue.put([chunk_id, scores])
            except Exception:
                break

    def compute_score_multi_process(self, sentence_pairs, pool, **kwargs) -> List[float]:
        chunk_size = int(np.ceil(len(sentence_pairs) / len(pool["processes"])))
        n_chunks = 0
        for i in range(0, len(sentence_pairs), chunk_size):
            pool["input"].put([n_chunks, sentence_pairs[i : i + chunk_size], kwargs])
            n_chunks += 1
        results = sorted([pool["output"].get() for _ in range(n_chunks)], key=lambda x: x[0])
        return [s for _, chunk in results for s in chunk]

    @staticmethod
    def stop_multi_process_pool(pool: dict) -> None:
        for p in pool["processes"]:
            p.terminate()
        for p in pool["processes"]:
            p.join()
            p.close()
        pool["input"].close()
        pool["output"].close()
