import numpy as np
from loguru import logger

from data_juicer.utils.constant import Fields, StatsKeys
from data_juicer.utils.lazy_loader import LazyLoader
from data_juicer.utils.model_utils import get_model, prepare_model

from ..base_op import OPERATORS, Filter

torch = LazyLoader("torch")

OP_NAME = "quality_score_filter"


@OPERATORS.register_module(OP_NAME)
class QualityScoreFilter(Filter):
    """Filter to keep samples whose model-predicted quality score is within a
    specific range. The scorer is any HuggingFace sequence-classification model
    with a single regression head (e.g. a FineWeb-Edu style classifier) or a
    multi-class head whose expected label index is used as the score."""

    _accelerator = "cuda"
    _batched_op = True

    def __init__(
        self,
        hf_scorer: str = "HuggingFaceFW/fineweb-edu-classifier",
        min_score: float = 3.0,
        max_score: float = 5.0,
        max_length: int = 512,
        score_batch_size: int = 64,
        trust_remote_code: bool = False,
        *args,
        **kwargs,
    ):
        """
        Initialization method.

        :param hf_scorer: HuggingFace model used to score each sample.
        :param min_score: The min score to keep samples.
        :param max_score: The max score to keep samples.
        :param max_length: Tokenizer truncation length.
        :param score_batch_size: Batch size used inside one compute_stats call.
        :param args: extra args
        :param kwargs: extra args
        """
        kwargs.setdefault("mem_required", "3GB")
        super().__init__(*args, **kwargs)
        self.min_score = min_score
        self.max_score = max_score
        self.max_length = max_length
        self.score_batch_size = score_batch_size
        self.model_key = prepare_model(
            model_type="huggingface",
            pretrained_model_name_or_path=hf_scorer,
            trust_remote_code=trust_remote_code,
        )

    def _amp_dtype(self):
        if torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float16

    def _scores_from_logits(self, logits):
        if logits.shape[-1] == 1:
            return logits.squeeze(-1).float()
        probs = torch.softmax(logits.float(), dim=-1)
        labels = torch.arange(probs.shape[-1], device=probs.device, dtype=probs.dtype)
        return (probs * labels).sum(-1)

    def compute_stats_batched(self, samples, rank=None):
        samples_list = samples[self.text_key]
        samples_stats = samples[Fields.stats]

        todo = [i for i, stat in enumerate(samples_stats) if StatsKeys.quality_score not in stat]
        if not todo:
            return samples

        model, processor = get_model(self.model_key, rank, self.use_cuda())
        tokenizer = getattr(processor, "tokenizer", processor)
        model.eval()

        scores = []
        for start in range(0, len(todo), self.score_batch_size):
            idx = todo[start : start + self.score_batch_size]
            texts = [samples_list[i] for i in idx]
            inputs = tokenizer(
                texts,
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=self.max_length,
            ).to(model.device)
            with torch.no_grad(), torch.cuda.amp.autocast(dtype=self._amp_dtype()):
                logits = model(**inputs).logits
            scores.extend(self._scores_from_logits(logits).cpu().tolist())

        for i, score in zip(todo, scores):
            samples_stats[i][StatsKeys.quality_score] = float(score)

        if rank == 0 and len(scores):
            logger.debug(
                f"[{OP_NAME}] scored {len(scores)} samples, mean={np.mean(scores):.3f}, "
                f"p10={np.percentile(scores, 10):.3f}, p90={np.percentile(scores, 90):.3f}"
            )
        return samples

    def process_batched(self, samples):
        return map(
            lambda stat: self.min_score <= stat[StatsKeys.quality_score] <= self.max_score,
            samples[Fields.stats],
        )
