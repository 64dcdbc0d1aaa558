"""Starlette web app serving a fastai v2 image classifier (the course "bear classifier").

Deployed as a Docker container on a GPU node; set MODEL_URL to the exported learner
(`learn.export()`), and USE_GPU=0 to force CPU inference.

    uvicorn app.server:app --host 0.0.0.0 --port 5000
"""
import aiohttp
import asyncio
import os
import sys
import time
from io import BytesIO
from pathlib import Path

import uvicorn
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import HTMLResponse, JSONResponse
from starlette.staticfiles import StaticFiles

import torch
from fastai.vision.all import *

export_file_url = os.environ.get('MODEL_URL', 'https://www.dropbox.com/s/6bgq8t6yextloqp/export.pkl?raw=1')
export_file_name = 'export.pkl'
use_gpu = os.environ.get('USE_GPU', '1') == '1'
max_batch = int(os.environ.get('MAX_BATCH', '16'))

classes = ['black', 'grizzly', 'teddys']
path = Path(__file__).parent

app = Starlette()
app.add_middleware(CORSMiddleware, allow_origins=['*'], allow_headers=['X-Requested-With', 'Content-Type'])
app.mount('/static', StaticFiles(directory='app/static'))


def get_device():
    if use_gpu and torch.cuda.is_available():
        return torch.device('cuda', int(os.environ.get('GPU_ID', 0)))
    return torch.device('cpu')


device = get_device()


async def download_file(url, dest):
    if dest.exists(): return
    async with aiohttp.ClientSession() as session:
        async with session.get(url) as response:
            data = await response.read()
            with open(dest, 'wb') as f:
                f.write(data)


async def setup_learner():
    await download_file(export_file_url, path / export_file_name)
    try:
        # cpu=False keeps the tensors on the default device instead of mapping to cpu
        learn = load_learner(path/export_file_name, cpu=(device.type == 'cpu'))
        learn.dls.to(device)
        learn.model.to(device)
        if device.type == 'cuda':  # let cuDNN autotune conv algorithms for the fixed 224px input
            torch.backends.cudnn.benchmark = True
        learn.model.eval()
        return learn
    except RuntimeError as e:
        if len(e.args) > 0 and 'CPU-only machine' in e.args[0]:
            print(e)
            message = "\n\nThis model was trained with an old version of fastai and will not work in a CPU environment.\n\nPlease update the fastai library in your training environment and export your model again.\n\nSee instructions for 'Returning to work' at https://course.fast.ai."
            raise RuntimeError(message)
        else:
            raise


loop = asyncio.get_event_loop()
tasks = [asyncio.ensure_future(setup_learner())]
learn = loop.run_until_complete(asyncio.gather(*tasks))[0]
loop.close()


def warmup(learn, n=3):
    "cuDNN picks its algorithms on the first batches; do that before serving traffic"
    x = torch.zeros(1, 3, 224, 224, device=device)
    with torch.no_grad():
        for _ in range(n): learn.model(x)
    if device.type == 'cuda': torch.cuda.synchronize()


warmup(learn)


@app.route('/')
async def homepage(request):
    html_file = path / 'view' / 'index.html'
    return HTMLResponse(html_file.open().read())


@app.route('/health')
async def health(request):
    info = {'status': 'ok', 'device': str(device), 'cuda': torch.cuda.is_available()}
    if device.type == 'cuda':
        info['gpu'] = torch.cuda.get_device_name(device)
        info['mem_allocated_mb'] = torch.cuda.memory_allocated(device) // 2**20
        free, total = torch.cuda.mem_get_info(device)
        info['mem_free_mb'], info['mem_total_mb'] = free // 2**20, total // 2**20
    return JSONResponse(info)


@app.route('/analyze', methods=['POST'])
async def analyze(request):
    img_data = await request.form()
    img_bytes = await (img_data['file'].read())
    t0 = time.time()
    pred, idx, probs = learn.predict(PILImage.create(BytesIO(img_bytes)))
    return JSONResponse({'result': str(pred), 'confidence': float(probs[idx]),
                         'latency_ms': round((time.time() - t0) * 1000, 1)})


@app.route('/analyze_batch', methods=['POST'])
async def analyze_batch(request):
    form = await request.form()
    files = [v for k, v in form.multi_items() if k == 'files'][:max_batch]
    imgs = [PILImage.create(BytesIO(await f.read())) for f in files]
    dl = learn.dls.test_dl(imgs, device=device)
    with torch.no_grad(), torch.autocast(device_type='cuda', dtype=torch.float16, enabled=device.type == 'cuda'):
        preds, _ = learn.get_preds(dl=dl)
    idxs = preds.argmax(dim=1)
    return JSONResponse({'results': [{'result': learn.dls.vocab[i], 'confidence': float(p[i])}
                                     for p, i in zip(preds, idxs.tolist())]})


if __name__ == '__main__':
    if 'serve' in sys.argv:
        uvicorn.run(app=app, host='0.0.0.0', port=5000, log_level="info")
