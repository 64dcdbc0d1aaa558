"""NLLB-200 translation microservice on CTranslate2.

The model directory is produced by

    ct2-transformers-converter --model facebook/nllb-200-distilled-1.3B \
        --quantization float16 --output_dir /models/nllb-200-1.3B-ct2

Environment:
    NLLB_CT2_DIR        converted model directory
    NLLB_SPM            sentencepiece model (flores200_sacrebleu_tokenizer_spm.model)
    CT2_DEVICE          "cuda" (default) or "cpu"
    CT2_DEVICE_INDEX    comma separated GPU ids, one translator replica per id
    CT2_COMPUTE_TYPE    float16 / int8_float16 / int8
    CT2_INTER_THREADS   parallel batches per device
"""
import logging
import os
import threading
import time
from typing import Dict, List, Optional

import ctranslate2
import sentencepiece as spm
from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

logger = logging.getLogger("nllb_ct2")
logging.basicConfig(level=os.environ.get("LOG_LEVEL", "INFO"))

MODEL_DIR = os.environ.get("NLLB_CT2_DIR", "/models/nllb-200-distilled-1.3B-ct2")
SPM_PATH = os.environ.get("NLLB_SPM", os.path.join(MODEL_DIR, "sentencepiece.bpe.model"))
DEVICE = os.environ.get("CT2_DEVICE", "cuda")
DEVICE_INDEX = [int(i) for i in os.environ.get("CT2_DEVICE_INDEX", "0").split(",") if i.strip()]
COMPUTE_TYPE = os.environ.get("CT2_COMPUTE_TYPE", "float16")
INTER_THREADS = int(os.environ.get("CT2_INTER_THREADS", "2"))
INTRA_THREADS = int(os.environ.get("CT2_INTRA_THREADS", "4"))
MAX_BATCH_TOKENS = int(os.environ.get("CT2_MAX_BATCH_TOKENS", "4096"))
BEAM_SIZE = int(os.environ.get("CT2_BEAM_SIZE", "4"))

# FLORES-200 codes that the distilled checkpoints were trained on (subset shown
# here; the full list lives in languages.txt next to the model).
_LANGS_FILE = os.path.join(MODEL_DIR, "languages.txt")


class TranslateRequest(BaseModel):
    text: List[str] = Field(..., min_items=1, max_items=256)
    source: str = Field(..., example="eng_Latn")
    target: str = Field(..., example="fra_Latn")
    beam_size: Optional[int] = None
    max_decoding_length: int = 256


class TranslateResponse(BaseModel):
    translations: List[str]
    elapsed_ms: float


class NllbCt2:
    def __init__(self) -> None:
        logger.info(
            "Loading %s on %s%s (%s), ctranslate2 %s",
            MODEL_DIR, DEVICE, DEVICE_INDEX, COMPUTE_TYPE, ctranslate2.__version__,
        )
        self.translator = ctranslate2.Translator(
            MODEL_DIR,
            device=DEVICE,
            device_index=DEVICE_INDEX,
            compute_type=COMPUTE_TYPE,
            inter_threads=INTER_THREADS,
            intra_threads=INTRA_THREADS,
        )
        self.sp = spm.SentencePieceProcessor()
        self.sp.load(SPM_PATH)
        self.languages = self._load_languages()
        self._lock = threading.Lock()
        self.n_requests = 0

    def _load_languages(self) -> List[str]:
        if not os.path.exists(_LANGS_FILE):
            logger.warning("No languages.txt in %s, skipping language validation", MODEL_DIR)
            return []
        with open(_LANGS_FILE, encoding="utf-8") as f:
            return [line.strip() for line in f if line.strip()]

    def check_lang(self, code: str) -> None:
        if self.languages and code not in self.languages:
            raise HTTPException(status_code=400, detail=f"unsupported language code {code}")

    def encode(self, texts: List[str], src_lang: str) -> List[List[str]]:
        pieces = self.sp.encode(texts, out_type=str)
        # NLLB expects: src_lang_token + pieces + </s>
        return [[src_lang] + p + ["</s>"] for p in pieces]

    def decode(self, hyps: List[List[str]], tgt_lang: str) -> List[str]:
        out = []
        for tokens in hyps:
            if tokens and tokens[0] == tgt_lang:
                tokens = tokens[1:]
            out.append(self.sp.decode(tokens))
        return out

    def translate(self, req: TranslateRequest) -> List[str]:
        self.check_lang(req.source)
        self.check_lang(req.target)
        source = self.encode(req.text, req.source)
        results = self.translator.translate_batch(
            source,
            target_prefix=[[req.target]] * len(source),
            beam_size=req.beam_size or BEAM_SIZE,
            max_batch_size=MAX_BATCH_TOKENS,
            batch_type="tokens",
            max_decoding_length=req.max_decoding_length,
            repetition_penalty=1.05,
        )
        with self._lock:
            self.n_requests += 1
        return self.decode([r.hypotheses[0] for r in results], req.target)


app = FastAPI(title="nllb-ct2")
_engine: Optional[NllbCt2] = None


def engine() -> NllbCt2:
    global _engine
    if _engine is None:
        _engine = NllbCt2()
    return _engine


@app.on_event("startup")
def _warmup() -> None:
    e = engine()
    t0 = time.time()
    e.translate(TranslateRequest(text=["Hello world."], source="eng_Latn", target="fra_Latn"))
    logger.info("warmup done in %.0fms", (time.time() - t0) * 1000)


@app.post("/translate", response_model=TranslateResponse)
def translate(req: TranslateRequest) -> TranslateResponse:
    t0 = time.time()
    hyps = engine().translate(req)
    return TranslateResponse(translations=hyps, elapsed_ms=(time.time() - t0) * 1000)


@app.get("/health")
def health() -> Dict[str, object]:
    return {
        "status": "ok",
        "device": DEVICE,
        "device_index": DEVICE_INDEX,
        "compute_type": COMPUTE_TYPE,
        "cuda_devices_visible": ctranslate2.get_cuda_device_count(),
        "supported_compute_types": sorted(ctranslate2.get_supported_compute_types(DEVICE)),
        "requests": engine().n_requests,
    }
