"""Low-latency scoring service for the fraud GBDT.

The XGBoost booster is compiled to tensor operations with Hummingbird and served from the GPU;
the raw booster is kept as the reference path (and for SHAP explanations). Set USE_FIL=1 to use
RAPIDS' Forest Inference Library instead of Hummingbird.

    uvicorn serving.gbdt_server:app --host 0.0.0.0 --port 8080 --workers 1
"""
import logging
import os
import time
from typing import List, Optional

os.environ.setdefault("CUDA_MODULE_LOADING", "LAZY")

import numpy as np
import torch
import xgboost as xgb
from fastapi import FastAPI, HTTPException
from hummingbird.ml import convert
from pydantic import BaseModel

log = logging.getLogger("gbdt_server")
logging.basicConfig(level=logging.INFO)

MODEL_PATH = os.getenv("MODEL_PATH", "models/xgb_fraud.json")
FEATURES_PATH = os.getenv("FEATURES_PATH", "models/features.txt")
USE_FIL = os.getenv("USE_FIL", "0") == "1"
MAX_BATCH = int(os.getenv("MAX_BATCH", "8192"))

torch.backends.cudnn.benchmark = True


class ScoreRequest(BaseModel):
    rows: List[List[float]]
    explain: bool = False


class ScoreResponse(BaseModel):
    scores: List[float]
    latency_ms: float
    contributions: Optional[List[List[float]]] = None


class Scorer:
    def __init__(self, model_path: str, features_path: str):
        self.features = [l.strip() for l in open(features_path) if l.strip()]
        self.booster = xgb.Booster()
        self.booster.load_model(model_path)
        self.booster.set_param({"device": "cuda"})
        self.n_features = len(self.features)
        if USE_FIL:
            from cuml import ForestInference

            self.fil = ForestInference.load(model_path, output_class=True, model_type="xgboost_json")
            self.hb = None
        else:
            self.fil = None
            self.hb = convert(self.booster, "torch", extra_config={"tree_implementation": "gemm"})
            self.hb.to("cuda")
        self.warmup()

    def warmup(self, n: int = 3):
        dummy = np.random.rand(MAX_BATCH, self.n_features).astype(np.float32)
        for _ in range(n):
            self.predict(dummy)
        torch.cuda.synchronize()
        log.info("warm-up done")

    def _to_device(self, arr: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(arr).pin_memory().to("cuda", non_blocking=True)

    def predict(self, arr: np.ndarray) -> np.ndarray:
        if self.fil is not None:
            return np.asarray(self.fil.predict_proba(arr))[:, 1]
        with torch.inference_mode(), torch.cuda.amp.autocast(dtype=torch.float16):
            x = self._to_device(arr)
            proba = self.hb.model(x)[1] if isinstance(self.hb.model(x), tuple) else self.hb.model(x)
        return proba[:, 1].float().cpu().numpy()

    def predict_reference(self, arr: np.ndarray) -> np.ndarray:
        return self.booster.inplace_predict(arr)

    def explain(self, arr: np.ndarray) -> np.ndarray:
        dm = xgb.DMatrix(arr, feature_names=self.features)
        return self.booster.predict(dm, pred_contribs=True)


app = FastAPI(title="fraud-gbdt")
scorer: Optional[Scorer] = None


@app.on_event("startup")
def load_model():
    global scorer
    t0 = time.time()
    scorer = Scorer(MODEL_PATH, FEATURES_PATH)
    log.info("model ready in %.1fs (backend=%s)", time.time() - t0, "fil" if USE_FIL else "hummingbird")


@app.get("/health")
def health():
    return {
        "status": "ok" if scorer is not None else "loading",
        "gpu": torch.cuda.is_available(),
        "device_name": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "backend": "fil" if USE_FIL else "hummingbird",
    }


@app.post("/score", response_model=ScoreResponse)
def score(req: ScoreRequest):
    if scorer is None:
        raise HTTPException(503, "model not loaded")
    arr = np.asarray(req.rows, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[1] != scorer.n_features:
        raise HTTPException(400, f"expected rows of {scorer.n_features} features")
    if len(arr) > MAX_BATCH:
        raise HTTPException(413, f"at most {MAX_BATCH} rows per request")
    t0 = time.perf_counter()
    scores = scorer.predict(arr)
    latency = (time.perf_counter() - t0) * 1000
    contrib = scorer.explain(arr).tolist() if req.explain else None
    return ScoreResponse(scores=scores.tolist(), latency_ms=latency, contributions=contrib)


@app.post("/validate")
def validate(req: ScoreRequest):
    """Compares the GPU path with the reference booster (used by the canary job)."""
    arr = np.asarray(req.rows, dtype=np.float32)
    fast = scorer.predict(arr)
    ref = scorer.predict_reference(arr)
    err = float(np.max(np.abs(fast - ref)))
    return {"max_abs_diff": err, "ok": err < 1e-3}
